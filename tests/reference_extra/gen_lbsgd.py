"""Golden data for the LBSGD optimizer from real MXNet 1.9.1 (run with its interpreter):
the weight w, six gradients g<k> and the weight after each update, per warm-up strategy
and momentum (<strategy>_<momentum>_<k>)."""
import os
import mxnet as mx, numpy as np, logging
np.random.seed(0)
w0 = np.random.randn(3, 4).astype('float32')
gs = [np.random.randn(3, 4).astype('float32') for _ in range(6)]
out = {'w': w0}
for i, g in enumerate(gs): out['g%d' % i] = g
for strat in ('linear', 'sqrt', 'lars'):
    for mom in (0.0, 0.9):
        opt = mx.optimizer.create('lbsgd', learning_rate=0.1, momentum=mom, wd=0.01, warmup_strategy=strat,
                                  warmup_epochs=2, batch_scale=2, updates_per_epoch=2, rescale_grad=0.5)
        upd = mx.optimizer.get_updater(opt)
        w = mx.nd.array(w0)
        for k, g in enumerate(gs):
            upd(0, mx.nd.array(g), w)
            out['%s_%s_%d' % (strat, mom, k)] = w.asnumpy()
np.savez_compressed('os.path.join(os.path.dirname(os.path.abspath(__file__)), "lbsgd_mxnet191.npz")', **out)
print('ok')
