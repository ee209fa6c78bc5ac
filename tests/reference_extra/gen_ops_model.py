"""A small symbolic model using the resize, detection and misc ops, saved by real
MXNet 1.9.1 (``-symbol.json`` with MXNet's own attribute strings, ``.params``) with its
outputs for a fixed input: ``ops_model-symbol.json``, ``ops_model-0000.params`` and
``ops_model_io.npz`` (``data``, ``rois`` and the outputs ``out0``...).

Run ``python tests/reference_extra/gen_ops_model.py`` from an environment with
``pip install "numpy<1.24" mxnet==1.9.1``.
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def build(mx):
    """The model, for ``mx`` = mxnet here or mxlite in tests/test_ops_model.py."""
    data = mx.sym.var("data")
    rois = mx.sym.var("rois")
    conv = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), pad=(1, 1), name="conv")
    up = mx.sym.contrib.BilinearResize2D(conv, height=12, width=10, align_corners=False,
                                         name="up")
    pooled = mx.sym.contrib.AdaptiveAvgPooling2D(up, output_size=(3, 2), name="adapt")
    roi = mx.sym.ROIPooling(conv, rois, pooled_size=(2, 2), spatial_scale=0.5, name="roip")
    align = mx.sym.contrib.ROIAlign(conv, rois, pooled_size=(2, 3), spatial_scale=0.5,
                                    sample_ratio=2, name="roia")
    crop = mx.sym.Crop(up, num_args=1, offset=(1, 2), h_w=(5, 4), name="crop")
    half = mx.sym.amp_cast(crop, dtype="float16", name="half")
    back = mx.sym.amp_cast(half, dtype="float32", name="back")
    anchors = mx.sym.contrib.MultiBoxPrior(conv, sizes=(0.3, 0.6), ratios=(1, 2),
                                           clip=True, name="anchors")
    loss = mx.sym.make_loss(mx.sym.sum(back), name="loss")
    return mx.sym.Group([pooled, roi, align, back, anchors, loss])


def main():
    import mxnet as mx
    rng = np.random.RandomState(0)
    sym = build(mx)
    data = rng.uniform(-1, 1, (2, 3, 8, 6)).astype(np.float32)
    rois = np.array([[0, 0, 0, 7, 5], [1, 2, 1, 9, 11], [0, 1.5, 2.5, 4, 6]], np.float32)
    ex = sym.simple_bind(mx.cpu(), data=data.shape, rois=rois.shape)   # for the shapes
    args = {}
    for name, arr in ex.arg_dict.items():
        if name in ("data", "rois"):
            continue
        arr[:] = rng.uniform(-0.5, 0.5, arr.shape).astype(np.float32)
        args[name] = arr
    # NOTE: save() drops the amp_cast feeding other nodes (remove_amp_cast=True), so
    # the outputs are those of the saved graph, loaded back.
    sym.save(os.path.join(HERE, "ops_model-symbol.json"))
    mx.nd.save(os.path.join(HERE, "ops_model-0000.params"),
               {"arg:" + k: v for k, v in args.items()})
    saved = mx.sym.load(os.path.join(HERE, "ops_model-symbol.json"))
    bound = dict(args, data=mx.nd.array(data), rois=mx.nd.array(rois))
    outs = saved.bind(mx.cpu(), bound).forward(is_train=False)
    np.savez(os.path.join(HERE, "ops_model_io.npz"), data=data, rois=rois,
             **{"out%d" % i: o.asnumpy() for i, o in enumerate(outs)})


if __name__ == "__main__":
    main()
