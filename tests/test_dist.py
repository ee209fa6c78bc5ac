"""Distributed training on MPI: the workers in tests/dist_workers/ run under ``mpirun``.

Each test launches one job of 2 (or 4, oversubscribed) ranks on this machine with a
60 s limit. They need ``pip install ".[test,dist]"`` (mpi4py and the Open MPI wheel);
without mpi4py they are skipped with that reason, unless ``MXLITE_REQUIRE_DIST=1``
(set by CI) turns the skip into a failure.
"""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import mxlite as mx

HERE = os.path.dirname(os.path.abspath(__file__))
WORKERS = os.path.join(HERE, "dist_workers")
sys.path.insert(0, WORKERS)
import common  # noqa: E402  (the workers' data and models)


def _mpi_missing():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install \".[test,dist]\")"
    if _mpirun() is None:
        return "no mpirun beside %s or on PATH (pip install \".[test,dist]\")" % sys.executable
    return None


def _mpirun():
    beside = os.path.join(os.path.dirname(sys.executable), "mpirun")
    if os.path.exists(beside):
        return beside
    import shutil
    return shutil.which("mpirun")


_MISSING = _mpi_missing()
if _MISSING and os.environ.get("MXLITE_REQUIRE_DIST") == "1":
    raise RuntimeError("MXLITE_REQUIRE_DIST=1 but the distributed tests cannot run: " + _MISSING)
pytestmark = pytest.mark.skipif(_MISSING is not None, reason=str(_MISSING))


def _env(extra=None):
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(mx.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root, WORKERS] + [p for p in [env.get("PYTHONPATH")]
                                                             if p])
    # Open MPI: allowed as root (containers, CI) and more ranks than cores
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMPI_MCA_rmaps_base_oversubscribe": "1",
                "PRTE_MCA_rmaps_default_mapping_policy": ":oversubscribe",
                "OMPI_MCA_osc": "sm,rdma"})
    env.pop("MXLITE_DIST_TIMEOUT", None)
    env.update(extra or {})
    return env


def launch(n, worker, *args, env=None, timeout=60):
    """``(returncode, output, seconds)`` of ``mpirun -n n python worker args``."""
    cmd = [_mpirun(), "-n", str(n), "--host", "127.0.0.1:%d" % n, sys.executable,
           os.path.join(WORKERS, worker)] + [str(a) for a in args]
    start = time.monotonic()
    proc = subprocess.run(cmd, env=_env(env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=timeout)
    return proc.returncode, proc.stdout.decode(errors="replace"), time.monotonic() - start


def _ok(rc, out, marker, n=2):
    assert rc == 0, out
    assert out.count(marker) == n, out


def test_dist_sync_contract(tmp_path):
    # a small fusion buffer, so that both fused and unfused allreduces run
    rc, out, _ = launch(2, "contract.py", tmp_path,
                        env={"MXLITE_KVSTORE_FUSION_BYTES": "4096"})
    _ok(rc, out, "contract ok")


def _reference_gluon(init, update_on_kvstore):
    """One process training on the union of the workers' batches."""
    x, y = common.data()
    net = common.mlp(mx, seed=99)
    for i, p in enumerate(net.collect_params().values()):
        p.set_data(mx.nd.array(init["init/p%d" % i]))
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3},
                               kvstore=mx.kv.create("local") if update_on_kvstore else None,
                               update_on_kvstore=update_on_kvstore)
    # step(BATCH) on 2 * BATCH rows: the workers each scale by 1/BATCH and sum
    common.train_gluon(mx, net, trainer, x, y,
                       lambda s: slice(2 * s * common.BATCH, 2 * (s + 1) * common.BATCH))
    return common.weights(net)


