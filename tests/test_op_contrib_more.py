"""Correlation, ModulatedDeformableConvolution, DeformablePSROIPooling, RROIAlign and hawkesll
(``mxlite/operator/nn/``: correlation, deformable_modulated, deformable_psroi,
roi_rotated, hawkes) against MXNet 1.9.1 and NumPy references.

Golden data: ``reference_extra/contrib_more.npz`` (made by
``reference_extra/gen_contrib_more.py`` under MXNet 1.9.1's CPU build). ``__manifest__``
lists the cases {name, op (path under mx.nd), kwargs, n_in, n_out, grad}; arrays are
``<name>/x<i>`` inputs, ``<name>/y<i>`` outputs, ``<name>/gy<i>`` head gradients and
``<name>/gx<i>`` input gradients (inputs listed in ``grad``), float32 and float64:

- Correlation (multiply and absolute difference, with ties): forward and both gradients;
- ModulatedDeformableConvolution: forward only (MXNet's backward is GPU-only);
- RROIAlign: forward only (MXNet has no backward);
- hawkesll: both outputs and the gradients of lda, alpha, beta, state.

MXNet's CPU build has no DeformablePSROIPooling kernel: it is checked against a
per-sample NumPy translation of MXNet's CUDA kernel (forward and backward, below), and
the ModulatedDeformableConvolution and DeformablePSROIPooling gradients against numeric
gradients in float64.
"""
import math

import numpy as np
import pytest

import mxlite as mx
import golden_manifest
from optable import case, row_tests

Z, MANIFEST = golden_manifest.load("contrib_more.npz")


@pytest.mark.parametrize("c", MANIFEST, ids=[c["name"] for c in MANIFEST])
def test_matches_mxnet(c):
    n = c["name"]
    xs, ys = golden_manifest.run(Z, c)
    f64 = xs[0].dtype == np.float64
    rtol, atol = (1e-10, 1e-12) if f64 else (1e-5, 1e-6)
    if c["op"] == "contrib.hawkesll":      # a long float32 recursion through exp and log
        rtol, atol = (1e-10, 1e-12) if f64 else (1e-6, 1e-5)
    for i, y in enumerate(ys):
        ref = Z["%s/y%d" % (n, i)]
        assert y.dtype == ref.dtype
        np.testing.assert_allclose(y.asnumpy(), ref, rtol=rtol, atol=atol)
    for i in c["grad"]:
        np.testing.assert_allclose(xs[i].grad.asnumpy(), Z["%s/gx%d" % (n, i)],
                                   rtol=rtol, atol=atol)


# -- Correlation ---------------------------------------------------------------------------

def test_correlation_hidden_outputs_are_padded_inputs():
    rng = np.random.RandomState(0)
    a, b = rng.uniform(-1, 1, (2, 3, 5, 4)), rng.uniform(-1, 1, (2, 3, 5, 4))
    op = mx.operator.get_op("Correlation")
    p = op.parse_params(dict(pad_size=2, max_displacement=2))
    out, t1, t2 = op.compute(p, np, a, b)
    assert out.shape == (2, 25, 5, 4)
    want = np.pad(a, ((0, 0), (0, 0), (2, 2), (2, 2))).transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(t1, want)
    assert t2.shape == (2, 9, 8, 3)


def test_correlation_even_kernel_is_an_error():
    x = mx.nd.ones((1, 1, 6, 6))
    with pytest.raises(mx.MXNetError, match="kernel_size"):
        mx.nd.Correlation(x, x, kernel_size=2)


CORR = [
    case("corr_mul", lambda a, b: mx.nd.Correlation(a, b, kernel_size=3, max_displacement=2,
                                                    pad_size=1, stride2=2),
         None, [np.random.RandomState(1).uniform(-1, 1, (1, 2, 6, 7)),
                np.random.RandomState(2).uniform(-1, 1, (1, 2, 6, 7))], grad=(0, 1), order=1),
    case("corr_sub", lambda a, b: mx.nd.Correlation(a, b, max_displacement=1, stride1=2,
                                                    is_multiply=False),
         None, [np.random.RandomState(3).uniform(-1, 1, (2, 2, 5, 5)),
                np.random.RandomState(4).uniform(-1, 1, (2, 2, 5, 5))], grad=(0, 1), order=1),
]


