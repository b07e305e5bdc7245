"""The fused patterns as data: each one's layers, what it computes, and its input sizes.

Convolutions keep the channels and the spatial size (3x3, padding 1), so a residual input has the
data's shape; sizes follow ResNet's stages ((N, 64, 56, 56) is its first 3x3 block, the one the issue
measured), and the fully connected sizes a transformer's feed-forward input.
"""

from __future__ import annotations

from opperf.operators.fused.pattern import Pattern
from opperf.results.measurement import InputValue, TensorSpec


def _tensor(*shape: int) -> TensorSpec:
    return TensorSpec(shape, low=-1.0, high=1.0)


def _conv(n: int, c: int, h: int, w: int) -> dict[str, InputValue]:
    return {"data": _tensor(n, c, h, w), "kernel": 3}


def _residual(n: int, c: int, h: int, w: int) -> dict[str, InputValue]:
    return {**_conv(n, c, h, w), "residual": _tensor(n, c, h, w)}


def _plain(n: int, c: int, h: int, w: int) -> dict[str, InputValue]:
    return {"data": _tensor(n, c, h, w)}


def _fc(n: int, inputs: int, units: int) -> dict[str, InputValue]:
    return {"data": _tensor(n, inputs), "units": units}


_IMAGES = ((1, 64, 56, 56), (8, 64, 56, 56))
_SMALL_IMAGE = (1, 4, 8, 8)

PATTERNS: tuple[Pattern, ...] = (
    Pattern("conv_relu", ("conv", "relu"), "relu(conv(x))", _conv, _IMAGES, _SMALL_IMAGE),
    Pattern("conv_bn", ("conv", "bn"), "bn(conv(x))", _conv, _IMAGES, _SMALL_IMAGE),
    Pattern("conv_bn_relu", ("conv", "bn", "relu"), "relu(bn(conv(x)))", _conv, _IMAGES, _SMALL_IMAGE),
    Pattern(
        "conv_bn_add_relu",
        ("conv", "bn", "add", "relu"),
        "relu(bn(conv(x)) + residual): a ResNet block's tail",
        _residual,
        _IMAGES,
        _SMALL_IMAGE,
    ),
    Pattern(
        "fc_relu", ("fc", "relu"), "relu(x W^T + b)", _fc, ((32, 1024, 1024), (128, 1024, 4096)), (2, 8, 8)
    ),
    Pattern("bn_relu", ("bn", "relu"), "relu(bn(x))", _plain, _IMAGES, _SMALL_IMAGE),
)
