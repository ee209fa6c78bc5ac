"""MXNet 1.9.1's public API (the user-facing modules, without mx.np/mx.npx and sparse
storage) is there when reached as user code reaches it (``import mxnet`` after
``install_as_mxnet()``): at least 97% of the names, counting those that
``tests/api_left_out.txt`` leaves out on purpose, each with its reason."""
import importlib
import json
import os
import sys

import pytest

import mxlite

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "reference_extra", "api_names_mxnet191.json")
LEFT_OUT = os.path.join(HERE, "api_left_out.txt")


@pytest.fixture(autouse=True)
def _mxnet_alias_for_this_test_only():
    """``install_as_mxnet`` changes the whole process: undo it after each test, so that
    other tests still see no ``mxnet`` module."""
    meta_path, modules = list(sys.meta_path), set(sys.modules)
    yield
    sys.meta_path[:] = meta_path
    for name in set(sys.modules) - modules:
        if name == "mxnet" or name.startswith("mxnet."):
            del sys.modules[name]


def _modules():
    with open(MANIFEST) as f:
        return json.load(f)["modules"]


def _left_out():
    out = {}
    with open(LEFT_OUT) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                key, _, why = line.partition(" ")
                out[key] = why.strip()
    return out


def _missing(modules):
    """``module.name`` of every manifest name that the module does not have."""
    mxlite.install_as_mxnet()
    missing = []
    for modname, names in sorted(modules.items()):
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            mod = None
        missing += ["%s.%s" % (modname, n) for n in names
                    if mod is None or not hasattr(mod, n)]
    return missing


def test_api_coverage_is_at_least_97_percent():
    modules = _modules()
    total = sum(len(v) for v in modules.values())
    left_out = _left_out()
    missing = [k for k in _missing(modules) if k not in left_out]
    covered = total - len(missing)
    assert covered / total >= 0.97, (
        "API coverage %d/%d (%.1f%%) is below 97%%; missing and not left out on purpose:\n%s"
        % (covered, total, 100.0 * covered / total, "\n".join(missing)))


def test_left_out_names_are_mxnet_names_with_a_reason():
    modules = _modules()
    known = {"%s.%s" % (m, n) for m, names in modules.items() for n in names}
    for key, why in _left_out().items():
        assert key in known, "%s is not a public name of MXNet 1.9.1" % key
        assert len(why) > 10, "%s is left out without a reason" % key


def test_left_out_names_are_really_missing():
    """A name provided since it was listed leaves the list (it is no longer left out)."""
    present = _present(_left_out())
    assert not present, "provided now, remove from api_left_out.txt: %s" % present


def _present(keys):
    """The keys (``module.name``) whose module has the name."""
    mxlite.install_as_mxnet()
    present = []
    for key in keys:
        modname, _, name = key.rpartition(".")
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            continue
        if hasattr(mod, name):
            present.append(key)
    return present


def test_version_checks_of_third_party_packages_pass():
    mx = mxlite.install_as_mxnet()
    import mxnet
    assert mxnet is mx and mxnet.__version__ == "1.9.1"
    from mxnet.base import numeric_types, string_types  # noqa: F401
    from mxnet.gluon.model_zoo import model_store  # noqa: F401
    from mxnet.gluon.utils import _get_repo_url  # noqa: F401
    import mxnet.registry  # noqa: F401
    import mxnet.contrib.text  # noqa: F401
