"""mx.contrib: the first autograd API, DataLoaderIter, text vocabularies and
embeddings from local files, the TensorBoard callback and SVRG training."""
import collections
import sys
import types

import numpy as np
import pytest

import mxlite as mx
from mxlite.contrib import autograd as cag
from mxlite.contrib.text import embedding, utils, vocab


def test_contrib_autograd_grad_and_loss():
    x = mx.nd.array([1.0, 2.0, 3.0])
    grads, loss = cag.grad_and_loss(lambda a: (a * a).sum())(x)
    assert grads[0].asnumpy().tolist() == [2, 4, 6]
    assert loss.asscalar() == 14
    g = cag.grad(lambda a, b: (a * b).sum(), argnum=1)(x, mx.nd.array([5.0, 6.0, 7.0]))
    assert g[0].asnumpy().tolist() == [1, 2, 3]
    with pytest.raises(TypeError, match="NDArrays"):
        cag.grad(lambda a: a)(np.ones(3))


def test_contrib_autograd_sections_and_mark_variables():
    assert not mx.autograd.is_training()
    with cag.train_section():
        assert mx.autograd.is_training() and mx.autograd.is_recording()
        with cag.test_section():
            assert not mx.autograd.is_training() and not mx.autograd.is_recording()
        assert mx.autograd.is_recording()
    assert not mx.autograd.is_recording()
    x, gx = mx.nd.array([3.0]), mx.nd.zeros((1,))
    cag.mark_variables([x], [gx])
    with cag.train_section():
        y = x * x * x
    cag.compute_gradient([y])
    assert gx.asscalar() == 27
    assert cag.set_is_training(False) is False


def test_dataloader_iter_pads_the_last_batch():
    ds = mx.gluon.data.ArrayDataset(np.arange(10, dtype="float32").reshape(5, 2),
                                    np.arange(5, dtype="float32"))
    loader = mx.gluon.data.DataLoader(ds, batch_size=2)
    it = mx.contrib.io.DataLoaderIter(loader, dtype="float64")
    assert it.provide_data[0].name == "data" and it.provide_data[0].shape == (2, 2)
    assert it.provide_label[0].name == "softmax_label"
    batches = list(it)
    assert len(batches) == 3 and batches[-1].pad == 1
    assert batches[-1].data[0].shape == (2, 2) and batches[-1].data[0].dtype == np.float64
    assert batches[-1].label[0].asnumpy()[0] == 4
    it.reset()
    assert len(list(it)) == 3


def test_dataloader_iter_trains_a_module():
    x = np.random.randn(64, 4).astype("float32")
    y = (x[:, 0] > 0).astype("float32")
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, y), batch_size=16)
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2),
                               name="softmax")
    mod = mx.mod.Module(net)
    mod.fit(mx.contrib.io.DataLoaderIter(loader), num_epoch=20,
            optimizer_params={"learning_rate": 0.5})
    acc = mod.score(mx.contrib.io.DataLoaderIter(loader), "acc")[0][1]
    assert acc > 0.9


def test_count_tokens_and_vocabulary():
    c = utils.count_tokens_from_str(" Life is great ! \n life is good . \n", to_lower=True)
    assert c == collections.Counter({"life": 2, "is": 2, "great": 1, "!": 1, "good": 1, ".": 1})
    c2 = utils.count_tokens_from_str("*a*b*\n*a*", "\\*", "\n", counter_to_update=c)
    assert c2 is c and c["a"] == 2
    v = vocab.Vocabulary(collections.Counter({"b": 3, "a": 3, "c": 1, "d": 2}),
                         most_freq_count=2, reserved_tokens=["<pad>"])
    assert v.idx_to_token == ["<unk>", "<pad>", "a", "b"]     # ties in sorted order
    assert v.to_indices(["b", "zzz"]) == [3, 0] and v.to_indices("a") == 2
    assert v.to_tokens([0, 2]) == ["<unk>", "a"] and len(v) == 4
    assert vocab.Vocabulary(collections.Counter("aab"), min_freq=2).idx_to_token == ["<unk>", "a"]
    with pytest.raises(ValueError, match="invalid"):
        v.to_tokens(9)
    with pytest.raises(ValueError, match="unknown_token"):
        vocab.Vocabulary(reserved_tokens=["<unk>"])


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return str(path)


