"""The graph a hybridized block replays: a traced Symbol turned into a flat list of
op calls over numbered value slots.

The replay skips the Python work of the Block tree (no ``__call__``/hooks per layer,
no parameter lookups by name, no argument binding or param parsing per op) and,
where it can, the per-op work of :func:`mxlite.operator.invoke` too: each step runs
through :func:`~mxlite.operator.registry.run_step` on raw arrays, only the graph's
outputs become NDArrays, and a recording run leaves ONE autograd node for the whole
call (through :func:`~mxlite.autograd.record_node`). That node's gradient walks the
steps in reverse through :func:`~mxlite.autograd.node_backward`, so results and
gradients are those of the imperative run. Graphs with unusual ops (an
``output_ctx``) or outputs that are not plain step results replay op by op.
"""
from operator import add, attrgetter, is_, itemgetter

from ..base import MXNetError
from ..autograd import _state as _ag_state, later, record_node, node_backward
from ..nd.ndarray import NDArray, _wrap
from ..operator import registry as _registry
from ..operator.registry import run_step
from ..symbol.executor import monitor_labels, run_graph
from ..operator.nn.fused import (FUSIONS, keep_filters, subsample, unstrided_pointwise,
                                 watch_params)
from . import batch_parts

__all__ = ["CachedGraph", "flatten", "regroup", "check_structure"]


def flatten(args, what="input"):
    """Flatten nested lists/tuples of arrays (or Symbols) into a list and a format."""
    flat, fmt = [], []
    for a in args:
        if isinstance(a, (list, tuple)):
            sub, sub_fmt = flatten(a, what)
            flat.extend(sub)
            fmt.append(sub_fmt)
        else:
            flat.append(a)
            fmt.append(0)
    return flat, tuple(fmt)


def regroup(flat, fmt):
    """The inverse of :func:`flatten`: nested lists in the shape ``fmt`` describes."""
    out, k = [], 0
    for f in fmt:
        if f == 0:
            out.append(flat[k])
            k += 1
        else:
            sub, used = regroup(flat[k:], f)
            out.append(sub)
            k += used
    return out, k


def _mx_format(fmt, nones):
    """MXNet's input format: the nesting ``fmt`` with -1 at the None leaves."""
    it = iter(nones or (False,) * _count_leaves(fmt))

    def walk(f):
        return tuple(-1 if next(it) else 0 if g == 0 else walk(g) for g in f)
    return walk(fmt)


def _count_leaves(fmt):
    return sum(1 if f == 0 else _count_leaves(f) for f in fmt)


def check_structure(first_key, key):
    """As MXNet: a hybridized block takes the input structure of its first call again;
    only None arguments may be added or left out at the end (defaults)."""
    stored, fmt = _mx_format(*first_key), _mx_format(*key)
    if fmt == stored:
        return
    short, long_ = (stored, fmt) if len(stored) <= len(fmt) else (fmt, stored)
    if long_[:len(short)] == short and all(f == -1 for f in long_[len(short):]):
        return
    raise ValueError("The argument structure of HybridBlock does not match the cached version. "
                     "Stored format = %s, input format = %s" % (list(stored), list(fmt)))


