"""Golden data for ``mx.io.ImageRecordIter`` (tests/test_io_image_record.py), from MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_io_image_record.py``
(no OpenCV-Python or Pillow needed: the PNG bytes come from the encoder in
gen_image_detection.py). Writes ``io_image_record.npz`` next to this file:

- ``png/<i>``: PNG bytes (uint8) of record i (random RGB images of several sizes);
  ``label/<i>``: its label (a scalar, or 2 values for the ``multi`` file).
- ``rec``, ``idx``, ``rec_multi``: the bytes of the .rec/.idx files MXNet wrote
  (records keyed i, header id i); the tests check mxlite writes the same bytes.
- ``case/<name>/args``: JSON of the iterator's keyword arguments (paths are given as
  ``REC``/``IDX``/``MULTI``); ``case/<name>/{data,label,pad}<e>_<k>``: batch k of epoch e
  (two epochs, ``reset()`` between). For ``round_batch=False`` only the real rows are
  stored (MXNet leaves stale data in the padded ones and reports pad 0).
"""
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_image_detection import png_bytes  # noqa: E402

SIZES = [(10, 12), (12, 9), (9, 9), (14, 10), (11, 13), (9, 15), (13, 11)]
CASES = {
    "default": dict(data_shape=(3, 8, 8), batch_size=3),
    "no_round": dict(data_shape=(3, 8, 8), batch_size=3, round_batch=False),
    "part0of2": dict(data_shape=(3, 8, 8), batch_size=3, num_parts=2, part_index=0),
    "part1of3": dict(data_shape=(3, 8, 8), batch_size=3, num_parts=3, part_index=1),
    "idx_part1of3": dict(data_shape=(3, 8, 8), batch_size=2, num_parts=3, part_index=1,
                         path_imgidx="IDX"),
    "int8_mean": dict(data_shape=(3, 8, 8), batch_size=4, dtype="int8", mean_r=100.4,
                      mean_g=20, mean_b=200),
    "uint8": dict(data_shape=(3, 7, 9), batch_size=4, dtype="uint8"),
    "resize_norm": dict(data_shape=(3, 10, 10), batch_size=4, resize=11, inter_method=2,
                        mean_r=123.68, mean_g=116.28, mean_b=103.53, std_r=58.395,
                        std_g=57.12, std_b=57.375, scale=0.5),
    "enlarge": dict(data_shape=(3, 10, 16), batch_size=2, inter_method=2),
    "pad_mirror": dict(data_shape=(3, 12, 12), batch_size=3, pad=2, fill_value=7,
                       mirror=True, data_name="x", label_name="y"),
    "multi_label": dict(data_shape=(3, 8, 8), batch_size=3, label_width=2, path_imgrec="MULTI"),
}


def build(mx, tmp):
    rng = np.random.RandomState(0)
    out = {}
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(tmp, "t.idx"), os.path.join(tmp, "t.rec"), "w")
    multi = mx.recordio.MXRecordIO(os.path.join(tmp, "m.rec"), "w")
    for i, (h, w) in enumerate(SIZES):
        png = png_bytes(rng.randint(0, 256, (h, w, 3)).astype(np.uint8))
        out["png/%d" % i] = np.frombuffer(png, np.uint8)
        out["label/%d" % i] = np.array([float(i)], np.float32)
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), png))
        lab = np.array([i, 10 - i], np.float32)
        out["mlabel/%d" % i] = lab
        multi.write(mx.recordio.pack(mx.recordio.IRHeader(0, lab, i, 0), png))
    rec.close()
    multi.close()
    for key, name in (("rec", "t.rec"), ("idx", "t.idx"), ("rec_multi", "m.rec")):
        with open(os.path.join(tmp, name), "rb") as f:
            out[key] = np.frombuffer(f.read(), np.uint8)
    return out


def run_case(mx, tmp, name, args, out):
    paths = {"REC": "t.rec", "IDX": "t.idx", "MULTI": "m.rec"}
    kw = {k: (os.path.join(tmp, paths[v]) if isinstance(v, str) and v in paths else v)
          for k, v in args.items()}
    kw.setdefault("path_imgrec", os.path.join(tmp, "t.rec"))
    it = mx.io.ImageRecordIter(verbose=False, **kw)
    out["case/%s/args" % name] = np.array(json.dumps(args))
    for e in range(2):
        for k, b in enumerate(it):
            data, label = b.data[0].asnumpy(), b.label[0].asnumpy()
            out["case/%s/data%d_%d" % (name, e, k)] = data
            out["case/%s/label%d_%d" % (name, e, k)] = label
            out["case/%s/pad%d_%d" % (name, e, k)] = np.array(b.pad)
        it.reset()


def main():
    import mxnet as mx
    with tempfile.TemporaryDirectory() as tmp:
        out = build(mx, tmp)
        for name, args in CASES.items():
            run_case(mx, tmp, name, args, out)
    # round_batch=False: keep only the real rows of the last batch (7 samples, batch 3).
    for e in range(2):
        for key in ("data", "label"):
            k = "case/no_round/%s%d_2" % (key, e)
            out[k] = out[k][:1]
    np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "io_image_record.npz"), **out)


if __name__ == "__main__":
    main()
