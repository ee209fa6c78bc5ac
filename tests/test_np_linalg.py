"""mx.np.linalg: operators under MXNet 1.9.1's names, recorded by autograd and traced by
hybridize. Rows check the forward against NumPy and the gradient against central
differences (float64); MXNet 1.9.1's own gradients and export names are pinned below."""
import json
import os

import numpy as onp
import pytest

import mxlite as mx
from mxlite import np, npx
from optable import COMPOSED, raising, row_tests
from test_np_ops import as_np, case

R = onp.random.RandomState(11)


def u(*shape):
    return R.uniform(-1, 1, shape)


def spd(n):
    b = u(n, n)
    return b @ b.T + n * onp.eye(n)


def signed_svd(a):
    """NumPy's svd with MXNet's signs: each row of v has its largest entry positive."""
    ut, s, v = onp.linalg.svd(a, full_matrices=False)
    flip = onp.where(onp.take_along_axis(v, abs(v).argmax(-1)[..., None], -1) < 0, -1, 1)
    flip = flip.astype(v.dtype)
    return ut * flip.swapaxes(-1, -2), s, v * flip


def signed_eigh(a):
    w, v = onp.linalg.eigh(a)
    flip = onp.where(onp.take_along_axis(v, abs(v).argmax(-2)[..., None, :], -2) < 0, -1, 1)
    return w, v * flip.astype(v.dtype)


L = np.linalg
CASES = [
    case("det", as_np(L.det), onp.linalg.det, [u(2, 3, 3) + 2 * onp.eye(3)]),
    case("inv", as_np(L.inv), onp.linalg.inv, [u(3, 3) + 3 * onp.eye(3)]),
    case("slogdet", as_np(lambda a: L.slogdet(a)[1]), lambda a: onp.linalg.slogdet(a)[1],
         [u(3, 3) + 2 * onp.eye(3)], order=1),
    # the gradient of cholesky assumes a symmetric change of A: A = B B^T + 3I gives one
    case("cholesky(B B^T)", as_np(lambda b: L.cholesky(b @ b.T + 3 * np.eye(3, dtype=b.dtype))),
         lambda b: onp.linalg.cholesky(b @ b.T + 3 * onp.eye(3, dtype=b.dtype)), [u(3, 3)],
         op="_npi_cholesky"),
    case("svd", as_np(L.svd), signed_svd, [u(3, 4)]),
    case("svd batch", as_np(L.svd), signed_svd, [u(2, 2, 3)], order=1),
    case("solve matrix", as_np(L.solve), onp.linalg.solve, [spd(3), u(3, 2)], grad=(0, 1)),
    case("solve vector", as_np(L.solve), onp.linalg.solve, [spd(3), u(3)], grad=(0, 1)),
    case("tensorinv", as_np(lambda a: L.tensorinv(a, 1)), lambda a: onp.linalg.tensorinv(a, 1),
         [(u(4, 4) + 4 * onp.eye(4)).reshape(4, 2, 2)]),
    case("tensorsolve", as_np(L.tensorsolve), onp.linalg.tensorsolve,
         [(u(6, 6) + 4 * onp.eye(6)).reshape(2, 3, 6), u(2, 3)], grad=(0, 1)),
    case("tensorsolve axes", as_np(lambda a, b: L.tensorsolve(a, b, axes=(0,))),
         lambda a, b: onp.linalg.tensorsolve(a, b, axes=(0,)),
         [(u(4, 4) + 4 * onp.eye(4)).reshape(4, 2, 2), u(2, 2)], grad=(0, 1), order=1),
    case("norm", as_np(L.norm), onp.linalg.norm, [u(3, 4)], op="_npi_norm"),
    case("norm axis", as_np(lambda x: L.norm(x, axis=1)), lambda x: onp.linalg.norm(x, axis=1),
         [u(3, 4)]),
    case("norm ord=3", as_np(lambda x: L.norm(x, 3, 0)), lambda x: onp.linalg.norm(x, 3, 0),
         [u(3, 4)], order=1),
    case("norm ord=1", as_np(lambda x: L.norm(x, 1, 1)), lambda x: onp.linalg.norm(x, 1, 1),
         [u(3, 4)], order=1),
    case("norm 2 (spectral)", as_np(lambda x: L.norm(x, 2)), lambda x: onp.linalg.norm(x, 2),
         [u(3, 4)], order=1, op="_npi_norm"),
    case("norm -2 axes", as_np(lambda x: L.norm(x, -2, (2, 0))),
         lambda x: onp.linalg.norm(x, -2, (2, 0)), [u(3, 2, 4)], order=1),
    case("norm nuc", as_np(lambda x: L.norm(x, "nuc")), lambda x: onp.linalg.norm(x, "nuc"),
         [u(4, 3)], order=1, op="_npi_norm"),
    case("norm fro keepdims", as_np(lambda x: L.norm(x, "fro", (0, 1), True)),
         lambda x: onp.linalg.norm(x, "fro", (0, 1), True), [u(3, 4)]),
    case("norm 1 matrix", as_np(lambda x: L.norm(x, 1, (0, 1))),
         lambda x: onp.linalg.norm(x, 1, (0, 1)), [u(3, 4)], order=1, op=COMPOSED),
    case("norm inf matrix", as_np(lambda x: L.norm(x, "inf", (1, 0))),
         lambda x: onp.linalg.norm(x, onp.inf, (1, 0)), [u(3, 4)], order=1, op=COMPOSED),
    # eigen-decompositions and pinv: MXNet records them with zero gradients
    case("eigh", as_np(L.eigh), signed_eigh, [spd(3)], grad=()),
    case("eigvalsh", as_np(L.eigvalsh), onp.linalg.eigvalsh, [spd(3)], grad=()),
    case("eigvals", as_np(lambda a: np.sort(L.eigvals(a))),
         lambda a: onp.sort(onp.linalg.eigvals(a).real),   # (NumPy >= 2.5 keeps complex)
         [onp.diag([3.0, 1.0, 2.0]) + onp.triu(u(3, 3), 1)], grad=(), op="_npi_eigvals"),
    case("pinv", as_np(L.pinv), onp.linalg.pinv, [u(3, 4)], grad=()),
]


