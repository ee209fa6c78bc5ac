"""Checkpoints of models built with the legacy RNN cells: the fused gate weights are
saved unpacked (one array per gate) and packed again on loading, as MXNet does."""
from ..model import save_checkpoint, load_checkpoint
from .rnn_cell import BaseRNNCell

__all__ = ["rnn_unroll", "save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]


def _as_list(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix="", layout="NTC"):
    """Deprecated (warns): ``cell.unroll``. Without ``inputs``, one variable per step
    named ``input_prefix + 't%d_data'``."""
    import warnings
    from .. import symbol
    warnings.warn("rnn_unroll is deprecated. Please call cell.unroll directly.")
    if inputs is None:
        inputs = [symbol.Variable("%st%d_data" % (input_prefix, i)) for i in range(length)]
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state, layout=layout)


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """Save ``prefix-symbol.json`` and ``prefix-%04d.params`` with the weights of
    ``cells`` (a cell or a list of cells) unpacked per gate.

    Examples
    --------
    >>> mx.rnn.save_rnn_checkpoint(cell, 'lm', 1, net, arg_params, aux_params)
    """
    for cell in _as_list(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """Load what :func:`save_rnn_checkpoint` saved, packing the weights of ``cells``
    again; returns ``(symbol, arg_params, aux_params)``."""
    sym, arg, aux = load_checkpoint(prefix, epoch)
    for cell in _as_list(cells):
        arg = cell.pack_weights(arg)
    return sym, arg, aux


def do_rnn_checkpoint(cells, prefix, period=1):
    """An epoch-end callback for ``Module.fit`` that calls :func:`save_rnn_checkpoint`
    every ``period`` epochs."""
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback
