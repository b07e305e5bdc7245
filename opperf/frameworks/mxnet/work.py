"""MXNet operators' work counters (FLOPs and bytes for roofline context), by registry name.

The counters themselves are framework-neutral (``opperf.measure.roofline.work``); this table says which
counts each
MXNet operator: registry names (canonical and alias) and the Python names the typed API records for
front ends (``mx.nd.add``, ``mx.np.matmul``). Importing it does not import MXNet.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from opperf.measure.roofline.work import (
    BOOLEAN_RESULT,
    ELEMENTWISE,
    HARD_SIGMOID_FLOPS,
    HYPOT_FLOPS,
    NAN_SKIPPING_FLOPS,
    RECIPROCAL_ROOT_FLOPS,
    SIGMOID_FLOPS,
    SOFTRELU_FLOPS,
    SOFTSIGN_FLOPS,
    SQUARE_SUM_FLOPS,
    Counter,
    Elementwise,
    Matmul,
    Normalization,
    Operands,
    Reduction,
    Shape,
    Softmax,
    UncountableError,
    Work,
    convolution_work,
    dense_work,
    integer,
    integers,
    matrix_dims,
    matrix_product,
    per_dimension,
    pooling_work,
    sliding_window,
)

ACTIVATION_FLOPS: Mapping[str, int] = {
    "relu": 1,
    "tanh": 1,
    "sigmoid": SIGMOID_FLOPS,
    "softrelu": SOFTRELU_FLOPS,
    "softsign": SOFTSIGN_FLOPS,
}

"""MXNet ``Activation`` types by cost; the others (``log_sigmoid``, ``mish``) are not counted."""


def _activation(operands: Operands) -> Work:
    flops = ACTIVATION_FLOPS.get(str(operands.attribute("act_type", "")))
    if flops is None:
        raise UncountableError
    return Elementwise(flops)(operands)


def _dot(operands: Operands) -> Work:
    """MXNet's ``dot``: the last axis of ``lhs`` against the first of ``rhs`` (transposes: 1-D and 2-D)."""
    lhs, rhs = operands.require("lhs"), operands.require("rhs")
    transpose_a = operands.flag("transpose_a", default=False)
    transpose_b = operands.flag("transpose_b", default=False)
    if (transpose_a and lhs.ndim > 2) or (transpose_b and rhs.ndim > 2) or 0 in (lhs.ndim, rhs.ndim):
        raise UncountableError
    if lhs.ndim == 2:
        m, k = matrix_dims(lhs.shape, transpose_a)
    else:
        m, k = math.prod(lhs.shape[:-1]), lhs.shape[-1]
    if rhs.ndim == 2:
        k_rhs, n = matrix_dims(rhs.shape, transpose_b)
    else:
        k_rhs, n = rhs.shape[0], math.prod(rhs.shape[1:])
    if k != k_rhs:
        raise UncountableError
    return matrix_product(operands, 1, m, k, n, (m, n), (lhs, rhs))


def _batch_dot(operands: Operands) -> Work:
    """MXNet's ``batch_dot``: (b, m, k) x (b, k, n), either side transposable."""
    lhs, rhs = operands.require("lhs"), operands.require("rhs")
    if lhs.ndim != 3 or rhs.ndim != 3 or lhs.shape[0] != rhs.shape[0]:
        raise UncountableError
    m, k = matrix_dims(lhs.shape, operands.flag("transpose_a", default=False))
    k_rhs, n = matrix_dims(rhs.shape, operands.flag("transpose_b", default=False))
    if k != k_rhs:
        raise UncountableError
    batch = lhs.shape[0]
    return matrix_product(operands, batch, m, k, n, (batch, m, n), (lhs, rhs))


def _linalg_gemm(operands: Operands) -> Work:
    """MXNet's ``linalg.gemm`` (alpha * op(A) op(B) + beta * C, reading C) and ``linalg.gemm2`` (no C),
    batched over equal leading axes. The O(m * n) scaling and accumulation are not counted, as in BLAS."""
    a, b, c = operands.require("A"), operands.require("B"), operands.get("C")
    if operands.attribute("axis", -2) != -2 or a.ndim < 2 or a.shape[:-2] != b.shape[:-2]:
        raise UncountableError
    m, k = matrix_dims(a.shape, operands.flag("transpose_a", default=False))
    k_b, n = matrix_dims(b.shape, operands.flag("transpose_b", default=False))
    out = (*a.shape[:-2], m, n)
    if k != k_b or (c is not None and c.shape != out):
        raise UncountableError
    reads = (a, b) if c is None else (a, b, c)
    return matrix_product(operands, math.prod(a.shape[:-2]), m, k, n, out, reads)


def _fully_connected(operands: Operands) -> Work:
    """MXNet's ``FullyConnected``: with ``flatten``, (n, ...) data is n rows of every other axis."""
    data, weight = operands.require("data"), operands.require("weight")
    bias = None if operands.flag("no_bias", default=False) else operands.get("bias")
    num_hidden = operands.attribute("num_hidden")
    if data.ndim == 0 or (num_hidden is not None and num_hidden != weight.shape[0]):
        raise UncountableError
    if operands.flag("flatten", default=True):
        return dense_work(operands, data, weight, bias, data.shape[:1], math.prod(data.shape[1:]))
    return dense_work(operands, data, weight, bias, data.shape[:-1], data.shape[-1])


