"""What this build can do: ``mx.runtime.Features``, as ``mxnet.runtime``.

Scripts ask ``mx.runtime.Features().is_enabled('CUDA')`` (or ``'MKLDNN'``) to pick a
code path. mxlite reports what it really has: CUDA when CuPy finds a GPU, the CPU
instruction sets NumPy detected, the BLAS NumPy links, and no MKLDNN/cuDNN/NCCL/
OpenCV/TensorRT/distributed kvstore (it has none of them).
"""
import collections

import numpy as np

__all__ = ["Feature", "Features", "feature_list"]

# MXNet 1.9.1's feature names, in its order.
_NAMES = ("CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
          "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE",
          "F16C", "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK",
          "MKLDNN", "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14",
          "INT64_TENSOR_SIZE", "SIGNAL_HANDLER", "DEBUG", "TVM_OP")

# feature name -> NumPy's name for the CPU instruction set
_CPU = {"CPU_SSE": "SSE", "CPU_SSE2": "SSE2", "CPU_SSE3": "SSE3", "CPU_SSE4_1": "SSE41",
        "CPU_SSE4_2": "SSE42", "CPU_AVX": "AVX", "CPU_AVX2": "AVX2", "SSE": "SSE",
        "F16C": "F16C"}


class Feature(collections.namedtuple("Feature", ["name", "enabled"])):
    """One feature: ``name`` and whether it is ``enabled``."""
    __slots__ = ()

    def __repr__(self):
        return ("✔ " if self.enabled else "✖ ") + self.name


def _cpu_flags():
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:         # NumPy < 2
        try:
            from numpy.core._multiarray_umath import __cpu_features__
        except ImportError:
            return {}
    return __cpu_features__


def _blas_name():
    try:
        cfg = np.show_config(mode="dicts")
        return str(cfg["Build Dependencies"]["blas"].get("name", "")).lower()
    except Exception:  # noqa: BLE001 (older NumPy prints its config only)
        return ""


def _has_gpu():
    from .context import num_gpus
    try:
        return num_gpus() > 0
    except Exception:  # noqa: BLE001 (no CuPy, no driver: no CUDA)
        return False


def _detect():
    cpu = _cpu_flags()
    blas = _blas_name()
    enabled = {name: bool(cpu.get(flag, False)) for name, flag in _CPU.items()}
    enabled["CUDA"] = _has_gpu()
    enabled["BLAS_OPEN"] = "openblas" in blas
    enabled["BLAS_MKL"] = "mkl" in blas
    enabled["BLAS_APPLE"] = "accelerate" in blas
    enabled["LAPACK"] = bool(blas)
    enabled["INT64_TENSOR_SIZE"] = True    # NumPy indexes with 64-bit sizes
    enabled["SIGNAL_HANDLER"] = False
    return [Feature(name, enabled.get(name, False)) for name in _NAMES]


def feature_list():
    """Every :class:`Feature` of this build, in MXNet's order."""
    return _detect()


class Features(collections.OrderedDict):
    """The features as an ordered dict name -> :class:`Feature`.

    >>> mx.runtime.Features().is_enabled('MKLDNN')
    False
    """

    def __init__(self):
        super().__init__((f.name, f) for f in feature_list())

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether ``feature_name`` (case-insensitive) is enabled; RuntimeError naming
        the known features for an unknown name."""
        name = feature_name.upper()
        if name not in self:
            raise RuntimeError("Feature '%s' is unknown, known features are: %s"
                               % (feature_name, list(self.keys())))
        return self[name].enabled


# Names MXNet's module also shows, served from where they live in mxlite.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "check_call": "mxlite.base",
})
