"""Contexts, the default-context scope, drop-in import and the engine."""
import subprocess
import sys

import pytest

import mxlite as mx
from mxlite.base import MXNetError


@pytest.mark.smoke
def test_context_basics():
    assert mx.cpu() == mx.cpu(0) == mx.Context("cpu", 0) == mx.Context(mx.cpu())
    assert mx.cpu(1) != mx.cpu(0)
    assert mx.gpu(1).device_type == "gpu" and mx.gpu(1).device_id == 1
    assert str(mx.cpu(2)) == "cpu(2)" and repr(mx.gpu(0)) == "gpu(0)"
    assert len({mx.cpu(0), mx.cpu(0), mx.cpu(1)}) == 2
    assert mx.current_context() == mx.cpu(0)
    with mx.cpu(1):
        assert mx.current_context() == mx.cpu(1)
        with mx.Context("cpu", 3):
            assert mx.current_context() == mx.cpu(3)
        assert mx.current_context() == mx.cpu(1)
    assert mx.current_context() == mx.cpu(0)
    assert isinstance(mx.context.num_gpus(), int)
    with pytest.raises(ValueError, match="device_type"):
        mx.Context("tpu")


def test_gpu_without_cupy_is_a_clear_error():
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed: the GPU path is tested on a GPU machine")
    except ImportError:
        pass
    with pytest.raises(MXNetError, match="CuPy"):
        mx.nd.zeros((2,), ctx=mx.gpu(0))


def test_mxnet_error_is_runtime_error():
    assert issubclass(mx.base.MXNetError, RuntimeError)
    assert mx.MXNetError is mx.base.MXNetError


def test_waitall_and_wait_to_read():
    x = mx.nd.ones((3,)) * 2
    x.wait_to_read()
    x.wait_to_write()
    mx.nd.waitall()
    mx.waitall()
    assert x.asnumpy().tolist() == [2, 2, 2]


def test_install_as_mxnet_in_a_fresh_interpreter():
    code = "\n".join([
        "import mxlite; mxlite.install_as_mxnet()",
        "import mxnet as mx",
        "from mxnet import nd, autograd",
        "import mxnet.ndarray as nd2",
        "assert mx is mxlite and nd is mxlite.nd and nd2 is mxlite.nd",
        "assert autograd is mxlite.autograd",
        "x = nd.array([1, 2]); x.attach_grad()",
        "with autograd.record():",
        "    y = (x * x).sum()",
        "y.backward(); print(x.grad.asnumpy().tolist())",
        # modules not imported yet, with MXNet's names, resolve to mxlite's own
        "import mxnet.ndarray.random as r, mxnet.symbol.random as sr",
        "assert r is mxlite.nd.random and sr is mxlite.symbol.random",
        "from mxnet.gluon.data.vision import transforms",
        "assert transforms is mxlite.gluon.data.vision.transforms",
        "assert mxlite.nd.__spec__.name == 'mxlite.nd'",
        "try:\n    import mxnet.no_such_module\nexcept ImportError:\n    print('missing')",
    ])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[2.0,", "4.0]", "missing"]


def test_nested_with_on_one_context_object():
    ctx = mx.cpu(1)
    with ctx:
        with ctx:
            assert mx.current_context() == mx.cpu(1)
        assert mx.current_context() == mx.cpu(1)
    assert mx.current_context() == mx.cpu(0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc tuning is Linux-only")
def test_cpu_memory_pool_switch():
    import os
    code = "import mxlite; print(mxlite.engine.MEM_POOL_ACTIVE)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    on = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                        timeout=60, env=env)
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=dict(env, MXLITE_CPU_MEM_POOL="0"))
    import platform
    assert off.stdout.strip() == "False"
    assert on.stdout.strip() == str(platform.libc_ver()[0] == "glibc")
