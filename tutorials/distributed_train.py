"""Data-parallel training of a digit classifier on several processes (see distributed.md).

    python -m mxlite.launch -n 2 python distributed_train.py     # 2 processes here
    mpirun -n 2 python distributed_train.py                      # the same, by hand
"""
import mxlite as mx
from mxlite import autograd, gluon
from mxlite.gluon import nn

kv = mx.kv.create("dist_sync")                 # one worker per MPI rank

data = gluon.data.vision.Digits(train=True).transform_first(
    gluon.data.vision.transforms.ToTensor())
# each worker reads its own shard of the training set
sampler = gluon.data.SplitSampler(len(data), num_parts=kv.num_workers, part_index=kv.rank)
loader = gluon.data.DataLoader(data, batch_size=32, sampler=sampler, last_batch="discard")

mx.random.seed(kv.rank)                        # different on purpose: the Trainer
net = nn.HybridSequential()                    # broadcasts rank 0's weights
net.add(nn.Flatten(), nn.Dense(64, activation="relu"), nn.Dense(10))
net.initialize(mx.init.Xavier(), ctx=mx.cpu())
net(mx.nd.zeros((1, 1, 8, 8)))                 # shapes known before the broadcast
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05},
                        kvstore=kv)
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()

for epoch in range(2):
    metric = mx.metric.Accuracy()
    for x, y in loader:
        with autograd.record():
            out = net(x)
            loss = loss_fn(out, y)
        loss.backward()
        trainer.step(x.shape[0])               # gradients summed over the workers
        metric.update(y, out)
    print("rank %d of %d, epoch %d: train accuracy %.3f"
          % (kv.rank, kv.num_workers, epoch, metric.get()[1]), flush=True)
