"""The fused recurrent op ``RNN``: multi-layer, optionally bidirectional
rnn_relu / rnn_tanh / lstm / gru over time-major data ``(T, N, I)``.

Parameters come as one flat vector in MXNet's (cuDNN's) layout: first every
weight, per layer and per direction ``W_i2h (G*H, in)`` then ``W_h2h (G*H, H)``,
then every bias, per layer and direction ``b_i2h (G*H,)`` then ``b_h2h (G*H,)``.
Gate order: LSTM ``i, f, g, o``; GRU ``r, z, n`` with
``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` and ``h' = (1 - z) n + z h``.
States are ``(num_layers * D, N, H)``, layer-major, forward direction first.

The gradient is backpropagation through time in a registered ``_backward_RNN`` op
(not differentiable again). It reads what the forward pass kept in two hidden
outputs: the dropout masks and a flat "reserve" (as cuDNN's reserve space) with
every step's gates, hidden and cell states and the inputs of the upper layers.
The kernels follow what makes NumPy fast: one matmul for the input projections of
all steps, one per weight gradient, the recurrent matmul and in-place elementwise
work per step on preallocated buffers, and no gradient for data or parameters
that are not variables.

Differences from MXNet 1.9.1's CPU kernel: LSTM state clipping
(``lstm_state_clip_min/max``) works here (MXNet supports it only with cuDNN), and
the parameter gradient of the middle layers of a bidirectional network with 3 or
more layers is correct (MXNet's CPU kernel returns wrong ``W_i2h`` gradients
there; checked against central differences).
"""
import numpy as np

from ... import nd
from ...autograd import _state
from ...base import MXNetError, parse_bool, parse_float, parse_int, optional
from ..registry import register_op, Param, ranks
from ..util import fill_missing
from .dropout import keep_mask

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


_PARAMS = [
    Param("state_size", parse_int, doc="H, the size of the hidden state.", low=1),
    Param("num_layers", parse_int, doc="Number of stacked layers.", low=1),
    Param("bidirectional", parse_bool, False, "Also run each layer backwards in time."),
    Param("mode", choices=_GATES, doc="The cell: its number of gates is _GATES[mode]."),
    Param("p", parse_float, 0.0, "Dropout on the outputs of every layer but the last "
          "(training only)."),
    Param("state_outputs", parse_bool, False, "Also return the final states (hy, and cy "
          "for lstm)."),
    Param("projection_size", optional(parse_int), None, "Not supported (LSTM projection)."),
    Param("lstm_state_clip_min", optional(parse_float), None, "Clip the LSTM cell state "
          "from below."),
    Param("lstm_state_clip_max", optional(parse_float), None, "Clip the LSTM cell state "
          "from above."),
    Param("lstm_state_clip_nan", parse_bool, False, "Accepted for compatibility."),
    Param("use_sequence_length", parse_bool, False, "Not supported (variable lengths)."),
]


def _inputs(p):
    return ("data", "parameters", "state") + (("state_cell",) if p.mode == "lstm" else ())


def _n_outputs(p):
    # out, hy, [cy], then hidden: the dropout masks and the reserve for backward
    return 5 if p.mode == "lstm" else 4


def _n_visible(p):
    if not p.state_outputs:
        return 1
    return 3 if p.mode == "lstm" else 2


def _dirs(p):
    return 2 if p.bidirectional else 1


def param_size(p, input_size):
    """Number of elements of the flat parameter vector."""
    g, h, d = _GATES[p.mode], p.state_size, _dirs(p)
    total = 0
    for layer in range(p.num_layers):
        n_in = input_size if layer == 0 else d * h
        total += d * (g * h * (n_in + h) + 2 * g * h)
    return total


def _unpack(p, w, input_size):
    """Views of the flat vector: ``[(Wx, Wh, bx, bh)]`` per (layer, direction), in order."""
    g, h, d = _GATES[p.mode], p.state_size, _dirs(p)
    mats, off = [], 0
    for layer in range(p.num_layers):
        n_in = input_size if layer == 0 else d * h
        for _ in range(d):
            wx = w[off:off + g * h * n_in].reshape(g * h, n_in)
            off += g * h * n_in
            wh = w[off:off + g * h * h].reshape(g * h, h)
            off += g * h * h
            mats.append([wx, wh])
    for k in range(p.num_layers * d):
        mats[k] += [w[off:off + g * h], w[off + g * h:off + 2 * g * h]]
        off += 2 * g * h
    return mats


