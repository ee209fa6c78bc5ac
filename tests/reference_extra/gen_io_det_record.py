"""Golden data for ``mx.io.ImageDetRecordIter`` and ``mx.io.LibSVMIter``
(tests/test_io_det_record.py), from MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_io_det_record.py``
(the PNG bytes come from the encoder in gen_image_detection.py). Writes
``io_det_record.npz`` next to this file:

- ``rec``: bytes of the detection .rec file (records with header id i, a raw label
  ``[4, 6, 99, 98, objects...]``, record 3 with one empty box that must be dropped);
  ``lst``: an image list (index, labels, path) with other labels.
- ``det/<name>/args``: JSON keyword arguments (``REC``/``LST`` stand for the paths);
  ``det/<name>/{data,label,pad,index}<e>_<k>``: batch k of epoch e (two epochs).
  For ``round_batch=False`` only the real rows of the last batch are kept.
- ``svm_data``, ``svm_label``: LibSVM files; ``svm/<name>/args`` and
  ``svm/<name>/{data,label,pad,index}<e>_<k>`` (three epochs for doc and label_file, else two;
  CSR arrays stored dense).
"""
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_image_detection import png_bytes  # noqa: E402

SIZES = [(10, 12), (12, 9), (9, 9), (14, 10), (11, 13)]
DET = {
    "cubic": dict(data_shape=(3, 8, 8), batch_size=2, inter_method=2),
    "pad_width": dict(data_shape=(3, 8, 8), batch_size=5, inter_method=2,
                      label_pad_width=30, label_pad_value=-7),
    "shrink": dict(data_shape=(3, 11, 11), batch_size=5, inter_method=2,
                   resize_mode="shrink"),
    "fit": dict(data_shape=(3, 11, 20), batch_size=3, inter_method=2, resize_mode="fit"),
    "resize_norm": dict(data_shape=(3, 12, 12), batch_size=3, inter_method=2, resize=12,
                        resize_mode="shrink", mean_r=123.68, mean_g=116.28, mean_b=103.53,
                        std_r=58.395, std_g=57.12, std_b=57.375, scale=0.5),
    "mean_neg_std0": dict(data_shape=(3, 8, 8), batch_size=4, inter_method=2, mean_r=10,
                          mean_g=-5, std_r=2, scale=0.5),
    "mirror": dict(data_shape=(3, 8, 8), batch_size=4, inter_method=2, rand_mirror_prob=1.0,
                   data_name="x", label_name="y"),
    "imglist": dict(data_shape=(3, 8, 8), batch_size=3, inter_method=2, path_imglist="LST"),
    "part1of2": dict(data_shape=(3, 8, 8), batch_size=2, inter_method=2, num_parts=2,
                     part_index=1),
    "no_round": dict(data_shape=(3, 8, 8), batch_size=3, inter_method=2, round_batch=False),
}
SVM = {
    "doc": dict(data_shape=(3,), batch_size=3),
    "label_file": dict(data_shape=(3,), batch_size=3, label_libsvm="LABEL", label_shape=(3,)),
    "part0of2": dict(data_shape=(3,), batch_size=3, num_parts=2, part_index=0),
    "part1of2": dict(data_shape=(3,), batch_size=3, num_parts=2, part_index=1),
    "big": dict(data_libsvm="BIG", data_shape=(6,), batch_size=4),
    "big_part2of3": dict(data_libsvm="BIG", data_shape=(6,), batch_size=2, num_parts=3,
                         part_index=2),
}
SVM_DATA = "1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n5 1:3\n"
SVM_LABEL = "1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n6 0:2\n"


def svm_big():
    rng = np.random.RandomState(1)
    lines = []
    for r in range(11):
        cols = sorted(rng.choice(6, rng.randint(0, 4), replace=False))
        items = " ".join("%d:%.3f" % (c, rng.uniform(-2, 2)) for c in cols)
        lines.append(("%d %s" % (r % 3, items)).strip())
    return "\n".join(lines) + "\n"


