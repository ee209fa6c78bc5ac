"""MXNet's small public modules: the version, mx.log, mx.registry, mx.error, mx.misc,
mx.executor, mx.monitor, and the names MXNet's modules re-export."""
import logging

import numpy as np
import pytest

import mxlite as mx


@pytest.mark.smoke
def test_version_is_the_mxnet_api_level_and_mxlite_keeps_its_own():
    assert mx.__version__ == "1.9.1"
    major, minor = (int(v) for v in mx.__version__.split(".")[:2])
    assert (1, 4) <= (major, minor) < (2, 0)      # what third-party checks ask for
    assert mx.__mxlite_version__ == "0.1.0"


def test_log_get_logger_formats_like_glog(tmp_path):
    logger = mx.log.get_logger("i13_api_test", level=mx.log.INFO)
    assert logger.level == logging.INFO
    assert mx.log.get_logger("i13_api_test") is logger
    assert len(logger.handlers) == 1              # configured once per name
    record = logging.LogRecord("x", logging.WARNING, "f.py", 3, "hello", None, None)
    text = logger.handlers[0].format(record)
    assert text.startswith("\x1b[31mW") and text.endswith("hello")
    path = tmp_path / "log.txt"
    flog = mx.log.get_logger("i13_api_file", filename=str(path), level=mx.log.DEBUG)
    flog.debug("to the file")
    flog.handlers[0].flush()
    assert "to the file" in path.read_text()
    with pytest.warns(DeprecationWarning):
        assert mx.log.getLogger("i13_api_test") is logger
    assert (mx.log.DEBUG, mx.log.CRITICAL) == (logging.DEBUG, logging.CRITICAL)


def test_registry_register_alias_create():
    class Shape:
        pass
    register = mx.registry.get_register_func(Shape, "shape")
    alias = mx.registry.get_alias_func(Shape, "shape")
    create = mx.registry.get_create_func(Shape, "shape")

    @alias("box")
    @register
    class Square(Shape):
        def __init__(self, side=1):
            self.side = side
    assert set(mx.registry.get_registry(Shape)) == {"square", "box"}
    assert create("Square", side=2).side == 2
    assert create("box").side == 1
    assert create('["square", {"side": 3}]').side == 3
    assert create('{"shape": "square", "side": 4}').side == 4
    assert create({"shape": "square", "side": 5}).side == 5
    sq = Square()
    assert create(sq) is sq
    with pytest.raises(ValueError, match="circle.*not registered"):
        create("circle")
    with pytest.raises(TypeError, match="subclass of Shape"):
        register(int)
    with pytest.warns(UserWarning, match="overriding"):
        @register
        class Square(Shape):  # noqa: F811
            pass


def test_registry_holds_the_initializers_and_metrics():
    inits = mx.registry.get_registry(mx.init.Initializer)
    assert inits["xavier"] is mx.init.Xavier
    make = mx.registry.get_create_func(mx.init.Initializer, "initializer")
    assert isinstance(make("normal", sigma=0.5), mx.init.Normal)
    assert mx.registry.get_registry(mx.metric.EvalMetric)["accuracy"] is mx.metric.Accuracy


def test_error_register_maps_names_to_classes():
    @mx.error.register
    class MyError(mx.error.MXNetError):
        pass
    assert mx.error.error_class("MyError") is MyError
    assert mx.error.error_class("ValueError") is ValueError
    assert mx.error.error_class("Unknown") is mx.error.MXNetError
    assert "open an issue" in str(mx.error.InternalError("boom"))


def test_misc_factor_scheduler():
    sched = mx.misc.FactorScheduler(step=10, factor=0.5)
    assert [sched(i) for i in (0, 9, 10, 25)] == [0.01, 0.01, 0.005, 0.0025]
    with pytest.raises(ValueError, match="step"):
        mx.misc.FactorScheduler(step=0)
    with pytest.raises(ValueError, match="factor"):
        mx.misc.FactorScheduler(step=1, factor=1.5)


def _mlp():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc1")
    return mx.sym.SoftmaxOutput(mx.sym.Activation(fc, act_type="relu", name="relu1"),
                                name="softmax")


