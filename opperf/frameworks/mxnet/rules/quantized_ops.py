"""Input rules for quantized operators: int8 data with the float ranges (min/max tensors of shape (1,))
that quantization carries beside it."""

from __future__ import annotations

from collections.abc import Callable

from opperf.frameworks.mxnet.rules.layers import Configurations, T
from opperf.operators.rules.profiles import LayerSizes

INT8 = "int8"
# Output ranges fixed ahead of time (calibrated), which some quantized operators require.
CALIBRATION = {"min_calib_range": -1.0, "max_calib_range": 1.0}


def _ranges(*names: str) -> dict[str, T]:
    """Range tensors: names containing ``min`` below zero, the others above."""
    return {
        name: T((1,), low=-1.0, high=-0.5) if "min" in name else T((1,), low=0.5, high=1.0) for name in names
    }


def _images(s: LayerSizes, dtype: str = INT8) -> T:
    return T((s.batch, s.channels, s.spatial, s.spatial), dtype=dtype)


def _quantize(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features * 4, s.features)), **_ranges("min_range", "max_range"), "out_type": INT8}]


def _from_integers(dtype: str) -> Callable[[LayerSizes], Configurations]:
    return lambda s: [
        {"data": T((s.features * 4, s.features), dtype=dtype), **_ranges("min_range", "max_range")}
    ]


def _unary(**extra: object) -> Callable[[LayerSizes], Configurations]:
    return lambda s: [{"data": _images(s), **_ranges("min_data", "max_data"), **extra}]


def _elementwise(s: LayerSizes) -> Configurations:
    shape = (s.features * 4, s.features)
    return [
        {
            "lhs": T(shape, dtype=INT8),
            "rhs": T(shape, dtype=INT8),
            **_ranges("lhs_min", "lhs_max", "rhs_min", "rhs_max"),
            **CALIBRATION,
        }
    ]


def _fully_connected(s: LayerSizes) -> Configurations:
    return [
        {
            "data": T((s.batch * 4, s.features), dtype=INT8),
            "weight": T((s.features, s.features), dtype=INT8),
            "bias": T((s.features,), dtype=INT8),
            **_ranges("min_data", "max_data", "min_weight", "max_weight", "min_bias", "max_bias"),
            "num_hidden": s.features,
        }
    ]


def _convolution(s: LayerSizes) -> Configurations:
    return [
        {
            "data": _images(s, dtype="uint8"),
            "weight": T((s.channels * 2, s.channels, 3, 3), dtype=INT8),
            "bias": T((s.channels * 2,), dtype=INT8),
            **_ranges("min_data", "max_data", "min_weight", "max_weight", "min_bias", "max_bias"),
            "kernel": (3, 3),
            "num_filter": s.channels * 2,
        }
    ]


def _batch_norm(s: LayerSizes) -> Configurations:
    channels = (s.channels,)
    return [
        {
            "data": _images(s),
            "gamma": T(channels),
            "beta": T(channels),
            "moving_mean": T(channels),
            "moving_var": T(channels),
            **_ranges("min_data", "max_data"),
            **CALIBRATION,
        }
    ]


def _embedding(s: LayerSizes) -> Configurations:
    vocabulary = s.features * 16
    return [
        {
            "data": T((s.batch, s.sequence), low=0, high=vocabulary, integral=True),
            "weight": T((vocabulary, s.features), dtype=INT8),
            **_ranges("min_weight", "max_weight"),
            "input_dim": vocabulary,
            "output_dim": s.features,
        }
    ]


def _concat(s: LayerSizes) -> Configurations:
    """Three int8 tensors followed by each one's (min, max) range, all in the one tensor list."""
    count = 3
    shape = (s.features * 4, s.features)
    ranges = tuple(r for _ in range(count) for r in _ranges("min", "max").values())
    return [{"data": (*(T(shape, dtype=INT8) for _ in range(count)), *ranges), "num_args": count, "dim": 1}]


def _lstm(s: LayerSizes) -> Configurations:
    """A one-layer LSTM, the only recurrent mode MXNet quantizes on CPU, over uint8 data."""
    hidden = features = s.features // 4 or 1
    return [
        {
            "data": T((s.sequence, s.batch, features), dtype="uint8"),
            "parameters": T((4 * hidden * (features + hidden + 2),)),
            "state": T((1, s.batch, hidden)),
            "state_cell": T((1, s.batch, hidden)),
            "data_scale": T((1,), low=1.0, high=2.0),
            "data_shift": T((1,), low=0.0, high=1.0),
            "mode": "lstm",
            "state_size": hidden,
            "num_layers": 1,
        }
    ]


def _calibrate_entropy(s: LayerSizes) -> Configurations:
    bins = s.features * 4 + 1
    return [
        {"hist": T((bins,), low=0, high=100, integral=True), "hist_edges": T((bins + 1,), low=-1.0, high=1.0)}
    ]


QUANTIZED_RULES: dict[str, Callable[[LayerSizes], Configurations]] = {
    "_contrib_quantize": _quantize,
    "_contrib_dequantize": _from_integers(INT8),
    "_contrib_requantize": _from_integers("int32"),
    "_contrib_quantized_act": _unary(act_type="relu"),
    "_contrib_quantized_flatten": _unary(),
    # Max pooling needs MKL-DNN's training workspace, which the quantized operator does not keep.
    "_contrib_quantized_pooling": _unary(kernel=(2, 2), stride=(2, 2), pool_type="avg"),
    "_contrib_quantized_elemwise_add": _elementwise,
    "_contrib_quantized_elemwise_mul": _elementwise,
    "_contrib_quantized_fully_connected": _fully_connected,
    "_contrib_quantized_conv": _convolution,
    "_contrib_quantized_batch_norm": _batch_norm,
    "_contrib_quantized_embedding": _embedding,
    "_contrib_calibrate_entropy": _calibrate_entropy,
    "_contrib_quantized_concat": _concat,
    "_contrib_quantized_rnn": _lstm,
}
