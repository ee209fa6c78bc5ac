"""mx.np's matrix and contraction functions run MXNet's ops (``_npi_tril``, ``_np_trace``,
``_npi_tensordot``, ``_npi_einsum`` ...): NumPy's values, gradients checked against
central differences (float64, second order too), MXNet 1.9.1's gradients and graph."""
import json
import os

import numpy as onp
import pytest

import mxlite as mx
from mxlite import np, npx
from optable import row_tests
from test_np_ops import as_np, case

R = onp.random.RandomState(5)


def u(*shape):
    return R.uniform(-1, 1, shape)


CASES = [
    case("tril", as_np(lambda x: np.tril(x, -1)), lambda x: onp.tril(x, -1), [u(2, 3, 4)]),
    case("trace", as_np(lambda x: np.trace(x, 1, 2, 0)), lambda x: onp.trace(x, 1, 2, 0),
         [u(3, 2, 4)]),
    case("diagonal", as_np(lambda x: np.diagonal(x, -1, 0, 2)),
         lambda x: onp.diagonal(x, -1, 0, 2), [u(4, 2, 3)]),
    case("diag of a matrix", as_np(lambda x: np.diag(x, 1)), lambda x: onp.diag(x, 1),
         [u(3, 4)]),
    case("diag of a vector", as_np(lambda x: np.diag(x, -1)), lambda x: onp.diag(x, -1),
         [u(3)]),
    case("roll", as_np(lambda x: np.roll(x, (1, -2), (0, 1))),
         lambda x: onp.roll(x, (1, -2), (0, 1)), [u(3, 4)]),
    case("roll flat", as_np(lambda x: np.roll(x, 5)), lambda x: onp.roll(x, 5), [u(3, 4)]),
    case("rot90", as_np(lambda x: np.rot90(x, 3, (2, 0))), lambda x: onp.rot90(x, 3, (2, 0)),
         [u(2, 3, 4)]),
    case("diff", as_np(lambda x: np.diff(x, 2, 0)), lambda x: onp.diff(x, 2, 0), [u(5, 3)]),
    case("diff to one", as_np(lambda x: np.diff(x, 2)), lambda x: onp.diff(x, 2), [u(2, 3)]),
    case("arctan2", as_np(np.arctan2), onp.arctan2, [u(3, 1), u(4) + 2], grad=(0, 1)),
    case("arctan2 scalar", as_np(lambda x: np.arctan2(x, 1.5)), lambda x: onp.arctan2(x, 1.5),
         [u(3, 4)]),
    case("rarctan2 scalar", as_np(lambda x: np.arctan2(1.5, x)), lambda x: onp.arctan2(1.5, x),
         [u(3, 4)]),
    case("tensordot int", as_np(lambda a, b: np.tensordot(a, b, 2)),
         lambda a, b: onp.tensordot(a, b, 2), [u(2, 3, 4), u(3, 4, 5)], grad=(0, 1)),
    case("tensordot pairs", as_np(lambda a, b: np.tensordot(a, b, ([0, 2], [2, 1]))),
         lambda a, b: onp.tensordot(a, b, ([0, 2], [2, 1])), [u(2, 3, 4), u(5, 4, 2)],
         grad=(0, 1)),
    case("inner", as_np(np.inner), onp.inner, [u(2, 3), u(4, 3)], grad=(0, 1)),
    case("outer", as_np(np.outer), onp.outer, [u(2, 3), u(4)], grad=(0, 1),
         op="_npi_tensordot_int_axes"),
    case("vdot", as_np(np.vdot), onp.vdot, [u(2, 3), u(3, 2)], grad=(0, 1),
         op="_npi_tensordot_int_axes"),
    case("einsum matmul", as_np(lambda a, b: np.einsum("ij,jk->ik", a, b)),
         lambda a, b: onp.einsum("ij,jk->ik", a, b), [u(2, 3), u(3, 4)], grad=(0, 1)),
    case("einsum sum away and implicit", as_np(lambda a, b: np.einsum("bij,bk", a, b)),
         lambda a, b: onp.einsum("bij,bk", a, b), [u(2, 3, 4), u(2, 5)], grad=(0, 1)),
    case("einsum diagonal", as_np(lambda a: np.einsum("ii->i", a)),
         lambda a: onp.einsum("ii->i", a), [u(3, 3)]),
    case("einsum three operands", as_np(lambda a, b, c: np.einsum("ij,jk,k->i", a, b, c)),
         lambda a, b, c: onp.einsum("ij,jk,k->i", a, b, c), [u(2, 3), u(3, 4), u(4)],
         grad=(0, 1, 2)),
    case("einsum batched '...'", as_np(lambda a, b: np.einsum("...ij,...jk->...ik", a, b)),
         lambda a, b: onp.einsum("...ij,...jk->...ik", a, b), [u(2, 2, 3), u(2, 3, 4)],
         grad=(0, 1)),
    case("einsum '...' implicit output, ranks differ",
         as_np(lambda a, b: np.einsum("...i,...i", a, b)),
         lambda a, b: onp.einsum("...i,...i", a, b), [u(3, 4), u(4)], grad=(0, 1)),
    case("einsum '...' broadcast from size 1", as_np(lambda a, b: np.einsum("...ij,...jk", a, b)),
         lambda a, b: onp.einsum("...ij,...jk", a, b), [u(1, 2, 3), u(4, 3, 5)], grad=(0, 1)),
    case("einsum '...' diagonal", as_np(lambda a: np.einsum("...ii->...i", a)),
         lambda a: onp.einsum("...ii->...i", a), [u(2, 3, 3)]),
]