# -- ModulatedDeformableConvolution -----------------------------------------------------------

def _mdcn_inputs(rng, no_bias=False):
    xs = [rng.uniform(-1, 1, (2, 4, 6, 5)), rng.uniform(-2.5, 2.5, (2, 2 * 2 * 6, 3, 5)),
          rng.uniform(0, 1, (2, 2 * 6, 3, 5)), rng.uniform(-1, 1, (4, 2, 2, 3))]
    return xs if no_bias else xs + [rng.uniform(-1, 1, (4,))]


_MDCN_KW = dict(kernel=(2, 3), num_filter=4, stride=(2, 1), pad=(0, 1), num_group=2,
                num_deformable_group=2)

MDCN = [
    case("mdcn_all", lambda *x: mx.nd.contrib.ModulatedDeformableConvolution(*x, **_MDCN_KW),
         None, _mdcn_inputs(np.random.RandomState(3)), grad=(0, 1, 2, 3, 4), order=1),
    case("mdcn_nobias", lambda *x: mx.nd.contrib.ModulatedDeformableConvolution(
        *x, no_bias=True, **_MDCN_KW), None, _mdcn_inputs(np.random.RandomState(4), True),
        grad=(0, 1, 2, 3), order=1),
]


def test_modulated_deformable_conv_zero_offsets_unit_mask_is_convolution():
    rng = np.random.RandomState(5)
    x, w, b = rng.uniform(-1, 1, (2, 4, 6, 5)), rng.uniform(-1, 1, (6, 2, 3, 3)), \
        rng.uniform(-1, 1, (6,))
    kw = dict(kernel=(3, 3), num_filter=6, pad=(1, 1), num_group=2)
    y = mx.nd.contrib.ModulatedDeformableConvolution(
        mx.nd.array(x), mx.nd.zeros((2, 18, 6, 5)), mx.nd.ones((2, 9, 6, 5)),
        mx.nd.array(w), mx.nd.array(b), **kw)
    want = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), **kw)
    np.testing.assert_allclose(y.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)


def test_modulated_deformable_conv_bad_mask_shape():
    x = mx.nd.ones((1, 2, 4, 4))
    with pytest.raises(mx.MXNetError, match="mask has shape"):
        mx.nd.contrib.ModulatedDeformableConvolution(
            x, mx.nd.zeros((1, 18, 4, 4)), mx.nd.ones((1, 8, 4, 4)), mx.nd.ones((2, 2, 3, 3)),
            mx.nd.zeros((2,)), kernel=(3, 3), num_filter=2, pad=(1, 1))


# -- DeformablePSROIPooling: a per-sample translation of MXNet's CUDA kernel ------------------