MX_WINDOW = ("stride", "pad", "dilate")

CHANNEL_FIRST_LAYOUTS = frozenset({None, "NCW", "NCHW", "NCDHW"})

"""MXNet layouts the convolution and pooling counters model (None: the default, channel first)."""


@dataclass(frozen=True)
class MXConvolution:
    """MXNet's ``Convolution`` and ``Deconvolution``, 1-D to 3-D, channel first. ``bias_default`` is
    ``no_bias``'s default negated: a convolution has a bias unless told otherwise, a deconvolution not."""

    transposed: bool = False
    bias_default: bool = True

    def __call__(self, operands: Operands) -> Work:
        data, weight = operands.require("data"), operands.require("weight")
        kernel = integers(operands.attribute("kernel"))
        window = sliding_window(operands, kernel, MX_WINDOW)
        groups = integer(operands.attribute("num_group", 1))
        filters = weight.shape[1] * groups if self.transposed else weight.shape[0]
        if (
            operands.attribute("layout") not in CHANNEL_FIRST_LAYOUTS
            or operands.attribute("num_filter", filters) != filters
            or operands.attribute("target_shape") not in (None, ())
            or weight.shape[2:] != kernel
        ):
            raise UncountableError
        spatial = data.shape[2:]
        if self.transposed:
            out = window.deconvolved(spatial, per_dimension(operands.attribute("adj"), len(kernel), 0))
        else:
            out = window.convolved(spatial)
        uses_bias = not operands.flag("no_bias", default=not self.bias_default)
        bias = operands.get("bias") if uses_bias else None
        return convolution_work(operands, data, weight, bias, groups, out, self.transposed)


MX_POOL_TYPES = frozenset({"max", "avg", "sum"})

"""MXNet pooling types counted; ``lp`` (p-norms) is not."""

MX_POOLING_CONVENTIONS: Mapping[str, bool] = {"valid": False, "full": True}

"""MXNet's output-length conventions, to whether they round up; ``same`` is not modelled."""


def _mx_pooling(operands: Operands) -> Work:
    """MXNet's ``Pooling``, 1-D to 3-D, channel first; a global pool's window is the whole input."""
    data = operands.require("data")
    if (
        operands.attribute("pool_type", "max") not in MX_POOL_TYPES
        or operands.attribute("layout") not in CHANNEL_FIRST_LAYOUTS
        or data.ndim < 3
    ):
        raise UncountableError
    if operands.flag("global_pool", default=False):
        spatial = data.shape[2:]
        return pooling_work(operands, data, spatial, lambda: (1,) * len(spatial))
    window = sliding_window(operands, integers(operands.attribute("kernel")), MX_WINDOW)
    convention = operands.attribute("pooling_convention", "valid")

    def out_spatial() -> Shape:
        if convention not in MX_POOLING_CONVENTIONS or data.ndim != len(window.kernel) + 2:
            raise UncountableError
        return window.pooled(data.shape[2:], ceil=MX_POOLING_CONVENTIONS[cast(str, convention)], clamp=False)

    return pooling_work(operands, data, window.kernel, out_spatial)


# MXNet operator names by counter: registry names (canonical and alias) and the Python names the typed
# API records for front ends (``mx.nd.add``, ``mx.np.matmul``).
_MX_UNARY = (
    "abs", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "cbrt", "cos", "cosh",
    "degrees", "erf", "erfinv", "exp", "expm1", "gamma", "gammaln", "log", "log10", "log1p", "log2",
    "logical_not", "negative", "radians", "reciprocal", "sign", "sin", "sinh", "sqrt", "square", "tan",
    "tanh", "relu", "ceil", "fix", "floor", "rint", "round", "trunc",
    "_npi_absolute", "_npi_arccos", "_npi_arccosh", "_npi_arcsin", "_npi_arcsinh", "_npi_arctan",
    "_npi_arctanh", "_npi_cbrt", "_npi_ceil", "_npi_cos", "_npi_cosh", "_npi_degrees", "_npi_exp",
    "_npi_expm1", "_npi_fix", "_npi_floor", "_npi_log", "_npi_log10", "_npi_log1p", "_npi_log2",
    "_npi_negative", "_npi_radians", "_npi_reciprocal", "_npi_rint", "_npi_sign", "_npi_sin",
    "_npi_sinh", "_npi_sqrt", "_npi_square", "_npi_tan", "_npi_tanh", "_npi_trunc", "_npx_relu",
)  # fmt: skip

_MX_UNARY_TO_BOOLEAN = (
    "_npi_logical_not", "_npi_isfinite", "_npi_isinf", "_npi_isnan", "_npi_isneginf", "_npi_isposinf",
)  # fmt: skip

