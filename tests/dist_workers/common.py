"""What the equivalence workers and tests/test_dist.py share: the data and the models."""
import numpy as np

BATCH = 8           # per worker and step
STEPS = 5
FEATURES, CLASSES = 6, 4


def data(n_workers=2):
    rng = np.random.RandomState(7)
    x = rng.randn(BATCH * n_workers * STEPS, FEATURES).astype(np.float32)
    y = rng.randint(0, CLASSES, len(x)).astype(np.float32)
    return x, y


def worker_batch(x, step, rank, n_workers=2):
    """Worker ``rank``'s part of step ``step``; the union over ranks is rows
    ``[step * BATCH * n_workers, (step + 1) * BATCH * n_workers)``."""
    start = (step * n_workers + rank) * BATCH
    return x[start:start + BATCH]


def mlp(mx, seed):
    mx.random.seed(seed)
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(16, activation="tanh", in_units=FEATURES),
            mx.gluon.nn.Dense(CLASSES, in_units=16))
    net.initialize(mx.init.Xavier())
    return net


def train_gluon(mx, net, trainer, x, y, batches):
    """``batches(step)`` -> row slice; steps with ``trainer.step(BATCH)``."""
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    for step in range(STEPS):
        sl = batches(step)
        with mx.autograd.record():
            loss = loss_fn(net(mx.nd.array(x[sl])), mx.nd.array(y[sl]))
        loss.backward()
        trainer.step(BATCH)


def weights(net):
    """The parameters by position (block names differ between processes)."""
    return {"p%d" % i: v.data().asnumpy() for i, v in enumerate(net.collect_params().values())}


def write_idx(dirname, x, y):
    """``x`` (values in [0, 1), shape (n, 4, 4)) and labels ``y`` as MNIST idx files."""
    import os
    import struct
    images = os.path.join(dirname, "images-idx3-ubyte")
    labels = os.path.join(dirname, "labels-idx1-ubyte")
    with open(images, "wb") as f:
        f.write(struct.pack(">IIII", 0x803, len(x), 4, 4))
        f.write((x * 256).astype(np.uint8).tobytes())
    with open(labels, "wb") as f:
        f.write(struct.pack(">II", 0x801, len(y)))
        f.write(y.astype(np.uint8).tobytes())
    return images, labels


def mlp_symbol(mx):
    data = mx.sym.Variable("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=12, name="fc1"), "tanh")
    out = mx.sym.FullyConnected(h, num_hidden=CLASSES, name="fc2")
    return mx.sym.SoftmaxOutput(out, name="softmax")
