"""``mx.sym.npx.image``: the image ops as Symbol functions."""
from ...operator.registry import OPS
from ..register import make_function

__all__ = []
for _name in ("to_tensor", "normalize", "resize", "crop", "flip_left_right",
              "random_flip_left_right", "flip_top_bottom", "random_flip_top_bottom",
              "random_brightness", "random_contrast", "random_saturation", "random_hue",
              "random_color_jitter", "adjust_lighting", "random_lighting"):
    _op = OPS.get("_image_" + _name)
    if _op is not None:
        globals()[_name] = make_function(_op, _name, hint=_name)
        __all__.append(_name)
