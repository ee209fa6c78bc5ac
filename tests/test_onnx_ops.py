"""ONNX export and import, operator by operator (``mx.onnx``, ``mx.contrib.onnx``).

Each row is a small Symbol with its inputs and parameters. The generic tests export
it, check the file with ``onnx.checker``, run it in onnxruntime and compare with
mxlite's own output, then import it back and compare again. A test checks that every
operator with an export translation has a row.

They need ``pip install ".[test]"`` (onnx and onnxruntime); without onnx they are
skipped with that reason, unless ``MXLITE_REQUIRE_ONNX=1`` (set by CI) turns the skip
into a failure.
"""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.operator.registry import OPS

S = mx.sym


def _onnx_missing():
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        return "onnx or onnxruntime is not installed (pip install \".[test]\"): %s" % e
    return None


ONNX_MISSING = _onnx_missing()
if ONNX_MISSING and os.environ.get("MXLITE_REQUIRE_ONNX") == "1":
    raise RuntimeError("MXLITE_REQUIRE_ONNX=1 but the ONNX tests cannot run: " + ONNX_MISSING)
needs_onnx = pytest.mark.skipif(ONNX_MISSING is not None, reason=str(ONNX_MISSING))

_rng = np.random.RandomState(7)


def _u(*shape, lo=-1.0, hi=1.0):
    return _rng.uniform(lo, hi, shape).astype(np.float32)


class Row:
    def __init__(self, id, sym, inputs, params=None, aux=None):
        self.id, self.sym, self.inputs = id, sym, inputs
        self.params, self.aux = params or {}, aux or {}

    def __repr__(self):
        return self.id


d = S.var("data")
d2 = S.var("data2")
X4 = _u(2, 3, 6, 6)
X2 = _u(4, 5)
X3 = _u(2, 3, 4)
POS = _u(2, 3, 4, lo=0.2, hi=2.0)


def _bn_params(prefix, c):
    return ({prefix + "_gamma": _u(c, lo=0.5, hi=1.5), prefix + "_beta": _u(c)},
            {prefix + "_moving_mean": _u(c), prefix + "_moving_var": _u(c, lo=0.5, hi=1.5)})


def _sym_op(name):
    return getattr(S._internal if name.startswith("_") else S, name)


def _unary_rows():
    rows = []
    domains = {"log": POS, "sqrt": POS, "reciprocal": POS, "arcsin": X3 * 0.9,
               "arccos": X3 * 0.9}
    for op in ("exp", "log", "sqrt", "abs", "negative", "reciprocal", "erf", "floor", "ceil",
               "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sign", "square", "relu",
               "sigmoid", "tanh", "softsign", "_copy", "BlockGrad", "Dropout", "Flatten",
               "MakeLoss", "LinearRegressionOutput", "MAERegressionOutput",
               "LogisticRegressionOutput"):
        x = domains.get(op, X3 * 3)
        if op in ("LinearRegressionOutput", "MAERegressionOutput", "LogisticRegressionOutput"):
            sym = getattr(S, op)(d, S.var("label"), name="out")
        else:
            sym = _sym_op(op)(d, name="out")
        rows.append(Row(op, sym, {"data": x}))
    rows.append(Row("round", S.round(d, name="out"), {"data": X3 * 3 + 0.01}))
    return rows


def _binary_rows():
    rows = []
    for op in ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div"):
        rows.append(Row(op, getattr(S, op)(d, d2), {"data": X3, "data2": POS}))
    for op in ("broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
               "broadcast_maximum", "broadcast_minimum"):
        rows.append(Row(op, getattr(S, op)(d, d2), {"data": X3, "data2": _u(2, 1, 4, lo=0.5)}))
    rows.append(Row("broadcast_power", S.broadcast_power(d, d2),
                    {"data": POS, "data2": _u(1, 3, 1)}))
    for op in ("_maximum", "_minimum", "_power"):
        rows.append(Row(op, _sym_op(op)(d, d2), {"data": POS, "data2": X3}))
    for op, v in (("_plus_scalar", 1.5), ("_minus_scalar", 2.0), ("_rminus_scalar", 2.0),
                  ("_mul_scalar", -3.0), ("_div_scalar", 4.0), ("_rdiv_scalar", 2.0),
                  ("_power_scalar", 2.0), ("_rpower_scalar", 1.5), ("_maximum_scalar", 0.1),
                  ("_minimum_scalar", 0.1)):
        x = POS if op in ("_rdiv_scalar",) else X3
        rows.append(Row(op, _sym_op(op)(d, scalar=v), {"data": x}))
    rows.append(Row("add_n", S.add_n(d, d2, d), {"data": X3, "data2": X3 * 2}))
    rows.append(Row("where", S.where(d2, d, -d), {"data": X3, "data2": (X3 > 0).astype(
        np.float32)}))
    return rows


