"""mx.nd functions that are not operators: imdecode, the indexing helpers, rand_zipfian,
and mx.nd.utils / mx.io.utils."""
import numpy as np
import pytest

import mxlite as mx


def test_cached_op_is_also_nd_op_cached_op():
    assert mx.nd.op.CachedOp is mx.nd.CachedOp
    import mxlite.nd.ndarray as nd_nd
    assert nd_nd.from_dlpack is mx.nd.from_dlpack


def test_indexing_helpers():
    key, prepend = mx.nd.indexing_key_expand_implicit_axes(np.s_[:2, None, 0, ...], (3, 4, 5))
    assert key == (slice(None, 2), None, 0, slice(None)) and prepend == -1
    assert mx.nd.indexing_key_expand_implicit_axes(0, (3, 4))[0] == (0, slice(None))
    with pytest.raises(IndexError, match="ellipsis"):
        mx.nd.indexing_key_expand_implicit_axes((Ellipsis, Ellipsis), (3,))
    assert mx.nd.get_indexing_dispatch_code((0, slice(1))) == 0
    assert mx.nd.get_indexing_dispatch_code(([0, 1],)) == 1
    assert mx.nd.get_indexing_dispatch_code(((),)) == 2
    with pytest.raises(ValueError, match="does not support"):
        mx.nd.get_indexing_dispatch_code((1.5,))
    assert mx.nd.get_oshape_of_gather_nd_op((3, 4, 5), (2, 6)) == (6, 5)
    idx = mx.nd.array([[0, 2], [1, 3]])
    assert mx.nd.gather_nd(mx.nd.ones((3, 4, 5)), idx).shape == \
        mx.nd.get_oshape_of_gather_nd_op((3, 4, 5), idx.shape)


def test_imdecode_gives_chw_bgr_float(monkeypatch):
    img = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)   # decoded HWC, BGR
    import mxlite.recordio as rec
    monkeypatch.setattr(rec, "_decode_image", lambda buf, flag=-1, to_rgb=False: img)
    out = mx.nd.imdecode(b"png bytes")
    assert out.shape == (3, 4, 5) and out.dtype == np.float32
    assert np.array_equal(out.asnumpy(), img.transpose(2, 0, 1))
    crop = mx.nd.imdecode(b"x", clip_rect=(1, 1, 3, 4))
    assert np.array_equal(crop.asnumpy(), img[1:4, 1:3].transpose(2, 0, 1))
    mean = mx.nd.ones((3, 4, 5))
    assert np.array_equal(mx.nd.imdecode(b"x", mean=mean).asnumpy(),
                          img.transpose(2, 0, 1) - 1.0)
    buf = mx.nd.zeros((2, 3, 4, 5))
    mx.nd.imdecode(b"x", out=buf, index=1)
    assert buf[0].asnumpy().sum() == 0 and np.array_equal(buf[1].asnumpy(),
                                                          img.transpose(2, 0, 1))
    with pytest.raises(mx.MXNetError, match="outside"):
        mx.nd.imdecode(b"x", clip_rect=(0, 0, 9, 9))


def test_nd_utils_and_io_utils(tmp_path):
    from mxlite.nd import utils
    z = utils.zeros((2, 3), stype="default")
    assert z.shape == (2, 3) and z.asnumpy().sum() == 0
    assert utils.empty((2,)).shape == (2,)
    with pytest.raises(ValueError, match="sparse"):
        utils.zeros((2, 3), stype="csr")
    f = str(tmp_path / "a.params")
    utils.save(f, {"a": utils.array([1, 2])})
    assert utils.load(f)["a"].asnumpy().tolist() == [1, 2]
    import mxlite.io.utils as io_utils
    assert io_utils.NDArray is mx.nd.NDArray
    assert io_utils.h5py is None or hasattr(io_utils.h5py, "File")


def test_rand_zipfian_is_log_uniform_with_its_expected_counts():
    mx.random.seed(1)
    sampled, exp_true, exp_sampled = mx.nd.contrib.rand_zipfian(mx.nd.array([3, 0]), 20000, 5)
    assert sampled.dtype == np.int64 and exp_true.dtype == np.float64
    k = np.arange(5)
    prob = np.log((k + 2) / (k + 1)) / np.log(6)
    freq = np.bincount(sampled.asnumpy(), minlength=5) / 20000.0
    assert np.allclose(freq, prob, atol=0.02)
    assert np.allclose(exp_true.asnumpy(), 20000 * prob[[3, 0]])
    assert np.allclose(exp_sampled.asnumpy(), 20000 * prob[sampled.asnumpy()])
    t = mx.sym.var("t")
    outs = mx.sym.Group(list(mx.sym.contrib.rand_zipfian(t, 4, 5))).eval(t=mx.nd.array([3]))
    assert outs[0].shape == (4,) and np.allclose(outs[1].asnumpy(), 4 * prob[3])