def _check(p, data, w, state, cell):
    if p.projection_size is not None:
        raise MXNetError("projection_size is not supported")
    if p.use_sequence_length:
        raise MXNetError("use_sequence_length=True is not supported; pad the sequences "
                         "and use SequenceMask/SequenceLast")
    if p.state_size < 1 or p.num_layers < 1:
        raise MXNetError("state_size and num_layers must be positive, got %d and %d"
                         % (p.state_size, p.num_layers))
    want = param_size(p, data.shape[2])
    if w.shape != (want,):
        raise MXNetError("parameters has shape %s, expected (%d,) for mode=%r, state_size=%d, "
                         "num_layers=%d, bidirectional=%s and input size %d"
                         % (w.shape, want, p.mode, p.state_size, p.num_layers, p.bidirectional,
                            data.shape[2]))
    sshape = (p.num_layers * _dirs(p), data.shape[1], p.state_size)
    for name, s in (("state", state), ("state_cell", cell)):
        if s is not None and s.shape != sshape:
            raise MXNetError("%s has shape %s, expected %s (num_layers * directions, batch, "
                             "state_size)" % (name, s.shape, sshape))


def _sigmoid_(xp, a):
    """The logistic function in place, as ``(1 + tanh(a / 2)) / 2``."""
    # NOTE: one transcendental and no overflow (``exp(-a)`` overflows for a << 0
    # and raises a warning); the absolute error stays within an ulp of 1.
    a *= 0.5
    xp.tanh(a, out=a)
    a *= 0.5
    a += 0.5


def _clips(p):
    return p.mode == "lstm" and (p.lstm_state_clip_min is not None
                                 or p.lstm_state_clip_max is not None)


# -- the reserve: what forward keeps for backward (as cuDNN's reserve space) ---------------

def _dir_blocks(p, steps, batch):
    """``(name, shape)`` of the arrays one (layer, direction) keeps, in its time order."""
    g, h = _GATES[p.mode], p.state_size
    seq, seq1 = (steps, batch, h), (steps + 1, batch, h)
    blocks = [("hs", seq1)]                       # h_0 .. h_T (rnn modes: their activations)
    if p.mode in ("lstm", "gru"):
        blocks.append(("gates", (steps, batch, g * h)))      # activated gates
    if p.mode == "lstm":
        blocks += [("cs", seq1), ("tcs", seq)]              # c_0 .. c_T and tanh(c_1 .. c_T)
        if _clips(p):
            blocks.append(("keep", seq))                     # 1 where clipping let c through
    if p.mode == "gru":
        blocks.append(("ahn", seq))                          # W_hn h + b_hn
    return blocks


def _reserve(p, xp, steps, batch, dtype, buf=None):
    """Carve the flat reserve (allocated when ``buf`` is None) into views.

    Returns the buffer, a dict of views per (layer, direction) and the inputs of
    layers 1, 2, ... (after dropout), each ``(T, N, D*H)``.
    """
    d, h = _dirs(p), p.state_size
    blocks = _dir_blocks(p, steps, batch)
    xshape = (steps, batch, d * h)
    total = (p.num_layers * d * sum(int(np.prod(s)) for _, s in blocks)
             + (p.num_layers - 1) * int(np.prod(xshape)))
    if buf is None:
        buf = xp.empty((total,), dtype=dtype)
    elif buf.shape != (total,):
        raise MXNetError("the reserve has shape %s, expected (%d,): pass the hidden outputs "
                         "of the same RNN call" % (buf.shape, total))
    off = 0

    def take(shape):
        nonlocal off
        n = int(np.prod(shape))
        off += n
        return buf[off - n:off].reshape(shape)

    views, xs = [], []
    for layer in range(p.num_layers):
        if layer:
            xs.append(take(xshape))
        for _ in range(d):
            views.append({name: take(shape) for name, shape in blocks})
    return buf, views, xs


# -- one layer, one direction: forward ----------------------------------------------------