def _layer_rows():
    rows = [
        Row("Convolution", S.Convolution(d, num_filter=4, kernel=(3, 3), stride=(2, 1),
                                         pad=(1, 0), dilate=(1, 2), name="conv"),
            {"data": X4}, {"conv_weight": _u(4, 3, 3, 3), "conv_bias": _u(4)}),
        Row("Convolution-group", S.Convolution(d, num_filter=6, kernel=(1, 1), num_group=3,
                                               no_bias=True, name="conv"),
            {"data": X4}, {"conv_weight": _u(6, 1, 1, 1)}),
        Row("Convolution-1d", S.Convolution(d, num_filter=2, kernel=(3,), name="conv"),
            {"data": X3}, {"conv_weight": _u(2, 3, 3), "conv_bias": _u(2)}),
        Row("Deconvolution", S.Deconvolution(d, num_filter=2, kernel=(3, 3), stride=(2, 2),
                                             pad=(1, 1), adj=(1, 1), name="deconv"),
            {"data": X4}, {"deconv_weight": _u(3, 2, 3, 3)}),
        Row("Deconvolution-target", S.Deconvolution(
            d, num_filter=2, kernel=(4, 4), stride=(2, 2), target_shape=(12, 12),
            no_bias=False, name="deconv"),
            {"data": X4}, {"deconv_weight": _u(3, 2, 4, 4), "deconv_bias": _u(2)}),
        Row("FullyConnected", S.FullyConnected(d, num_hidden=5, name="fc"), {"data": X4},
            {"fc_weight": _u(5, 108), "fc_bias": _u(5)}),
        Row("FullyConnected-noflatten", S.FullyConnected(d, num_hidden=5, flatten=False,
                                                         name="fc"),
            {"data": X3}, {"fc_weight": _u(5, 4), "fc_bias": _u(5)}),
        Row("FullyConnected-nobias", S.FullyConnected(d, num_hidden=5, flatten=False,
                                                      no_bias=True, name="fc"),
            {"data": X3}, {"fc_weight": _u(5, 4)}),
        Row("Embedding", S.Embedding(d, input_dim=7, output_dim=3, name="emb"),
            {"data": _rng.randint(0, 7, (2, 5)).astype(np.float32)},
            {"emb_weight": _u(7, 3)}),
    ]
    for fix_gamma, axis, x in ((False, 1, X4), (True, 1, X4), (False, -1, X3)):
        c = x.shape[axis]
        params, aux = _bn_params("bn", c)
        rows.append(Row("BatchNorm-fix%s-axis%d" % (fix_gamma, axis), S.BatchNorm(
            d, fix_gamma=fix_gamma, axis=axis, eps=1e-3, name="bn"), {"data": x}, params, aux))
    rows += [
        Row("InstanceNorm", S.InstanceNorm(d, eps=1e-3, name="inorm"), {"data": X4},
            {"inorm_gamma": _u(3), "inorm_beta": _u(3)}),
        Row("LayerNorm", S.LayerNorm(d, name="ln"), {"data": X3},
            {"ln_gamma": _u(4), "ln_beta": _u(4)}),
        Row("LayerNorm-axis1", S.LayerNorm(d, axis=1, name="ln"), {"data": X4},
            {"ln_gamma": _u(3), "ln_beta": _u(3)}),
        Row("GroupNorm", S.GroupNorm(d, num_groups=3, name="gn"), {"data": _u(2, 6, 3, 3)},
            {"gn_gamma": _u(3), "gn_beta": _u(3)}),
        Row("LRN", S.LRN(d, nsize=3, alpha=0.01, beta=0.7, knorm=1.5), {"data": X4}),
        Row("hard_sigmoid", S.hard_sigmoid(d, alpha=0.3, beta=0.4), {"data": X3 * 3}),
        Row("UpSampling", S.UpSampling(d, scale=2, sample_type="nearest"), {"data": X4}),
        Row("UpSampling-2", S.UpSampling(d, d2, scale=2, sample_type="nearest", num_args=2),
            {"data": X4, "data2": _u(2, 2, 3, 3)}),
        Row("UpSampling-sum", S.UpSampling(d, d2, scale=2, sample_type="nearest", num_args=2,
                                           multi_input_mode="sum"),
            {"data": X4, "data2": _u(2, 3, 3, 3)}),
    ]
    for mode in ("instance", "channel", "spatial"):
        rows.append(Row("L2Normalization-" + mode, S.L2Normalization(d, mode=mode),
                        {"data": X4}))
    for act in ("relu", "sigmoid", "tanh", "softrelu", "softsign", "log_sigmoid", "mish"):
        rows.append(Row("Activation-" + act, S.Activation(d, act_type=act), {"data": X3 * 3}))
    for act, kw in (("leaky", {"slope": 0.1}), ("elu", {"slope": 0.7}), ("selu", {}),
                    ("gelu", {})):
        rows.append(Row("LeakyReLU-" + act, S.LeakyReLU(d, act_type=act, **kw),
                        {"data": X3 * 3}))
    rows.append(Row("LeakyReLU-rrelu", S.LeakyReLU(d, act_type="rrelu")[0], {"data": X3 * 3}))
    rows.append(Row("LeakyReLU-prelu", S.LeakyReLU(d, act_type="prelu", name="pr"),
                    {"data": X4}, {"pr_gamma": _u(3)}))
    return rows


