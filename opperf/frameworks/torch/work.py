"""PyTorch operators' work counters (FLOPs and bytes for roofline context), by aten name.

The counters themselves are framework-neutral (``opperf.measure.roofline.work``); this table says which
counts each
PyTorch operator. Tensor arguments go by their Python names (``input``, ``other``, ``weight``).
Importing it does not import PyTorch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from opperf.measure.roofline.work import (
    BOOLEAN_RESULT,
    DATA,
    ELEMENTWISE,
    HYPOT_FLOPS,
    RECIPROCAL_ROOT_FLOPS,
    SIGMOID_FLOPS,
    Counter,
    Elementwise,
    Matmul,
    Normalization,
    Operands,
    Reduction,
    Softmax,
    UncountableError,
    Window,
    Work,
    convolution_work,
    dense_work,
    integer,
    per_dimension,
    pooling_work,
    sliding_window,
)


def _linear(operands: Operands) -> Work:
    """PyTorch's ``linear``: the last axis of ``input`` against a (out, in) ``weight``."""
    data, weight = operands.require(*DATA), operands.require("weight")
    if data.ndim == 0:
        raise UncountableError
    return dense_work(operands, data, weight, operands.get("bias"), data.shape[:-1], data.shape[-1])


TORCH_WINDOW = ("stride", "padding", "dilation")

PADDING_MODES = frozenset({"same", "valid"})


@dataclass(frozen=True)
class TorchConvolution:
    """PyTorch's ``conv{1,2,3}d`` and ``conv_transpose{1,2,3}d`` on batched input, ``padding="same"``
    and ``"valid"`` included."""

    dims: int
    transposed: bool = False

    def __call__(self, operands: Operands) -> Work:
        data, weight = operands.require(*DATA), operands.require("weight")
        padding = operands.attribute("padding")
        named = isinstance(padding, str)
        if data.ndim != self.dims + 2 or (named and (padding not in PADDING_MODES or self.transposed)):
            raise UncountableError
        window = Window(
            kernel=weight.shape[2:],
            stride=per_dimension(operands.attribute("stride"), self.dims, 1),
            padding=per_dimension(0 if named else padding, self.dims, 0),
            dilation=per_dimension(operands.attribute("dilation"), self.dims, 1),
        )
        spatial = data.shape[2:]
        if padding == "same":
            if window.stride != (1,) * self.dims:
                raise UncountableError
            out = spatial
        elif self.transposed:
            out = window.deconvolved(
                spatial, per_dimension(operands.attribute("output_padding"), self.dims, 0)
            )
        else:
            out = window.convolved(spatial)
        groups = integer(operands.attribute("groups", 1))
        return convolution_work(operands, data, weight, operands.get("bias"), groups, out, self.transposed)


@dataclass(frozen=True)
class TorchPooling:
    """PyTorch's ``max_pool{1,2,3}d`` and ``avg_pool{1,2,3}d``, batched or not; the stride defaults to
    the kernel."""

    dims: int

    def __call__(self, operands: Operands) -> Work:
        data, kernel_size = operands.require(*DATA), operands.attribute("kernel_size")
        if kernel_size is None or data.ndim not in (self.dims + 1, self.dims + 2):
            raise UncountableError
        kernel = per_dimension(kernel_size, self.dims, 1)
        window = sliding_window(operands, kernel, TORCH_WINDOW, default_stride=kernel)
        ceil = operands.flag("ceil_mode", default=False)
        return pooling_work(
            operands, data, kernel, lambda: window.pooled(data.shape[-self.dims :], ceil=ceil, clamp=True)
        )


TORCH_INPUT = ("input", "self")

_TORCH_ELEMENTWISE = (
    "add", "sub", "mul", "div", "maximum", "minimum", "pow", "remainder", "fmod", "atan2", "abs", "neg",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "square", "reciprocal", "sin", "cos",
    "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "erf", "sign", "relu", "floor", "ceil",
    "round", "trunc",
)  # fmt: skip

COUNTERS: Mapping[str, Counter] = {
    **dict.fromkeys(_TORCH_ELEMENTWISE, ELEMENTWISE),
    **dict.fromkeys(("eq", "ne", "lt", "le", "gt", "ge"), BOOLEAN_RESULT),
    "rsqrt": Elementwise(RECIPROCAL_ROOT_FLOPS),
    "sigmoid": Elementwise(SIGMOID_FLOPS),
    "hypot": Elementwise(HYPOT_FLOPS),
    **dict.fromkeys(("sum", "mean", "amax", "amin", "prod"), Reduction(axis="dim", keepdims="keepdim")),
    "matmul": Matmul(a=TORCH_INPUT, b=("other",)),
    "mm": Matmul(a=TORCH_INPUT, b=("mat2",), batched=False),
    "bmm": Matmul(a=TORCH_INPUT, b=("mat2",)),
    "linear": _linear,
    "conv1d": TorchConvolution(1),
    "conv2d": TorchConvolution(2),
    "conv3d": TorchConvolution(3),
    "conv_transpose1d": TorchConvolution(1, transposed=True),
    "conv_transpose2d": TorchConvolution(2, transposed=True),
    "conv_transpose3d": TorchConvolution(3, transposed=True),
    **dict.fromkeys(("max_pool1d", "avg_pool1d"), TorchPooling(1)),
    **dict.fromkeys(("max_pool2d", "avg_pool2d"), TorchPooling(2)),
    **dict.fromkeys(("max_pool3d", "avg_pool3d"), TorchPooling(3)),
    **dict.fromkeys(("softmax", "log_softmax"), Softmax(data=TORCH_INPUT)),
    "batch_norm": Normalization(lambda o: o.flag("training"), data=TORCH_INPUT),
    "instance_norm": Normalization(lambda o: o.flag("use_input_stats"), data=TORCH_INPUT),
    **dict.fromkeys(("layer_norm", "group_norm"), Normalization(data=TORCH_INPUT)),
}

"""PyTorch operators' counters, by aten name; tensor arguments go by their Python names (``input``,
``other``, ``weight``)."""