def _forward_dir(p, xp, x, wx, wh, bx, bh, h0, c0, r, q=None):
    """Run one direction over ``x`` (T, N, in) in its own time order, filling ``r``
    (``q``: for LSTM, what the recurrent matmul sees of each hidden state)."""
    steps, batch = x.shape[:2]
    h = p.state_size
    hs = r["hs"]
    hs[0] = h0
    acts = r["gates"] if "gates" in r else hs[1:]
    # The input projections of every step in one matmul, written in place.
    flat = acts.reshape(steps * batch, acts.shape[2])
    xp.matmul(x.reshape(steps * batch, x.shape[2]), wx.T, out=flat)
    if p.mode == "gru":
        flat += bx
        flat[:, :2 * h] += bh[:2 * h]        # b_hn sits inside r * (W_hn h + b_hn)
    else:
        flat += bx + bh
    if p.mode == "lstm":
        r["cs"][0] = c0
        _lstm_forward(p, xp, r, wh, q)
    elif p.mode == "gru":
        _gru_forward(p, xp, r, wh, bh[2 * h:])
    else:
        _plain_forward(p, xp, r, wh)


def _lstm_forward(p, xp, r, wh, q=None):
    hs, cs, tcs, gates, keep = r["hs"], r["cs"], r["tcs"], r["gates"], r.get("keep")
    h, wht = p.state_size, wh.T
    lo, hi = p.lstm_state_clip_min, p.lstm_state_clip_max
    tmp = xp.empty(gates.shape[1:], dtype=gates.dtype)
    t1 = xp.empty(hs.shape[1:], dtype=hs.dtype)
    for t in range(gates.shape[0]):
        a = gates[t]
        xp.matmul(hs[t] if q is None else q(hs[t]), wht, out=tmp)
        a += tmp
        _sigmoid_(xp, a[:, :2 * h])                   # i, f
        _sigmoid_(xp, a[:, 3 * h:])                   # o
        g = a[:, 2 * h:3 * h]
        xp.tanh(g, out=g)
        c = cs[t + 1]
        xp.multiply(a[:, h:2 * h], cs[t], out=c)
        xp.multiply(a[:, :h], g, out=t1)
        c += t1
        if keep is not None:
            xp.clip(c, lo, hi, out=t1)
            xp.equal(t1, c, out=keep[t])
            c[...] = t1
        xp.tanh(c, out=tcs[t])
        xp.multiply(a[:, 3 * h:], tcs[t], out=hs[t + 1])


def _gru_forward(p, xp, r, wh, bhn):
    hs, gates, ahn = r["hs"], r["gates"], r["ahn"]
    h, wht = p.state_size, wh.T
    tmp = xp.empty(gates.shape[1:], dtype=gates.dtype)
    t1 = xp.empty(hs.shape[1:], dtype=hs.dtype)
    for t in range(gates.shape[0]):
        a = gates[t]
        xp.matmul(hs[t], wht, out=tmp)
        rz, n = a[:, :2 * h], a[:, 2 * h:]
        rz += tmp[:, :2 * h]
        _sigmoid_(xp, rz)
        xp.add(tmp[:, 2 * h:], bhn, out=ahn[t])
        xp.multiply(a[:, :h], ahn[t], out=t1)
        n += t1
        xp.tanh(n, out=n)
        xp.subtract(hs[t], n, out=t1)                 # h' = n + z (h - n)
        t1 *= a[:, h:2 * h]
        xp.add(n, t1, out=hs[t + 1])


def _plain_forward(p, xp, r, wh):
    hs, wht = r["hs"], wh.T
    tmp = xp.empty(hs.shape[1:], dtype=hs.dtype)
    for t in range(hs.shape[0] - 1):
        a = hs[t + 1]                                  # holds the input projection
        xp.matmul(hs[t], wht, out=tmp)
        a += tmp
        if p.mode == "rnn_tanh":
            xp.tanh(a, out=a)
        else:
            xp.maximum(a, 0, out=a)


# -- one layer, one direction: backward ---------------------------------------------------