def _pool_rows():
    rows = []
    x = _u(2, 3, 7, 7)
    for kind in ("max", "avg", "sum", "lp"):
        kw = {"p_value": 2} if kind == "lp" else {}
        rows.append(Row("Pooling-global-" + kind, S.Pooling(d, pool_type=kind, global_pool=True,
                                                            kernel=(1, 1), **kw), {"data": x}))
        rows.append(Row("Pooling-" + kind, S.Pooling(d, pool_type=kind, kernel=(3, 3),
                                                     stride=(2, 2), pad=(1, 1), **kw),
                        {"data": x}))
    rows.append(Row("Pooling-max-full", S.Pooling(d, kernel=(2, 2), stride=(2, 2),
                                                  pooling_convention="full"), {"data": x}))
    rows.append(Row("Pooling-avg-full", S.Pooling(d, pool_type="avg", kernel=(3, 3),
                                                  stride=(2, 2), pooling_convention="full"),
                    {"data": _u(2, 3, 8, 8)}))
    rows.append(Row("Pooling-avg-exclude-pad", S.Pooling(
        d, pool_type="avg", kernel=(3, 3), pad=(1, 1), count_include_pad=False), {"data": x}))
    rows.append(Row("Pooling-1d", S.Pooling(d, kernel=(2,), stride=(2,)), {"data": X3}))
    return rows


def _softmax_rows():
    label = S.var("softmax_label")
    return [
        Row("softmax", S.softmax(d, axis=1), {"data": X3}),
        Row("softmax-temperature", S.softmax(d, temperature=2.0), {"data": X3}),
        Row("log_softmax", S.log_softmax(d, axis=-1), {"data": X3}),
        Row("SoftmaxOutput", S.SoftmaxOutput(d, label, name="softmax"), {"data": X2}),
        Row("SoftmaxOutput-4d", S.SoftmaxOutput(d, label, name="softmax"), {"data": X4}),
        Row("SoftmaxOutput-multi", S.SoftmaxOutput(d, label, multi_output=True,
                                                   name="softmax"), {"data": X4}),
        Row("SoftmaxOutput-preserve", S.SoftmaxOutput(d, label, preserve_shape=True,
                                                      name="softmax"), {"data": X3}),
        Row("SoftmaxActivation", S.SoftmaxActivation(d), {"data": X4}),
        Row("SoftmaxActivation-channel", S.SoftmaxActivation(d, mode="channel"), {"data": X4}),
    ]