CASES += [raising(
    "errors name the op and the shapes",
    (lambda: L.svd(np.ones((3, 2))), r"_npi_svd.*M <= N.*\(3, 2\)"),
    (lambda: L.tensorinv(np.ones((2, 3)), 1), r"_npi_tensorinv.*\(2, 3\)"),
    (lambda: L.solve(np.eye(3), np.ones(4)), r"_npi_solve.*b has shape \(4,\)"),
    (lambda: L.norm(np.ones(3), axis=1.5), "axis", TypeError),
    (lambda: L.eigvals(np.array([[0.0, -1.0], [1.0, 0.0]])), "eig.*complex"))]
globals().update(row_tests(CASES))


@pytest.mark.parametrize("fn", [L.eig, L.eigh, L.eigvals, L.eigvalsh, L.pinv,
                                lambda a: L.pinv(a, np.array(0.1))])
def test_eigen_and_pinv_record_a_zero_gradient_as_mxnet(fn):
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    a.attach_grad()
    with mx.autograd.record():
        ys = fn(a)
        loss = sum((y * 1).sum() for y in (ys if isinstance(ys, tuple) else (ys,)))
    loss.backward()
    assert a.grad.asnumpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_gradients_agree_with_mxnet_191():
    # values printed by MXNet 1.9.1 for the same computations (float32)
    x = np.array([[1.0, 2, 3], [4, -5, 7]])
    x.attach_grad()
    with mx.autograd.record():
        ut, s, v = L.svd(x)
        loss = (ut * 2).sum() + (s * s).sum() + (v * 3).sum()
    loss.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), [[2.5555987, 4.131775, 5.7701535],
                                                   [8.096371, -9.800503, 14.068907]], rtol=1e-5)
    a, b = np.array([[3.0, 1], [1, 2]]), np.array([[1.0, 2, 3], [4, 5, 6]])
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        loss = (L.solve(a, b) ** 2).sum()
    loss.backward()
    onp.testing.assert_allclose(a.grad.asnumpy(), [[-0.72, 9.36], [1.76, -25.28]], rtol=1e-5)
    onp.testing.assert_allclose(b.grad.asnumpy(), [[-1.2, -1.2, -1.2], [2.8, 3.2, 3.6]],
                                rtol=1e-5)
    x = np.array([[1.0, 2, 3], [4, 5, 7]])
    for ord_, want in ((2, [[0.14606714, 0.19232431, 0.27185145],
                            [0.3741921, 0.4926928, 0.69642395]]),
                       ("nuc", [[-0.6923594, 0.26435718, 0.67138195],
                                [0.7014747, 0.46457452, 0.5404659]])):
        x.attach_grad()
        with mx.autograd.record():
            y = L.norm(x, ord_)
        y.backward()
        onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_results_have_mxnet_shapes_and_classes():
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    with mx.util.np_shape(True):
        assert L.det(a).shape == () and [y.shape for y in L.slogdet(a)] == [(), ()]
    # as MXNet 1.9.1: without NumPy shape semantics det keeps the legacy op's (1,)
    assert L.det(a).shape == (1,)
    assert L.det(np.stack([a, a])).shape == (2,)
    assert all(type(y) is np.ndarray for y in L.svd(a) + L.eigh(a) + (L.norm(a),))
    assert L.solve(a, np.array([1.0, 2.0])).shape == (2,)
    assert L.norm(np.array([[1, 2], [3, 4]])).dtype == onp.float32


class _AllLinalg(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        la = F.np.linalg
        outs = [la.det(x), la.inv(x), la.cholesky(x), la.slogdet(x)[1], la.svd(x)[1],
                la.eigh(x)[0], la.eigvalsh(x), la.pinv(x), la.norm(x),
                la.norm(x, ord=1, axis=1), la.norm(x, "nuc"), la.norm(x, 2),
                la.norm(x, axis=0), la.norm(x, ord=3, axis=0), la.solve(x, x),
                la.eig(x)[0], la.eigvals(x), la.pinv(x, 0.1)]
        total = outs[0]
        for o in outs[1:]:
            total = total + o.sum()
        return total


def test_hybridized_linalg_matches_imperative_and_exports_mxnet_names(tmp_path):
    # the graph real MXNet 1.9.1 exports for this block names these ops, in this order
    want = ["_linalg_det", "_linalg_inverse", "_npi_cholesky", "_linalg_slogdet", "_npi_svd",
            "_npi_eigh", "_npi_eigvalsh", "_npi_pinv_scalar_rcond", "_npi_norm", "_npi_norm",
            "_npi_norm", "_npi_norm", "_npi_norm", "_npi_norm", "_npi_solve", "_npi_eig",
            "_npi_eigvals", "_npi_pinv_scalar_rcond"]
    npx.set_np()
    try:
        a = np.array([[4.0, 1.0], [1.0, 3.0]])
        net = _AllLinalg()
        net.initialize()
        eager = float(net(a))
        net.hybridize()
        assert float(net(a)) == pytest.approx(eager, rel=1e-6)
        assert eager == pytest.approx(96.07672, rel=1e-6)      # MXNet 1.9.1's value
        net.export(os.path.join(str(tmp_path), "m"))
        with open(os.path.join(str(tmp_path), "m-symbol.json")) as f:
            nodes = json.load(f)["nodes"]
        ops = [n["op"] for n in nodes if n["op"] not in ("null", "_np_sum", "_npi_add")]
        assert ops == want
        flags = [n["attrs"]["flag"] for n in nodes if n["op"] == "_npi_norm"]
        assert flags == ["-2", "-1", "2", "-1", "1", "-1"]
        loaded = mx.gluon.SymbolBlock.imports(os.path.join(str(tmp_path), "m-symbol.json"),
                                              ["data"], os.path.join(str(tmp_path),
                                                                     "m-0000.params"))
        assert float(loaded(a)) == pytest.approx(eager, rel=1e-6)
    finally:
        npx.reset_np()