def _backward_dir(p, xp, x, wx, wh, r, dhs, dh_last, dc_last, need_dx, gw):
    """Backpropagation through time for one direction.

    ``dhs`` (T, N, H): gradient w.r.t. its hidden states; ``dh_last``/``dc_last``:
    w.r.t. its final states; ``gw``: views ``(dWx, dWh, dbx, dbh)`` to write, or
    None. Returns dx (None unless ``need_dx``), dh0 and dc0 (None but for lstm).
    """
    steps, batch = x.shape[:2]
    dh_next = dh_last.astype(x.dtype, copy=True)
    dc_next = dc_last.astype(x.dtype, copy=True) if dc_last is not None else None
    if p.mode == "lstm":
        dax = dah = _lstm_backward(p, xp, r, wh, dhs, dh_next, dc_next)
    elif p.mode == "gru":
        dax, dah = _gru_backward(p, xp, r, wh, dhs, dh_next)
    else:
        dax = dah = _plain_backward(p, xp, r, wh, dhs, dh_next)
    flat_x = dax.reshape(steps * batch, dax.shape[2])
    flat_h = dah.reshape(steps * batch, dah.shape[2])
    if gw is not None:
        dwx, dwh, dbx, dbh = gw
        xp.matmul(flat_x.T, x.reshape(steps * batch, x.shape[2]), out=dwx)
        hs = r["hs"]
        xp.matmul(flat_h.T, hs[:-1].reshape(steps * batch, hs.shape[2]), out=dwh)
        flat_x.sum(axis=0, out=dbx)
        if dah is dax:
            dbh[...] = dbx
        else:
            flat_h.sum(axis=0, out=dbh)
    dx = xp.matmul(flat_x, wx).reshape(x.shape) if need_dx else None
    return dx, dh_next, dc_next


def _lstm_backward(p, xp, r, wh, dhs, dh_next, dc_next):
    """Gradients of the LSTM gates' pre-activations (T, N, 4H); updates dh/dc_next."""
    cs, tcs, gates, keep = r["cs"], r["tcs"], r["gates"], r.get("keep")
    steps, batch, h = tcs.shape
    i, f, g, o = (gates[:, :, k * h:(k + 1) * h] for k in range(4))
    da = xp.empty_like(gates)
    di, df, dg, do = (da[:, :, k * h:(k + 1) * h] for k in range(4))
    # What does not depend on the incoming gradient, for every step at once:
    # da_i = dc g i(1-i), da_f = dc c_prev f(1-f), da_g = dc i(1-g^2), da_o = dh tanh(c) o(1-o).
    xp.subtract(1, i, out=di)
    di *= i
    di *= g
    xp.subtract(1, f, out=df)
    df *= f
    df *= cs[:-1]
    xp.multiply(g, g, out=dg)
    xp.subtract(1, dg, out=dg)
    dg *= i
    xp.subtract(1, o, out=do)
    do *= o
    do *= tcs
    q = xp.multiply(tcs, tcs)                   # dc += dh o (1 - tanh(c)^2)
    xp.subtract(1, q, out=q)
    q *= o
    da4 = da.reshape(steps, batch, 4, h)
    dh = xp.empty_like(dh_next)
    dc = xp.empty_like(dh_next)
    for t in range(steps - 1, -1, -1):
        xp.add(dhs[t], dh_next, out=dh)
        xp.multiply(dh, q[t], out=dc)
        dc += dc_next
        if keep is not None:
            dc *= keep[t]
        a = da4[t]
        xp.multiply(a[:, :3], dc[:, None, :], out=a[:, :3])
        a[:, 3] *= dh
        xp.multiply(dc, f[t], out=dc_next)
        xp.matmul(da[t], wh, out=dh_next)
    return da


def _gru_backward(p, xp, r, wh, dhs, dh_next):
    """Gradients of the GRU pre-activations, input side and hidden side (they differ in
    the n block by the factor r); updates dh_next."""
    hs, gates, ahn = r["hs"], r["gates"], r["ahn"]
    steps, batch, h = ahn.shape
    rg, z, n = (gates[:, :, k * h:(k + 1) * h] for k in range(3))
    # dn = dh (1-z)(1-n^2), dr = dn ahn r(1-r), dz = dh (h_prev - n) z(1-z)
    pn = xp.multiply(n, n)
    xp.subtract(1, pn, out=pn)
    t1 = xp.subtract(1, z)
    pn *= t1
    pr = xp.subtract(1, rg)
    pr *= rg
    pr *= ahn
    pz = t1
    pz *= z
    pz *= xp.subtract(hs[:-1], n)
    dax = xp.empty_like(gates)
    dah = xp.empty_like(gates)
    dh = xp.empty_like(dh_next)
    tmp = xp.empty_like(dh_next)
    for t in range(steps - 1, -1, -1):
        xp.add(dhs[t], dh_next, out=dh)
        ax, ah = dax[t], dah[t]
        dn = ax[:, 2 * h:]
        xp.multiply(dh, pn[t], out=dn)
        xp.multiply(dn, pr[t], out=ax[:, :h])
        xp.multiply(dh, pz[t], out=ax[:, h:2 * h])
        ah[:, :2 * h] = ax[:, :2 * h]
        xp.multiply(dn, rg[t], out=ah[:, 2 * h:])
        xp.matmul(ah, wh, out=dh_next)
        xp.multiply(dh, z[t], out=tmp)
        dh_next += tmp
    return dax, dah


