"""mx.mod.SequentialModule, PythonModule and PythonLossModule."""
import numpy as np
import pytest

import mxlite as mx


def _data():
    x = np.random.randn(200, 5).astype("float32")
    return x, (x[:, 0] + x[:, 1] > 0).astype("float32")


def _nets():
    h = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=8, name="fc1"),
                          act_type="relu", name="relu1")
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2,
                                                     name="fc2"), name="softmax")
    return h, out


def test_sequential_module_trains_two_chained_modules():
    x, y = _data()
    it = mx.io.NDArrayIter(x, y, 20)
    h, out = _nets()
    seq = mx.mod.SequentialModule()
    assert seq.add(mx.mod.Module(h, label_names=None)) is seq
    seq.add(mx.mod.Module(out), take_labels=True, auto_wiring=True)
    seq.fit(it, num_epoch=10, optimizer_params={"learning_rate": 0.5})
    assert seq.score(it, "acc")[0][1] > 0.9
    assert seq.data_names == ["data"] and seq.output_names == ["softmax_output"]
    assert seq.output_shapes == [("softmax_output", (20, 2))]
    arg, _ = seq.get_params()
    assert set(arg) == {"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"}


def test_sequential_module_matches_one_module_with_the_same_weights():
    x, y = _data()
    batch = mx.io.DataBatch([mx.nd.array(x[:4])], [mx.nd.array(y[:4])])
    h, out = _nets()
    whole = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=2, name="fc2"),
                                 name="softmax")
    single = mx.mod.Module(whole)
    single.bind([("data", (4, 5))], [("softmax_label", (4,))], inputs_need_grad=True)
    single.init_params(mx.init.Uniform(0.5))
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(h, label_names=None))
    seq.add(mx.mod.Module(out), take_labels=True, auto_wiring=True)
    seq.bind([("data", (4, 5))], [("softmax_label", (4,))], inputs_need_grad=True)
    seq.init_params(arg_params=single.get_params()[0], allow_missing=False)
    for mod in (single, seq):
        mod.forward(batch, is_train=True)
        mod.backward()
    assert np.allclose(seq.get_outputs()[0].asnumpy(), single.get_outputs()[0].asnumpy(),
                       atol=1e-6)
    assert np.allclose(seq.get_input_grads()[0].asnumpy(),
                       single.get_input_grads()[0].asnumpy(), atol=1e-6)


def test_sequential_module_errors():
    seq = mx.mod.SequentialModule()
    with pytest.raises(mx.MXNetError, match="no module"):
        seq.bind([("data", (4, 5))])
    with pytest.raises(ValueError, match="unknown meta"):
        seq.add(mx.mod.Module(_nets()[0], label_names=None), take_label=True)
    h = _nets()[0]
    seq.add(mx.mod.Module(h, label_names=None)).add(mx.mod.Module(h, label_names=None),
                                                    auto_wiring=True)
    seq.bind([("data", (4, 5))])
    with pytest.raises(mx.MXNetError, match="both have a parameter named 'fc1_weight'"):
        seq.init_params()


def test_python_loss_module_gives_its_gradient_to_the_module_before():
    x = np.random.randn(200, 5).astype("float32")
    y = x @ np.array([1, 2, 0, 0, -1], dtype="float32")
    it = mx.io.NDArrayIter(x, y, 20)
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=1, name="fc"),
                          label_names=None))
    loss = mx.mod.PythonLossModule(grad_func=lambda s, l: s - l.reshape((-1, 1)))
    seq.add(loss, take_labels=True, auto_wiring=True)
    seq.fit(it, num_epoch=20, eval_metric="mse", optimizer_params={"learning_rate": 0.1})
    w = seq.get_params()[0]["fc_weight"].asnumpy().ravel()
    assert np.allclose(w, [1, 2, 0, 0, -1], atol=0.02)
    assert loss.output_shapes == [("pyloss_output", (20, 1))]
    assert loss.get_params() == ({}, {})


def test_python_module_subclass_and_loss_errors():
    class Double(mx.mod.PythonModule):
        def _compute_output_shapes(self):
            return [("double_output", self._data_shapes[0][1])]

        def forward(self, data_batch, is_train=None):
            self._out = data_batch.data[0] * 2

        def get_outputs(self, merge_multi_context=True):
            return [self._out]
    mod = Double(["data"], None, ["double_output"])
    mod.bind([("data", (2, 3))], None)
    mod.forward(mx.io.DataBatch([mx.nd.ones((2, 3))]))
    assert mod.get_outputs()[0].asnumpy().sum() == 12
    assert mod.output_shapes == [("double_output", (2, 3))]
    with pytest.raises(mx.MXNetError, match="data names"):
        Double(["x"], None, ["o"]).bind([("data", (2, 3))])
    loss = mx.mod.PythonLossModule()
    loss.bind([("data", (2, 1))], [("softmax_label", (2,))])
    loss.forward(mx.io.DataBatch([mx.nd.ones((2, 1))], [mx.nd.ones((2,))]), is_train=True)
    with pytest.raises(NotImplementedError, match="grad_func"):
        loss.backward()
    with pytest.raises(mx.MXNetError, match="no out_grads"):
        loss.backward(out_grads=[mx.nd.ones((2, 1))])
