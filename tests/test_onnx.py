"""``mx.onnx`` and ``mx.contrib.onnx`` as MXNet 1.9.1 documents them: model_zoo models
exported from the files ``HybridBlock.export`` writes, checked, run in onnxruntime,
imported back; the argument forms of ``export_model``; dynamic shapes; errors; import
of ONNX graphs that mxlite did not write. Operator rows are in test_onnx_ops.py.
"""
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon.model_zoo import vision

from test_onnx_ops import needs_onnx, _run_ort


def _randomize(net):
    """Parameters of realistic size (BatchNorm statistics included), so outputs differ
    between layers' mistakes."""
    rng = np.random.default_rng(3)
    for name, p in net.collect_params().items():
        shape = p.shape
        if name.endswith(("running_var", "gamma")):
            v = rng.uniform(0.5, 1.5, shape)
        elif name.endswith(("running_mean", "beta", "bias")):
            v = rng.uniform(-0.2, 0.2, shape)
        else:
            v = rng.standard_normal(shape, np.float32) / np.sqrt(np.prod(shape[1:]) or 1)
        p.set_data(mx.nd.array(v))


def _exported(tmp_path, name, shape):
    net = vision.get_model(name, classes=10)
    net.initialize()
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, shape))
    net(x)
    _randomize(net)
    y = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / name))
    return sym_file, params_file, x, y


@needs_onnx
@pytest.mark.parametrize("name,shape", [("resnet18_v1", (1, 3, 32, 32)),
                                        ("mobilenetv2_0.25", (1, 3, 32, 32)),
                                        ("squeezenet1.1", (1, 3, 224, 224))])
def test_model_zoo_exports_runs_in_onnxruntime_and_imports_back(tmp_path, name, shape):
    import onnx
    sym_file, params_file, x, y = _exported(tmp_path, name, shape)
    path = mx.onnx.export_model(sym_file, params_file, [shape], np.float32,
                                str(tmp_path / "m.onnx"))
    assert path == str(tmp_path / "m.onnx")
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    assert [o.version for o in model.opset_import] == [13]
    (got,) = _run_ort(path, {"data": x.asnumpy()})
    np.testing.assert_allclose(got, y, rtol=1e-4, atol=1e-5)

    sym, arg_params, aux_params = mx.contrib.onnx.import_model_(path)
    assert set(aux_params) == set(sym.list_auxiliary_states())
    assert not set(arg_params) & set(aux_params)
    assert set(arg_params) | set(aux_params) | {"data"} == set(sym.list_inputs())

    net = mx.contrib.onnx.import_to_gluon_(path, mx.cpu())
    assert isinstance(net, mx.gluon.SymbolBlock)
    np.testing.assert_allclose(net(x).asnumpy(), y, rtol=1e-4, atol=1e-5)


@needs_onnx
def test_export_takes_symbol_and_params_in_every_form(tmp_path):
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, activation="relu"), mx.gluon.nn.BatchNorm(),
            mx.gluon.nn.Dense(2))
    net.initialize()
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).uniform(size=(3, 5)))
    net(x)
    _randomize(net)
    y = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "net"), epoch=7)
    sym, arg_params, aux_params = mx.model.load_checkpoint(str(tmp_path / "net"), 7)
    both = dict(arg_params, **aux_params)
    forms = [(sym_file, params_file), (sym, both), (sym, [arg_params, aux_params])]
    for k, (s, p) in enumerate(forms):
        path = mx.onnx.export_model(s, p, [(3, 5)], [np.float32],
                                    onnx_file_path=str(tmp_path / ("%d.onnx" % k)))
        (got,) = _run_ort(path, {"data": x.asnumpy()})
        np.testing.assert_allclose(got, y, rtol=1e-5, atol=1e-6)
    # The old argument names still work.
    path = mx.onnx.export_model(sym, both, input_shape=[(3, 5)], input_type=np.float32,
                                onnx_file_path=str(tmp_path / "old.onnx"))
    np.testing.assert_allclose(_run_ort(path, {"data": x.asnumpy()})[0], y, rtol=1e-5)
    with pytest.raises(ValueError, match="two file paths, or a Symbol and a dict"):
        mx.onnx.export_model(sym, 3, [(3, 5)])
    with pytest.raises(ValueError, match="1 inputs .* 2 shapes"):
        mx.onnx.export_model(sym, both, [(3, 5), (3, 5)], [np.float32] * 2,
                             onnx_file_path=str(tmp_path / "bad.onnx"))


