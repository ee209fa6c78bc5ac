"""mx.image.imrotate/random_rotate against MXNet 1.9.1, and the transforms built on
them and on the image ops (CropResize, RandomApply, colour jitters, rotations)."""
import os

import numpy as np
import pytest

import mxlite as mx

T = mx.gluon.data.vision.transforms
GOLD = os.path.join(os.path.dirname(__file__), "reference_extra", "imrotate_mxnet191.npz")


def test_imrotate_matches_mxnet():
    g = np.load(GOLD)
    x = mx.nd.array(g["x"])
    assert np.allclose(mx.image.imrotate(x, mx.nd.array([30, -45])).asnumpy(), g["a"],
                       atol=1e-5)
    assert np.allclose(mx.image.imrotate(x, 30, zoom_in=True).asnumpy(), g["b"], atol=1e-5)
    assert np.allclose(mx.image.imrotate(x[0], 60, zoom_out=True).asnumpy(), g["c"],
                       atol=1e-5)


def test_imrotate_quarter_turn_moves_pixels_and_checks_input():
    x = np.zeros((1, 5, 5), dtype="float32")
    x[0, 2, 4] = 1                                     # right of the centre
    y = mx.image.imrotate(mx.nd.array(x), 90).asnumpy()[0]
    assert y[0, 2] == pytest.approx(1) and y.sum() == pytest.approx(1)
    with pytest.raises(TypeError, match="float32"):
        mx.image.imrotate(mx.nd.ones((1, 4, 4), dtype="uint8"), 10)
    with pytest.raises(ValueError, match="both"):
        mx.image.imrotate(mx.nd.ones((1, 4, 4)), 10, zoom_in=True, zoom_out=True)
    with pytest.raises(ValueError, match="2 images but 3"):
        mx.image.imrotate(mx.nd.ones((2, 1, 4, 4)), mx.nd.array([1, 2, 3]))


def test_random_rotate_draws_from_numpy():
    x = mx.nd.array(np.random.rand(2, 3, 6, 7).astype("float32"))
    np.random.seed(3)
    got = mx.image.random_rotate(x, (-20, 20)).asnumpy()
    np.random.seed(3)
    angles = np.random.uniform(-20, 20, size=2)
    assert np.allclose(got, mx.image.imrotate(x, mx.nd.array(angles)).asnumpy())
    np.random.seed(3)
    rotated = T.RandomRotation((-20, 20))(x).asnumpy()    # draws the coin, then the angles
    np.random.seed(3)
    np.random.random()
    angles = np.random.uniform(-20, 20, size=2)
    assert np.allclose(rotated, mx.image.imrotate(x, mx.nd.array(angles)).asnumpy())
    with pytest.raises(ValueError, match="ordered"):
        T.RandomRotation((5, 1))
    assert T.RandomRotation((-5, 5), rotate_with_proba=0.0)(x) is x
    with pytest.raises(TypeError, match="ToTensor"):
        T.Rotate(10)(mx.nd.ones((3, 4, 4), dtype="uint8"))


def test_crop_resize_and_random_apply():
    x = mx.nd.array(np.arange(8 * 9 * 3).reshape(8, 9, 3), dtype="uint8")
    crop = T.CropResize(1, 2, 4, 5)(x)
    assert np.array_equal(crop.asnumpy(), x.asnumpy()[2:7, 1:5])
    assert T.CropResize(1, 2, 4, 5, size=(3, 2))(x).shape == (2, 3, 3)
    assert T.RandomApply(T.Cast("float64"), p=1.0)(x).dtype == np.float64
    assert T.RandomApply(T.Cast("float64"), p=0.0)(x) is x


def test_colour_transforms_are_the_image_ops():
    x = mx.nd.array(np.random.rand(6, 7, 3).astype("float32") * 255)
    for transform, op, kwargs in (
            (T.RandomHue(0.3), mx.nd.image.random_hue, dict(min_factor=0.7, max_factor=1.3)),
            (T.RandomSaturation(0.4), mx.nd.image.random_saturation,
             dict(min_factor=0.6, max_factor=1.4)),
            (T.RandomLighting(0.1), mx.nd.image.random_lighting, dict(alpha_std=0.1)),
            (T.RandomColorJitter(0.1, 0.2, 0.3, 0.1), mx.nd.image.random_color_jitter,
             dict(brightness=0.1, contrast=0.2, saturation=0.3, hue=0.1))):
        mx.random.seed(7)
        got = transform(x).asnumpy()
        mx.random.seed(7)
        assert np.allclose(got, op(x, **kwargs).asnumpy()), type(transform).__name__
    assert T.RandomHue(2.0)._args["min_factor"] == 0
