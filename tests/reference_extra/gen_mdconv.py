"""Golden data for gluon.contrib.cnn.ModulatedDeformableConvolution from real MXNet 1.9.1
(run with its interpreter): the input x, the output y and the parameters p/<name>."""
import os
import mxnet as mx, numpy as np
np.random.seed(0)
layer = mx.gluon.contrib.cnn.ModulatedDeformableConvolution(4, kernel_size=3, padding=1, in_channels=2, offset_weight_initializer=mx.init.Normal(0.1))
layer.initialize()
x = mx.nd.array(np.random.rand(1, 2, 5, 5))
y = layer(x)
params = {k: v.data().asnumpy() for k, v in layer.collect_params().items()}
out = {"x": x.asnumpy(), "y": y.asnumpy()}
for k, v in params.items(): out["p/" + k] = v
np.savez_compressed("os.path.join(os.path.dirname(os.path.abspath(__file__)), "mdconv_mxnet191.npz")", **out)
print(sorted(params), y.shape)