class CachedGraph:
    """Replays ``symbol`` with inputs bound by position and parameters by name.

    Parameters
    ----------
    symbol : Symbol
        The traced outputs.
    input_names : list of str
        Names of the input variables, in call order.
    params : dict of str to Parameter
        The parameters (and auxiliary states) the graph reads, by variable name.
    """

    def __init__(self, symbol, input_names, params):
        self.symbol = symbol
        self._nodes = nodes = symbol._nodes()       # (topological order)
        slot_of = {}
        self.input_slots = []
        self.param_slots = []
        self._param_names = []
        self._params = {}       # the graph's parameters by variable name
        n = 0
        index = {name: k for k, name in enumerate(input_names)}
        for node in nodes:
            if node.op is None:
                slot_of[(id(node), 0)] = n
                if node.name in index:
                    self.input_slots.append((n, index[node.name]))
                elif node.name in params:
                    self.param_slots.append((n, params[node.name]))
                    self._param_names.append(node.name)
                    self._params[node.name] = params[node.name]
                else:
                    raise ValueError("the graph reads %r, which is neither an input (%s) nor a "
                                     "parameter" % (node.name, ", ".join(input_names)))
                n += 1
        self.steps = []
        self._nvis = []
        for node in nodes:
            if node.op is None:
                continue
            ins = tuple(slot_of[(id(c), i)] for c, i in node.inputs)
            nvis = node.num_visible()
            for i in range(nvis):
                slot_of[(id(node), i)] = n + i
            self.steps.append((node.op, node.p, ins, n, nvis > 1, id(node)))
            self._nvis.append(nvis)
            n += nvis
        self.n_slots = n
        self.out_slots = [slot_of[(id(node), i)] for node, i in symbol._outputs]
        self._param_slot_ids = [slot for slot, _ in self.param_slots]
        # the times the parameters may have changed (:meth:`_params_changed`), and what
        # tells that they did not since the last unrecorded inference
        self._epoch, self._seen = [0], None
        self._fuse_steps()
        self.input_names = list(input_names)
        # nodes like zeros((L, 0, H)) whose 0 dims are inferred per input shapes
        self._open = any(node.op is not None and not node.inputs and
                         0 in (node.p.get("shape") or (1,)) for node in nodes)
        self._resolved = {}
        self._params_only = [param for _, param in self.param_slots]
        self._param_cache = {}
        self._plan_fused()

    def _fuse_steps(self):
        """Run the chains of :data:`~mxlite.operator.nn.fused.FUSIONS` (pick(log_softmax),
        BatchNorm -> [elemwise_add ->] relu) as one step each, with the same numbers,
        where each value passed along a chain feeds only the next step, is not a graph
        output, and the moving statistics a fused step updates feed nothing else. The
        fused step runs where the chain's last step ran. And a 3x3 Convolution of a
        parameter keeps its weight's Winograd transform across inference calls while
        the weight is unchanged (``fused.keep_filters``); strided 1x1 convolutions that
        alone read one value share one copy of its strided positions
        (:meth:`_share_subsamples`). A fused convolution's step whose parameters all are
        the graph's is told the graph's count of their changes (``fused.watch_params``):
        it keeps its inference's call while the count stands."""
        self._keep_filters()
        uses = {}
        for step in self.steps:
            for i in step[2]:
                uses[i] = uses.get(i, 0) + 1
        outs = set(self.out_slots)
        producer = {step[3]: k for k, step in enumerate(self.steps)}
        dropped = set()
        for names, rule in FUSIONS:
            chain = [_registry.get_op(name) for name in names]
            for k, step in enumerate(self.steps):
                if step[0] is not chain[-1] or k in dropped:
                    continue
                links = self._chain_into(k, chain, uses, outs, producer, dropped)
                fused = None if links is None else rule([self.steps[j][1:3] + (via,)
                                                         for j, via in links])
                if fused is None or any(uses[fused[2][i]] != 1 for i in fused[0].mutate):
                    continue
                op, p, ins = fused
                self.steps[k] = (op, p, tuple(ins), step[3], False, step[5])
                dropped.update(j for j, _ in links[:-1])
        if dropped:
            keep = [k for k in range(len(self.steps)) if k not in dropped]
            self.steps = [self.steps[k] for k in keep]
            self._nvis = [self._nvis[k] for k in keep]
        self._share_subsamples()
        params = set(self._param_slot_ids)
        for op, p, ins, *_ in self.steps:
            watch_params(op, p, [i in params for i in ins], self._epoch)

    def _share_subsamples(self):
        """Where two or more strided 1x1 convolutions (``fused.unstrided_pointwise``) at one
        stride are all that reads a value (not a graph output), one step copies out its
        strided positions (``fused.subsample``) and each runs at stride 1 on that copy,
        which their kernels made each (ResNet's downsampling blocks: a block's first
        convolution and its shortcut's). The same values; and the gradients reaching the
        copy summed in the same order, then put in place, are the sums of those put in
        place, bit for bit."""
        uses, groups = {}, {}
        for k, (op, p, ins, first, multi, nid) in enumerate(self.steps):
            for i in ins:
                uses[i] = uses.get(i, 0) + 1
            found = unstrided_pointwise(op, p)
            if found is not None:
                groups.setdefault((ins[0], found[0]), []).append((k, found[1]))
        added = {}
        for (slot, stride), members in groups.items():
            if len(members) < 2 or uses[slot] != len(members) or slot in self.out_slots:
                continue
            s = self.n_slots
            self.n_slots += 1
            added[members[0][0]] = subsample(stride) + ((slot,), s, False, ("subsample", s))
            for k, (op, p) in members:
                ins, first, multi, nid = self.steps[k][2:]
                self.steps[k] = (op, p, (s,) + ins[1:], first, multi, nid)
        if added:
            steps, nvis = [], []
            for k, step in enumerate(self.steps):
                if k in added:
                    steps.append(added[k])
                    nvis.append(1)
                steps.append(step)
                nvis.append(self._nvis[k])
            self.steps, self._nvis = steps, nvis

    def _keep_filters(self):
        conv, params = _registry.get_op("Convolution"), dict(self.param_slots)
        for k, (op, p, ins, first, multi, nid) in enumerate(self.steps):
            param = params.get(ins[1]) if op is conv else None
            found = None if param is None else keep_filters(p, lambda param=param: param._data)
            if found is not None:
                self.steps[k] = (found[0], found[1], ins, first, multi, nid)

    def _chain_into(self, k, chain, uses, outs, producer, dropped):
        """The steps running ``chain``'s ops, first to last, that end with step ``k``, each
        feeding its first output to the next alone: [(step, the position where the
        previous one's output comes in)], or None."""
        links = [(k, None)]
        for op in reversed(chain[:-1]):
            ins = self.steps[links[0][0]][2]
            for pos, i in enumerate(ins):
                j = producer.get(i)
                if (j is not None and j not in dropped and self.steps[j][0] is op
                        and uses[i] == 1 and i not in outs):
                    links[0] = (links[0][0], pos)
                    links.insert(0, (j, None))
                    break
            else:
                return None
        return links

    def __call__(self, inputs, ctx):
        if self._fusable:
            outs = self._run_fused(inputs, ctx)
            if outs is not None:
                return outs
        return self._run_per_op(inputs, ctx)

    def _run_per_op(self, inputs, ctx, monitor=None):
        """The graph op by op through :func:`invoke` (``run_graph``); ``monitor(node,
        inputs, outputs)`` sees each op node after it ran."""
        named = dict(zip(self.input_names, inputs))
        named.update((name, param.data(ctx)) for name, param in self._params.items())
        return run_graph(self.symbol, self._nodes, named,
                         self._overrides(inputs) if self._open else None, monitor)

    def run_monitored(self, inputs, ctx, callback, monitor_all):
        """The graph op by op, calling ``callback(name, op_name, array)`` for each op's
        output (inputs first with ``monitor_all``), names as bytes (MXNet's C strings):
        a HybridBlock's op hook."""
        def monitor(node, xs, ys):
            op_name = node.op.name.encode()
            in_labels, out_labels = monitor_labels(node, len(ys))
            for name, a in zip(in_labels if monitor_all else [], xs):
                callback(name.encode(), op_name, a)
            for name, a in zip(out_labels, ys):
                callback(name.encode(), op_name, a)
        return self._run_per_op(inputs, ctx, monitor)

    def _param_arrays(self, ctx):
        """The parameters' arrays on ``ctx``, looked up once while no parameter's list
        of arrays is replaced (initialize, reset_ctx, cast and load replace it)."""
        lists, arrays = self._param_cache.get(ctx, (None, None))
        if lists is not None and all(map(is_, map(_RAW, self._params_only), lists)):
            return arrays       # (checked in C: ~270 parameters in ResNet-50)
        arrays = [param.data(ctx) for param in self._params_only]
        if len(self._param_cache) < 16:
            self._param_cache[ctx] = ([param._data for param in self._params_only], arrays)
        return arrays

    def _overrides(self, inputs):
        key = tuple(a.shape for a in inputs)
        found = self._resolved.get(key)
        if found is None:
            shapes = dict(zip(self.input_names, key))
            found = self._resolved[key] = self.symbol.resolved_params(**shapes)
        return found

    # -- the fused replay ------------------------------------------------------
    def _plan_fused(self):
        """Precompute what the fused replay needs per step: visible output count,
        in-place bumps, version checks and which outputs leave the graph."""
        self.leaf_slots = [s for s, _ in self.input_slots] + [s for s, _ in self.param_slots]
        self._leaves = leaves = set(self.leaf_slots)
        outs = self.out_slots
        out_pos = {s: i for i, s in enumerate(outs)}
        self._fusable = (len(out_pos) == len(outs) and not (leaves & set(outs)) and
                         all(op.output_ctx is None for op, *_ in self.steps))
        # root[s]: the graph input/param whose memory (and version) value s views
        root = {}
        for op, p, ins, first, multi, nid in self.steps:
            if op.is_view and "y" not in op.saves and ins:
                r = ins[0] if ins[0] in leaves else root.get(ins[0])
                if r is not None:
                    root[first] = r
        seen = leaves | set(outs)

        def key(s):
            """The user-visible NDArray slot whose version stands for value s."""
            k = root.get(s, s)
            return k if k in seen else None

        plan = []
        for (op, p, ins, first, multi, nid), nvis in zip(self.steps, self._nvis):
            mut = [(ins[i], key(ins[i])) for i in op.mutate if key(ins[i]) is not None]
            xchk = [key(s) for s in ins if key(s) is not None] if "x" in op.saves else []
            wrap = [(s, root.get(s)) for s in range(first, first + nvis) if s in out_pos]
            ychk = "y" in op.saves and bool(wrap)
            extra = (mut, xchk, wrap, ychk) if (mut or xchk or wrap) else None
            plan.append((op, p, ins, first, multi, nid, nvis, extra))
        self._plan = plan
        self._frees = self._plan_frees(plan, leaves | set(outs))
        self._backward_order = [(k, st[0], st[2], st[3], st[6])
                                for k, st in reversed(list(enumerate(plan)))]
        self._need = {}
        self._shapes_checked = set()
        self._shapes_vary = any(st[0].shape_from_data for st in plan)
        self._gop = _GraphOp(self)
        self._params_used = [st[1] for st in plan]
        self._takes = [_taker(st[2]) for st in plan]
        # the forward loop's per-step tuples: an unrecorded replay frees slots, a recorded
        # one keeps them for the backward
        run = [(op, take, first, multi, nvis, extra) for (op, p, ins, first, multi, nid, nvis,
                                                          extra), take in zip(plan, self._takes)]
        late, extras = self._plan_late_bumps(plan)
        # per parameter, the bumps of its version that a replay makes (:meth:`_params_changed`)
        index = {slot: i for i, slot in enumerate(self._param_slot_ids)}
        self._param_bumps = [0] * len(index)
        for st in plan:
            for _, k in st[7][0] if st[7] else ():
                if k in index:
                    self._param_bumps[index[k]] += 1
        self._run_free = [st[:5] + (e, f) for st, e, f in zip(run, extras, self._frees)]
        self._run_keep = [st + ((),) for st in run]
        # a replay on parts of the batch (batch_parts): each part's steps without the
        # version bumps and output wrapping, which the join does once
        self._run_bare = [st[:5] + (None, f) for st, f in zip(run, self._frees)]
        self._bumps = [(st[7][0], (), (), False) for st in plan if st[7] and st[7][0]]
        self._batch_parts = {}

    def _plan_late_bumps(self, plan):
        """(the graph inputs and parameters whose versions an unrecorded replay bumps once
        its steps ended, each step's in-place bumps and output wrapping in such a replay):
        a step's bump of an input or parameter it updates in place (BatchNorm's moving
        statistics) waits for the end where no later step reads it, which then sees the
        same versions as if it had come in place; the counts are the same when the
        replay returns.

        NOTE: ResNet-50 b1 bumps its 106 moving statistics at every call: 53 calls of
        :meth:`_step_extra` with the caches cold from the kernel before, ~300 us of the
        caller's Python a forward."""
        last = {}
        for k, step in enumerate(plan):
            for i in step[2]:
                last[i] = k
        late, extras = [], []
        for k, step in enumerate(plan):
            extra = step[7]
            if extra is None:
                extras.append(None)
                continue
            mut, _, wrap, _ = extra      # (an unrecorded replay checks no versions)
            now = [(i, r) for i, r in mut if i != r or last[i] > k]
            late += [r for i, r in mut if i == r and last[i] == k]
            extras.append((now, (), wrap, False) if now or wrap else None)
        self._late_bumps = late
        return late, extras

    def _plan_frees(self, plan, keep):
        """Per step: the slots an unrecorded replay drops after it, those it was the last
        to read (or made, when nothing reads them), so that an inference holds only the
        values still to be read, as the imperative run does (not every intermediate
        until it returns). Graph inputs, parameters and outputs are kept."""
        last = {}
        for k, (op, p, ins, first, multi, nid, nvis, extra) in enumerate(plan):
            for s in range(first, first + nvis):
                last[s] = k
            for s in ins:
                last[s] = k
        frees = [[] for _ in plan]
        for s, k in last.items():
            if s not in keep:
                frees[k].append(s)
        return [tuple(f) for f in frees]

    def _need_for(self, mask):
        """Per slot: whether its value depends on a graph input/param needing a gradient;
        whether an output needs one; and the backward walk for this mask, built once: per
        step in reverse, (k, op, first, nvis, its inputs' taker, the rule's ``need``, the
        (position, slot) of each input wanting a gradient), the taker None where the rule
        does not run (the step's outputs need no gradient)."""
        found = self._need.get(mask)
        if found is None:
            need = [False] * self.n_slots
            for s, m in zip(self.leaf_slots, mask):
                need[s] = m
            for op, p, ins, first, multi, nid, nvis, extra in self._plan:
                if op.gradient is not None and any(need[i] for i in ins):
                    need[first:first + nvis] = [True] * nvis
            walk = []
            reads = self._reads()
            for k, op, ins, first, nvis in self._backward_order:
                need_k = [need[i] for i in ins]
                wanted = tuple((pos, i) for pos, i in enumerate(ins) if need_k[pos])
                # the inputs whose gradient may come later: leaves this step alone reads
                later = tuple(pos for pos, i in wanted if reads.get(i) == 1 and i in self._leaves)
                walk.append((k, op, first, nvis, self._takes[k] if need[first] else None,
                             need_k, wanted, later))
            found = (need, any(need[s] for s in self.out_slots), walk)
            if len(self._need) < 64:
                self._need[mask] = found
        return found

    def leaf_names(self):
        """The graph's variable names in the order a recorded call's node takes its
        inputs: the inputs it reads, then the parameters (as :meth:`_run_fused` lists
        them)."""
        return [self.input_names[k] for _, k in self.input_slots] + self._param_names

    def _reads(self):
        """How many times the steps read each slot."""
        reads = {}
        for st in self._plan:
            for i in st[2]:
                reads[i] = reads.get(i, 0) + 1
        return reads

    def _run_fused(self, inputs, ctx):
        """Run the steps on raw arrays; record one autograd node when some input or
        parameter is in a recorded graph. None: use the per-op path instead."""
        for slot, k in self.input_slots:
            x = inputs[k]
            if not isinstance(x, NDArray) or (x._ctx is not ctx and x._ctx != ctx):
                return None     # the per-op path gives the proper error
        seen = self._params_changed(self._param_arrays(ctx))
        raw, nda = seen.raw.copy(), seen.nda.copy()     # (the parameters in their slots)
        leaves = []     # the NDArrays at leaf_slots
        for slot, k in self.input_slots:
            x = inputs[k]
            raw[slot] = x._data
            nda[slot] = x
            leaves.append(x)
        leaves += seen.arrays
        need = mask = None
        if _ag_state.recording:
            mask = tuple([x._entry is not None for x in leaves])
            if True in mask:
                need, out_needed, walk = self._need_for(mask)
            else:
                mask = None
        xp = ctx.xp or ctx.array_module()
        record = need is not None
        if not record:
            outs = batch_parts.run(self, raw, nda, ctx, xp)
            if outs is not None:
                self._params_seen(seen)
                return outs
        full = [] if record else None
        checks = [] if record else None
        used = self._replay_steps(inputs, raw, nda, xp, ctx, need, full, checks)
        self._params_seen(seen)
        outs = [nda[s] for s in self.out_slots]
        if record and out_needed:
            tape = _Tape(raw, full, used, walk, ctx, self._shape_check(mask, raw))
            record_node(self._gop, tape, leaves, outs, checks)
            for o, s in zip(outs, self.out_slots):
                if not need[s]:
                    o._entry = None
        return outs

    def _params_changed(self, arrays):
        """At a fused replay's start, with ``arrays`` the parameters' NDArrays
        (:meth:`_param_arrays`): bump the count of parameter changes (``_epoch``) unless
        every parameter is as the last unrecorded inference left it (the same NDArrays,
        holding the same arrays, at the versions it left: every in-place write bumps
        one; ``set_data`` writes in place; initialisation, ``cast``, ``reset_ctx`` and a
        load into a new context give new NDArrays). Returns the :class:`_ParamsSeen` of
        these arrays, with the counts their versions will have once this replay's own
        bumps are made (``_param_bumps``), which :meth:`_params_seen` keeps.

        NOTE: checked once a call for the graph's steps, each of which then checks only
        the count (``fused.watch_params``): checked in each step (its arrays' versions,
        the statistics' bytes), ~15 us a step of ResNet-50 b1's caller. The counts to
        come, worked out here rather than read again at the end (the versions cold from
        the kernels), and the parameters' lists checked in C: ResNet-50 b1's checks
        (these, :meth:`_param_arrays`, :meth:`_params_seen`) ~270 -> ~185 us a forward."""
        seen, self._seen = self._seen, None     # (None while a replay runs)
        if (seen is None or seen.arrays is not arrays
                or not all(map(is_, map(_RAW, arrays), seen.raws))
                or not all(map(is_, map(_VERSION, arrays), seen.versions))):
            seen = _ParamsSeen(self, arrays)
        counts = list(map(_COUNT, seen.versions))
        if counts != seen.counts:
            self._epoch[0] += 1
        seen.counts = list(map(add, counts, self._param_bumps))
        return seen

    def _params_seen(self, seen):
        """At a fused replay's end: keep what tells that the parameters are unchanged
        (``seen``, :meth:`_params_changed`'s) after an unrecorded inference; after any
        other call (a training call may update the moving statistics) with no counts,
        so that the next replay bumps the count of changes."""
        if _ag_state.recording or _ag_state.training:
            seen.counts = None
        self._seen = seen

    def _replay_steps(self, inputs, raw, nda, xp, ctx, need, full, checks, steps=None):
        """Run the steps on raw arrays (``steps``: the per-step tuples, by default those of
        a recorded or an unrecorded replay); returns the params each step ran with."""
        record = need is not None
        # the params each step ran with: the plan's own unless a shape overrides them
        used = self._params_used
        if self._open:
            override = self._overrides(inputs)
            if override:
                used = [override.get(st[5], st[1]) for st in self._plan]
        late = ()
        if steps is None:
            steps = self._run_keep if record else self._run_free
            late = () if record else self._late_bumps     # (:meth:`_plan_late_bumps`)
        try:
            for (op, take, first, multi, nvis, extra, frees), p in zip(steps, used):
                ys = run_step(op, p, xp, take(raw))
                if type(ys) is tuple:
                    if multi:
                        raw[first:first + nvis] = ys[:nvis]
                    else:
                        raw[first] = ys[0]
                else:
                    raw[first] = ys
                if record:
                    full.append(ys)
                if extra is not None:
                    self._step_extra(extra, raw, nda, ctx, checks, record and need[first])
                for s in frees:
                    raw[s] = None
        finally:
            for k in late:      # (all of them, where a step failed: a count too many)
                v = nda[k]._version
                if v is not None:
                    v[0] += 1
        return used

    @staticmethod
    def _step_extra(extra, raw, nda, ctx, checks, recorded):
        """In-place version bumps, output wrapping and version checks of one step,
        in the order :func:`invoke` and ``record_node`` do them."""
        mut, xchk, wrap, ychk = extra
        for s, k in mut:
            if s == k:
                v = nda[k]._version
                if v is not None:
                    v[0] += 1
            else:       # a view of k: it shares (and so creates) k's version
                nda[k]._share_version()[0] += 1
        for s, r in wrap:
            o = nda[s] = _wrap(raw[s], ctx)
            if r is not None:
                o._version = nda[r]._share_version()
        if recorded:
            for k in xchk:
                v = nda[k]._share_version()
                checks.append((v, v[0], nda[k]))
            if ychk:
                for s, r in wrap:
                    v = nda[s]._version = [0]
                    checks.append((v, 0, nda[s]))

    def _shape_check(self, mask, raw):
        """Whether the backward of a replay with need ``mask`` and values ``raw`` checks
        its rules' gradient shapes: False, or what the walk adds to ``_shapes_checked``
        once it checked them (True: check every time). The rules' gradient shapes follow
        from the graph's input and parameter shapes (unless an op's output shape follows
        its values), so a walk that checked them for these shapes and this mask needs no
        recheck. Taken at the forward, where the leaves were just read."""
        if self._shapes_vary:
            return True
        shapes = (mask, tuple([raw[s].shape for s in self.leaf_slots]))
        return False if shapes in self._shapes_checked else shapes

    def _gradient(self, tape, xs, ys, gys, need):
        """The rule of the graph's autograd node: gradients of the graph inputs/params
        (in ``leaf_slots`` order), on raw arrays or, when the backward runs on NDArrays
        (recorded), on NDArrays. ``ys`` and ``need`` go unused: the tape holds the
        outputs, and its walk was built for the inputs wanting gradients.

        Walking the steps in reverse, a step's output gradients are dropped once its rule
        ran, and, in a backward that frees the graph (``retain_graph=False``), its saved
        outputs too: the tape shrinks as the gradients grow, as the imperative tape does
        node by node, instead of holding every value until the walk ends."""
        if tape.raw is None:     # a freeing backward failed half way through this tape
            raise MXNetError("backward: the graph through a hybridized block has already been "
                             "freed by an earlier backward; pass retain_graph=True to the "
                             "first backward to run backward on it again")
        if type(xs[0]) is NDArray:      # recorded: the rules run on NDArrays in the graph
            raw, full = self._rerecord(tape, xs)
            gys = [g if g is None or isinstance(g, NDArray) else _wrap(g, tape.ctx) for g in gys]
            return self._walk(tape, raw, full, gys, None)
        with later.walk():
            return self._walk(tape, tape.raw, tape.full, gys, later.allow)

    def _walk(self, tape, raw, full, gys, allow):
        """:meth:`_gradient` 's walk over the values ``raw`` and the step outputs ``full``;
        ``allow``: :func:`~mxlite.autograd.later.allow`, where the rules may hand back
        the gradients of the leaves a step alone reads as ``later.Later`` s (a weight's
        gradient computed by a CPU worker while the walk goes on), else None."""
        ctx, used = tape.ctx, tape.used
        free = _ag_state.freeing
        if free:
            tape.raw = tape.full = None
        check = tape.check
        g = [None] * self.n_slots
        for s, gy in zip(self.out_slots, gys):
            g[s] = gy
        for k, op, first, nvis, take, need_k, wanted, defer in tape.walk:
            if nvis == 1:
                gv = g[first]
                g[first] = None
                if free:
                    raw[first] = None
                gvis = None if gv is None else [gv]
            else:
                gvis = g[first:first + nvis]
                g[first:first + nvis] = (None,) * nvis
                if free:
                    raw[first:first + nvis] = (None,) * nvis
                if _all_none(gvis):
                    gvis = None
            y = full[k]
            if free:
                full[k] = None
            if gvis is None or take is None:
                continue
            if type(y) is tuple:
                ys = y
                if len(y) > nvis:       # no gradient for the hidden outputs
                    gvis += [None] * (len(y) - nvis)
            else:
                ys = (y,)
            # the inputs as the taker gives them (a tuple): the rules only read them
            if allow is not None:
                allow(defer)
            gxs = node_backward(op, used[k], take(raw), ys, gvis, need_k, ctx, check)
            for pos, i in wanted:
                gx = gxs[pos]
                if gx is not None:
                    gi = g[i]
                    g[i] = gx if gi is None else gi + gx
        if check is not True and len(self._shapes_checked) < 64:
            self._shapes_checked.add(check)
        return [later.value(g[s]) for s in self.leaf_slots]

    def _rerecord(self, tape, xs):
        """The tape's values as NDArrays in the recorded graph, for a backward that is
        itself recorded (``create_graph``): each step is recorded again from its saved
        values (nothing is recomputed, so random masks and in-place updates are not
        repeated), starting from ``xs``, which carry the outer graph's entries. Returns
        the slots' values and each step's outputs (hidden ones included, a tuple)."""
        ctx = tape.ctx
        vals = [None] * self.n_slots
        for s, x in zip(self.leaf_slots, xs):
            vals[s] = x
        full = []
        for k, (op, _, ins, first, multi, nid, nvis, extra) in enumerate(self._plan):
            ys = tape.full[k]
            outs = [_wrap(y, ctx) for y in ys] if type(ys) is tuple else [_wrap(ys, ctx)]
            ins_nd = [vals[i] for i in ins]
            if op.gradient is not None and any(x._entry is not None for x in ins_nd):
                record_node(op, tape.used[k], ins_nd, outs)
            full.append(tuple(outs))
            vals[first:first + nvis] = outs[:nvis]
        return vals, full


