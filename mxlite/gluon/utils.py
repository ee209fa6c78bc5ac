"""``mx.gluon.utils``: splitting batches over contexts, gradient clipping, downloads.

>>> parts = gluon.utils.split_and_load(mx.nd.arange(8).reshape((4, 2)), [mx.cpu(0), mx.cpu(1)])
>>> [p.shape for p in parts]
[(2, 2), (2, 2)]
"""
import collections
import hashlib
import os
import uuid
import warnings
import weakref

import numpy as np

from ..util import _state as _np_state
from .. import nd

__all__ = ["split_data", "split_and_load", "clip_global_norm", "check_sha1", "download",
           "replace_file", "HookHandle", "shape_is_known"]


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """Split an NDArray into ``num_slice`` slices along ``batch_axis``.

    Parameters
    ----------
    data : NDArray
    num_slice : int
    batch_axis : int, default 0
    even_split : bool, default True
        When False, the first ``size % num_slice`` slices get one more element
        (slices may be empty when there are fewer elements than slices).

    Returns
    -------
    list of NDArray
    """
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            "data with shape %s cannot be evenly split into %d slices along axis %d. "
            "Use a batch size that's multiple of %d or set even_split=False to allow "
            "uneven partitioning of data." % (str(data.shape), num_slice, batch_axis, num_slice))
    n_each, extras = divmod(size, num_slice)
    sizes = [0] + extras * [n_each + 1] + (num_slice - extras) * [n_each]
    points = np.cumsum(sizes)
    if batch_axis == 0:
        return [data[int(points[i]):int(points[i + 1])] for i in range(num_slice)]
    legacy = data.as_nd_ndarray()       # np arrays too: sliced as legacy views, retyped
    return [_same_class(nd.slice_axis(legacy, axis=batch_axis, begin=int(points[i]),
                                      end=int(points[i + 1])), data)
            for i in range(num_slice)]


def _same_class(y, x):
    """``y`` (a fresh legacy array) with the class of input ``x``: an np array in gives
    an np array out."""
    if isinstance(x, nd.NDArray) and x._np:
        y.__class__ = x.__class__
    return y


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Split ``data`` along ``batch_axis`` and copy slice ``i`` to ``ctx_list[i]``.

    Parameters
    ----------
    data : NDArray or array-like
    ctx_list : list of Context
    batch_axis : int, default 0
    even_split : bool, default True

    Returns
    -------
    list of NDArray
    """
    if not isinstance(data, nd.NDArray):
        data = nd.array(data, ctx=ctx_list[0])
        if _np_state.array:     # under npx.set_np() the slices are np arrays
            data = data.as_np_ndarray()
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(ctx) for s, ctx in zip(slices, ctx_list)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Rescale ``arrays`` in place so that the 2-norm of all of them together is at most
    ``max_norm``; returns that norm before clipping.

    Parameters
    ----------
    arrays : list of NDArray
    max_norm : float
    check_isfinite : bool, default True
        Warn when the norm is NaN or infinite, and return a Python float; else
        return the norm as an NDArray (no host synchronisation).
    """
    if not arrays:
        raise ValueError("clip_global_norm: arrays is empty")
    first = arrays[0]
    arrays = [a.as_nd_ndarray() for a in arrays]    # np arrays: legacy views of the data
    ctx = arrays[0].context
    # NOTE: float16 squares overflow past 256; accumulate those in float32.
    sq = [nd.sum(nd.square(a.astype("float32") if a.dtype == np.float16 else a))
          .as_in_context(ctx) for a in arrays]
    total_norm = nd.sqrt(nd.add_n(*sq) if len(sq) > 1 else sq[0])
    if check_isfinite and not np.isfinite(total_norm.asscalar()):
        warnings.warn(UserWarning("nan or inf is detected. Clipping results will be undefined."),
                      stacklevel=2)
    scale = max_norm / (total_norm + 1e-8)
    scale = nd.minimum(scale, 1.0)
    # NOTE: with a NaN/inf norm the result is undefined (warned above); keep NumPy quiet.
    with np.errstate(invalid="ignore", over="ignore"):
        for a in arrays:
            a *= scale.as_in_context(a.context).astype(a.dtype, copy=False)
    return total_norm.asscalar() if check_isfinite else _same_class(total_norm, first)


def _indent(s_, num_spaces):
    """Indent every line but the first of ``s_`` by ``num_spaces``."""
    lines = s_.split("\n")
    if len(lines) == 1:
        return s_
    return "\n".join([lines[0]] + [(num_spaces * " ") + line for line in lines[1:]])


