"""Operators behind ``mx.npx``.

In MXNet most npx ops are the legacy ops under a second name (``_npx_relu`` is ``relu``,
``_npx_fully_connected`` is ``FullyConnected``): the same op, so a graph still names
the legacy op. They are aliases here too. ``_npx_reshape`` (MXNet's reshape codes on
NumPy shapes) is an op of its own.
"""
from ...base import MXNetError, parse_bool, parse_shape
from ..registry import OPS, register_op, Param
from .shape import reshape_to
from ..tensor.shape import infer_reshape, NPX_RESHAPE_CODES
from .elemwise import derive

# mx.npx function -> (registry op, the legacy op it is an alias of; None for an op of its own)
NPX_OPS = {
    "relu": ("_npx_relu", None), "sigmoid": ("_npx_sigmoid", None),
    "softmax": ("_npx_softmax", "softmax"), "log_softmax": ("_npx_log_softmax", "log_softmax"),
    "activation": ("_npx_activation", "Activation"), "batch_dot": ("_npx_batch_dot", "batch_dot"),
    "batch_flatten": ("_npx_batch_flatten", "Flatten"),
    "batch_norm": ("_npx_batch_norm", "BatchNorm"),
    "convolution": ("_npx_convolution", "Convolution"),
    "deconvolution": ("_npx_deconvolution", "Deconvolution"),
    "pooling": ("_npx_pooling", "Pooling"),
    "fully_connected": ("_npx_fully_connected", "FullyConnected"),
    "embedding": ("_npx_embedding", "Embedding"), "dropout": ("_npx_dropout", "Dropout"),
    "layer_norm": ("_npx_layer_norm", "LayerNorm"),
    "sequence_mask": ("_npx_sequence_mask", "SequenceMask"),
    "one_hot": ("_npx_one_hot", "one_hot"), "pick": ("_npx_pick", "pick"),
    "topk": ("_npx_topk", "topk"), "gather_nd": ("_npi_gather_nd", "gather_nd"),
    "rnn": ("_npx_rnn", "RNN"), "leaky_relu": ("_npx_leaky_relu", "LeakyReLU"),
    "erf": ("_npx_erf", "erf"), "erfinv": ("_npx_erfinv", "erfinv"),
    "gamma": ("_npx_gamma", "gamma"), "gammaln": ("_npx_gammaln", "gammaln"),
    "shape_array": ("_npx_shape_array", "shape_array"),
    "reshape_like": ("_npx_reshape_like", "reshape_like"), "slice": ("_npx_slice", "slice"),
    "smooth_l1": ("_npx_smooth_l1", "smooth_l1"),
    "arange_like": ("_npx_arange_like", "_contrib_arange_like"),
    "cast": ("_npx_cast", "Cast"), "roi_pooling": ("_npx_roi_pooling", "ROIPooling"),
    "multibox_prior": ("_npx_multibox_prior", "_contrib_MultiBoxPrior"),
    "multibox_target": ("_npx_multibox_target", "_contrib_MultiBoxTarget"),
    "multibox_detection": ("_npx_multibox_detection", "_contrib_MultiBoxDetection"),
    "reshape": ("_npx_reshape", None), "nonzero": ("_npx_nonzero", None),
    "constraint_check": ("_npx_constraint_check", None),
}
for _op, _legacy in NPX_OPS.values():
    if _legacy is not None and _legacy in OPS and _op not in OPS:
        OPS[_op] = OPS[_legacy]

# MXNet registers these two as operators of their own (graphs name them _npx_relu and
# _npx_sigmoid): the legacy kernels and gradients under those names.
derive("_npx_relu", "relu", OPS["relu"].compute)
derive("_npx_sigmoid", "sigmoid", OPS["sigmoid"].compute)


register_op("_npx_reshape",
            lambda p, xp, x: x.reshape(infer_reshape(x.shape, p.newshape, p.reverse,
                                                     NPX_RESHAPE_CODES, "npx.reshape")),
            inputs=("a",), is_view=True, saves="",
            gradient=lambda p, x, y, gy, need: [reshape_to(gy[0], x[0].shape)],
            params=[Param("newshape", parse_shape), Param("reverse", parse_bool, False),
                    Param("order", str, "C")],
            doc="Reshape with MXNet's codes (-1 infer, -2 copy, -3 drop, -4 rest, -5 merge, "
                "-6 split).")


def _nonzero(p, xp, x):
    return xp.stack(xp.nonzero(x), axis=-1).astype("int64") if x.ndim else \
        xp.zeros((int(bool(x)), 0), "int64")


register_op("_npx_nonzero", _nonzero, inputs=("x",), shape_from_data=True,
            doc="Indices of the nonzero elements, one row per element (int64).")


def _constraint_check(p, xp, x):
    if not bool(xp.all(x)):
        raise MXNetError(p.msg)
    return xp.asarray(True)


register_op("_npx_constraint_check", _constraint_check, inputs=("input",),
            params=[Param("msg", str, "Constraint violated.")],
            doc="Raise ``msg`` unless every element of a bool array is true.")
