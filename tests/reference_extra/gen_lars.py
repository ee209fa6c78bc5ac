"""Golden data for the LARS optimizer from real MXNet 1.9.1 (run with its interpreter):
three weights (w<i>), three steps of gradients (g<step>_<i>) and the weights after them,
aggregated or not (agg1/agg4), with and without momentum, under a FactorScheduler."""
import os
import mxnet as mx, numpy as np
np.random.seed(0)
ws = [np.random.randn(3, 4).astype('float32'), np.random.randn(3).astype('float32'), np.random.randn(2, 2).astype('float32')]
gs = [[np.random.randn(*w.shape).astype('float32') for w in ws] for _ in range(3)]
out = {}
for agg in ('1', '4'):
  for mom in (0.0, 0.9):
    import os
    opt = mx.optimizer.create('lars', learning_rate=0.1, momentum=mom, wd=0.01, eta=0.5, rescale_grad=0.5,
                              param_idx2name={0: 'fc_weight', 1: 'fc_bias', 2: 'conv_weight'},
                              lr_scheduler=mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.1))
    opt.aggregate_num = int(agg)
    upd = mx.optimizer.get_updater(opt)
    W = [mx.nd.array(w) for w in ws]
    for step in range(3):
        upd([0, 1, 2], [mx.nd.array(g) for g in gs[step]], W)
    for i, w in enumerate(W): out['agg%s_mom%s_w%d' % (agg, mom, i)] = w.asnumpy()
for i, w in enumerate(ws): out['w%d' % i] = w
for s in range(3):
    for i, g in enumerate(gs[s]): out['g%d_%d' % (s, i)] = g
np.savez_compressed('os.path.join(os.path.dirname(os.path.abspath(__file__)), "lars_mxnet191.npz")', **out)
print('ok')