def _brief_print_list(lst, limit=7):
    """``'a', 'b', ..., 'z'``: at most ``limit`` quoted items."""
    lst = list(lst)
    if len(lst) > limit:
        return (_brief_print_list(lst[:limit // 2], limit) + ", ..., "
                + _brief_print_list(lst[-limit // 2:], limit))
    return ", ".join(["'%s'" % str(i) for i in lst])


def check_sha1(filename, sha1_hash):
    """Whether the SHA-1 of the file's content equals ``sha1_hash`` (hex)."""
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        for chunk in iter(lambda: f.read(1048576), b""):
            sha1.update(chunk)
    return sha1.hexdigest() == sha1_hash


def replace_file(src, dst):
    """Atomically move ``src`` to ``dst`` (replacing it); removes ``src`` on failure."""
    try:
        os.replace(src, dst)
    except OSError:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError("Moving downloaded temp file - {}, to {} failed. Please retry the "
                      "download.".format(src, dst))


def _target_path(url, path):
    if path is None:
        fname = url.split("/")[-1]
        if not fname:
            raise ValueError("Can't construct file-name from this URL. Please set the `path` "
                             "option manually.")
        return fname
    path = os.path.expanduser(path)
    return os.path.join(path, url.split("/")[-1]) if os.path.isdir(path) else path


def _fetch(url, dest, verify_ssl, timeout):
    """Stream ``url`` into ``dest`` with the standard library."""
    import ssl
    import urllib.request
    import urllib.error
    context = None if verify_ssl else ssl._create_unverified_context()
    try:
        response = urllib.request.urlopen(url, timeout=timeout, context=context)
    except urllib.error.HTTPError as e:
        e.close()           # it holds the connection: close it before it is reported
        raise RuntimeError("Failed downloading url {} (HTTP status {})".format(url, e.code)) \
            from None
    with response as r, open(dest, "wb") as f:
        status = getattr(r, "status", None)
        if status not in (None, 200):       # file:// URLs have no status
            raise RuntimeError("Failed downloading url {} (HTTP status {})".format(url, status))
        f.writelines(iter(lambda: r.read(1 << 20), b""))


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True,
             timeout=30):
    """Download ``url`` to ``path`` unless a file with the right SHA-1 is already there.

    Parameters
    ----------
    url : str
    path : str, optional
        A file or directory name; the current directory and the URL's file name by default.
    overwrite : bool, default False
    sha1_hash : str, optional
        Expected SHA-1; an existing file that does not match is downloaded again.
    retries : int, default 5
    verify_ssl : bool, default True
    timeout : float, default 30
        Seconds to wait for the server (mxlite's addition).

    Returns
    -------
    str
        The file name.

    Raises
    ------
    OSError
        When the file cannot be fetched (no network, unknown host, HTTP error), with
        the URL, the cause and where to put the file by hand.
    """
    fname = _target_path(url, path)
    if retries < 0:
        raise ValueError("Number of retries should be at least 0, currently it's {}"
                         .format(retries))
    if not verify_ssl:
        warnings.warn("Unverified HTTPS request is being made (verify_ssl=False). "
                      "Adding certificate verification is strongly advised.")
    if not (overwrite or not os.path.exists(fname)
            or (sha1_hash and not check_sha1(fname, sha1_hash))):
        return fname
    dirname = os.path.dirname(os.path.abspath(fname))
    os.makedirs(dirname, exist_ok=True)
    last = None
    for _ in range(retries + 1):
        tmp = "{}.{}".format(fname, uuid.uuid4())
        try:
            _fetch(url, tmp, verify_ssl, timeout)
            replace_file(tmp, fname)
            last = None
            break
        except Exception as e:  # network errors come in many types; retry them all
            last = e
            if os.path.exists(tmp):
                os.remove(tmp)
    if last is not None:
        raise OSError("download: could not fetch {} ({}: {}). If this machine has no network, "
                      "download the file elsewhere and place it at {}"
                      .format(url, type(last).__name__, last, os.path.abspath(fname))) from last
    if sha1_hash and not check_sha1(fname, sha1_hash):
        raise UserWarning("File {} is downloaded but the content hash does not match. The repo "
                          "may be outdated or download may be incomplete.".format(fname))
    return fname


def _get_repo_url():
    """The mirror of MXNet's datasets and weights: ``$MXNET_GLUON_REPO`` or Apache's,
    ending in ``/``."""
    repo_url = os.environ.get("MXNET_GLUON_REPO",
                              "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/")
    return repo_url if repo_url.endswith("/") else repo_url + "/"


def _get_repo_file_url(namespace, filename):
    """The URL of ``filename`` in ``namespace`` (``'gluon/dataset/mnist'``) on the mirror."""
    return "{base_url}{namespace}/{filename}".format(base_url=_get_repo_url(),
                                                      namespace=namespace, filename=filename)


def shape_is_known(shape):
    """Whether every dimension of ``shape`` is known (0 marks an unknown one)."""
    if shape is None:
        return False
    for d in shape:
        if d == 0 or d == -1:       # -1: unknown under NumPy shape semantics
            return False
        if d < 0:
            raise ValueError("shape dimension size cannot be less than 0, while received %d" % d)
    return True


class HookHandle:
    """Handle returned by ``register_forward_hook``; ``detach()`` removes the hook."""

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict, hook):
        if self._hooks_dict_ref is not None:
            raise ValueError("The same handle cannot be attached twice.")
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self):
        hooks_dict = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks_dict is not None and self._id in hooks_dict:
            del hooks_dict[self._id]

    def __getstate__(self):
        return (self._hooks_dict_ref(), self._id)

    def __setstate__(self, state):
        if state[0] is None:
            self._hooks_dict_ref = weakref.ref(collections.OrderedDict())
        else:
            self._hooks_dict_ref = weakref.ref(state[0])
        self._id = state[1]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()
