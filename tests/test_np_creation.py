"""The ``mx.np`` creation, splitting, set and matrix-function ops called by their registry
names (``_npi_zeros``, ``_npi_unique``, ``_npi_pinv``...), each row with its NumPy
reference; creation ops take no inputs: their reference is the array NumPy makes."""
import numpy as np

import mxlite as mx
from optable import Spec, op_function, row, row_tests, to_nd

R = np.random.RandomState(13)
F32 = np.float32


def _init(op, ref, **params):
    return row(op, lambda: ref, [], params, grad=())


def _symmetric(n):
    b = R.uniform(-1, 1, (n, n))
    return b + b.T          # real eigenvalues


SPECS = [
    _init("_npi_zeros", np.zeros((2, 3), F32), shape=(2, 3)),
    _init("_npi_ones", np.ones((2, 3), F32), shape=(2, 3)),
    _init("_npi_identity", np.identity(3, F32), shape=(3, 3)),
    _init("_npi_eye", np.eye(3, 4, 1, dtype=F32), N=3, M=4, k=1),
    _init("_npi_arange", np.arange(1, 7, 2, dtype=F32), start=1, stop=7, step=2),
    _init("_npi_indices", np.indices((2, 3)).astype(np.int32), dimensions=(2, 3)),
    row("_npi_full_like", lambda a: np.full_like(a, 2.5), [R.uniform(size=(2, 3))],
        {"fill_value": 2.5}, grad=()),
    row("_npi_hsplit", lambda x: np.hsplit(x, [1, 3]), [R.uniform(size=(2, 4))],
        {"indices": (0, 1, 3), "axis": 1}),
    row("_npi_unique", lambda x: np.unique(x), [R.randint(0, 4, (3, 4)).astype(np.float64)],
        grad=()),
    row("_npi_pinv", lambda a, rcond: np.linalg.pinv(a, rcond), [R.uniform(-1, 1, (4, 3)),
                                                               np.array(1e-15)],
        grad=(), rtol=1e-10, atol=1e-10),
    # eigenvalues in no fixed order: the row sorts them (eigenvectors: the test below)
    Spec("_npi_eig", lambda a: mx.nd.sort(op_function("_npi_eig")(a)[0]),
         lambda a: np.sort(np.linalg.eigvalsh(a)), [_symmetric(4)], grad=(), op="_npi_eig",
         rtol=1e-10, atol=1e-10),
]


globals().update(row_tests(SPECS))


def test_eig_satisfies_a_v_equals_v_w():
    """``_npi_eig`` (eigenvalues in NumPy's order, which is not unique): each column of
    v is an eigenvector of its eigenvalue."""
    a = _symmetric(4)
    w, v = [y.asnumpy() for y in op_function("_npi_eig")(*to_nd([a]))]
    np.testing.assert_allclose(a @ v, v * w, rtol=1e-10, atol=1e-10)
