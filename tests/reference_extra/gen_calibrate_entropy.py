"""Golden data for contrib.calibrate_entropy from real MXNet 1.9.1 (run with its
interpreter): three histograms (c<k>/hist, c<k>/edges, num_quantized_bins c<k>/nqb) and
the threshold c<k>/t and divergence c<k>/d MXNet returns."""
import os
import json, mxnet as mx, numpy as np
np.random.seed(5)
out = {}
for k, (data, bins, nqb) in enumerate(((np.random.randn(20000), 2001, 255), (np.abs(np.random.randn(5000)) * 3, 801, 255), (np.random.laplace(size=30000), 4001, 127))):
    hist, edges = np.histogram(data, bins=bins)
    t, d = mx.nd.contrib.calibrate_entropy(mx.nd.array(hist), mx.nd.array(edges), num_quantized_bins=nqb)
    out['c%d/hist' % k] = hist.astype('float32'); out['c%d/edges' % k] = edges.astype('float32')
    out['c%d/nqb' % k] = np.array(nqb); out['c%d/t' % k] = t.asnumpy(); out['c%d/d' % k] = d.asnumpy()
np.savez_compressed('os.path.join(os.path.dirname(os.path.abspath(__file__)), "calibrate_entropy_mxnet191.npz")', **out)
