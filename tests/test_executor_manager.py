"""``mx.executor_manager`` (the pre-Module training loop's ``DataParallelExecutorManager``
and its ``DataParallelExecutorGroup``, also ``mx.model.DataParallelExecutorManager``)
and ``mx.libinfo``."""
import logging

import numpy as np
import pytest

import mxlite as mx
from mxlite.executor_manager import DataParallelExecutorGroup, DataParallelExecutorManager

nd = mx.nd
CTXS = [mx.cpu(0), mx.cpu(1)]


def _net():
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    return mx.sym.LinearRegressionOutput(fc, name="lro")


def _manager(net=None, batch=6, **kw):
    net = net or _net()
    it = mx.io.NDArrayIter(np.zeros((batch, 3)), np.zeros((batch, 2)), batch_size=batch,
                           label_name="lro_label")
    return DataParallelExecutorManager(net, CTXS, it, net.list_arguments(),
                                       ["fc_weight", "fc_bias"], [], **kw), it


def test_manager_trains_data_parallel_as_one_batch():
    rng = np.random.RandomState(0)
    x, y = rng.randn(6, 3), rng.randn(6, 2)
    w, b = rng.randn(2, 3), rng.randn(2)
    mgr, _ = _manager(work_load_list=[1, 2], logger=logging.getLogger("test"))
    assert mgr.slices == [slice(0, 2), slice(2, 6)]
    assert mx.model.DataParallelExecutorManager is DataParallelExecutorManager
    mgr.set_params({"fc_weight": nd.array(w), "fc_bias": nd.array(b)}, {})
    mgr.load_data_batch(mx.io.DataBatch([nd.array(x)], [nd.array(y)]))
    mgr.forward(is_train=True)
    mgr.backward()
    # LinearRegressionOutput's gradient: (out - label) / outputs per sample (2)
    gz = x @ w.T + b - y
    gw = sum(g.asnumpy() for g in mgr.grad_arrays[0])
    np.testing.assert_allclose(gw, gz.T @ x / 2, rtol=1e-5, atol=1e-6)
    metric = mx.metric.MSE()
    mgr.update_metric(metric, [nd.array(y)])
    # one update per device, as MXNet: the mean of the two devices' MSEs
    want = (np.mean(gz[:2] ** 2) + np.mean(gz[2:] ** 2)) / 2
    assert metric.get()[1] == pytest.approx(want, rel=1e-5)
    arg = {"fc_weight": nd.zeros((2, 3)), "fc_bias": nd.zeros((2,))}
    mgr.copy_to(arg, {})
    np.testing.assert_allclose(arg["fc_weight"].asnumpy(), w, rtol=1e-6)


def test_group_binds_the_given_slices_and_checks_the_batch():
    net = _net()
    it = mx.io.NDArrayIter(np.zeros((5, 3)), np.zeros((5, 2)), batch_size=5,
                           label_name="lro_label")
    g = DataParallelExecutorGroup(net, net.list_arguments(), ["fc_weight", "fc_bias"], CTXS,
                                  [slice(0, 4), slice(4, 5)], it)
    assert [e.arg_dict["data"].shape for e in g.train_execs] == [(4, 3), (1, 3)]
    assert g.data_names == ["data"] and g.label_names == ["lro_label"]
    assert g.param_names == ["fc_weight", "fc_bias"]
    with pytest.raises(ValueError, match="Batch size miss match. Expected 5, got 4"):
        g.load_data_batch(mx.io.DataBatch([nd.zeros((4, 3))], [nd.zeros((4, 2))]))


def test_duplicated_argument_names_are_refused():
    x = mx.sym.var("data")
    net = mx.sym.FullyConnected(x, num_hidden=2, name="fc") + mx.sym.FullyConnected(
        x, num_hidden=2, name="fc")
    it = mx.io.NDArrayIter(np.zeros((4, 3)), batch_size=4)
    with pytest.raises(ValueError, match='duplicated argument name "fc_weight"'):
        DataParallelExecutorManager(net, CTXS, it, net.list_arguments(), [], [])


def test_buckets_share_the_parameters():
    def sym_gen(key):
        return mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    it = mx.io.NDArrayIter(np.zeros((4, 3)), batch_size=4)
    it.default_bucket_key = 3
    net = sym_gen(3)
    mgr = DataParallelExecutorManager(net, CTXS, it, net.list_arguments(),
                                      ["fc_weight", "fc_bias"], [], sym_gen=sym_gen)
    batch = mx.io.DataBatch([nd.ones((4, 3))], [], bucket_key=5,
                            provide_data=[mx.io.DataDesc("data", (4, 3))], provide_label=[])
    mgr.load_data_batch(batch)
    assert mgr.curr_execgrp is not mgr.execgrp
    assert mgr.curr_execgrp.train_execs[0].arg_dict["fc_weight"] is \
        mgr.execgrp.train_execs[0].arg_dict["fc_weight"]
    with pytest.raises(NotImplementedError, match="bucketing"):
        mgr.install_monitor(mx.monitor.Monitor(1))


def test_libinfo_finds_no_c_library_unless_pointed_to_one(tmp_path, monkeypatch):
    assert mx.libinfo.__version__ == mx.__version__ == "1.9.1"
    monkeypatch.delenv("MXNET_LIBRARY_PATH", raising=False)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    with pytest.raises(RuntimeError, match="Cannot find the MXNet library"):
        mx.libinfo.find_lib_path()
    lib = tmp_path / "libmxnet.so"
    lib.write_bytes(b"")
    monkeypatch.setenv("MXNET_LIBRARY_PATH", str(lib))
    assert mx.libinfo.find_lib_path() == [str(lib)]
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    monkeypatch.delenv("MXNET_LIBRARY_PATH")
    assert mx.libinfo.find_lib_path() == [str(lib)]
    monkeypatch.delenv("MXNET_INCLUDE_PATH", raising=False)
    with pytest.raises(RuntimeError, match="Cannot find the MXNet include path"):
        mx.libinfo.find_include_path()
    monkeypatch.setenv("MXNET_INCLUDE_PATH", str(tmp_path))
    assert mx.libinfo.find_include_path() == str(tmp_path)
    with pytest.raises(RuntimeError, match="Cannot find the TVM op config"):
        mx.libinfo.find_conf_path()
