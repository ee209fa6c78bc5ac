"""Golden data for hybridized np blocks (tests/test_np_hybrid_export.py), from real MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_np_hybrid_export.py`` from an
environment with ``pip install "numpy<1.24" mxnet==1.9.1``.
Writes ``np_hybrid_export_mxnet191.json`` next to this file: for each block below, its name,
the symbol JSON MXNet exports for it, and its output for the input ``x`` (a list).
"""
import json
import os
import tempfile

import mxnet as mx
from mxnet import gluon, np, npx

npx.set_np()
X = [[[float(4 * i + j) for j in range(4)] for i in range(3 * k, 3 * k + 3)] for k in range(2)]


class Indexing(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return x[0] + x[:2].sum() + x[1, :, -1].sum() + x[1][::-1, 1:3][0].sum()


class Creation(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        row = x[0, 0]
        return (row + F.np.zeros((4,)) + F.np.ones((4,), dtype="float64") + F.np.full((4,), 2)
                + F.np.arange(4) + F.np.eye(4)[1] + F.np.linspace(0, 1, 4)
                + F.np.identity(4)[2] + F.np.zeros_like(row) + F.np.ones_like(row)
                * F.np.full_like(row, 2) + F.np.indices((2, 4))[1][0] + F.np.arange(2, 10, 2))


def main():
    out = []
    for block in (Indexing(), Creation()):
        block.initialize()
        block.hybridize()
        y = block(np.array(X))
        d = tempfile.mkdtemp()
        block.export(os.path.join(d, "m"))
        with open(os.path.join(d, "m-symbol.json")) as f:
            out.append({"name": type(block).__name__, "symbol": f.read(),
                        "output": y.asnumpy().tolist()})
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "np_hybrid_export_mxnet191.json"), "w") as f:
        json.dump(out, f, indent=0)


if __name__ == "__main__":
    main()