def _shape_rows():
    x = _u(2, 3, 4, 5)
    return [
        Row("clip", S.clip(d, a_min=-0.3, a_max=0.5), {"data": X3}),
        Row("Cast", S.Cast(d, dtype="float64") * 2, {"data": X3}),
        Row("Reshape", S.Reshape(d, shape=(0, -1)), {"data": x}),
        Row("Reshape-codes", S.Reshape(d, shape=(-3, -2)), {"data": x}),
        Row("Reshape-split", S.Reshape(d, shape=(0, -4, 1, 3, 0, 0)), {"data": x}),
        Row("Reshape-reverse", S.Reshape(d, shape=(-1, 0), reverse=True), {"data": x}),
        Row("expand_dims", S.expand_dims(d, axis=-1), {"data": X3}),
        Row("squeeze", S.squeeze(d, axis=1), {"data": _u(2, 1, 4)}),
        Row("squeeze-all", S.squeeze(d), {"data": _u(2, 1, 4, 1)}),
        Row("transpose", S.transpose(d, axes=(0, 2, 3, 1)), {"data": x}),
        Row("transpose-reverse", S.transpose(d), {"data": x}),
        Row("SwapAxis", S.SwapAxis(d, dim1=1, dim2=3), {"data": x}),
        Row("Concat", S.Concat(d, d2, dim=1), {"data": X3, "data2": _u(2, 5, 4)}),
        Row("_rnn_param_concat", S._internal._rnn_param_concat(d, d2, dim=0, num_args=2),
            {"data": _u(3), "data2": _u(5)}),
        Row("SliceChannel", S.SliceChannel(d, num_outputs=3, axis=1)[1], {"data": x}),
        Row("SliceChannel-squeeze", S.Group(list(S.SliceChannel(
            d, num_outputs=3, axis=1, squeeze_axis=True))), {"data": x}),
        Row("slice", S.slice(d, begin=(0, 1, None), end=(None, 3, -1)), {"data": x}),
        Row("slice-step", S.slice(d, begin=(None, None, 3), end=(None, None, 0),
                                  step=(1, 2, -1)), {"data": x}),
        Row("slice_axis", S.slice_axis(d, axis=2, begin=1, end=None), {"data": x}),
        Row("sum", S.sum(d, axis=(1, 3)), {"data": x}),
        Row("sum-all", S.sum(d), {"data": x}),
        Row("mean", S.mean(d, axis=1, keepdims=True), {"data": x}),
        Row("mean-exclude", S.mean(d, axis=1, exclude=True), {"data": x}),
        Row("max", S.max(d, axis=-1), {"data": x}),
        Row("min", S.min(d, axis=0), {"data": x}),
        Row("prod", S.prod(d, axis=2), {"data": x}),
        Row("argmax", S.argmax(d, axis=1), {"data": x}),
        Row("argmin", S.argmin(d, axis=2, keepdims=True), {"data": x}),
        Row("argmax-flat", S.argmax(d), {"data": x}),
        Row("Pad-constant", S.Pad(d, mode="constant", constant_value=0.5,
                                  pad_width=(0, 0, 0, 0, 1, 2, 2, 1)), {"data": x}),
        Row("Pad-edge", S.Pad(d, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 2, 2)), {"data": x}),
        Row("Pad-reflect", S.Pad(d, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 2, 2)),
            {"data": x}),
        Row("dot", S.dot(d, d2), {"data": X3, "data2": _u(4, 2)}),
        Row("dot-transposed", S.dot(d, d2, transpose_a=True, transpose_b=True),
            {"data": _u(4, 3), "data2": _u(2, 4)}),
        Row("batch_dot-4d", S.batch_dot(d, d2, transpose_a=True),
            {"data": _u(2, 3, 4, 5), "data2": _u(2, 3, 4, 2)}),
        Row("_contrib_interleaved_matmul_selfatt_qk",
            S.contrib.interleaved_matmul_selfatt_qk(d, heads=2), {"data": _u(5, 3, 24)}),
        Row("_contrib_interleaved_matmul_selfatt_valatt",
            S.contrib.interleaved_matmul_selfatt_valatt(d, S.softmax(
                S.contrib.interleaved_matmul_selfatt_qk(d, heads=2)), heads=2),
            {"data": _u(5, 3, 24)}),
        Row("batch_dot", S.batch_dot(d, d2, transpose_b=True),
            {"data": X3, "data2": _u(2, 5, 4)}),
    ]