_MX_BINARY = (
    "broadcast_add", "broadcast_plus", "broadcast_sub", "broadcast_minus", "broadcast_mul",
    "broadcast_div", "broadcast_mod", "broadcast_power", "broadcast_maximum", "broadcast_minimum",
    "broadcast_equal", "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
    "broadcast_lesser", "broadcast_lesser_equal", "broadcast_logical_and", "broadcast_logical_or",
    "broadcast_logical_xor", "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div",
    "_npi_add", "_npi_subtract", "_npi_multiply", "_npi_true_divide", "_npi_mod", "_npi_power",
    "_npi_arctan2", "_npi_copysign",
    "add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum", "power",
)  # fmt: skip

_MX_BINARY_TO_BOOLEAN = (
    "_npi_equal", "_npi_not_equal", "_npi_greater", "_npi_greater_equal", "_npi_less", "_npi_less_equal",
)  # fmt: skip

_MX_SCALAR = (
    "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar", "_rdiv_scalar",
    "_mod_scalar", "_rmod_scalar", "_power_scalar", "_rpower_scalar", "_maximum_scalar",
    "_minimum_scalar", "_equal_scalar", "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar",
    "_lesser_scalar", "_lesser_equal_scalar", "_logical_and_scalar", "_logical_or_scalar",
    "_logical_xor_scalar",
    "_npi_add_scalar", "_npi_subtract_scalar", "_npi_rsubtract_scalar", "_npi_multiply_scalar",
    "_npi_true_divide_scalar", "_npi_rtrue_divide_scalar", "_npi_mod_scalar", "_npi_rmod_scalar",
    "_npi_power_scalar", "_npi_rpower_scalar", "_npi_arctan2_scalar", "_npi_rarctan2_scalar",
    "_npi_copysign_scalar", "_npi_rcopysign_scalar",
)  # fmt: skip

_MX_SCALAR_TO_BOOLEAN = (
    "_npi_equal_scalar", "_npi_not_equal_scalar", "_npi_greater_scalar", "_npi_greater_equal_scalar",
    "_npi_less_scalar", "_npi_less_equal_scalar",
)  # fmt: skip

_MX_REDUCTIONS = (
    "sum", "sum_axis", "mean", "max", "max_axis", "min", "min_axis", "prod",
    "_np_sum", "_npi_mean", "_np_max", "_np_min", "_np_prod",
)  # fmt: skip

_MX_GEMM = ("_linalg_gemm", "_linalg_gemm2", "linalg_gemm", "linalg_gemm2", "gemm", "gemm2")

COUNTERS: Mapping[str, Counter] = {
    **dict.fromkeys(_MX_UNARY + _MX_BINARY + _MX_SCALAR, ELEMENTWISE),
    **dict.fromkeys(_MX_UNARY_TO_BOOLEAN + _MX_BINARY_TO_BOOLEAN + _MX_SCALAR_TO_BOOLEAN, BOOLEAN_RESULT),
    **dict.fromkeys(("rsqrt", "rcbrt"), Elementwise(RECIPROCAL_ROOT_FLOPS)),
    **dict.fromkeys(("sigmoid", "_npx_sigmoid"), Elementwise(SIGMOID_FLOPS)),
    **dict.fromkeys(("broadcast_hypot", "_npi_hypot", "_hypot_scalar"), Elementwise(HYPOT_FLOPS)),
    "softsign": Elementwise(SOFTSIGN_FLOPS),
    "hard_sigmoid": Elementwise(HARD_SIGMOID_FLOPS),
    "Activation": _activation,
    **dict.fromkeys(_MX_REDUCTIONS, Reduction()),
    **dict.fromkeys(("nansum", "nanprod"), Reduction(NAN_SKIPPING_FLOPS)),
    **dict.fromkeys(("norm", "_square_sum"), Reduction(SQUARE_SUM_FLOPS)),
    "dot": _dot,
    "batch_dot": _batch_dot,
    **dict.fromkeys(_MX_GEMM, _linalg_gemm),
    **dict.fromkeys(("_npi_matmul", "matmul"), Matmul(a=("a",), b=("b",))),
    "_np_dot": Matmul(a=("a",), b=("b",), batched=False),
    "FullyConnected": _fully_connected,
    **dict.fromkeys(("Convolution", "Convolution_v1"), MXConvolution()),
    "Deconvolution": MXConvolution(transposed=True, bias_default=False),
    **dict.fromkeys(("Pooling", "Pooling_v1"), _mx_pooling),
    **dict.fromkeys(("softmax", "log_softmax", "softmin", "SoftmaxActivation"), Softmax()),
    # BatchNorm computes batch statistics in training mode unless told to use the running ones.
    **dict.fromkeys(
        ("BatchNorm", "BatchNorm_v1"),
        Normalization(lambda o: o.training and not o.flag("use_global_stats", default=False)),
    ),
    **dict.fromkeys(("LayerNorm", "GroupNorm", "InstanceNorm"), Normalization()),
}

"""MXNet operators' counters, by name."""