@needs_onnx
def test_dynamic_batch_runs_any_batch_size(tmp_path):
    import onnx
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(4, 3), mx.gluon.nn.Flatten(), mx.gluon.nn.Dense(3))
    net.initialize()
    net.hybridize()
    net(mx.nd.zeros((1, 2, 5, 5)))
    sym_file, params_file = net.export(str(tmp_path / "net"))
    path = mx.onnx.export_model(sym_file, params_file, [(1, 2, 5, 5)], np.float32,
                                str(tmp_path / "d.onnx"), dynamic=True,
                                dynamic_input_shapes=[("batch", 2, 5, 5)])
    dims = onnx.load(path).graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch" and [d.dim_value for d in dims[1:]] == [2, 5, 5]
    x = np.random.RandomState(0).uniform(size=(4, 2, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(_run_ort(path, {"data": x})[0], net(mx.nd.array(x)).asnumpy(),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="set dynamic=True"):
        mx.onnx.export_model(sym_file, params_file, [(1, 2, 5, 5)], np.float32,
                             str(tmp_path / "e.onnx"), dynamic_input_shapes=[(None, 2, 5, 5)])



@needs_onnx
@pytest.mark.parametrize("codes,reverse", [((-3, 0, 0), False), ((0, -4, 2, -1, -2), False),
                                           ((0, -4, -1, 3, 0, 0), False), ((-2,), False),
                                           ((0, 0, -3), False), ((-1, 0), True),
                                           ((0, 0, -3), True)])
def test_dynamic_reshape_codes_follow_the_batch(tmp_path, codes, reverse):
    s = mx.sym.Reshape(mx.sym.var("data"), shape=codes, reverse=reverse)
    path = mx.onnx.export_model(s, {}, [(2, 6, 3, 2)], np.float32, str(tmp_path / "r.onnx"),
                                dynamic=True, dynamic_input_shapes=[(None, 6, 3, 2)])
    x = np.random.RandomState(0).uniform(size=(5, 6, 3, 2)).astype(np.float32)
    want = mx.nd.Reshape(mx.nd.array(x), shape=codes, reverse=reverse).asnumpy()
    np.testing.assert_array_equal(_run_ort(path, {"data": x})[0], want)


@needs_onnx
def test_unsupported_op_is_named(tmp_path):
    s = mx.sym.khatri_rao(mx.sym.var("data"), mx.sym.var("data2"), name="kr")
    with pytest.raises(AttributeError, match="op type khatri_rao .*'kr'"):
        mx.onnx.export_model(s, {}, [(2, 5), (3, 5)], np.float32, str(tmp_path / "t.onnx"))
    s = mx.sym.Dropout(mx.sym.var("data"), mode="always", name="drop")
    with pytest.raises(mx.MXNetError, match="Dropout .*'drop'.* mode=always"):
        mx.onnx.export_model(s, {}, [(2, 4)], np.float32, str(tmp_path / "t.onnx"))
    s = mx.sym.softmax(mx.sym.var("data"), mx.sym.var("length"), use_length=True, name="sm")
    with pytest.raises(mx.MXNetError, match="softmax .*'sm'.* use_length=True"):
        mx.onnx.export_model(s, {}, [(2, 4), (2,)], np.float32, str(tmp_path / "t.onnx"))


@needs_onnx
def test_get_operator_support_lists_the_exported_ops():
    ops = mx.onnx.get_operator_support()
    assert ops == sorted(ops)
    for name in ("Convolution", "Deconvolution", "FullyConnected", "BatchNorm", "Activation",
                 "LeakyReLU", "Pooling", "Flatten", "Reshape", "transpose", "Concat",
                 "elemwise_add", "broadcast_mul", "_plus", "Dropout", "softmax",
                 "SoftmaxOutput", "log_softmax", "clip", "slice", "slice_axis", "mean", "sum",
                 "Embedding", "LayerNorm", "_copy", "identity", "pad", "UpSampling"):
        assert name in ops, name
    assert "khatri_rao" not in ops
    assert mx.onnx.get_operator_support(12) == []
    assert mx.onnx.mx2onnx.get_operator_support(13) == ops


@needs_onnx
def test_contrib_paths_print_mxnet_notices_and_delegate(tmp_path, capsys):
    s = mx.sym.relu(mx.sym.var("data"), name="r")
    path = mx.contrib.onnx.export_model(s, {}, [(2, 3)], np.float32, str(tmp_path / "r.onnx"))
    assert "moved to mxnet.onnx" in capsys.readouterr().out
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert "deprecated" in capsys.readouterr().out
    assert meta == {"input_tensor_data": [("data", (2, 3), 1)],
                    "output_tensor_data": [("r", (2, 3))]}
    sym, args, aux = mx.contrib.onnx.import_model(path)
    assert sym.list_outputs() == ["r_output"] and args == {} and aux == {}
    net = mx.contrib.onnx.import_to_gluon(path, ctx=mx.cpu())
    assert "import_to_gluon" in capsys.readouterr().out
    x = mx.nd.array([[-1, 2, -3], [4, -5, 6]])
    assert net(x).asnumpy().tolist() == [[0, 2, 0], [4, 0, 6]]


def _graph(nodes, inputs, outputs, inits=(), opset=13):
    from onnx import helper, numpy_helper, TensorProto
    f = TensorProto.FLOAT
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, f, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, f, s) for n, s in outputs],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


