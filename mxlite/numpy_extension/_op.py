"""The op functions of ``mx.npx``, made from the registry like ``mx.nd``'s but taking
``mx.np.ndarray`` (a legacy NDArray is refused with MXNet's error)."""
from ..operator.registry import OPS
from ..nd.register import make_function

# npx name -> registry op
NPX_OPS = {
    "relu": "_npx_relu", "sigmoid": "_npx_sigmoid", "softmax": "_npx_softmax",
    "log_softmax": "_npx_log_softmax", "activation": "_npx_activation",
    "batch_dot": "_npx_batch_dot", "batch_flatten": "_npx_batch_flatten",
    "batch_norm": "_npx_batch_norm", "convolution": "_npx_convolution",
    "deconvolution": "_npx_deconvolution", "pooling": "_npx_pooling",
    "fully_connected": "_npx_fully_connected", "embedding": "_npx_embedding",
    "dropout": "_npx_dropout", "layer_norm": "_npx_layer_norm",
    "sequence_mask": "_npx_sequence_mask", "one_hot": "_npx_one_hot", "pick": "_npx_pick",
    "topk": "_npx_topk", "gather_nd": "_npi_gather_nd", "rnn": "_npx_rnn",
    "leaky_relu": "_npx_leaky_relu", "erf": "_npx_erf", "erfinv": "_npx_erfinv",
    "gamma": "_npx_gamma", "gammaln": "_npx_gammaln", "shape_array": "_npx_shape_array",
    "reshape_like": "_npx_reshape_like", "slice": "_npx_slice", "smooth_l1": "_npx_smooth_l1",
    "arange_like": "_npx_arange_like", "cast": "_npx_cast", "roi_pooling": "_npx_roi_pooling",
    "multibox_prior": "_npx_multibox_prior", "multibox_target": "_npx_multibox_target",
    "multibox_detection": "_npx_multibox_detection", "reshape": "_npx_reshape",
    "nonzero": "_npx_nonzero", "constraint_check": "_npx_constraint_check",
}

__all__ = []
for _name, _op in NPX_OPS.items():
    if _op in OPS:
        globals()[_name] = make_function(OPS[_op], _name, face="np")
        __all__.append(_name)
