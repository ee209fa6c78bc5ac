"""``npx.image``: the image ops of ``mx.nd.image`` on np arrays."""
from ..operator.registry import OPS
from ..nd.register import make_function

__all__ = ["to_tensor", "normalize", "resize", "crop", "flip_left_right",
           "random_flip_left_right", "flip_top_bottom", "random_flip_top_bottom",
           "random_brightness", "random_contrast", "random_saturation", "random_hue",
           "random_color_jitter", "adjust_lighting", "random_lighting"]

for _name in list(__all__):
    _op = OPS.get("_image_" + _name)
    if _op is None:
        __all__.remove(_name)
        continue
    globals()[_name] = make_function(_op, _name, face="np")