@needs_onnx
def test_import_of_graphs_other_exporters_write(tmp_path):
    import onnx
    from onnx import helper
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (2, 3, 4, 4)).astype(np.float32)
    w = rng.uniform(-1, 1, (48, 5)).astype(np.float32)
    slope = rng.uniform(0, 0.5, (3, 1, 1)).astype(np.float32)
    nodes = [
        helper.make_node("Constant", [], ["two"], value=onnx.numpy_helper.from_array(
            np.array(2.0, np.float32))),
        helper.make_node("PRelu", ["x", "slope"], ["p"]),
        helper.make_node("Mul", ["p", "two"], ["m"]),
        helper.make_node("Resize", ["m", "roi", "scales"], ["up"], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        helper.make_node("AveragePool", ["up"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "w"], ["gemm"], alpha=0.5, transB=0),
        helper.make_node("Softmax", ["gemm"], ["y"], axis=1),
    ]
    model = _graph(nodes, [("x", [2, 3, 4, 4])], [("y", [2, 5])],
                   [("w", w), ("slope", slope), ("roi", np.zeros(0, np.float32)),
                    ("scales", np.array([1, 1, 2, 2], np.float32))], opset=11)
    onnx.checker.check_model(model)
    path = str(tmp_path / "other.onnx")
    onnx.save(model, path)
    (want,) = _run_ort(path, {"x": x})
    net = mx.contrib.onnx.import_to_gluon_(path, mx.cpu())
    np.testing.assert_allclose(net(mx.nd.array(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
    assert mx.contrib.onnx.get_model_metadata_(path)["input_tensor_data"] == [
        ("x", (2, 3, 4, 4), 1)]


@needs_onnx
def test_import_of_an_unsupported_op_is_named(tmp_path):
    from onnx import helper
    model = _graph([helper.make_node("Hardmax", ["x"], ["y"], name="hm")],
                   [("x", [2, 3])], [("y", [2, 3])])
    path = str(tmp_path / "h.onnx")
    import onnx
    onnx.save(model, path)
    with pytest.raises(NotImplementedError, match="Hardmax .*not supported"):
        mx.contrib.onnx.import_model_(path)


def test_without_onnx_the_functions_say_which_extra_to_install(monkeypatch, tmp_path):
    for mod in [m for m in sys.modules if m == "onnx" or m.startswith("onnx.")]:
        monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setitem(sys.modules, "onnx", None)     # import onnx -> ImportError
    s = mx.sym.relu(mx.sym.var("data"))
    calls = [lambda: mx.onnx.export_model(s, {}, [(1, 2)], onnx_file_path=str(tmp_path / "a")),
             lambda: mx.onnx.get_operator_support(),
             lambda: mx.contrib.onnx.import_model_(str(tmp_path / "a")),
             lambda: mx.contrib.onnx.get_model_metadata_(str(tmp_path / "a")),
             lambda: mx.contrib.onnx.import_to_gluon_(str(tmp_path / "a"), mx.cpu())]
    for call in calls:
        with pytest.raises(ImportError, match=r"needs the onnx package.*mxlite\[onnx\]"):
            call()
    assert not (tmp_path / "a").exists()


@needs_onnx
def test_gluon_lstm_and_gru_layers_export_and_import_back(tmp_path):
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.rnn.LSTM(5, num_layers=2, layout="NTC", bidirectional=True),
            mx.gluon.rnn.GRU(4, layout="NTC"), mx.gluon.nn.Dense(3, flatten=False))
    net.initialize()
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (2, 6, 3)))
    net(x)
    _randomize(net)
    y = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "rnn"))
    path = mx.onnx.export_model(sym_file, params_file, [x.shape], np.float32,
                                str(tmp_path / "rnn.onnx"))
    np.testing.assert_allclose(_run_ort(path, {"data": x.asnumpy()})[0], y, rtol=1e-4,
                               atol=1e-5)
    back = mx.contrib.onnx.import_to_gluon_(path, mx.cpu())
    np.testing.assert_allclose(back(x).asnumpy(), y, rtol=1e-4, atol=1e-5)


