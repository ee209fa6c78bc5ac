"""SymbolBlock: a Gluon block that runs a Symbol graph (``SymbolBlock.imports`` loads
the files written by ``HybridBlock.export`` or by MXNet)."""
from ..nd.ndarray import NDArray
from .block import HybridBlock
from .np_face import _retype_np
from .parameter import ParameterDict, DeferredInitializationError
from .utils import shape_is_known

__all__ = ["SymbolBlock"]


class SymbolBlock(HybridBlock):
    """A Block that runs a Symbol graph: ``SymbolBlock(outputs, inputs, params=None)``.

    Every argument of ``outputs`` that is not an input becomes a Parameter (auxiliary
    states with ``grad_req='null'``), named exactly as in the graph. Shapes unknown
    until the first call are inferred from the input shapes.

    Examples
    --------
    >>> net = mx.gluon.SymbolBlock.imports('cnn-symbol.json', ['data'], 'cnn-0000.params')
    >>> y = net(mx.nd.ones((2, 3, 8, 8)))
    """

    def __init__(self, outputs, inputs, params=None):
        from ..symbol import Symbol, Group
        from .cached_graph import CachedGraph, flatten
        super().__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if isinstance(inputs, Symbol) and len(inputs) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = flatten(inputs)
        names = []
        for s in syms:
            if not isinstance(s, Symbol) or len(s) != 1 or s._outputs[0][0].op is not None:
                raise ValueError("SymbolBlock: inputs must be variables (mx.sym.var), got %r" % s)
            names.append(s.name)
        out = Group(outputs) if isinstance(outputs, (list, tuple)) else outputs
        for node in out._nodes():
            if node.op is None and node.attrs.get("__storage_type__") == "1":
                raise AssertionError("SymbolBlock doesn't support Parameter '%s' because its "
                                     "storage type is 'row_sparse'." % node.name)
        missing = [n for n in names if n not in out.list_inputs()]
        if missing:
            raise ValueError("SymbolBlock: input(s) %s are not used by the graph, whose inputs "
                             "are %s" % (missing, out.list_inputs()))
        for name in out.list_arguments():
            if name not in names:
                self.params.get(name, allow_deferred_init=True)
        for name in out.list_auxiliary_states():
            if name not in names:
                self.params.get(name, grad_req="null", allow_deferred_init=True)
        # As MXNet: registered under their names less the common prefix, so that a
        # SymbolBlock inside another block saves and loads its parameters by structure.
        import os
        cut = len(os.path.commonprefix(list(self.params.keys())))
        self._reg_params = {key[cut:]: p for key, p in self.params.items()}
        self._sym = out
        self._input_names = names
        self._multi = isinstance(outputs, (list, tuple)) or len(out) > 1
        self._graph = CachedGraph(out, names, {p.name: p for p in self.params.values()})
        self._graph.out_format = None
        self._cached_graph = ((self._in_format, self._graph),)
        self._graph.single = not self._multi

    def _clear_cached_op(self):
        pass      # the graph is the block: nothing to re-trace

    def forward(self, x, *args):
        from ..symbol import Symbol
        from .cached_graph import flatten
        flat, fmt = flatten((x,) + args)
        if len(flat) != len(self._input_names):
            raise ValueError("SymbolBlock: expected %d input(s) (%s), got %d"
                             % (len(self._input_names), ", ".join(self._input_names), len(flat)))
        if isinstance(flat[0], Symbol):
            out = self._sym._compose(dict(zip(self._input_names, flat)))
            return list(out) if self._multi else out
        if not all(isinstance(a, NDArray) for a in flat):
            raise TypeError("SymbolBlock: inputs must all be NDArrays or all Symbols")
        ctx = flat[0].context
        self._finish_shapes(flat)
        outs = self._graph(flat, ctx)
        if flat[0]._np:         # np inputs give np outputs (MXNet under set_np)
            outs = _retype_np(outs)
        return outs if self._multi else outs[0]

    def _finish_shapes(self, flat):
        pending = [p for p in self.params.values() if p._data is None]
        if not pending:
            return
        shapes = {n: a.shape for n, a in zip(self._input_names, flat)}
        args, _, aux = self._sym.infer_shape_partial(**shapes)
        known = dict(zip(self._sym.list_arguments(), args))
        known.update(zip(self._sym.list_auxiliary_states(), aux))
        types = {n: a.dtype for n, a in zip(self._input_names, flat)}
        arg_t, _, aux_t = self._sym.infer_type(**types)
        dtypes = dict(zip(self._sym.list_arguments(), arg_t))
        dtypes.update(zip(self._sym.list_auxiliary_states(), aux_t))
        for p in pending:
            shape = known.get(p.name)
            if not shape or not shape_is_known(shape):
                raise DeferredInitializationError(
                    "SymbolBlock: cannot infer the shape of Parameter '%s' from the input "
                    "shapes %s" % (p.name, shapes))
            p.shape = tuple(shape)
            if p._deferred_init:
                p._finish_deferred_init()

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError("SymbolBlock runs its graph; it has no hybrid_forward")

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """A SymbolBlock from ``-symbol.json`` (and ``.params``) files, as written by
        ``HybridBlock.export`` or MXNet. ``data`` and ``data0`` name the same single input."""
        from .. import symbol
        sym = symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        available = sym.list_inputs()
        names = []
        for n in input_names:
            if n not in available:
                alias = {"data0": "data", "data": "data0"}.get(n)
                if alias in available:
                    n = alias
            names.append(n)
        ret = SymbolBlock(sym, [symbol.var(n) for n in names])
        if param_file is not None:
            ret.collect_params().load(param_file, ctx=ctx, allow_missing=allow_missing,
                                      ignore_extra=ignore_extra, cast_dtype=True,
                                      dtype_source="saved")
        return ret