def _dps_reference(data, rois, trans, ss, dim, gs, pooled, part, spp, tstd, no_trans, gy):
    """(out, top_count, gdata, gtrans), loop by loop as deformable_psroi_pooling.cu."""
    _, c, h, w = data.shape
    r_n = rois.shape[0]
    out = np.zeros((r_n, dim, pooled, pooled))
    cnt = np.zeros_like(out)
    gdata, gtrans = np.zeros_like(data), None if no_trans else np.zeros_like(trans)
    n_cls = 1 if no_trans else trans.shape[1] // 2
    each = dim // n_cls
    for n in range(r_n):
        b = int(rois[n, 0])
        rnd = [math.copysign(math.floor(abs(v) + 0.5), v) for v in rois[n, 1:]]
        sw, sh = rnd[0] * ss - 0.5, rnd[1] * ss - 0.5
        rw = max((rnd[2] + 1) * ss - 0.5 - sw, 0.1)
        rh = max((rnd[3] + 1) * ss - 0.5 - sh, 0.1)
        bw, bh = rw / pooled, rh / pooled
        for ct in range(dim):
            for ph in range(pooled):
                for pw in range(pooled):
                    p_h, p_w = int(math.floor(ph / pooled * part)), \
                        int(math.floor(pw / pooled * part))
                    cls = ct // each
                    tx = 0 if no_trans else trans[n, 2 * cls, p_h, p_w] * tstd
                    ty = 0 if no_trans else trans[n, 2 * cls + 1, p_h, p_w] * tstd
                    ws, hs = pw * bw + sw + tx * rw, ph * bh + sh + ty * rh
                    gw_ = min(max(int(math.floor(pw * gs / pooled)), 0), gs - 1)
                    gh_ = min(max(int(math.floor(ph * gs / pooled)), 0), gs - 1)
                    ch = (ct * gs + gh_) * gs + gw_
                    pts = []
                    for ih in range(spp):
                        for iw in range(spp):
                            xw, yh = ws + iw * bw / spp, hs + ih * bh / spp
                            if xw < -0.5 or xw > w - 0.5 or yh < -0.5 or yh > h - 0.5:
                                continue
                            pts.append((min(max(xw, 0), w - 1), min(max(yh, 0), h - 1)))
                    cnt[n, ct, ph, pw] = len(pts)
                    if not pts:
                        continue
                    img = data[b, ch]
                    dv = gy[n, ct, ph, pw] / len(pts)
                    total = 0.0
                    for xw, yh in pts:
                        x0, x1, y0, y1 = math.floor(xw), math.ceil(xw), math.floor(yh), \
                            math.ceil(yh)
                        dx, dy = xw - x0, yh - y0
                        total += (1 - dx) * (1 - dy) * img[y0, x0] + (1 - dx) * dy * img[y1, x0] \
                            + dx * (1 - dy) * img[y0, x1] + dx * dy * img[y1, x1]
                        for (yy, xx), q in (((y0, x0), (1 - dx) * (1 - dy)),
                                            ((y1, x0), (1 - dx) * dy),
                                            ((y0, x1), dx * (1 - dy)), ((y1, x1), dx * dy)):
                            gdata[b, ch, yy, xx] += q * dv
                        if no_trans:
                            continue
                        u00, u01, u10, u11 = img[y0, x0], img[y1, x0], img[y0, x1], img[y1, x1]
                        gtrans[n, 2 * cls, p_h, p_w] += \
                            (u11 * dy + u10 * (1 - dy) - u01 * dy - u00 * (1 - dy)) * tstd * dv * rw
                        gtrans[n, 2 * cls + 1, p_h, p_w] += \
                            (u11 * dx + u01 * (1 - dx) - u10 * dx - u00 * (1 - dx)) * tstd * dv * rh
                    out[n, ct, ph, pw] = total / len(pts)
    return out, cnt, gdata, gtrans


def _dps_case(rng, no_trans):
    dim, gs, pooled, part = 4, 3, 3, 2
    data = rng.uniform(-1, 1, (2, dim * gs * gs, 7, 8))
    rois = np.array([[0, 1.4, 2.0, 9.6, 12.2], [1, -3.0, 0.0, 6.0, 5.0],
                     [1, 10.0, 8.0, 30.0, 20.0], [0, 5.0, 5.0, 5.0, 5.0]])
    trans = rng.uniform(-1, 1, (4, 2 * 2, part, part))   # 2 classes of 2 output channels
    kw = dict(spatial_scale=0.5, output_dim=dim, group_size=gs, pooled_size=pooled,
              part_size=part, sample_per_part=3, trans_std=0.2, no_trans=no_trans)
    return data, rois, trans, kw