def test_gluon_trainer_dist_sync_matches_one_process(tmp_path):
    rc, out, _ = launch(2, "equiv_gluon.py", tmp_path)
    _ok(rc, out, "gluon done")
    for mode in ("on", "off"):
        ranks = [dict(np.load(tmp_path / ("gluon_%s_rank%d.npz" % (mode, r)))) for r in (0, 1)]
        # the ranks started from different seeds: the Trainer broadcast rank 0's weights
        own = common.weights(common.mlp(mx, seed=11))
        assert not all(np.array_equal(own[k], ranks[1]["init/" + k]) for k in own)
        for k in ranks[0]:
            assert np.array_equal(ranks[0][k], ranks[1][k]), (mode, k)
        want = _reference_gluon(ranks[0], mode == "on")
        for k, w in want.items():
            got = ranks[0]["final/" + k]
            assert not np.array_equal(got, ranks[0]["init/" + k])
            np.testing.assert_allclose(got, w, rtol=0, atol=1e-6, err_msg=mode + " " + k)


def test_module_fit_dist_sync_matches_one_process(tmp_path):
    n = 4 * 2 * common.BATCH              # 4 steps per epoch on each of 2 workers
    rng = np.random.RandomState(3)
    x = rng.randint(0, 256, (n, 4, 4)) / 256.0
    y = rng.randint(0, common.CLASSES, n)
    common.write_idx(str(tmp_path), x, y)
    rc, out, _ = launch(2, "equiv_module.py", tmp_path)
    _ok(rc, out, "module done")
    for mode in ("on", "off"):
        ranks = [dict(np.load(tmp_path / ("module_%s_rank%d.npz" % (mode, r)))) for r in (0, 1)]
        for k in ranks[0]:
            if k.startswith("final/"):
                assert np.array_equal(ranks[0][k], ranks[1][k]), (mode, k)
        _check_module_reference(x, y, ranks[0], mode)


