"""Execute every notebook in ``tutorials/`` and fail on any cell error or warning.

Each notebook runs in a fresh Jupyter kernel (``python3``, this interpreter) with
``tutorials/`` as its working directory, importing the same mxlite as this test.
Needs the ``test`` extra (nbclient, nbformat, ipykernel, matplotlib).
"""
import glob
import os
import sys
import time

import pytest

import mxlite

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUTORIALS = os.path.join(ROOT, "tutorials")
NOTEBOOKS = sorted(glob.glob(os.path.join(TUTORIALS, "*.ipynb")))
CELL_TIMEOUT = 120          # seconds per cell


def _kernel_env(monkeypatch, tmp_path):
    """Point Jupyter at a python3 kernelspec that runs this interpreter and this mxlite."""
    from ipykernel.kernelspec import write_kernel_spec
    # NOTE: a python3 kernelspec in the user's Jupyter dirs could name another Python;
    # a spec of our own, first on JUPYTER_PATH, pins the kernel to sys.executable.
    write_kernel_spec(str(tmp_path / "kernels" / "python3"))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(mxlite.__file__)))
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", pkg_root + (os.pathsep + path if path else ""))
    # NOTE: the tutorials' GEMMs are tiny; multi-threaded BLAS on a busy machine
    # (parallel test runs) makes them up to 10x slower, so use one thread.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if var not in os.environ:
            monkeypatch.setenv(var, "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")


def _warnings_in(nb):
    """Python warnings printed by the cells (a warning is a bug in a tutorial)."""
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr" \
                    and "Warning" in out.get("text", ""):
                found.append("cell %d: %s" % (i, out["text"].strip()[:300]))
    return found


def test_there_are_tutorials():
    names = {os.path.basename(p) for p in NOTEBOOKS}
    assert {"custom_numpy_operators.ipynb", "customop_decorator.ipynb", "new_operators.ipynb",
            "gluon_crash_course.ipynb", "from_mxnet.ipynb"} <= names, names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[os.path.basename(p) for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch, tmp_path):
    _kernel_env(monkeypatch, tmp_path)
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": TUTORIALS}})
    start = time.time()
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as err:
        pytest.fail("%s: a cell failed:\n%s" % (os.path.basename(path), err), pytrace=False)
    warnings = _warnings_in(nb)
    assert not warnings, "\n".join(warnings)
    assert any(c.get("outputs") for c in nb.cells if c.cell_type == "code")
    sys.stdout.write("%s ran in %.1f s\n" % (os.path.basename(path), time.time() - start))