def test_custom_embedding_reads_a_local_file(tmp_path):
    f = _write(tmp_path / "vec.txt", ["hello 1 2 3", "world 4 5 6", "<unk> 9 9 9"])
    emb = embedding.CustomEmbedding(f, elem_delim=" ")
    assert emb.vec_len == 3 and len(emb) == 3 and emb.idx_to_token[1:] == ["hello", "world"]
    assert emb.get_vecs_by_tokens("world").asnumpy().tolist() == [4, 5, 6]
    assert emb.get_vecs_by_tokens(["nope", "hello"]).asnumpy().tolist() == [[9, 9, 9], [1, 2, 3]]
    assert emb.get_vecs_by_tokens("HELLO", lower_case_backup=True).asnumpy().tolist() == [1, 2, 3]
    emb.update_token_vectors("hello", mx.nd.array([0, 0, 1]))
    assert emb.idx_to_vec[1].asnumpy().tolist() == [0, 0, 1]
    with pytest.raises(ValueError, match="unknown"):
        emb.update_token_vectors("nope", mx.nd.array([0, 0, 1]))


def test_embedding_with_vocabulary_and_composite(tmp_path):
    f1 = _write(tmp_path / "a.txt", ["x 1 1", "y 2 2"])
    f2 = _write(tmp_path / "b.txt", ["x 7", "y 8", "z 9"])
    v = vocab.Vocabulary(collections.Counter(["y", "y", "q"]))
    emb = embedding.CustomEmbedding(f1, vocabulary=v, init_unknown_vec=mx.nd.ones)
    assert emb.idx_to_token == ["<unk>", "y", "q"]
    assert emb.idx_to_vec.asnumpy().tolist() == [[1, 1], [2, 2], [1, 1]]
    with pytest.warns(UserWarning, match="header"), pytest.raises(ValueError, match="no token"):
        embedding.CustomEmbedding(f2)      # 1-dimensional lines are headers: nothing left
    f3 = _write(tmp_path / "c.txt", ["x 7 0", "z 9 0"])
    e3 = embedding.CustomEmbedding(f3)
    comp = embedding.CompositeEmbedding(v, [emb, e3])
    assert comp.vec_len == 4
    assert comp.get_vecs_by_tokens("y").asnumpy().tolist() == [2, 2, 0, 0]


def test_embedding_registry_and_pretrained_files(tmp_path, monkeypatch):
    names = embedding.get_pretrained_file_names()
    assert "glove.6B.50d.txt" in names["glove"] and "wiki.simple.vec" in names["fasttext"]
    assert embedding.get_pretrained_file_names("glove") == names["glove"]
    with pytest.raises(KeyError, match="valid"):
        embedding.get_pretrained_file_names("word2vec")
    with pytest.raises(KeyError, match="Valid pretrained files"):
        embedding.create("glove", pretrained_file_name="nope.txt")
    # a local copy is read without the network when its SHA-1 matches
    monkeypatch.setitem(embedding.GloVe.pretrained_file_name_sha1, "tiny.txt",
                        __import__("hashlib").sha1(b"a 1 2\nb 3 4\n").hexdigest())
    (tmp_path / "glove").mkdir()
    (tmp_path / "glove" / "tiny.txt").write_bytes(b"a 1 2\nb 3 4\n")
    emb = embedding.create("glove", pretrained_file_name="tiny.txt",
                           embedding_root=str(tmp_path))
    assert isinstance(emb, embedding.GloVe)
    assert emb.get_vecs_by_tokens("b").asnumpy().tolist() == [3, 4]

    @embedding.register
    class MyEmbed(embedding._TokenEmbedding):
        pretrained_file_name_sha1 = {}
    assert isinstance(embedding.create("myembed"), MyEmbed)