def _more_rows():
    x = _u(2, 3, 4, 5)
    ints = _rng.randint(-2, 3, (2, 3, 4)).astype(np.float32)
    ints2 = _rng.randint(-2, 3, (2, 1, 4)).astype(np.float32)
    rows = []
    for op in ("_equal", "_not_equal", "_greater", "_lesser", "_greater_equal",
               "_lesser_equal", "_logical_and", "_logical_or", "_logical_xor"):
        rows.append(Row(op, _sym_op(op)(d, d2), {"data": ints, "data2": ints[::-1].copy()}))
    for op in ("broadcast_equal", "broadcast_not_equal", "broadcast_greater",
               "broadcast_lesser", "broadcast_greater_equal", "broadcast_lesser_equal",
               "broadcast_logical_and", "broadcast_logical_or", "broadcast_logical_xor",
               "broadcast_mod"):
        rows.append(Row(op, getattr(S, op)(d, d2), {"data": ints * 1.5, "data2": ints2 + 3}))
    for op in ("_equal_scalar", "_not_equal_scalar", "_greater_scalar", "_lesser_scalar",
               "_greater_equal_scalar", "_lesser_equal_scalar"):
        rows.append(Row(op, _sym_op(op)(d, scalar=1.0), {"data": ints}))
    rows.append(Row("logical_not", S.logical_not(d), {"data": ints}))
    for op in ("sinh", "cosh", "arcsinh", "log2", "log10", "log1p", "expm1", "rsqrt"):
        rows.append(Row(op, getattr(S, op)(d), {"data": POS}))
    rows.append(Row("arccosh", S.arccosh(d), {"data": POS + 1}))
    rows.append(Row("arctanh", S.arctanh(d), {"data": X3 * 0.9}))
    rows += [
        Row("_zeros", d + _sym_op("_zeros")(shape=(2, 3, 4)), {"data": X3}),
        Row("_ones", S.broadcast_mul(d, _sym_op("_ones")(shape=(3, 4))), {"data": X3}),
        Row("_full", S.broadcast_add(d, _sym_op("_full")(shape=(1, 4), value=2.5)),
            {"data": X3}),
        Row("_arange", S.broadcast_add(d, _sym_op("_arange")(start=1, stop=9, step=2)),
            {"data": X2[:, :4]}),
        Row("_arange-repeat", S.broadcast_add(d, _sym_op("_arange")(start=4, repeat=2)),
            {"data": _u(3, 8)}),
        Row("zeros_like", S.zeros_like(d) + d, {"data": X3}),
        Row("ones_like", S.ones_like(d), {"data": X3}),
        Row("shape_array", S.shape_array(d), {"data": X3}),
        Row("size_array", S.size_array(d), {"data": X3}),
        Row("broadcast_to", S.broadcast_to(d, shape=(2, 0, 4)), {"data": _u(2, 1, 4)}),
        Row("broadcast_axis", S.broadcast_axis(d, axis=(1, 2), size=(3, 5)),
            {"data": _u(2, 1, 1)}),
        Row("broadcast_like", S.broadcast_like(d, d2), {"data": _u(1, 3, 1), "data2": X3}),
        Row("broadcast_like-axes", S.broadcast_like(d, d2, lhs_axes=(0,), rhs_axes=(1,)),
            {"data": _u(1, 4), "data2": X3}),
        Row("reshape_like", S.reshape_like(d, d2), {"data": _u(6, 4), "data2": X3}),
        Row("reshape_like-range", S.reshape_like(d, d2, lhs_begin=1, lhs_end=2, rhs_begin=1,
                                                 rhs_end=3), {"data": _u(2, 12), "data2": X3}),
        Row("stack", S.stack(d, d2, axis=1), {"data": X3, "data2": X3 * 2}),
        Row("tile", S.tile(d, reps=(2, 1, 3)), {"data": X3}),
        Row("tile-longer", S.tile(d, reps=(2, 1, 1, 2)), {"data": X3}),
        Row("tile-shorter", S.tile(d, reps=(2,)), {"data": X3}),
        Row("repeat", S.repeat(d, repeats=2, axis=1), {"data": X3}),
        Row("repeat-flat", S.repeat(d, repeats=3), {"data": X3}),
        Row("reverse", S.reverse(d, axis=(0, 2)), {"data": X3}),
        Row("take", S.take(d, d2, axis=1), {"data": X3, "data2": np.array(
            [[0, 2], [5, -1]], np.float32)}),
        Row("take-wrap", S.take(d, d2, mode="wrap"), {"data": X3, "data2": np.array(
            [3, -1], np.float32)}),
        Row("gather_nd", S.gather_nd(d, d2), {"data": X3, "data2": np.array(
            [[1, 0, 1], [2, 0, 1]], np.float32)}),
        Row("one_hot", S.one_hot(d, depth=4, on_value=2.0, off_value=-1.0),
            {"data": np.array([[0, 3], [1, 2]], np.float32)}),
        Row("topk", S.topk(d, k=2, axis=1), {"data": X3}),
        Row("topk-both", S.Group(list(S.topk(d, k=3, ret_typ="both", is_ascend=True))),
            {"data": X3}),
        Row("topk-value", S.topk(d, k=1, axis=-1, ret_typ="value"), {"data": X3}),
        Row("sort", S.sort(d, axis=1, is_ascend=False), {"data": X3}),
        Row("argsort", S.argsort(d, axis=-1), {"data": X3}),
        Row("depth_to_space", S.depth_to_space(d, block_size=2), {"data": _u(1, 8, 2, 3)}),
        Row("space_to_depth", S.space_to_depth(d, block_size=2), {"data": _u(1, 2, 4, 6)}),
        Row("norm", S.norm(d, axis=1), {"data": X3}),
        Row("norm-l1-all", S.norm(d, ord=1), {"data": X3}),
        Row("_contrib_AdaptiveAvgPooling2D", S.contrib.AdaptiveAvgPooling2D(d, output_size=1),
            {"data": X4}),
        Row("AdaptiveAvgPooling2D-3", S.contrib.AdaptiveAvgPooling2D(d, output_size=3),
            {"data": X4}),
        Row("_contrib_BilinearResize2D", S.contrib.BilinearResize2D(d, height=9, width=4),
            {"data": X4}),
        Row("BilinearResize2D-half-pixel", S.contrib.BilinearResize2D(
            d, height=9, width=4, align_corners=False), {"data": X4}),
        Row("_linalg_gemm2", S.linalg.gemm2(d, d2, transpose_b=True, alpha=0.5),
            {"data": X3, "data2": _u(2, 5, 4)}),
        Row("_contrib_div_sqrt_dim", S.contrib.div_sqrt_dim(d), {"data": X3}),
        Row("split_v2", S.Group(list(S.split_v2(d, indices_or_sections=(1, 3), axis=2))),
            {"data": X3}),
        Row("split_v2-squeeze", S.Group(list(S.split_v2(d, 3, axis=1, squeeze_axis=True))),
            {"data": X3}),
        Row("_split_v2", S.Group(list(S._internal._split_v2(d, indices=(0, 2), axis=-1))),
            {"data": X3}),
        Row("slice_like", S.slice_like(d, d2, axes=(0, 2)), {"data": X3, "data2": _u(1, 7, 2)}),
        Row("slice_like-all", S.slice_like(d, d2), {"data": X3, "data2": _u(1, 2, 3)}),
        Row("Crop", S.Crop(d, offset=(1, 2), h_w=(3, 2)), {"data": X4}),
        Row("Crop-center-like", S.Crop(d, d2, num_args=2, center_crop=True),
            {"data": X4, "data2": _u(1, 1, 3, 4)}),
        Row("_contrib_arange_like", S.broadcast_add(d, S.contrib.arange_like(
            d, start=1.0, step=0.5, repeat=2)), {"data": X3}),
        Row("arange_like-axis", S.broadcast_add(d, S.contrib.arange_like(d, axis=2)),
            {"data": X3}),
    ]
    return rows