def build(mx, tmp):
    rng = np.random.RandomState(0)
    out = {}
    rec = mx.recordio.MXRecordIO(os.path.join(tmp, "d.rec"), "w")
    lst = []
    for i, (h, w) in enumerate(SIZES):
        png = png_bytes(rng.randint(0, 256, (h, w, 3)).astype(np.uint8))
        objs = []
        for j in range(i % 3 + 1):
            objs += [j, 0.1 * j, 0.2, 0.5 + 0.1 * j, 0.9, 7]
        if i == 3:
            objs += [5, 0.6, 0.1, 0.4, 0.5, 1]       # empty box: dropped
        lab = np.array([4, 6, 99, 98] + objs, np.float32)
        rec.write(mx.recordio.pack(mx.recordio.IRHeader(0, lab, i, 0), png))
        other = [2, 5] + [i, 0.25, 0.125, 0.75, 0.5 + 0.05 * i] * (1 + i % 2)
        lst.append("\t".join([str(i)] + ["%g" % v for v in other] + ["img%d.png" % i]))
    rec.close()
    with open(os.path.join(tmp, "d.lst"), "w") as f:
        f.write("\n".join(lst) + "\n")
    with open(os.path.join(tmp, "d.rec"), "rb") as f:
        out["rec"] = np.frombuffer(f.read(), np.uint8)
    out["lst"] = np.array("\n".join(lst) + "\n")
    for name, text in (("data.t", SVM_DATA), ("label.t", SVM_LABEL), ("big.t", svm_big())):
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    out["svm_data"], out["svm_label"], out["svm_big"] = (
        np.array(SVM_DATA), np.array(SVM_LABEL), np.array(svm_big()))
    return out


def run(mx, tmp, kind, name, args, out, epochs):
    paths = {"REC": "d.rec", "LST": "d.lst", "LABEL": "label.t", "BIG": "big.t"}
    kw = {k: (os.path.join(tmp, paths[v]) if isinstance(v, str) and v in paths else v)
          for k, v in args.items()}
    if kind == "det":
        kw.setdefault("path_imgrec", os.path.join(tmp, "d.rec"))
        it = mx.io.ImageDetRecordIter(verbose=False, **kw)
    else:
        kw.setdefault("data_libsvm", os.path.join(tmp, "data.t"))
        it = mx.io.LibSVMIter(**kw)
    pre = "%s/%s/" % (kind, name)
    out[pre + "args"] = np.array(json.dumps(args))
    for e in range(epochs):
        for k, b in enumerate(it):
            out[pre + "data%d_%d" % (e, k)] = b.data[0].asnumpy()
            out[pre + "label%d_%d" % (e, k)] = b.label[0].asnumpy()
            out[pre + "pad%d_%d" % (e, k)] = np.array(b.pad)
            out[pre + "index%d_%d" % (e, k)] = np.array(b.index).astype(np.int64)
        it.reset()
    KEEP.append(it)     # NOTE: destroying MXNet's prefetching iterators can crash it


KEEP = []


def main():
    import mxnet as mx
    with tempfile.TemporaryDirectory() as tmp:
        out = build(mx, tmp)
        for name, args in DET.items():
            run(mx, tmp, "det", name, args, out, 2)
        for name, args in SVM.items():
            # NOTE: a third epoch can crash MXNet 1.9.1 (part1of2: 2 rows, batch 3).
            run(mx, tmp, "svm", name, args, out, 3 if name in ("doc", "label_file") else 2)
    # round_batch=False: 5 samples, batch 3; keep the 2 real rows of the last batch.
    for e in range(2):
        for key in ("data", "label", "index"):
            k = "det/no_round/%s%d_1" % (key, e)
            out[k] = out[k][:2]
    np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "io_det_record.npz"), **out)
    os._exit(0)         # skip MXNet's iterator teardown (see KEEP)


if __name__ == "__main__":
    main()