def _plain_backward(p, xp, r, wh, dhs, dh_next):
    act = r["hs"][1:]
    if p.mode == "rnn_tanh":
        da = xp.multiply(act, act)
        xp.subtract(1, da, out=da)
    else:
        da = (act > 0).astype(act.dtype)
    dh = xp.empty_like(dh_next)
    for t in range(act.shape[0] - 1, -1, -1):
        xp.add(dhs[t], dh_next, out=dh)
        da[t] *= dh
        xp.matmul(da[t], wh, out=dh_next)
    return da


# -- the whole stack ----------------------------------------------------------------------

def _dropout_masks(p, xp, data):
    """Scaled keep-masks for the outputs of every layer but the last (training only)."""
    d, h = _dirs(p), p.state_size
    shape = (p.num_layers - 1,) + data.shape[:2] + (d * h,)
    if not (_state.training and p.p > 0 and p.num_layers > 1):
        return xp.zeros((0,), dtype=data.dtype)
    return keep_mask(data, shape, p.p)


def _layer_input(xp, x, k):
    """The input of direction ``k``: the backward direction reads time reversed."""
    return x if k == 0 else xp.ascontiguousarray(x[::-1])


def _stack_forward(p, xp, data, w, state, cell, masks, views, xs, q=None):
    """Run every layer and direction, filling the reserve; returns the output.
    ``q``: what the upper layers and the recurrent matmuls see of hidden states (the
    int8 LSTM's quantization); None for the float network."""
    d, h = _dirs(p), p.state_size
    mats = _unpack(p, w, data.shape[2])
    x = data
    for layer in range(p.num_layers):
        last = layer == p.num_layers - 1
        y = xp.empty(data.shape[:2] + (d * h,), dtype=data.dtype) if last else xs[layer]
        for k in range(d):
            idx = layer * d + k
            r = views[idx]
            c0 = cell[idx] if cell is not None else None
            _forward_dir(p, xp, _layer_input(xp, x, k), *mats[idx], state[idx], c0, r, q)
            hseq = r["hs"][1:]
            y[:, :, k * h:(k + 1) * h] = hseq if k == 0 else hseq[::-1]
        if not last and masks.size:
            y *= masks[layer]
        x = y if q is None or last else q(y)
    return x


def _rnn(p, xp, data, w, state, cell=None):
    _check(p, data, w, state, cell)
    dt = data.dtype
    w, state = w.astype(dt, copy=False), state.astype(dt, copy=False)
    cell = cell.astype(dt, copy=False) if cell is not None else None
    masks = _dropout_masks(p, xp, data)
    buf, views, xs = _reserve(p, xp, data.shape[0], data.shape[1], dt)
    out = _stack_forward(p, xp, data, w, state, cell, masks, views, xs)
    outs = (out, xp.stack([r["hs"][-1] for r in views]))
    if p.mode == "lstm":
        outs += (xp.stack([r["cs"][-1] for r in views]),)
    return outs + (masks, buf)


def _rnn_backward(p, xp, data, w, state, *rest):
    lstm = p.mode == "lstm"
    cell = rest[0] if lstm else None
    rest = rest[1:] if lstm else rest
    masks, buf, gout, ghy = rest[:4]
    gcy = rest[4] if lstm else None
    d, hsz, dt = _dirs(p), p.state_size, data.dtype
    steps, batch, n_in = data.shape
    mats = _unpack(p, w.astype(dt, copy=False), n_in)
    _, views, xs = _reserve(p, xp, steps, batch, dt, buf)
    gparams = xp.empty(w.shape, dtype=dt) if p.grad_params else None
    gmats = _unpack(p, gparams, n_in) if p.grad_params else None
    gstate = xp.empty(state.shape, dtype=dt)
    gcell = xp.empty(state.shape, dtype=dt) if lstm else None
    dy = gout
    for layer in range(p.num_layers - 1, -1, -1):
        if layer < p.num_layers - 1 and masks.size:
            dy = dy * masks[layer]
        x = data if layer == 0 else xs[layer - 1]
        need_dx = layer > 0 or p.grad_data
        dx = None
        for k in range(d):
            idx = layer * d + k
            dhs = dy[:, :, k * hsz:(k + 1) * hsz]
            dxk, dh0, dc0 = _backward_dir(
                p, xp, _layer_input(xp, x, k), mats[idx][0], mats[idx][1], views[idx],
                dhs if k == 0 else dhs[::-1], ghy[idx], gcy[idx] if lstm else None, need_dx,
                gmats[idx] if gmats is not None else None)
            gstate[idx] = dh0
            if lstm:
                gcell[idx] = dc0
            if need_dx:
                dxk = dxk if k == 0 else dxk[::-1]
                if dx is None:
                    dx = dxk
                else:
                    dx += dxk
        dy = dx
    # Placeholders for the gradients nobody asked for (the rule maps them to None).
    none = xp.zeros((0,), dtype=dt)
    outs = (dy.astype(data.dtype, copy=False) if p.grad_data else none,
            gparams.astype(w.dtype, copy=False) if p.grad_params else none,
            gstate.astype(state.dtype, copy=False))
    return outs + ((gcell.astype(cell.dtype, copy=False),) if lstm else ())


