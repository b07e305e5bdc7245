"""Hand-written rules for JAX's layer primitives, whose inputs must agree with each other
(convolutions with their dimension numbers, windowed reductions), keyed by operator name
(``HAND_RULES``) and sized by the profile's layer dimensions. Images are NCHW and kernels OIHW, as
``lax.conv`` takes them."""

from __future__ import annotations

from collections.abc import Callable

from opperf.frameworks.jax.rules.derived import Configurations, T
from opperf.operators.rules.profiles import LayerSizes

LayerRule = Callable[[LayerSizes], Configurations]
KERNEL = (3, 3)
DIMENSION_NUMBERS = ("NCHW", "OIHW", "NCHW")


def _images(s: LayerSizes) -> tuple[int, ...]:
    return (s.batch, s.channels, s.spatial, s.spatial)


def _kernel(s: LayerSizes, transposed: bool = False) -> tuple[int, ...]:
    out = 2 * s.channels
    return (s.channels, out, *KERNEL) if transposed else (out, s.channels, *KERNEL)


def _conv(s: LayerSizes) -> Configurations:
    return [{"lhs": T(_images(s)), "rhs": T(_kernel(s)), "window_strides": (1, 1), "padding": "SAME"}]


def _conv_general_dilated(s: LayerSizes) -> Configurations:
    return [{**_conv(s)[0], "dimension_numbers": DIMENSION_NUMBERS}]


def _conv_with_general_padding(s: LayerSizes) -> Configurations:
    return [
        {
            **_conv(s)[0],
            "padding": ((1, 1), (1, 1)),
            "lhs_dilation": (1, 1),
            "rhs_dilation": (1, 1),
        }
    ]


def _conv_transpose(s: LayerSizes) -> Configurations:
    return [
        {
            "lhs": T(_images(s)),
            "rhs": T(_kernel(s, transposed=True)),
            "strides": (2, 2),
            "padding": "SAME",
            "dimension_numbers": ("NCHW", "IOHW", "NCHW"),
        }
    ]


def _conv_general_dilated_local(s: LayerSizes) -> Configurations:
    """An unshared convolution: one (out, in * 3 * 3) kernel per output position."""
    spatial = (s.spatial, s.spatial)
    return [
        {
            "lhs": T(_images(s)),
            "rhs": T((s.channels * KERNEL[0] * KERNEL[1], *spatial, 2 * s.channels)),
            "window_strides": (1, 1),
            "padding": "SAME",
            "filter_shape": KERNEL,
            "dimension_numbers": ("NCHW", "IHWO", "NCHW"),
        }
    ]


def _conv_general_dilated_patches(s: LayerSizes) -> Configurations:
    return [{"lhs": T(_images(s)), "filter_shape": KERNEL, "window_strides": (1, 1), "padding": "SAME"}]


def _reduce_window(s: LayerSizes) -> Configurations:
    """Sum pooling of 3x3 windows, stride 2 (max pooling's initial value, -inf, is no JSON number)."""
    return [
        {
            "operand": T(_images(s)),
            "init_value": 0.0,
            "computation": "add",
            "window_dimensions": (1, 1, 3, 3),
            "window_strides": (1, 1, 2, 2),
            "padding": "SAME",
        }
    ]


HAND_RULES: dict[str, LayerRule] = {
    "lax.conv": _conv,
    "lax.conv_general_dilated": _conv_general_dilated,
    "lax.conv_with_general_padding": _conv_with_general_padding,
    "lax.conv_transpose": _conv_transpose,
    "lax.conv_general_dilated_local": _conv_general_dilated_local,
    "lax.conv_general_dilated_patches": _conv_general_dilated_patches,
    "lax.reduce_window": _reduce_window,
}
"""Each layer primitive's rule, by operator name."""