# (a Parameter's list of NDArrays, an NDArray's array: both ``_data``)
_RAW, _VERSION, _COUNT = attrgetter("_data"), attrgetter("_version"), itemgetter(0)


def _taker(slots):
    """A function of the value slots giving the values at ``slots`` (a step's inputs), in
    C: a tuple, or a list for one slot or none."""
    if len(slots) > 1:
        return itemgetter(*slots)
    return itemgetter(slice(slots[0], slots[0] + 1) if slots else slice(0, 0))


def _all_none(values):
    """Whether every one of ``values`` is None (``list.count(None)`` would compare raw
    arrays with None elementwise)."""
    for v in values:
        if v is not None:
            return False
    return True


class _ParamsSeen:
    """A graph's parameters as a replay found them (:meth:`CachedGraph._params_changed`):
    their NDArrays (``arrays``), the arrays those held, their version lists and the
    versions' counts once the latest replay that found them ends; and the replay's value
    slots (a list) and NDArrays (a dict by slot) with the parameters in their slots,
    which each replay with these arrays starts from (copied)."""
    __slots__ = ("arrays", "raws", "versions", "counts", "raw", "nda")

    def __init__(self, graph, arrays):
        self.arrays, self.raws = arrays, list(map(_RAW, arrays))
        self.versions = [x._share_version() for x in arrays]
        self.counts = None
        self.raw = [None] * graph.n_slots
        self.nda = {}
        for slot, x, a in zip(graph._param_slot_ids, arrays, self.raws):
            self.raw[slot] = a
            self.nda[slot] = x


class _Tape:
    """What one recorded replay keeps for its backward: every slot's raw value, each
    step's full output (hidden outputs included) and params, and the walk of the steps
    whose rules the backward runs."""
    __slots__ = ("raw", "full", "used", "walk", "ctx", "check")

    def __init__(self, raw, full, used, walk, ctx, check):
        self.raw = raw
        self.full = full
        self.used = used
        self.walk = walk    # the backward walk for the inputs needing gradients
        self.ctx = ctx
        self.check = check      # whether the walk checks gradient shapes (_shape_check)


class _GraphOp:
    """The op-like object a recorded replay leaves as its one autograd node; its
    ``gradient`` is the graph's own walk (no frame between)."""
    __slots__ = ("graph", "gradient")
    name = "hybridized graph"
    saves = ""
    # each step's gradient shapes are checked in the walk (where they are not known
    # right already), and sums of gradients of one slot keep that slot's shape
    checks_shapes = True
    # integer inputs are wrapped per step by the walk, not for the whole graph
    runs_steps = True

    def __init__(self, graph):
        self.graph = graph
        self.gradient = graph._gradient
