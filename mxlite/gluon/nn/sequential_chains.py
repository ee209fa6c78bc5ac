"""Conv2D -> BatchNorm [-> relu] children of a HybridSequential, run as one step in an
unrecorded imperative call.

A HybridSequential passes each child's output to the next child alone, so where a
convolution layer is followed by a BatchNorm layer (and a relu Activation) the
intermediate outputs are seen by nothing else, as in a hybridized graph's chain
(``operator/nn/fused.py``). An unrecorded call (inference, not hybridized) runs such a
chain as the graph does: by ``_conv_batch_norm``, whose kernel applies BatchNorm's
affine and relu to each part of the convolution's output as it makes it (no passes
after), with the convolution's transform kept across calls (``Conv2D._kept_filters``).
The chain's numbers (a convolution's bias is taken into BatchNorm's mean: float32
round-off, as in the graph).

A chain runs its blocks one by one where any of them has a hook, is hybridized
itself, subclasses the layer, or where the data or parameters do not fit (the layers
then raise their own errors); a recorded call always does.

:func:`residual_relu` is ResNet v1's block, ``relu(shortcut + body(x))``: the body's last
Conv2D -> BatchNorm chain takes the sum and relu as it makes its output
(``_batch_norm_add_relu``, as a hybridized graph runs that block).
"""
from ...autograd import _state as _ag_state
from ...operator.nn import fused
from ...operator.nn.convolution import conv_out_size, geometry
from ...operator.registry import get_op, invoke
from ...util import _state as _np_state
from . import basic_layers, conv_layers

# the data and parameter names of the chain's inputs (its fused step orders them)
_CONV_INPUTS = ("data", "weight")
_BN_INPUTS = ("z", "gamma", "beta", "running_mean", "running_var")


class _Chain:
    """A run of children ``blocks`` (a Conv2D, a BatchNorm, maybe a relu) and the fused
    steps running them, alone and with a residual sum and relu after (made at the first
    call: the layers' params are known then)."""

    def __init__(self, blocks):
        self.blocks = blocks
        self.steps = {}

    def __call__(self, x, residual=None):
        """The chain's output for ``x`` (then ``relu(residual + .)`` where a residual is
        given), or None where it runs block by block."""
        conv, bn = self.blocks[:2]
        if x.ndim != 4 or any(b._forward_hooks or b._forward_pre_hooks or b._active
                              for b in self.blocks):
            return None
        ctx = x._ctx
        conv_params, bn_params = conv._params_on(ctx), bn._params_on(ctx)
        if conv_params is None or bn_params is None:        # (deferred: the first call)
            return None
        if x.shape[1] != conv_params["weight"].shape[1] * conv._kwargs["num_group"]:
            return None         # (the layer's own error)
        added = residual is not None
        step = self.steps.get(added)
        if step is None:
            step = self.steps[added] = self._fuse(conv, bn, added)
        if step is False:
            return None
        op, p, names = step
        if added and (residual.dtype != x.dtype or residual.shape != _output_shape(p, x)):
            return None         # (the sum broadcasts, or casts: the blocks' ops)
        arrays = dict(conv_params, data=x, residual=residual, **bn_params)
        return invoke(op, [arrays[n] for n in names], p)

    def _fuse(self, conv, bn, added):
        """(the fused op, its params, its input names), ``added``: with the residual sum
        and relu; or False where the chain has no fused step (``fused._conv_batch_norm`` 's
        rule)."""
        kept = conv._kept_filters()
        conv_op = kept[0] if kept is not None else get_op("Convolution")
        conv_p = kept[1] if kept is not None else conv_op.parse_params(conv._kwargs)
        bn_op = get_op("_batch_norm_add_relu" if added else "_contrib_BatchNormWithReLU"
                       if len(self.blocks) == 3 or type(bn) is basic_layers.BatchNormReLU
                       else "BatchNorm")
        bn_p = bn_op.parse_params(bn._kwargs)
        conv_ins = _CONV_INPUTS + (() if conv_p.no_bias else ("bias",))
        found = fused._conv_batch_norm(conv_op.name, bn_op.name, [
            (conv_p, conv_ins, None), (bn_p, _BN_INPUTS + (("residual",) if added else ()), 0)])
        return False if found is None else found


def _output_shape(p, x):
    """The output shape of a fused step ``p`` (its chain's convolution) for data ``x``."""
    conv_p = p.chain.conv_p
    out = conv_out_size("Convolution", x.shape[2:], *geometry(conv_p, 2, "Convolution"))
    return (x.shape[0], conv_p.num_filter) + out


def _chains(blocks):
    """{index of a chain's first block: its length} for ``blocks`` (the children)."""
    found, i = {}, 0
    while i + 1 < len(blocks):
        conv, bn = blocks[i], blocks[i + 1]
        if (type(conv) is conv_layers.Conv2D and conv.act is None
                and conv._op_name == "Convolution" and conv._layout == "NCHW"
                and type(bn) in (basic_layers.BatchNorm, basic_layers.BatchNormReLU)):
            nxt = blocks[i + 2] if i + 2 < len(blocks) else None
            relu = (type(bn) is basic_layers.BatchNorm and type(nxt) is basic_layers.Activation
                    and nxt._act_type == "relu")
            found[i] = 3 if relu else 2
            i += found[i]
        else:
            i += 1
    return found


def _chains_of(seq):
    """(``seq`` 's children, {index: the _Chain starting there}); no chains where autograd
    records or mx.np's semantics are on."""
    blocks = tuple(seq._children.values())
    if _ag_state.recording or _np_state.array:
        return blocks, {}
    held = seq.__dict__.get("_chains")
    if held is None or held[0] != blocks:
        found = _chains(blocks)
        held = (blocks, {i: _Chain(blocks[i:i + n]) for i, n in found.items()})
        seq.__dict__["_chains"] = held
    return held


def run(seq, x):
    """``seq`` 's children on NDArray ``x`` one after the other, its chains as one step
    each where they can."""
    blocks, chains = _chains_of(seq)
    return _run(blocks, chains, x, len(blocks))


def residual_relu(seq, x, residual):
    """``relu(residual + seq(x))`` for a HybridSequential ``seq`` and NDArrays ``x``,
    ``residual``, with its last Conv2D -> BatchNorm chain making the sum and relu as it
    makes its output where it can (the chain's numbers)."""
    blocks, chains = _chains_of(seq)
    last = chains.get(len(blocks) - 2)
    if (last is None or type(last.blocks[1]) is not basic_layers.BatchNorm
            or seq._forward_hooks or seq._forward_pre_hooks or seq._active):
        z = seq(x)
    else:
        y = _run(blocks, chains, x, len(blocks) - 2)
        out = last(y, residual)
        if out is not None:
            return out
        z = _run(blocks, chains, y, len(blocks), len(blocks) - 2)
    return invoke(_RELU[0], [residual + z], _RELU[1])


_RELU = (get_op("Activation"), get_op("Activation").parse_params({"act_type": "relu"}))


def _run(blocks, chains, x, stop, start=0):
    """The children ``blocks[start:stop]`` on ``x``, the ``chains`` among them fused."""
    i = start
    while i < stop:
        chain = chains.get(i)
        y = chain(x) if chain is not None else None
        if y is None:
            x = blocks[i](x)
            i += 1
        else:
            x = y
            i += len(chain.blocks)
    return x