@pytest.mark.parametrize("no_trans", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_deformable_psroi_pooling_matches_cuda_kernel(no_trans, dtype):
    data, rois, trans, kw = _dps_case(np.random.RandomState(6), no_trans)
    data, rois, trans = (a.astype(dtype) for a in (data, rois, trans))
    gy = np.random.RandomState(9).uniform(-1, 1, (4, 4, 3, 3)).astype(dtype)
    out, cnt, gdata, gtrans = _dps_reference(
        data.astype(np.float64), rois.astype(np.float64), trans.astype(np.float64), 0.5, 4, 3,
        3, 2, 3, float(np.float32(0.2)), no_trans, gy.astype(np.float64))
    assert cnt.min() == 0 and cnt.max() == 9      # empty bins and full bins both covered
    xs = [mx.nd.array(a, dtype=dtype) for a in ((data, rois) if no_trans else (data, rois, trans))]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.DeformablePSROIPooling(*xs, **kw)
    y.backward(mx.nd.array(gy, dtype=dtype))
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    assert y.dtype == dtype
    np.testing.assert_allclose(y.asnumpy(), out, **tol)
    np.testing.assert_allclose(xs[0].grad.asnumpy(), gdata, **tol)
    np.testing.assert_array_equal(xs[1].grad.asnumpy(), 0)
    if not no_trans:
        np.testing.assert_allclose(xs[2].grad.asnumpy(), gtrans, **tol)
    op = mx.operator.get_op("_contrib_DeformablePSROIPooling")
    hidden = op.compute(op.parse_params(kw), np, *[x.asnumpy() for x in xs])[1]
    np.testing.assert_array_equal(hidden, cnt)


_DPS = _dps_case(np.random.RandomState(10), False)
# gradient rows: the float64 numeric gradient along a random direction (first order)
SPECS = CORR + MDCN + [
    case("dpsroi", lambda d, t: mx.nd.contrib.DeformablePSROIPooling(
        d, mx.nd.array(_DPS[1], dtype=np.float64), t, **_DPS[3]), None, [_DPS[0], _DPS[2]],
        grad=(0, 1), order=1)]
globals().update(row_tests(SPECS))


# -- RROIAlign ---------------------------------------------------------------------------

def test_rroi_align_has_no_backward():
    x = mx.nd.ones((1, 1, 4, 4))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.RROIAlign(x, mx.nd.array([[0, 2, 2, 2, 2, 0]]), pooled_size=(2, 2),
                                    spatial_scale=1.0)
    with pytest.raises(mx.MXNetError, match="backward is not supported"):
        y.backward()


def test_rroi_align_unrotated_constant_map():
    # every sample of an unrotated roi inside a constant map reads that constant
    x = mx.nd.full((1, 2, 8, 8), 3.0)
    y = mx.nd.contrib.RROIAlign(x, mx.nd.array([[0, 4, 4, 4, 2, 0]]), pooled_size=(2, 3),
                                spatial_scale=1.0, sampling_ratio=2)
    np.testing.assert_allclose(y.asnumpy(), 3.0)


# -- hawkesll ----------------------------------------------------------------------------

def _hawkes_inputs(rng):
    n, k, t = 2, 3, 6
    lags = rng.uniform(0.1, 1, (n, t))
    return [rng.uniform(0.3, 1.2, (n, k)), rng.uniform(0.1, 0.6, (k,)),
            rng.uniform(0.5, 3, (k,)), rng.uniform(0, 2, (n, k)), lags,
            rng.randint(0, k, (n, t)).astype(np.float64), np.array([6.0, 4.0]),
            lags.sum(axis=1) + 0.7]


def _hawkes_reference(lda, alpha, beta, state, lags, marks, vl, mt):
    """Log likelihood (N,) and new state, point by point in float64."""
    n, k = lda.shape
    ll, st = np.zeros(n), state.copy()
    for i in range(n):
        t, last = 0.0, np.zeros(k)
        for j in range(int(np.ceil(vl[i]))):
            m = int(marks[i, j])
            t += lags[i, j]
            ed = math.exp(-beta[m] * (t - last[m]))
            ll[i] += math.log(lda[i, m] + alpha[m] * beta[m] * st[i, m] * ed) \
                - lda[i, m] * (t - last[m]) - alpha[m] * st[i, m] * (1 - ed)
            st[i, m] = 1 + st[i, m] * ed
            last[m] = t
        ed = np.exp(-beta * (mt[i] - last))
        ll[i] -= np.sum(lda[i] * (mt[i] - last) + alpha * st[i] * (1 - ed))
        st[i] *= ed
    return ll, st


def test_hawkesll_gradient_is_the_loglik_derivative():
    # NOTE: MXNet's expf/logf are float32 even for float64 data: central differences of
    # the op itself are noise, so they run on the float64 reference instead.
    xs = _hawkes_inputs(np.random.RandomState(12))
    ll, st = _hawkes_reference(*xs)
    y = mx.nd.contrib.hawkesll(*[mx.nd.array(a, dtype=np.float64) for a in xs])
    np.testing.assert_allclose(y[0].asnumpy(), ll, rtol=1e-6)
    np.testing.assert_allclose(y[1].asnumpy(), st, rtol=1e-6)
    gll = np.array([0.7, -1.3])
    nds = [mx.nd.array(a, dtype=np.float64) for a in xs]
    for i in (0, 1, 2, 3):
        nds[i].attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.hawkesll(*nds)
    mx.autograd.backward(out, [mx.nd.array(gll, dtype=np.float64), mx.nd.ones((2, 3))])
    for i in (0, 1, 2):
        numeric = np.zeros(xs[i].size)
        for e in range(xs[i].size):
            plus = [a.copy() for a in xs]
            minus = [a.copy() for a in xs]
            plus[i].flat[e] += 1e-6
            minus[i].flat[e] -= 1e-6
            numeric[e] = np.dot(gll, _hawkes_reference(*plus)[0]
                                - _hawkes_reference(*minus)[0]) / 2e-6
        np.testing.assert_allclose(nds[i].grad.asnumpy().ravel(), numeric, rtol=1e-5,
                                   atol=1e-7)
    # as MXNet: the new state's head gradient is ignored and state gets none
    np.testing.assert_array_equal(nds[3].grad.asnumpy(), 0)


def test_hawkesll_mark_out_of_range():
    xs = [mx.nd.array(a) for a in _hawkes_inputs(np.random.RandomState(14))]
    xs[5][0, 1] = 3
    with pytest.raises(mx.MXNetError, match="marks"):
        mx.nd.contrib.hawkesll(*xs)


# -- mx.sym ------------------------------------------------------------------------------

def test_ops_through_symbol():
    """Every op here runs bound in a symbol graph and gives the imperative numbers."""
    rng = np.random.RandomState(15)
    var = mx.sym.var
    data, rois, trans, kw = _dps_case(rng, False)
    rroi = np.array([[0, 4.0, 3.0, 5.0, 3.0, 20.0]])
    hk = _hawkes_inputs(rng)
    mdcn = _mdcn_inputs(rng)
    rows = [
        (mx.sym.Correlation(var("a"), var("b"), max_displacement=2, pad_size=2),
         mx.nd.Correlation, {}, dict(a=data[:, :3], b=data[:, 3:6]),
         dict(max_displacement=2, pad_size=2)),
        (mx.sym.contrib.ModulatedDeformableConvolution(
            *[var(n) for n in ("d", "o", "m", "w", "b")], **_MDCN_KW),
         mx.nd.contrib.ModulatedDeformableConvolution, {},
         dict(zip(("d", "o", "m", "w", "b"), mdcn)), _MDCN_KW),
        (mx.sym.contrib.DeformablePSROIPooling(var("d"), var("r"), var("t"), **kw),
         mx.nd.contrib.DeformablePSROIPooling, {}, dict(d=data, r=rois, t=trans), kw),
        (mx.sym.contrib.RROIAlign(var("d"), var("r"), pooled_size=(2, 2), spatial_scale=1.0),
         mx.nd.contrib.RROIAlign, {}, dict(d=data[:, :2], r=rroi),
         dict(pooled_size=(2, 2), spatial_scale=1.0)),
        (mx.sym.contrib.hawkesll(*[var("h%d" % i) for i in range(8)])[0],
         lambda *x: mx.nd.contrib.hawkesll(*x)[0], {},
         {"h%d" % i: a for i, a in enumerate(hk)}, {}),
    ]
    for sym, fn, _, args, kwargs in rows:
        nd_args = {k: mx.nd.array(v) for k, v in args.items()}
        exe = sym.bind(mx.cpu(), nd_args)
        got = exe.forward()[0].asnumpy()
        want = fn(*[nd_args[k] for k in sym.list_arguments()], **kwargs)
        np.testing.assert_allclose(got, want.asnumpy(), rtol=1e-6, atol=1e-7)
    _, out_shapes, _ = rows[2][0].infer_shape(d=data.shape, r=rois.shape, t=trans.shape)
    assert out_shapes == [(4, 4, 3, 3)]