def _rnn_rows():
    from mxlite.operator.nn.rnn import param_size
    rows = []
    for mode, layers, bidir in (("lstm", 2, True), ("gru", 1, False), ("gru", 2, True),
                                ("rnn_tanh", 2, False), ("rnn_relu", 1, True)):
        h, dirs = 3, 2 if bidir else 1
        kw = dict(state_size=h, num_layers=layers, bidirectional=bidir, mode=mode)
        size = param_size(S.RNN(d, S.var("w"), S.var("s"), **kw)._outputs[0][0].p, 4)
        states = {"state": _u(layers * dirs, 2, h)}
        if mode == "lstm":
            states["cell"] = _u(layers * dirs, 2, h)
        sym = S.RNN(d, S.var("rnn_w"), *[S.var(k) for k in states], state_outputs=True, **kw)
        rows.append(Row("RNN-%s-%d%s" % (mode, layers, "-bi" if bidir else ""),
                        S.Group(list(sym)), dict({"data": _u(5, 2, 4)}, **states),
                        {"rnn_w": _u(size)}))
    return rows


def _sequence_rows():
    rows = []
    for op in ("SequenceMask", "SequenceLast", "SequenceReverse"):
        cases = [(0, _u(5, 3, 2), [5, 1, 3]), (1, _u(3, 5), [2, 5, 4])]
        for axis, x, lengths in cases[:1] if op == "SequenceReverse" else cases:
            kw = {"value": -2.0} if op == "SequenceMask" else {}
            rows.append(Row("%s-axis%d" % (op, axis), getattr(S, op)(
                d, d2, use_sequence_length=True, axis=axis, **kw),
                {"data": x, "data2": np.array(lengths, np.float32)}))
        rows.append(Row(op + "-full", getattr(S, op)(d), {"data": _u(4, 3, 2)}))
    rows.append(Row("SequenceLast-axis1-full", S.SequenceLast(d, axis=1), {"data": _u(3, 4)}))
    return rows