@needs_onnx
def test_import_folds_the_shape_arithmetic_of_a_flatten(tmp_path):
    # What PyTorch writes for x.view(x.size(0), -1): Shape, Gather, Unsqueeze, Concat.
    from onnx import helper
    import onnx
    rng = np.random.RandomState(1)
    x = rng.uniform(-1, 1, (2, 3, 4, 4)).astype(np.float32)
    w = rng.uniform(-1, 1, (5, 48)).astype(np.float32)
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Shape", ["r"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["r", "target"], ["flat"]),
        helper.make_node("Gemm", ["flat", "w", "bias"], ["y"], transB=1),
    ]
    model = _graph(nodes, [("x", [2, 3, 4, 4])], [("y", [2, 5])],
                   [("w", w), ("bias", np.arange(5, dtype=np.float32)),
                    ("zero", np.array(0, np.int64)), ("axes", np.array([0], np.int64)),
                    ("minus_one", np.array([-1], np.int64))])
    onnx.checker.check_model(model)
    path = str(tmp_path / "view.onnx")
    onnx.save(model, path)
    (want,) = _run_ort(path, {"x": x})
    sym, arg_params, aux_params = mx.contrib.onnx.import_model_(path)
    assert sorted(arg_params) == ["bias", "w"]
    ex = sym.bind(mx.cpu(), dict(arg_params, x=mx.nd.array(x)))
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), want, rtol=1e-5, atol=1e-6)


@needs_onnx
def test_integer_inputs_and_shape_inference(tmp_path, caplog):
    import logging
    import onnx
    tokens, mask = mx.sym.var("tokens"), mx.sym.var("mask")
    emb = mx.sym.Embedding(tokens, input_dim=10, output_dim=4, name="emb")
    y = mx.sym.broadcast_mul(emb, mx.sym.expand_dims(mask, axis=-1), name="y")
    params = {"emb_weight": mx.nd.array(np.random.RandomState(0).uniform(size=(10, 4)))}
    with caplog.at_level(logging.INFO):
        path = mx.onnx.export_model(y, params, [(2, 3), (2, 3)], [np.int32, np.float32],
                                    str(tmp_path / "e.onnx"), verbose=True,
                                    run_shape_inference=True)
    assert "Converting emb (Embedding)" in caplog.text
    model = onnx.load(path)
    assert [i.type.tensor_type.elem_type for i in model.graph.input] == [
        onnx.TensorProto.INT32, onnx.TensorProto.FLOAT]
    assert any(v.name == "emb" for v in model.graph.value_info)     # inferred shapes kept
    t = np.array([[1, 2, 9], [0, 0, 3]], np.int32)
    m = np.array([[1, 1, 0], [1, 0, 1]], np.float32)
    want = params["emb_weight"].asnumpy()[t] * m[..., None]
    np.testing.assert_allclose(_run_ort(path, {"tokens": t, "mask": m})[0], want, rtol=1e-6)


@needs_onnx
def test_dynamic_self_attention_takes_any_length_and_batch(tmp_path):
    qkv = mx.sym.var("data")
    att = mx.sym.softmax(mx.sym.contrib.interleaved_matmul_selfatt_qk(qkv, heads=2))
    y = mx.sym.contrib.interleaved_matmul_selfatt_valatt(qkv, att, heads=2)
    path = mx.onnx.export_model(y, {}, [(4, 2, 36)], np.float32, str(tmp_path / "a.onnx"),
                                dynamic=True, dynamic_input_shapes=[("T", "N", 36)])
    x = np.random.RandomState(0).uniform(-1, 1, (7, 3, 36)).astype(np.float32)
    want = y.bind(mx.cpu(), {"data": mx.nd.array(x)}).forward()[0].asnumpy()
    np.testing.assert_allclose(_run_ort(path, {"data": x})[0], want, rtol=1e-5, atol=1e-6)
