import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon.block import _top_level
from mxlite.operator.registry import OPS

REF = os.path.join(os.path.dirname(__file__), "reference")


def numba_missing():
    """Whether the numba kernels (the extra 'fast') are absent or turned off; an error
    instead where CI requires them (MXLITE_REQUIRE_NUMBA=1)."""
    from mxlite.operator.nn import _fast
    missing = _fast.kernels() is None
    if missing and os.environ.get("MXLITE_REQUIRE_NUMBA") == "1":
        raise RuntimeError("MXLITE_REQUIRE_NUMBA=1 but numba (the extra 'fast') is not "
                           "installed or MXLITE_NUMBA=0 turned it off")
    return missing


NUMBA_MISSING = numba_missing()
needs_numba = pytest.mark.skipif(NUMBA_MISSING, reason="numba (the extra 'fast') is not installed")

# MXLITE_TEST_CONTEXT=gpu(0) runs every test with that context as the default (arrays
# made without ctx= live there), as MXNet's GPU suite re-runs its unit tests under
# set_default_context(mx.gpu(0)). Unset: cpu(0).
_TEST_CONTEXT = os.environ.get("MXLITE_TEST_CONTEXT", "")


def _parse_context(text):
    name, _, rest = text.strip().partition("(")
    return mx.Context(name, int(rest.rstrip(")") or 0))


def pytest_ignore_collect(collection_path, config):
    """Under ``pytest -m smoke``, skip importing the test files that mark no test as smoke:
    collecting the whole suite would take longer than the smoke tests themselves."""
    if config.getoption("markexpr") != "smoke" or collection_path.suffix != ".py" \
            or not collection_path.name.startswith("test_"):
        return None
    with open(str(collection_path), encoding="utf-8") as f:
        return True if "mark.smoke" not in f.read() else None


@pytest.fixture(autouse=True)
def _fresh_state():
    """Every test starts outside record/train scopes with a fixed seed, and with
    top-level block names counting from 0 as in a fresh MXNet process. Ops a test
    registers are taken out of the registry after it, so that tests walking every
    registered op (fuzzing, the row census) see the same registry in any order."""
    ops = dict(OPS)
    _top_level.counter.clear()
    mx.autograd.set_recording(False)
    mx.autograd.set_training(False)
    mx.random.seed(0)
    np.random.seed(0)
    if _TEST_CONTEXT:
        with _parse_context(_TEST_CONTEXT):
            yield
    else:
        yield
    mx.autograd.set_recording(False)
    mx.autograd.set_training(False)
    mx.util.reset_np()
    if OPS != ops:
        OPS.clear()
        OPS.update(ops)


@pytest.fixture(params=["numpy", "numba"])
def fast_kernels(request, monkeypatch):
    """Runs a test twice: on the pure NumPy kernels, and (where numba, the extra
    ``fast``, is installed) with the numba ones, Winograd on every 3x3 convolution it
    can run however small (its size thresholds lowered to zero, ``_fast_direct``'s
    small 3x3 convolutions set aside)."""
    from mxlite.operator.nn import _fast, _fast_direct
    if request.param == "numpy":
        monkeypatch.setattr(_fast, "kernels", lambda: None)
    elif NUMBA_MISSING:
        pytest.skip("numba (the extra 'fast') is not installed")
    else:
        monkeypatch.setattr(_fast, "MIN_TILES", 0)
        monkeypatch.setattr(_fast, "MIN_TILES_KEPT", 0)
        monkeypatch.setattr(_fast, "BLOCKED_MIN_BYTES", 0)
        monkeypatch.setattr(_fast, "MIN_CHANNELS", 0)
        monkeypatch.setattr(_fast_direct, "MAX_POSITIONS_3X3", 0)
    return request.param


def random_params(*blocks, seed=1):
    """Give each parameter of ``blocks`` (alike, in the same order) the same values, not
    0 and 1: uniform in [-0.5, 0.5), running variances in [0.5, 1.5)."""
    rs = np.random.RandomState(seed)
    for params in zip(*(b.collect_params().values() for b in blocks)):
        v = mx.nd.array(rs.uniform(0.5, 1.5, params[0].shape) if "running_var" in params[0].name
                        else rs.uniform(-0.5, 0.5, params[0].shape))
        for p in params:
            p.set_data(v)
