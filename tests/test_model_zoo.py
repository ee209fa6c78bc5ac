"""mx.gluon.model_zoo.vision: every model builds, runs, hybridizes; parameter names,
structure and shapes match MXNet 1.9.1; .params files saved by MXNet load and give
MXNet's outputs.

Reference data (recorded with the real MXNet 1.9.1, never imported here):
- reference_extra/model_zoo_params.json: per model (``classes=10``), after one forward
  on ``ones((1, 3, size, size))``, the sorted lines ``"<structural key> <param name without
  the net's prefix> <shape>"``: their count, SHA-1, first and last line.
- reference_extra/model_zoo_<net>.params: tiny ResNet/DenseNet configurations whose
  parameters were set to random values in MXNet and saved with ``save_parameters``;
  model_zoo_outputs.npz holds MXNet's inference output on ``_input(shape)``.
"""
import hashlib
import json
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon.model_zoo import vision

HERE = os.path.join(os.path.dirname(__file__), "reference_extra")
with open(os.path.join(HERE, "model_zoo_params.json")) as f:
    REF = json.load(f)


def _lines(net):
    prefix = net.prefix
    out = []
    for key, param in net._collect_params_with_prefix().items():
        assert param.name.startswith(prefix), param.name
        out.append("%s %s %s" % (key, param.name[len(prefix):], tuple(param.shape)))
    return sorted(out)


def _input(shape):
    n = int(np.prod(shape))
    return np.sin(np.arange(n) * 0.37).reshape(shape).astype(np.float32)


def test_reference_lists_every_model():
    assert sorted(REF) == sorted(vision._MODELS)
    assert len(REF) == 34


@pytest.mark.parametrize("name", sorted(REF))
def test_model_builds_runs_hybridizes_and_matches_mxnet(name):
    ref = REF[name]
    net = vision.get_model(name, classes=10)
    net.initialize(mx.init.Xavier())
    batch = 2 if ref["size"] < 100 else 1  # keep the 224/299 models cheap
    x = mx.nd.array(_input((batch, 3, ref["size"], ref["size"])))
    y = net(x)
    assert y.shape == (batch, 10)
    assert np.isfinite(y.asnumpy()).all()
    lines = _lines(net)
    assert len(lines) == ref["count"]
    assert lines[0] == ref["first"] and lines[-1] == ref["last"]
    assert hashlib.sha1("\n".join(lines).encode()).hexdigest() == ref["sha1"]
    net.hybridize()
    y2 = net(x)
    np.testing.assert_allclose(y2.asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)


TINY = {
    "resnet_v1_basic": (lambda: vision.ResNetV1(vision.BasicBlockV1, [1, 1], [4, 4, 8],
                                                classes=3, thumbnail=True), (2, 3, 8, 8)),
    "resnet_v1_bottleneck": (lambda: vision.ResNetV1(vision.BottleneckV1, [1, 1],
                                                     [4, 8, 16], classes=3), (2, 3, 16, 16)),
    "resnet_v2_basic": (lambda: vision.ResNetV2(vision.BasicBlockV2, [1, 1], [4, 4, 8],
                                                classes=3, thumbnail=True), (2, 3, 8, 8)),
    "resnet_v2_bottleneck": (lambda: vision.ResNetV2(vision.BottleneckV2, [1, 1],
                                                     [4, 8, 16], classes=3), (2, 3, 16, 16)),
    "densenet": (lambda: vision.DenseNet(4, 2, [1, 2], bn_size=2, classes=3),
                 (1, 3, 112, 112)),
}


@pytest.mark.parametrize("key", sorted(TINY))
def test_mxnet_params_file_loads_and_gives_mxnet_output(key):
    make, shape = TINY[key]
    net = make()
    net.load_parameters(os.path.join(HERE, "model_zoo_%s.params" % key))
    expected = np.load(os.path.join(HERE, "model_zoo_outputs.npz"))[key]
    x = mx.nd.array(_input(shape))
    np.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-4, atol=1e-4)
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-4, atol=1e-4)


def test_params_file_structure_mismatch_is_reported():
    # a v1 file does not fit a v2 network: the structural names differ
    net = TINY["resnet_v2_basic"][0]()
    with pytest.raises(ValueError, match="missing"):
        net.load_parameters(os.path.join(HERE, "model_zoo_resnet_v1_basic.params"))


@pytest.mark.parametrize("name,hashed", [
    ("resnet18_v1", "resnet18_v1-a0666292"), ("vgg16_bn", "vgg16_bn-7f01cf05"),
    ("squeezenet1.1", "squeezenet1.1-33ba0f93"), ("mobilenet0.5", "mobilenet0.5-8e9d539c"),
    ("mobilenetv2_0.25", "mobilenetv2_0.25-ae8f9392"), ("densenet121", "densenet121-f27dbf2d"),
    ("inceptionv3", "inceptionv3-ed47ec45"), ("alexnet", "alexnet-44335d1f")])
def test_pretrained_without_network_names_the_store_file(name, hashed, tmp_path, monkeypatch):
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://127.0.0.1:9/")
    with pytest.raises(OSError) as info:
        vision.get_model(name, pretrained=True, root=str(tmp_path))
    msg = str(info.value)
    assert hashed + ".params" in msg and str(tmp_path) in msg


def test_pretrained_loads_the_local_store_file(tmp_path, monkeypatch):
    from mxlite.gluon.model_zoo import model_store
    src = vision.mobilenet0_25()
    src.initialize()
    src(mx.nd.ones((1, 3, 32, 32)))
    path = str(tmp_path / "weights.params")
    src.save_parameters(path)
    with open(path, "rb") as f:
        sha1 = hashlib.sha1(f.read()).hexdigest()
    monkeypatch.setitem(model_store._model_sha1, "mobilenet0.25", sha1)
    os.replace(path, str(tmp_path / ("mobilenet0.25-%s.params" % sha1[:8])))
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://127.0.0.1:9/")     # nothing to fetch
    net = vision.get_model("mobilenet0.25", pretrained=True, root=str(tmp_path))
    x = mx.nd.array(np.random.rand(1, 3, 32, 32))
    assert np.allclose(net(x).asnumpy(), src(x).asnumpy(), atol=1e-5)


def test_unknown_name_lists_valid_models():
    with pytest.raises(ValueError) as info:
        vision.get_model("resnet19_v1")
    msg = str(info.value)
    assert "resnet19_v1" in msg
    for name in ("resnet18_v1", "vgg19_bn", "squeezenet1.0", "mobilenetv2_0.75", "inceptionv3"):
        assert name in msg


def test_get_model_is_case_insensitive_and_forwards_kwargs():
    net = vision.get_model("ResNet18_V2", classes=7, thumbnail=True)
    assert isinstance(net, vision.ResNetV2)
    net.initialize()
    assert net(mx.nd.ones((1, 3, 8, 8))).shape == (1, 7)


def test_invalid_specs_raise():
    with pytest.raises(ValueError, match="layers"):
        vision.get_resnet(1, 19)
    with pytest.raises(ValueError, match="version"):
        vision.get_resnet(3, 18)
    with pytest.raises(ValueError, match="1.0 or 1.1"):
        vision.SqueezeNet("1.2")


def test_model_zoo_reachable_from_gluon():
    assert mx.gluon.model_zoo.vision.get_model is vision.get_model