def test_pretrained_embedding_without_network_fails_clearly(tmp_path, monkeypatch):
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://127.0.0.1:9/")
    with pytest.raises(OSError, match="could not fetch.*glove.6B.zip"):
        embedding.GloVe("glove.6B.50d.txt", embedding_root=str(tmp_path))


def test_tensorboard_callback_writes_scalars(monkeypatch):
    written = []

    class Writer:
        def __init__(self, logdir):
            self.logdir = logdir

        def add_scalar(self, name, value, global_step):
            written.append((name, value, global_step))
    monkeypatch.setitem(sys.modules, "mxboard", types.SimpleNamespace(SummaryWriter=Writer))
    cb = mx.contrib.tensorboard.LogMetricsCallback("logs", prefix="train")
    metric = mx.metric.Accuracy()
    metric.update([mx.nd.array([1, 0])], [mx.nd.array([[0, 1], [0, 1]])])
    cb(mx.model.BatchEndParam(epoch=3, nbatch=0, eval_metric=metric, locals=None))
    assert written == [("train-accuracy", 0.5, 3)]
    assert cb.summary_writer.logdir == "logs"


def test_tensorboard_callback_without_package_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "mxboard", None)
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ImportError, match="tensorboardX"):
        mx.contrib.tensorboard.LogMetricsCallback("logs")


def _linreg():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=1, name="fc")
    return mx.sym.LinearRegressionOutput(fc, mx.sym.var("lin_reg_label"), name="lro")


def test_svrg_module_trains_linear_regression():
    from mxlite.contrib.svrg_optimization.svrg_module import SVRGModule
    x = np.random.randn(200, 3).astype("float32")
    y = x @ np.array([1.0, -2.0, 0.5], dtype="float32") + 0.3
    it = mx.io.NDArrayIter(x, y, batch_size=20, label_name="lin_reg_label")
    mod = SVRGModule(_linreg(), data_names=["data"], label_names=["lin_reg_label"],
                     update_freq=2)
    mod.fit(it, eval_metric="mse", optimizer="sgd",
            optimizer_params=(("learning_rate", 0.05),), num_epoch=20)
    w = mod.get_params()[0]["fc_weight"].asnumpy().ravel()
    assert np.allclose(w, [1.0, -2.0, 0.5], atol=0.05)
    with pytest.raises(TypeError, match="update_freq"):
        SVRGModule(_linreg(), label_names=["lin_reg_label"], update_freq=1.5)
    with pytest.raises(ValueError, match="positive"):
        SVRGModule(_linreg(), label_names=["lin_reg_label"], update_freq=0)


def test_svrg_full_gradient_is_the_average_gradient():
    from mxlite.contrib.svrg_optimization.svrg_module import SVRGModule
    x = np.random.randn(40, 3).astype("float32")
    y = np.random.randn(40).astype("float32")
    it = mx.io.NDArrayIter(x, y, batch_size=10, label_name="lin_reg_label")
    mod = SVRGModule(_linreg(), data_names=["data"], label_names=["lin_reg_label"],
                     update_freq=1)
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Constant(0.1))
    mod.init_optimizer(optimizer="sgd")
    mod.update_full_grads(it)
    w = np.full((1, 3), 0.1, dtype="float32")
    pred = x @ w.T.ravel()          # biases start at 0 whatever the initializer
    # LinearRegressionOutput's gradient is (pred - label), summed over a batch
    expected = ((pred - y)[:, None] * x).sum(0) / 4
    got = mod._param_dict[0]["fc_weight"].asnumpy().ravel()
    assert np.allclose(got, expected, rtol=1e-4, atol=1e-5)
