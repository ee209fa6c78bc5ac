"""Straight-line Python for a hybridized graph's replay and its raw backward.

A :class:`~mxlite.gluon.cached_graph.CachedGraph` runs a list of steps; looping over
that list costs, per step and per call, the tuple unpacking, the input lists, the
checks of what each step needs and a function call or two around the gradient
rule. Since the steps never change, this module writes them out once as the body
of one Python function per graph (and per set of inputs needing gradients), with
every slot index, op, param and flag a constant: what is left per step is the
kernel call itself and the bookkeeping that step really has.

The generated code does exactly what the loops in ``cached_graph`` do, in the same
order (tests run both and compare bit for bit).
"""
from ..base import MXNetError
from ..nd.ndarray import _wrap
from ..operator.registry import _fail

__all__ = ["compile_forward", "compile_backward"]


def _build(name, params, body, env):
    """``def name(params): body`` closed over ``env`` (names bound as free variables)."""
    names = sorted(env)
    src = ["def _make(%s):" % ", ".join(names),
           "    def %s(%s):" % (name, ", ".join(params))]
    src += ["        " + line for line in body]
    src.append("    return %s" % name)
    scope = {}
    exec(compile("\n".join(src), "<hybridized %s>" % name, "exec"), scope)  # noqa: S102
    return scope["_make"](*[env[n] for n in names])


def _param(env, k, p, fixed):
    """How step ``k``'s params are read: a constant, or ``ps[k]`` when they are
    resolved per call (graphs with shapes inferred from the inputs)."""
    if not fixed:
        return "ps[%d]" % k
    env["p%d" % k] = p
    return "p%d" % k


def compile_forward(plan, need, fixed=True):
    """The replay of ``plan`` (CachedGraph._plan) as one function
    ``replay(raw, nda, xp, ctx, full, checks, ps)``.

    ``need`` is the per-slot gradient flags of a recording run (``full`` receives
    each step's output and ``checks`` the version checks), or None for a run that
    records nothing (``full`` and ``checks`` are then unused). With ``fixed`` the
    plan's params are constants, else each call passes them as ``ps``.
    """
    env = {"fail": _fail, "wrap": _wrap}
    body = ["k = 0", "try:"]
    ops = []
    for k, (op, p, ins, first, multi, _, nvis, extra) in enumerate(plan):
        ops.append(op)
        env["c%d" % k] = op.compute
        args = "".join(", raw[%d]" % i for i in ins)
        body.append("    k = %d" % k)
        body.append("    y = c%d(%s, xp%s)" % (k, _param(env, k, p, fixed), args))
        if multi:
            body.append("    raw[%d:%d] = y[:%d]" % (first, first + nvis, nvis))
        else:
            body.append("    raw[%d] = y[0] if type(y) is tuple else y" % first)
        if need is not None:
            body.append("    full[%d] = y" % k)
        if extra is None:
            continue
        mut, xchk, wraps, ychk = extra
        for s, k_ in mut:
            if s == k_:
                body += ["    v = nda[%d]._version" % k_,
                         "    if v is not None:",
                         "        v[0] += 1"]
            else:       # a view of k_: it shares (and so creates) k_'s version
                body.append("    nda[%d]._share_version()[0] += 1" % k_)
        for s, r in wraps:
            body.append("    o = nda[%d] = wrap(raw[%d], ctx)" % (s, s))
            if r is not None:
                body.append("    o._version = nda[%d]._share_version()" % r)
        if need is not None and need[first]:
            for s in xchk:
                body.append("    v = nda[%d]._share_version()" % s)
                body.append("    checks.append((v, v[0], nda[%d]))" % s)
            if ychk:
                for s, _ in wraps:
                    body.append("    v = nda[%d]._version = [0]" % s)
                    body.append("    checks.append((v, 0, nda[%d]))" % s)
    body += ["except Exception as e:", "    raise fail(ops[k], e) from e"]
    env["ops"] = ops
    return _build("replay", ("raw", "nda", "xp", "ctx", "full", "checks", "ps"), body, env)


def _named(op, e):
    """A gradient rule's error, named as :func:`mxlite.autograd.call_raw_gradient` does."""
    if str(e).startswith(op.name):
        return e
    return MXNetError("%s (backward): %s" % (op.name, e))


def _bad_shape(op, gx, x):
    raise MXNetError("%s (backward): gradient has shape %s, expected %s"
                     % (op.name, gx.shape, x.shape))


def compile_backward(graph, need, step_fallback, nd_rule, fixed=True):
    """The raw backward of ``graph`` for per-slot flags ``need`` as one function
    ``backward(raw, full, xp, g, ctx, ps)``: ``g`` holds the output gradients by slot
    on entry and every needed slot's gradient on return; ``ps`` are the params the
    forward ran with (read only when not ``fixed``).

    ``step_fallback(k, raw, full, xp, g, ctx, ps)`` runs one step the general way
    (steps with several visible outputs); ``nd_rule(k, xs, ys, gys, ctx, ps)`` is a
    step's NDArray rule on raw values (ops without a raw rule, or whose rule
    declines).
    """
    env = {"MXNetError": MXNetError, "named": _named, "bad": _bad_shape,
           "fallback": step_fallback, "ndrule": nd_rule}
    env["ops"] = [step[0] for step in graph._plan]
    body = []
    for k, op, ins, first, nvis in graph._backward_order:
        if not need[first]:
            continue
        if nvis != 1:
            body.append("fallback(%d, raw, full, xp, g, ctx, ps)" % k)
            continue
        want = [need[i] for i in ins]
        env["n%d" % k] = want
        pk = _param(env, k, graph._plan[k][1], fixed)
        hidden = ("[gy] + [xp.zeros_like(v) for v in y[1:]]" if op.raw_hidden_grads
                  or op.raw_gradient is None else "[gy] + [None] * (len(y) - 1)")
        body += ["gy = g[%d]" % first,
                 "if gy is not None:",
                 "    y = full[%d]" % k,
                 "    if type(y) is tuple:",
                 "        ys = y",
                 "        gys = %s" % hidden,
                 "    else:",
                 "        ys = (y,)",
                 "        gys = [gy]",
                 "    xs = [%s]" % ", ".join("raw[%d]" % i for i in ins)]
        if op.raw_gradient is not None:
            env["r%d" % k] = op.raw_gradient
            body += ["    try:",
                     "        gx = r%d(%s, xp, xs, ys, gys, n%d)" % (k, pk, k),
                     "    except MXNetError as e:",
                     "        raise named(ops[%d], e) from e" % k,
                     "    if gx is None:",
                     "        gx = ndrule(%d, xs, ys, gys, ctx, ps)" % k]
            if any(want):
                body.append("    else:")
                for j, w in enumerate(want):
                    if w:
                        body += ["        if gx[%d] is not None and gx[%d].shape != xs[%d].shape:"
                                 % (j, j, j),
                                 "            bad(ops[%d], gx[%d], xs[%d])" % (k, j, j)]
        else:
            body.append("    gx = ndrule(%d, xs, ys, gys, ctx, ps)" % k)
        for j, (i, w) in enumerate(zip(ins, want)):
            if w:
                body += ["    t = gx[%d]" % j,
                         "    if t is not None:",
                         "        u = g[%d]" % i,
                         "        g[%d] = t if u is None else u + t" % i]
    if not body:
        body = ["pass"]
    return _build("backward", ("raw", "full", "xp", "g", "ctx", "ps"), body, env)
