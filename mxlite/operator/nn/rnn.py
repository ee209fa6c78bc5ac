"""The fused recurrent op ``RNN``: multi-layer, optionally bidirectional
rnn_relu / rnn_tanh / lstm / gru over time-major data ``(T, N, I)``.

Parameters come as one flat vector in MXNet's (cuDNN's) layout: first every
weight, per layer and per direction ``W_i2h (G*H, in)`` then ``W_h2h (G*H, H)``,
then every bias, per layer and direction ``b_i2h (G*H,)`` then ``b_h2h (G*H,)``.
Gate order: LSTM ``i, f, g, o``; GRU ``r, z, n`` with
``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` and ``h' = (1 - z) n + z h``.
States are ``(num_layers * D, N, H)``, layer-major, forward direction first.

The gradient is backpropagation through time in a registered ``_backward_RNN`` op
that replays the forward pass with the same dropout masks (a hidden output); it
is not differentiable again.

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
from ..registry import register_op, Param

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def _parse_mode(v):
    if v not in _GATES:
        raise ValueError("expected one of %s, got %r" % (", ".join(map(repr, _GATES)), v))
    return v


_PARAMS = [
    Param("state_size", parse_int, doc="H, the size of the hidden state."),
    Param("num_layers", parse_int, doc="Number of stacked layers."),
    Param("bidirectional", parse_bool, False, "Also run each layer backwards in time."),
    Param("mode", _parse_mode, doc="'rnn_relu', 'rnn_tanh', 'lstm' or 'gru'."),
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
    return 4 if p.mode == "lstm" else 3       # out, hy, [cy], dropout masks (hidden)


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
    if data.ndim != 3:
        raise MXNetError("data must have shape (T, N, I) (time-major), got %s" % (data.shape,))
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


def _sigmoid(xp, x):
    # NOTE: split by sign so that exp never overflows.
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


# -- one layer, one direction ------------------------------------------------------------

def _run_dir(p, xp, x, wx, wh, bx, bh, h0, c0):
    """Run one direction over x (T, N, in) in its own time order.

    Returns the hidden states (T, N, H), the final (h, c) and a cache for backward.
    """
    steps = x.shape[0]
    hsz = p.state_size
    ax = xp.matmul(x, wx.T) + bx                 # input projections of every step
    hs = xp.empty((steps + 1,) + h0.shape, dtype=x.dtype)
    hs[0] = h0
    cache = {"gates": xp.empty(ax.shape, dtype=x.dtype)}
    if p.mode == "lstm":
        cs = xp.empty_like(hs)
        cs[0] = c0
        cache["cs"] = cs
        cache["clip"] = xp.ones((steps,) + h0.shape, dtype=bool)
    if p.mode == "gru":
        cache["ahn"] = xp.empty((steps,) + h0.shape, dtype=x.dtype)
    lo, hi = p.lstm_state_clip_min, p.lstm_state_clip_max
    for t in range(steps):
        ah = xp.matmul(hs[t], wh.T) + bh
        if p.mode == "lstm":
            a = ax[t] + ah
            i, f, o = (_sigmoid(xp, a[:, k * hsz:(k + 1) * hsz]) for k in (0, 1, 3))
            g = xp.tanh(a[:, 2 * hsz:3 * hsz])
            c = f * cs[t] + i * g
            if lo is not None or hi is not None:
                clipped = xp.clip(c, lo, hi)
                cache["clip"][t] = clipped == c
                c = clipped
            cs[t + 1] = c
            hs[t + 1] = o * xp.tanh(c)
            act = xp.concatenate([i, f, g, o], axis=1)
        elif p.mode == "gru":
            r = _sigmoid(xp, ax[t][:, :hsz] + ah[:, :hsz])
            z = _sigmoid(xp, ax[t][:, hsz:2 * hsz] + ah[:, hsz:2 * hsz])
            n = xp.tanh(ax[t][:, 2 * hsz:] + r * ah[:, 2 * hsz:])
            cache["ahn"][t] = ah[:, 2 * hsz:]
            hs[t + 1] = (1 - z) * n + z * hs[t]
            act = xp.concatenate([r, z, n], axis=1)
        else:
            a = ax[t] + ah
            act = xp.tanh(a) if p.mode == "rnn_tanh" else xp.maximum(a, 0)
            hs[t + 1] = act
        cache["gates"][t] = act
    cache["hs"] = hs
    c_last = cache["cs"][steps] if p.mode == "lstm" else None
    return hs[1:], hs[steps], c_last, cache


def _back_dir(p, xp, x, wx, wh, cache, dhs, dh_last, dc_last):
    """Backpropagation through time for one direction.

    ``dhs`` (T, N, H): gradient w.r.t. the hidden states; ``dh_last``/``dc_last``:
    w.r.t. the final states. Returns dx, dWx, dWh, dbx, dbh, dh0, dc0.
    """
    steps = x.shape[0]
    hsz = p.state_size
    hs, gates = cache["hs"], cache["gates"]
    dax = xp.empty(gates.shape, dtype=x.dtype)
    dwh = xp.zeros(wh.shape, dtype=x.dtype)
    dbh = xp.zeros(wh.shape[0], dtype=x.dtype)
    dh_next = dh_last
    dc_next = dc_last
    for t in range(steps - 1, -1, -1):
        dh = dhs[t] + dh_next
        act = gates[t]
        if p.mode == "lstm":
            i, f, g, o = (act[:, k * hsz:(k + 1) * hsz] for k in range(4))
            tc = xp.tanh(cache["cs"][t + 1])
            dc = (dc_next + dh * o * (1 - tc * tc)) * cache["clip"][t]
            da = xp.concatenate([dc * g * i * (1 - i), dc * cache["cs"][t] * f * (1 - f),
                                 dc * i * (1 - g * g), dh * tc * o * (1 - o)], axis=1)
            dc_next = dc * f
            dah = da
            dax[t] = da
        elif p.mode == "gru":
            r, z, n = act[:, :hsz], act[:, hsz:2 * hsz], act[:, 2 * hsz:]
            dan = dh * (1 - z) * (1 - n * n)
            dar = dan * cache["ahn"][t] * r * (1 - r)
            daz = dh * (hs[t] - n) * z * (1 - z)
            dax[t] = xp.concatenate([dar, daz, dan], axis=1)
            dah = xp.concatenate([dar, daz, dan * r], axis=1)
        else:
            deriv = 1 - act * act if p.mode == "rnn_tanh" else (act > 0)
            dah = dh * deriv
            dax[t] = dah
        dwh += xp.matmul(dah.T, hs[t])
        dbh += dah.sum(axis=0)
        dh_next = xp.matmul(dah, wh)
        if p.mode == "gru":
            dh_next = dh_next + dh * z
    flat = dax.reshape(-1, dax.shape[-1])
    dwx = xp.matmul(flat.T, x.reshape(-1, x.shape[-1]))
    dx = xp.matmul(dax, wx)
    return dx, dwx, dwh, flat.sum(axis=0), dbh, dh_next, dc_next


# -- the whole stack ----------------------------------------------------------------------

def _dropout_masks(p, xp, data):
    """Scaled keep-masks for the outputs of every layer but the last (training only)."""
    d, h = _dirs(p), p.state_size
    shape = (p.num_layers - 1,) + data.shape[:2] + (d * h,)
    if not (_state.training and p.p > 0 and p.num_layers > 1):
        return xp.zeros((0,), dtype=data.dtype)
    from ... import random
    from ...context import cpu, gpu
    ctx = cpu() if xp is np else gpu(int(data.device.id))
    keep = 1.0 - p.p
    gen = random.get_generator(ctx)
    return ((gen.random(shape) < keep) * (1.0 / keep if keep > 0 else 0.0)).astype(data.dtype)


def _stack_forward(p, xp, data, w, state, cell, masks):
    """Outputs (out, hy, cy) and the per-layer caches for backward."""
    d = _dirs(p)
    mats = _unpack(p, w, data.shape[2])
    x = data
    hy, cy, caches = [], [], []
    for layer in range(p.num_layers):
        outs = []
        for k in range(d):
            idx = layer * d + k
            wx, wh, bx, bh = mats[idx]
            xin = x if k == 0 else x[::-1]
            c0 = cell[idx] if cell is not None else None
            hseq, h_last, c_last, cache = _run_dir(p, xp, xin, wx, wh, bx, bh, state[idx], c0)
            outs.append(hseq if k == 0 else hseq[::-1])
            hy.append(h_last)
            cy.append(c_last)
            caches.append((xin, cache))
        y = outs[0] if d == 1 else xp.concatenate(outs, axis=2)
        if layer < p.num_layers - 1 and masks.size:
            y = y * masks[layer]
        x = y
    cy = xp.stack(cy) if cell is not None else None
    return x, xp.stack(hy), cy, caches


def _rnn(p, xp, data, w, state, cell=None):
    _check(p, data, w, state, cell)
    masks = _dropout_masks(p, xp, data)
    out, hy, cy, _ = _stack_forward(p, xp, data, w, state, cell, masks)
    dt = data.dtype
    outs = (out.astype(dt, copy=False), hy.astype(dt, copy=False))
    if p.mode == "lstm":
        outs += (cy.astype(dt, copy=False),)
    return outs + (masks,)


def _rnn_backward(p, xp, data, w, state, *rest):
    lstm = p.mode == "lstm"
    cell = rest[0] if lstm else None
    rest = rest[1:] if lstm else rest
    masks, gout, ghy = rest[0], rest[1], rest[2]
    gcy = rest[3] if lstm else None
    d, hsz = _dirs(p), p.state_size
    mats = _unpack(p, w, data.shape[2])
    _, _, _, caches = _stack_forward(p, xp, data, w, state, cell, masks)
    gw = [None] * len(mats)
    gstate = xp.zeros(state.shape, dtype=data.dtype)
    gcell = xp.zeros(state.shape, dtype=data.dtype) if lstm else None
    dy = gout
    for layer in range(p.num_layers - 1, -1, -1):
        if layer < p.num_layers - 1 and masks.size:
            dy = dy * masks[layer]
        dx = None
        for k in range(d):
            idx = layer * d + k
            wx, wh = mats[idx][:2]
            xin, cache = caches[idx]
            dhs = dy[:, :, k * hsz:(k + 1) * hsz]
            dhs = dhs if k == 0 else dhs[::-1]
            dc_last = gcy[idx] if lstm else None
            dxk, dwx, dwh, dbx, dbh, dh0, dc0 = _back_dir(p, xp, xin, wx, wh, cache, dhs,
                                                         ghy[idx], dc_last)
            dxk = dxk if k == 0 else dxk[::-1]
            dx = dxk if dx is None else dx + dxk
            gw[idx] = (dwx, dwh, dbx, dbh)
            gstate[idx] = dh0
            if lstm:
                gcell[idx] = dc0
        dy = dx
    # The flat layout: weights per (layer, dir) as Wx then Wh, then biases bx then bh.
    weights = [a for g in gw for a in (g[0].ravel(), g[1].ravel())]
    biases = [a for g in gw for a in (g[2], g[3])]
    gparams = xp.concatenate(weights + biases).astype(w.dtype, copy=False)
    outs = (dy.astype(data.dtype, copy=False), gparams, gstate)
    return outs + ((gcell,) if lstm else ())


def _bwd_inputs(p):
    heads = ("gy_out", "gy_hy") + (("gy_cy",) if p.mode == "lstm" else ())
    return _inputs(p) + ("masks",) + heads


def _rnn_grad(p, x, y, gy):
    lstm = p.mode == "lstm"
    heads = gy[:3] if lstm else gy[:2]
    masks = y[3] if lstm else y[2]
    g = nd._internal._backward_RNN(*(list(x) + [masks] + list(heads)), **dict(p.items()))
    return list(g) if isinstance(g, list) else [g]


def _infer_shape(p, shapes):
    """Fill in the parameter vector and state shapes from the data shape."""
    shapes = list(shapes)
    data = shapes[0]
    if data is not None and len(data) == 3 and 0 not in data:
        shapes[1] = (param_size(p, data[2]),)
        for k in range(2, len(shapes)):
            shapes[k] = (p.num_layers * _dirs(p), data[1], p.state_size)
    return shapes


register_op("_backward_RNN", _rnn_backward, inputs=_bwd_inputs, params=_PARAMS,
            num_outputs=lambda p: 4 if p.mode == "lstm" else 3,
            doc="Backpropagation through time of RNN (not differentiable).")
register_op("RNN", _rnn, inputs=_inputs, params=_PARAMS, gradient=_rnn_grad, saves="xy",
            num_outputs=_n_outputs, num_visible_outputs=_n_visible, infer_shape=_infer_shape,
            doc="Fused multi-layer recurrent network (rnn_relu, rnn_tanh, lstm, gru) over "
                "time-major data (T, N, I); returns out (T, N, D*H), plus hy (and cy for "
                "lstm) with state_outputs=True.")
