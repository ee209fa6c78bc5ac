"""The bits of MXNet 1.9.1's SGD optimizer for gradients spanning 17 orders of magnitude,
with and without momentum, for a power-of-two and another ``rescale_grad``:
``sgd_bits.npz`` holds ``grad``, ``weight`` and ``<momentum>_<rescale>`` (the weight
after one ``update_multi_precision`` with lr=0.037, wd=0.01).

Run ``python tests/reference_extra/gen_sgd_bits.py`` from an environment with
``pip install "numpy<1.24" mxnet==1.9.1``.
"""
import os

import numpy as np

CASES = [(0.0, 1 / 16), (0.0, 1 / 3), (0.9, 1 / 16), (0.9, 1 / 3)]


def inputs():
    rng = np.random.RandomState(0)
    g = (rng.randn(5000) * np.exp(rng.uniform(-20, 20, 5000))).astype(np.float32)
    w = rng.randn(5000).astype(np.float32)
    return g, w


def main():
    import mxnet as mx
    g, w0 = inputs()
    out = {"grad": g, "weight": w0}
    for momentum, rescale in CASES:
        opt = mx.optimizer.SGD(learning_rate=0.037, momentum=momentum, wd=0.01,
                               rescale_grad=rescale)
        w = mx.nd.array(w0)
        opt.update_multi_precision(0, w, mx.nd.array(g), opt.create_state_multi_precision(0, w))
        out["%s_%s" % (momentum, rescale)] = w.asnumpy()
    np.savez(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sgd_bits.npz"), **out)


if __name__ == "__main__":
    main()
