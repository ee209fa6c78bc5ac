"""A symbolic model saved by real MXNet 1.9.1 that uses the resize, detection and misc
ops (BilinearResize2D, AdaptiveAvgPooling2D, ROIPooling, ROIAlign, Crop, amp_cast,
MultiBoxPrior, make_loss): MXNet's own JSON attribute strings parse, and mxlite
reproduces MXNet's outputs through an Executor and through SymbolBlock.imports.

Files (tests/reference_extra): ``ops_model-symbol.json``, ``ops_model-0000.params``
and ``ops_model_io.npz`` (inputs ``data``, ``rois``; MXNet's outputs ``out0``...),
written by ``gen_ops_model.py`` under MXNet 1.9.1.
"""
import importlib.util
import os

import numpy as np

import mxlite as mx

HERE = os.path.join(os.path.dirname(__file__), "reference_extra")
SYMBOL = os.path.join(HERE, "ops_model-symbol.json")
PARAMS = os.path.join(HERE, "ops_model-0000.params")


def _io():
    with np.load(os.path.join(HERE, "ops_model_io.npz")) as z:
        return {k: z[k] for k in z.files}


def _check(outs, io):
    assert len(outs) == 6
    for i, out in enumerate(outs):
        want = io["out%d" % i]
        got = out.asnumpy()
        assert got.shape == want.shape and got.dtype == want.dtype, i
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg="output %d" % i)


def test_mxnet_saved_symbol_binds_and_reproduces_its_outputs():
    io = _io()
    sym = mx.sym.load(SYMBOL)
    assert sym.list_arguments() == ["data", "conv_weight", "conv_bias", "rois"]
    args = {k.split(":", 1)[1]: v for k, v in mx.nd.load(PARAMS).items()}
    args["data"] = mx.nd.array(io["data"])
    args["rois"] = mx.nd.array(io["rois"])
    ex = sym.bind(mx.cpu(), args)
    _check(ex.forward(is_train=False), io)


def test_mxnet_saved_symbol_imports_as_a_block():
    io = _io()
    net = mx.gluon.SymbolBlock.imports(SYMBOL, ["data", "rois"], PARAMS)
    _check(net(mx.nd.array(io["data"]), mx.nd.array(io["rois"])), io)
    net.hybridize()
    _check(net(mx.nd.array(io["data"]), mx.nd.array(io["rois"])), io)


def _build():
    """The model of gen_ops_model.py, built with mxlite's mx.sym."""
    spec = importlib.util.spec_from_file_location("gen_ops_model",
                                                  os.path.join(HERE, "gen_ops_model.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with mx.name.NameManager():         # automatic names count from 0, as in the generator
        return gen.build(mx)


def test_saving_the_same_model_writes_mxnets_graph():
    # save() bypasses amp_cast nodes feeding other nodes, as MXNet's remove_amp_cast
    # does: the float16 cast disappears, the cast that is an output stays.
    import json
    ours = json.loads(_build().tojson())
    with open(SYMBOL) as f:
        theirs = json.load(f)

    def shape(g):
        return ([(n["op"], n["name"], n["inputs"]) for n in g["nodes"]], g["heads"],
                g["arg_nodes"])

    assert shape(ours) == shape(theirs)
    for a, b in zip(ours["nodes"], theirs["nodes"]):
        # attributes as MXNet writes them (weights an op creates carry its params)
        assert a.get("attrs") == b.get("attrs"), a["name"]
    kept = json.loads(_build().tojson(remove_amp_cast=False))
    assert [n["name"] for n in kept["nodes"]].count("half") == 1