globals().update(row_tests(CASES))


# gradient of f(x).sum() at x = [[1, 2], [3, 4]] as MXNet 1.9.1 gives it
MXNET_GRADS = {
    "tril": (lambda x: np.tril(x), [[1, 0], [1, 1]]),
    "trace": (lambda x: np.trace(x), [[1, 0], [0, 1]]),
    "roll": (lambda x: np.roll(x, 1, 0) * np.array([[1.0, 2], [3, 4]]), [[3, 4], [1, 2]]),
    "arctan2": (lambda x: np.arctan2(x, x + 1), [[0.2, 0.07692307], [0.04, 0.02439025]]),
    "arctan2 scalar": (lambda x: np.arctan2(x, 2.0), [[0.4, 0.25], [0.15384616, 0.1]]),
    "tensordot": (lambda x: np.tensordot(x, x, ([0], [1])), [[7, 11], [9, 13]]),
    "einsum": (lambda x: np.einsum("ij,jk->ik", x, x), [[7, 11], [9, 13]]),
    "inner": (lambda x: np.inner(x, x), [[8, 12], [8, 12]]),
    "outer": (lambda x: np.outer(x, x), [[20, 20], [20, 20]]),
    "vdot": (lambda x: np.vdot(x, x), [[2, 4], [6, 8]]),
    "diagonal": (lambda x: np.diagonal(x), [[1, 0], [0, 1]]),
    "diff": (lambda x: np.diff(x, 1, 0) * np.array([[5.0, 7]]), [[-5, -7], [5, 7]]),
}


@pytest.mark.parametrize("name", sorted(MXNET_GRADS))
def test_gradients_agree_with_mxnet_191(name):
    f, want = MXNET_GRADS[name]
    onp.testing.assert_allclose(grad_of_sum(f, [[1.0, 2], [3, 4]]), want, rtol=1e-6)


def grad_of_sum(f, x):
    """The gradient of ``f(x).sum()`` at ``x``, as a NumPy array."""
    x = np.array(x)
    x.attach_grad()
    with mx.autograd.record():
        y = f(x).sum()
    y.backward()
    return x.grad.asnumpy()


class _Block(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        n = F.np
        outs = [n.tril(x), n.trace(x), n.roll(x, 1, 0), n.arctan2(x, x + 1), n.arctan2(x, 2.0),
                n.arctan2(2.0, x), n.tensordot(x, x, 1), n.tensordot(x, x, ([0], [1])),
                n.einsum("ij,jk->ik", x, x), n.inner(x, x), n.outer(x, x), n.vdot(x, x),
                n.diagonal(x), n.diag(x)]
        total = outs[0].sum()
        for o in outs[1:]:
            total = total + o.sum()
        return total


def test_hybridized_block_gives_mxnet_value_and_op_names(tmp_path):
    npx.set_np()
    try:
        net = _Block()
        net.hybridize()
        y = net(np.array([[1.0, 2], [3, 4]]))
        assert float(y) == pytest.approx(385.653076171875, rel=1e-6)    # MXNet 1.9.1's
        net.export(os.path.join(str(tmp_path), "m"))
        with open(os.path.join(str(tmp_path), "m-symbol.json")) as f:
            ops = [n["op"] for n in json.load(f)["nodes"]]
    finally:
        npx.reset_np()
    want = ["_npi_tril", "_np_trace", "_np_roll", "_npi_arctan2", "_npi_arctan2_scalar",
            "_npi_rarctan2_scalar", "_npi_tensordot_int_axes", "_npi_tensordot",
            "_npi_einsum", "_npi_tensordot", "_npi_tensordot_int_axes",
            "_npi_tensordot_int_axes", "_np_diagonal", "_np_diag"]
    assert [o for o in ops if o in set(want)] == want


def test_errors_name_the_op():
    with pytest.raises(mx.MXNetError, match="_npi_tensordot.*shape mismatch"):
        np.tensordot(np.ones((2, 3)), np.ones((4, 2)), ([1], [0]))
    with pytest.raises(ValueError, match="same length"):
        np.tensordot(np.ones((2, 3)), np.ones((3, 2)), ([0, 1], [1]))
    with pytest.raises(mx.MXNetError, match="_np_diag.*1-D or 2-D"):
        np.diag(np.ones((2, 2, 2)))
