"""``mx.io.utils``: the array helpers of MXNet's iterators (``NDArrayIter`` takes NumPy
arrays, NDArrays and, when h5py is installed, HDF5 datasets)."""
from .._lazy import exports as _exports

__all__ = []


def _import_h5py():
    """The ``h5py`` module, or None when it is not installed (MXNet's ``h5py`` name)."""
    try:
        import h5py
    except ImportError:
        return None
    return h5py


__getattr__, __dir__ = _exports(__name__, {
    "NDArray": "mxlite.nd.ndarray", "array": "mxlite.nd.ndarray",
    "h5py": "mxlite.io.utils:_import_h5py()"})