ROWS = (_sequence_rows() + _unary_rows() + _binary_rows() + _layer_rows() + _pool_rows() + _softmax_rows()
        + _shape_rows() + _more_rows() + _rnn_rows())


def _mx_outputs(sym, inputs, params, aux):
    wanted = set(sym.list_inputs())
    args = {k: mx.nd.array(v, dtype=v.dtype) for k, v in dict(inputs, **params).items()
            if k in wanted}
    for name in sym.list_arguments():
        if name not in args:        # a loss label: not read at inference
            shapes = sym.infer_shape_partial(**{k: v.shape for k, v in args.items()})[0]
            args[name] = mx.nd.zeros(shapes[sym.list_arguments().index(name)])
    ex = sym.bind(mx.cpu(), args, aux_states={k: mx.nd.array(v, dtype=v.dtype)
                                              for k, v in aux.items()})
    return [o.asnumpy() for o in ex.forward()]


def _export(row, path, **kw):
    names = [n for n in row.sym.list_inputs() if n in row.inputs]
    params = {k: mx.nd.array(v) for k, v in dict(row.params, **row.aux).items()}
    return mx.onnx.export_model(row.sym, params, [row.inputs[n].shape for n in names],
                                np.float32, str(path), **kw), names


def _run_ort(path, feeds):
    import onnxruntime as ort
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, {k: v for k, v in feeds.items()
                           if k in {i.name for i in sess.get_inputs()}})


@needs_onnx
@pytest.mark.parametrize("row", ROWS, ids=repr)
def test_export_matches_onnxruntime_and_imports_back(row, tmp_path):
    import onnx
    want = _mx_outputs(row.sym, row.inputs, row.params, row.aux)
    path, names = _export(row, tmp_path / "m.onnx")
    onnx.checker.check_model(onnx.load(path), full_check=True)
    got = _run_ort(path, row.inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    sym, arg_params, aux_params = mx.contrib.onnx.import_model_(path)
    back = _mx_outputs(sym, {n: row.inputs[n] for n in names},
                       {k: v.asnumpy() for k, v in arg_params.items()},
                       {k: v.asnumpy() for k, v in aux_params.items()})
    for b, w in zip(back, want):
        np.testing.assert_allclose(b, w, rtol=1e-4, atol=1e-5)


def test_every_export_translation_has_a_row():
    from mxlite.onnx.mx2onnx._export_onnx import MXNetGraph
    covered = {OPS[n].name for row in ROWS for n in
               {node.op.name for node in row.sym._nodes() if node.op is not None}}
    registered = set(MXNetGraph.registry_[13])
    assert registered - covered == set()