def _backward_rule(p, data, w, state, *rest):
    """_backward_RNN's inputs: the forward's (as :func:`_check`) and head gradients of
    the forward's output shapes (the reserve is checked where it is carved)."""
    lstm = p.mode == "lstm"
    _check(p, data, w, state, rest[0] if lstm else None)
    masks, heads = (rest[1], rest[3:]) if lstm else (rest[0], rest[2:])
    out = data.shape[:2] + (_dirs(p) * p.state_size,)
    if masks.size and masks.shape != (p.num_layers - 1,) + out:
        raise MXNetError("masks has shape %s, expected (0,) or %s (the forward's)"
                         % (masks.shape, (p.num_layers - 1,) + out))
    wants = (out, state.shape, state.shape)
    for name, g, want in zip(_bwd_inputs(p)[-len(heads):], heads, wants):
        if g.shape != want:
            raise MXNetError("%s has shape %s, expected %s (the forward output's)"
                             % (name, g.shape, want))


def _bwd_inputs(p):
    heads = ("gy_out", "gy_hy") + (("gy_cy",) if p.mode == "lstm" else ())
    return _inputs(p) + ("masks", "reserve") + heads


def _rnn_grad(p, x, y, gy, need):
    n_heads = 3 if p.mode == "lstm" else 2
    gy = fill_missing(gy, y)
    # Inputs that want no gradient (data that is not a variable) receive nothing:
    # skip their gradient, the costliest matmul of the backward pass.
    want = dict(grad_data=bool(need[0]), grad_params=bool(need[1]))
    g = nd._internal._backward_RNN(*(list(x) + list(y[n_heads:]) + list(gy[:n_heads])),
                                   **dict(p.items()), **want)
    g = list(g) if isinstance(g, list) else [g]
    if not want["grad_data"]:
        g[0] = None
    if not want["grad_params"]:
        g[1] = None
    return g


def _infer_shape(p, shapes):
    """Fill in the parameter vector and state shapes from the data shape."""
    shapes = list(shapes)
    data = shapes[0]
    if data is not None and len(data) == 3 and 0 not in data:
        shapes[1] = (param_size(p, data[2]),)
        for k in range(2, len(shapes)):
            shapes[k] = (p.num_layers * _dirs(p), data[1], p.state_size)
    return shapes


_BWD_PARAMS = _PARAMS + [
    Param("grad_data", parse_bool, True, "Compute the gradient of data (else an empty array)."),
    Param("grad_params", parse_bool, True, "Compute the gradient of parameters (else an empty "
          "array)."),
]

register_op("_backward_RNN", _rnn_backward, inputs=_bwd_inputs, params=_BWD_PARAMS,
            check=(ranks(data=(3, 3)), _backward_rule),
            num_outputs=lambda p: 4 if p.mode == "lstm" else 3,
            doc="Backpropagation through time of RNN (not differentiable).")
register_op("RNN", _rnn, inputs=_inputs, params=_PARAMS, gradient=_rnn_grad, saves="xy",
            check=ranks(data=(3, 3)),
            num_outputs=_n_outputs, num_visible_outputs=_n_visible, infer_shape=_infer_shape,
            output_names=("output", "state_output", "statecell_output"),     # MXNet's
            doc="Fused multi-layer recurrent network (rnn_relu, rnn_tanh, lstm, gru) over "
                "time-major data (T, N, I); returns out (T, N, D*H), plus hy (and cy for "
                "lstm) with state_outputs=True.")