def _check_module_reference(x, y, rank0, mode):
    n = len(x)
    finals = [k for k in rank0 if k.startswith("final/")]
    # one process: batch t holds worker 0's and worker 1's batch t (MNISTIter parts are
    # the two halves of the file), rescale_grad 1/(2 * BATCH) as fit on 2 workers
    half = n // 2
    order = np.concatenate([np.r_[s * common.BATCH:(s + 1) * common.BATCH,
                                  half + s * common.BATCH:half + (s + 1) * common.BATCH]
                            for s in range(half // common.BATCH)])
    it = mx.io.NDArrayIter(x.reshape(n, 16)[order].astype(np.float32),
                           y[order].astype(np.float32), batch_size=2 * common.BATCH,
                           label_name="softmax_label")
    mod = mx.mod.Module(common.mlp_symbol(mx), context=mx.cpu())
    init = {k[5:]: mx.nd.array(v) for k, v in rank0.items() if k.startswith("init/")}
    mod.fit(it, kvstore="local", optimizer="sgd", num_epoch=2, arg_params=init,
            optimizer_params={"learning_rate": 0.5, "momentum": 0.9})
    want, _ = mod.get_params()
    for k in finals:
        assert not np.array_equal(rank0[k], rank0["init/" + k[6:]])
        np.testing.assert_allclose(rank0[k], want[k[6:]].asnumpy(), rtol=0, atol=1e-6,
                                   err_msg=mode + " " + k)


def test_dist_async_workers_at_different_speeds_converge():
    rc, out, _ = launch(2, "async_linreg.py")
    _ok(rc, out, "async ok")


@pytest.mark.parametrize("mode, message", [
    ("raise", "uncaught RuntimeError on rank 1 of 2"),
    ("exit0", "rank 1 ended (its script returned or called exit) while rank 0 waits in push"),
    ("hang", "rank 0 waited"),
])
def test_a_failing_rank_ends_the_job(mode, message):
    env = {"MXLITE_DIST_TIMEOUT": "3"} if mode == "hang" else None
    rc, out, _ = launch(2, "failures.py", mode, env=env)
    ended = time.time()
    assert rc != 0, out
    assert message in out and "aborting the whole job" in out, out
    if mode == "hang":
        assert "MXLITE_DIST_TIMEOUT=3" in out and "of key 'w'" in out, out
    # from the moment rank 1 misbehaves to the end of mpirun (the timeout: 3 s more)
    start = float(out.split("MISBEHAVES AT ")[1].split()[0])
    assert ended - start < 10 + (3 if mode == "hang" else 0), ended - start


def test_launch_runs_the_tutorial_example():
    # python -m mxlite.launch runs mpirun itself (allowing root, finding the venv's mpirun)
    example = os.path.join(os.path.dirname(HERE), "tutorials", "distributed_train.py")
    env = _env()
    for name in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
        env.pop(name)
    proc = subprocess.run([sys.executable, "-m", "mxlite.launch", "-n", "2", "-s", "2",
                           "--launcher", "local", sys.executable, example], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0, out
    assert "num-servers 2 ignored" in out, out
    for r in (0, 1):
        line = [l for l in out.splitlines() if l.startswith("rank %d of 2, epoch 1" % r)]
        assert len(line) == 1 and float(line[0].split()[-1]) > 0.5, out


def test_launch_builds_mpirun_command_from_launch_py_flags():
    proc = subprocess.run([sys.executable, "-m", "mxlite.launch", "-np", "3", "-H", "hosts",
                           "--launcher", "ssh", "--env-worker", "A:1", "--env", "HOME",
                           "--env-server", "B:2", "--dry-run", "python", "train.py", "--lr",
                           "0.1"], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=60)
    cmd, notes = proc.stdout.decode().split(), proc.stderr.decode()
    assert proc.returncode == 0, notes
    assert cmd[1:3] == ["-n", "3"] and cmd[-4:] == ["python", "train.py", "--lr", "0.1"], cmd
    assert "--hostfile hosts" in " ".join(cmd) and "-x A" in " ".join(cmd), cmd
    assert "-x HOME" in " ".join(cmd) and "--env-server ignored" in notes, (cmd, notes)
    bad = subprocess.run([sys.executable, "-m", "mxlite.launch", "-n", "2", "--launcher", "yarn",
                          "python", "t.py"], env=_env(), stderr=subprocess.PIPE, timeout=60)
    assert bad.returncode != 0 and b"--launcher yarn is not supported" in bad.stderr


@pytest.mark.parametrize("role", ["server", "scheduler"])
def test_server_and_scheduler_roles_exit_0_and_explain(role):
    env = _env({"DMLC_ROLE": role})
    proc = subprocess.run([sys.executable, "-c", "import mxlite; print('went on')"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    out = proc.stdout.decode()
    assert proc.returncode == 0 and "went on" not in out, out
    assert "DMLC_ROLE=%s" % role in out and "need no servers" in out, out


def test_horovod_api_and_dist_sync_on_4_oversubscribed_ranks():
    rc, out, _ = launch(4, "horovod4.py")
    _ok(rc, out, "horovod ok", n=4)


def test_one_process_without_mpirun():
    # a plain `python script.py`: a dist store of one worker; a process that MXNet's
    # launcher meant as one of several workers is told how to launch with MPI
    code = """if True:
        import os, sys
        import mxlite as mx
        assert "mpi4py" not in sys.modules         # only a dist store imports it
        kv = mx.kv.create("dist_sync")
        assert "mpi4py" in sys.modules and (kv.rank, kv.num_workers) == (0, 1)
        kv.init(0, mx.nd.ones((2,)))
        out = mx.nd.zeros((2,))
        kv.pushpull(0, mx.nd.ones((2,)) * 3, out=out)
        assert (out.asnumpy() == 3).all()
        os.environ["DMLC_NUM_WORKER"] = "2"
        from mxlite.kvstore import _mpi
        try:
            _mpi.World()
            raise AssertionError("DMLC_NUM_WORKER=2 in one process was accepted")
        except mx.MXNetError as err:
            assert "mpirun -n 2" in str(err), err
        print("single ok")
    """
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=60)
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0 and "single ok" in out, out
