"""mx.io iterators, mx.model checkpoints and mx.callback, as MXNet 1.9 behaves."""
import logging

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def _epoch(it):
    return [(b.data[0].asnumpy()[:, 0].tolist(), b.pad, b.label[0].asnumpy().tolist()) for b in it]


# Expected batches observed with MXNet 1.9.1 for 5 samples, batch_size 2.
@pytest.mark.parametrize("handle, epochs", [
    ("pad", [[([0, 2], 0, [0, 1]), ([4, 6], 0, [2, 3]), ([8, 0], 1, [4, 0])]] * 2),
    ("discard", [[([0, 2], 0, [0, 1]), ([4, 6], 0, [2, 3])]] * 2),
    ("roll_over", [[([0, 2], 0, [0, 1]), ([4, 6], 0, [2, 3])],
                   [([8, 0], 0, [4, 0]), ([2, 4], 0, [1, 2]), ([6, 8], 0, [3, 4])]]),
])
def test_ndarrayiter_last_batch_handles(handle, epochs):
    it = mx.io.NDArrayIter(np.arange(10).reshape(5, 2), np.arange(5), batch_size=2,
                           last_batch_handle=handle)
    for want in epochs:
        assert _epoch(it) == want
        it.reset()


@pytest.mark.smoke
def test_ndarrayiter_descs_and_dtypes():
    it = mx.io.NDArrayIter(np.zeros((4, 3), dtype=np.int64), np.zeros(4), batch_size=2)
    assert it.provide_data == [mx.io.DataDesc("data", (2, 3))]
    assert it.provide_data[0].dtype == np.float32
    assert it.provide_label[0].name == "softmax_label"
    b = next(iter(it))
    assert b.data[0].dtype is np.float32
    it = mx.io.NDArrayIter({"a": np.zeros((4, 3)), "b": np.ones((4, 1))}, batch_size=2)
    assert [d.name for d in it.provide_data] == ["a", "b"]
    it = mx.io.NDArrayIter([np.zeros((4, 3)), np.ones((4, 1))], batch_size=2)
    assert [d.name for d in it.provide_data] == ["_0_data", "_1_data"]
    it = mx.io.NDArrayIter(mx.nd.zeros((4, 2), dtype="float64"), batch_size=4, label_name="y")
    assert it.next().data[0].dtype is np.float64
    assert it.provide_label == []


def test_ndarrayiter_shuffle_uses_numpy_rng():
    data = np.arange(20).reshape(10, 2)
    np.random.seed(3)
    a = _epoch(mx.io.NDArrayIter(data, np.arange(10), batch_size=5, shuffle=True))
    np.random.seed(3)
    b = _epoch(mx.io.NDArrayIter(data, np.arange(10), batch_size=5, shuffle=True))
    assert a == b
    seen = sorted(v for batch in a for v in batch[0])
    assert seen == list(range(0, 20, 2))
    assert a != _epoch(mx.io.NDArrayIter(data, np.arange(10), batch_size=5))


def test_ndarrayiter_errors():
    with pytest.raises(ValueError, match="last_batch_handle"):
        mx.io.NDArrayIter(np.zeros((4, 2)), batch_size=2, last_batch_handle="wrap")
    with pytest.raises(ValueError, match="samples"):
        mx.io.NDArrayIter(np.zeros((4, 2)), np.zeros(3), batch_size=2)


def test_databatch_and_resizeiter():
    b = mx.io.DataBatch([mx.nd.zeros((2, 3))], [mx.nd.zeros((2,))], pad=0)
    assert "data shapes: [(2, 3)]" in str(b)
    with pytest.raises(TypeError, match="list"):
        mx.io.DataBatch(mx.nd.zeros((2,)))
    it = mx.io.ResizeIter(mx.io.NDArrayIter(np.zeros((4, 1)), batch_size=2), size=5)
    assert len(list(it)) == 5
    assert mx.io.DataDesc.get_batch_axis("TNC") == 1


def test_checkpoint_round_trip(tmp_path):
    x = mx.sym.var("data")
    net = mx.sym.FullyConnected(x, num_hidden=2, name="fc")
    args = {"fc_weight": mx.nd.array([[1, 2], [3, 4]]), "fc_bias": mx.nd.array([5, 6])}
    aux = {"bn_moving_mean": mx.nd.array([0.5])}
    prefix = str(tmp_path / "m")
    mx.model.save_checkpoint(prefix, 3, net, args, aux)
    sym, a2, x2 = mx.model.load_checkpoint(prefix, 3)
    assert sym.list_arguments() == net.list_arguments()
    np.testing.assert_array_equal(a2["fc_weight"].asnumpy(), args["fc_weight"].asnumpy())
    np.testing.assert_array_equal(x2["bn_moving_mean"].asnumpy(), [0.5])
    assert set(mx.nd.load(prefix + "-0003.params")) == {"arg:fc_weight", "arg:fc_bias",
                                                         "aux:bn_moving_mean"}
    mx.nd.save(prefix + "-0004.params", {"weird": mx.nd.ones((1,))})
    with pytest.raises(MXNetError, match="arg:/aux:"):
        mx.model.load_checkpoint(prefix, 4)


def test_do_checkpoint_and_speedometer(tmp_path, caplog):
    prefix = str(tmp_path / "cb")
    cb = mx.callback.do_checkpoint(prefix, period=2)
    net = mx.sym.var("x") * 2
    cb(0, net, {"w": mx.nd.ones((1,))}, {})
    assert not (tmp_path / "cb-0001.params").exists()
    cb(1, net, {"w": mx.nd.ones((1,))}, {})
    assert (tmp_path / "cb-0002.params").exists()
    speed = mx.callback.Speedometer(batch_size=4, frequent=2)
    with caplog.at_level(logging.INFO):
        for nbatch in range(5):
            speed(mx.model.BatchEndParam(epoch=0, nbatch=nbatch, eval_metric=None, locals=None))
    assert sum("samples/sec" in r.message for r in caplog.records) == 2


def test_ndarrayiter_descriptions_and_batches_as_mxnet_prints_them():
    # MXNet 1.9.1: dtype as the NumPy scalar class, and batches without an index.
    it = mx.io.NDArrayIter(np.ones((4, 3), np.float32), np.zeros(4), batch_size=2)
    assert repr(it.provide_data) == "[DataDesc[data,(2, 3),<class 'numpy.float32'>,NCHW]]"
    assert it.provide_label[0].dtype is np.float32
    batch = next(iter(it))
    assert batch.index is None
    assert it.getindex().tolist() == [0, 1]