def test_executor_monitor_callback_sees_outputs_and_inputs():
    net = _mlp()
    assert mx.executor.Executor is mx.sym.Executor
    exe = net.simple_bind(mx.cpu(), data=(2, 3))
    seen = []
    exe.set_monitor_callback(lambda name, arr: seen.append((name, arr.shape)))
    exe.forward(data=mx.nd.ones((2, 3)))
    assert seen == [("fc1_output", (2, 4)), ("relu1_output", (2, 4)),
                    ("softmax_output", (2, 4))]
    seen.clear()
    exe.set_monitor_callback(lambda name, arr: seen.append(name), monitor_all=True)
    exe.forward(data=mx.nd.ones((2, 3)))
    assert seen[:6] == ["fc1_data", "fc1_weight", "fc1_bias", "fc1_output", "relu1_input0",
                        "relu1_output"]     # as MXNet: Activation lists no input names


def test_monitor_collects_every_interval_batches():
    net = _mlp()
    exe = net.simple_bind(mx.cpu(), data=(2, 3))
    for a in exe.arg_arrays:
        a[:] = 0.5
    mon = mx.mon.Monitor(2, pattern="fc1.*")
    mon.install(exe)
    got = []
    for _ in range(3):
        mon.tic()
        exe.forward(data=mx.nd.ones((2, 3)))
        got.append(mon.toc())
    assert got[1] == []                                   # step 2 is not collected
    names = [k for _, k, _ in got[0]]
    assert names[0] == "fc1_output"
    assert "fc1_weight" in names and "softmax_label" in names   # arguments are all listed
    step, name, text = got[0][0]
    # default statistic: norm(x)/sqrt(size); every fc1 output is 3*1*0.5+0.5 = 2
    assert step == 1 and float(text.strip()) == pytest.approx(2.0)


def test_module_fit_with_monitor_logs_statistics(caplog):
    net = _mlp()
    x = np.random.rand(8, 3).astype("float32")
    it = mx.io.NDArrayIter(x, np.zeros(8), batch_size=4)
    mod = mx.mod.Module(net)
    mon = mx.mon.Monitor(1, pattern="relu1.*")
    with caplog.at_level(logging.INFO):
        mod.fit(it, num_epoch=1, monitor=mon)
    assert sum("relu1_output" in r.getMessage() for r in caplog.records) == 2


@pytest.mark.smoke
def test_names_mxnet_modules_reexport():
    import mxlite.io.io as io_io
    import mxlite.module.module as module_module
    import mxlite.optimizer.optimizer as opt_opt
    import mxlite.nd.ndarray as nd_nd
    import mxlite.image.image as img_img
    assert io_io.CSVIter is mx.io.CSVIter and io_io.LibSVMIter is mx.io.LibSVMIter
    assert module_module.zeros is mx.nd.zeros and module_module.nd is mx.nd
    assert opt_opt.Adam is mx.optimizer.Adam and opt_opt.SGD is mx.optimizer.SGD
    assert nd_nd.zeros is mx.nd.zeros and nd_nd.maximum is mx.nd.maximum
    assert img_img.ImageIter is mx.image.ImageIter
    assert mx.initializer.load is mx.nd.load
    assert mx.recordio.cv2 is None or hasattr(mx.recordio.cv2, "imdecode")
    assert "CSVIter" in dir(io_io)
    with pytest.raises(AttributeError):
        io_io.NoSuchIter


def test_symbol_pow_randn_shuffle():
    a = mx.sym.var("a")
    out = mx.sym.pow(a, 2).eval(a=mx.nd.array([1, 2, 3]))[0]
    assert out.asnumpy().tolist() == [1, 4, 9]
    r = mx.sym.random.randn(2, 3, loc=1.0)
    assert r.infer_shape()[1] == [(2, 3)]
    s = mx.sym.random.shuffle(a).eval(a=mx.nd.arange(5))[0].asnumpy()
    assert sorted(s.tolist()) == [0, 1, 2, 3, 4]


def test_contrib_namespaces_are_the_contrib_ops():
    assert mx.contrib.nd is mx.contrib.ndarray and mx.contrib.sym is mx.contrib.symbol
    x = mx.nd.array([[1, 2], [3, 4]])
    assert (mx.contrib.nd.index_array(x).asnumpy() ==
            mx.nd.contrib.index_array(x).asnumpy()).all()
    assert "MultiBoxPrior" in dir(mx.contrib.sym)
    y = mx.contrib.sym.index_array(mx.sym.var("x")).eval(x=x)[0]
    assert y.shape == (2, 2, 2)
