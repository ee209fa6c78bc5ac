"""Golden data for ``mx.image.imrotate``, from real MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_imrotate.py`` from an
environment with ``pip install "numpy<1.24" mxnet==1.9.1``. Writes
``imrotate_mxnet191.npz``: ``x`` (2, 3, 6, 7) float32 images; ``a``: rotated by 30 and
-45 degrees; ``b``: both by 30 with zoom_in; ``c``: ``x[0]`` by 60 with zoom_out.
"""
import os

import mxnet as mx
import numpy as np

np.random.seed(0)
x = np.random.rand(2, 3, 6, 7).astype("float32")
a = mx.image.imrotate(mx.nd.array(x), mx.nd.array([30, -45])).asnumpy()
b = mx.image.imrotate(mx.nd.array(x), 30, zoom_in=True).asnumpy()
c = mx.image.imrotate(mx.nd.array(x[0]), 60, zoom_out=True).asnumpy()
np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "imrotate_mxnet191.npz"), x=x, a=a, b=b, c=c)
