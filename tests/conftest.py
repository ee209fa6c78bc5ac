import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon.block import _top_level

REF = os.path.join(os.path.dirname(__file__), "reference")


@pytest.fixture(autouse=True)
def _fresh_state():
    """Every test starts outside record/train scopes with a fixed seed, and with
    top-level block names counting from 0 as in a fresh MXNet process."""
    _top_level.counter.clear()
    mx.autograd.set_recording(False)
    mx.autograd.set_training(False)
    mx.random.seed(0)
    np.random.seed(0)
    yield
    mx.autograd.set_recording(False)
    mx.autograd.set_training(False)
    mx.util.reset_np()
