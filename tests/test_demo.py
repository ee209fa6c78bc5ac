"""``python -m mxlite.demo`` in a subprocess: it trains, reports, reaches its accuracy."""
import os
import re
import subprocess
import sys

import pytest

from mxlite.gluon.data.vision import Digits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EPOCH_LINE = re.compile(r"^\[Epoch (\d+)\] train accuracy (\d\.\d{4}), "
                        r"test accuracy (\d\.\d{4}) \(\d+\.\ds\)$")
FINAL_LINE = re.compile(r"^final test accuracy: (\d\.\d{4}) \(\d+ test images, ")


def _demo(*args, timeout=120):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # -W error: the demo must not print a single warning.
    return subprocess.run([sys.executable, "-W", "error", "-m", "mxlite.demo"] + list(args),
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)


def _report(proc):
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    epochs = [EPOCH_LINE.match(line) for line in lines if " train accuracy " in line]
    assert all(epochs), proc.stdout
    final = [FINAL_LINE.match(line) for line in lines if FINAL_LINE.match(line)]
    assert len(final) == 1, proc.stdout
    return [m.groups() for m in epochs], float(final[0].group(1))


def test_demo_cnn_reaches_95_percent():
    proc = _demo()
    epochs, accuracy = _report(proc)
    assert [int(e[0]) for e in epochs] == list(range(10))
    assert accuracy >= 0.95, proc.stdout
    # The final evaluation is the last epoch's test accuracy (same weights, same data).
    assert float(epochs[-1][2]) == accuracy
    assert proc.stdout.startswith("mxlite demo: cnn (hybridized) on Digits")
    # A progress bar per epoch on stderr, each finished, showing accuracy and loss.
    bars = [line for line in proc.stderr.replace("\r", "\n").splitlines()
            if re.match(r"\[Epoch \d+\]: 100%", line)]
    assert {int(re.match(r"\[Epoch (\d+)\]", b).group(1)) for b in bars} == set(range(10))
    assert all(re.search(r"accuracy=\d\.\d{4}, loss=\d\.\d{4}", b) for b in bars)
    assert "Warning" not in proc.stderr


def test_demo_options_and_determinism():
    args = ["--net", "mlp", "--epochs", "2", "--batch-size", "64", "--lr", "0.01",
            "--seed", "3", "--no-hybridize"]
    first, second = _demo(*args), _demo(*args)
    n_train, n_test = len(Digits(train=True)), len(Digits(train=False))
    assert first.stdout.splitlines()[0] == (
        "mxlite demo: mlp on Digits (%d training, %d test images of 8x8 pixels), 2 epochs, "
        "batch size 64, Adam lr 0.01, seed 3" % (n_train, n_test))
    epochs, accuracy = _report(first)
    assert len(epochs) == 2 and 0.5 < accuracy <= 1.0
    batches = -(-n_train // 64)
    assert "%d/%d" % (batches, batches) in first.stderr
    # Same seed, same numbers (the times aside).
    assert _report(second) == (epochs, accuracy)
    other, _ = _report(_demo(*args[:-3], "--seed", "4", "--no-hybridize"))
    assert other != epochs


def test_demo_verbose_prints_the_estimator_log():
    proc = _demo("--net", "mlp", "--epochs", "1", "--verbose")
    _report(proc)
    assert "Training begin: using optimizer Adam with current learning rate 0.0030" \
        in proc.stdout
    assert re.search(r"\[Epoch 0\] Finished in \d+\.\d{3}s, training accuracy", proc.stdout)


def test_demo_help_and_bad_options():
    proc = _demo("--help")
    assert proc.returncode == 0
    for option in ("--epochs", "--batch-size", "--net {cnn,mlp}", "--lr", "--seed",
                   "--hybridize, --no-hybridize", "--workers"):
        assert option in proc.stdout
    assert proc.stdout.startswith("usage: python -m mxlite.demo")
    proc = _demo("--net", "resnet")
    assert proc.returncode == 2 and "invalid choice: 'resnet'" in proc.stderr
    proc = _demo("--epochs", "0")
    assert proc.returncode == 2 and "--epochs must be at least 1" in proc.stderr


@pytest.mark.parametrize("workers", [2])
def test_demo_with_workers(workers):
    epochs, accuracy = _report(_demo("--net", "mlp", "--epochs", "1", "--workers",
                                     str(workers)))
    assert len(epochs) == 1 and accuracy > 0.5
