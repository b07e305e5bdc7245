"""Hand-written rules for PyTorch layers whose inputs must agree with each other (convolution,
pooling, recurrent, normalisation, embedding, losses with class targets, ...), keyed by operator name
(``HAND_RULES``) and sized by the profile's layer dimensions."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import cast

from opperf.frameworks.torch.rules.derived import Configurations, T, divisor
from opperf.operators.rules.profiles import LayerSizes
from opperf.results.measurement import InputValue, Storage, TensorSpec

LayerRule = Callable[[LayerSizes], Configurations]


def _images(s: LayerSizes, dims: int, channels: int | None = None) -> tuple[int, ...]:
    """(batch, channels, spatial...) with 3-d volumes smaller, as convolution and pooling take them."""
    spatial = s.spatial if dims < 3 else max(4, s.spatial // 4)
    return (s.batch, channels or s.channels) + (spatial,) * dims


def _convolution(dims: int) -> Callable[[LayerSizes], Configurations]:
    def rule(s: LayerSizes) -> Configurations:
        out = s.channels * 2
        return [
            {
                "input": T(_images(s, dims)),
                "weight": T((out, s.channels) + (3,) * dims),
                "bias": T((out,)),
                "padding": (1,) * dims,
            }
        ]

    return rule


def _transposed_convolution(dims: int) -> Callable[[LayerSizes], Configurations]:
    def rule(s: LayerSizes) -> Configurations:
        out = s.channels * 2
        return [
            {
                "input": T(_images(s, dims)),
                "weight": T((s.channels, out) + (3,) * dims),
                "bias": T((out,)),
            }
        ]

    return rule


def _generic_convolution(s: LayerSizes) -> Configurations:
    """``torch.convolution``: every argument is required."""
    out = s.channels * 2
    return [
        {
            "input": T(_images(s, 2)),
            "weight": T((out, s.channels, 3, 3)),
            "bias": T((out,)),
            "stride": (1, 1),
            "padding": (1, 1),
            "dilation": (1, 1),
            "transposed": False,
            "output_padding": (0, 0),
            "groups": 1,
        }
    ]


def _mkldnn_convolution(s: LayerSizes) -> Configurations:
    out = s.channels * 2
    return [
        {
            "input": T(_images(s, 2)),
            "weight": T((out, s.channels, 3, 3)),
            "bias": T((out,)),
            "padding": (1, 1),
            "stride": (1, 1),
            "dilation": (1, 1),
            "groups": 1,
        }
    ]


def _conv_tbc(s: LayerSizes) -> Configurations:
    out = s.channels * 2
    return [
        {
            "input": T((s.spatial, s.batch, s.channels)),
            "weight": T((3, s.channels, out)),
            "bias": T((out,)),
            "pad": 1,
        }
    ]


def _pooling(dims: int, **extra: InputValue) -> Callable[[LayerSizes], Configurations]:
    """Pooling over 2-wide windows with stride 2."""
    return lambda s: [{"input": T(_images(s, dims)), "kernel_size": (2,) * dims, **extra}]


def _adaptive_pooling(dims: int) -> Callable[[LayerSizes], Configurations]:
    def rule(s: LayerSizes) -> Configurations:
        images = _images(s, dims)
        return [{"input": T(images), "output_size": tuple(max(1, d // 2) for d in images[2:])}]

    return rule


def _fractional_max_pooling(dims: int) -> Callable[[LayerSizes], Configurations]:
    def rule(s: LayerSizes) -> Configurations:
        images = _images(s, dims)
        return [
            {
                "input": T(images),
                "kernel_size": (2,) * dims,
                "output_size": tuple(max(1, d // 2) for d in images[2:]),
                "random_samples": T((s.batch, s.channels, dims)),
            }
        ]

    return rule


def _max_unpooling(dims: int) -> Callable[[LayerSizes], Configurations]:
    """Unpooling of a 2x-pooled tensor; each index points into its unpooled plane."""

    def rule(s: LayerSizes) -> Configurations:
        images = _images(s, dims)
        pooled = images[:2] + tuple(d // 2 for d in images[2:])
        config: dict[str, InputValue] = {
            "input": T(pooled),
            "indices": T(pooled, dtype="int64", low=0, high=math.prod(images[2:]), integral=True),
            "output_size": images[2:],
            # The public entry point (torch.nn.functional) also needs the pooling window.
            "kernel_size": (2,) * dims,
            "stride": (2,) * dims,
        }
        if dims == 3:
            config.update(padding=(0,) * dims)
        return [config]

    return rule


def _lstm_like(gates: int, cell_state: bool) -> Callable[[LayerSizes], Configurations]:
    """``torch.lstm``/``gru``/``rnn_tanh``: one layer, with biases, sequence-first."""

    def rule(s: LayerSizes) -> Configurations:
        hidden = inputs = max(1, s.features // 4)
        state = T((1, s.batch, hidden))
        return [
            {
                "input": T((s.sequence, s.batch, inputs)),
                "hx": (state, state) if cell_state else state,
                "params": (
                    T((gates * hidden, inputs)),
                    T((gates * hidden, hidden)),
                    T((gates * hidden,)),
                    T((gates * hidden,)),
                ),
                "has_biases": True,
                "num_layers": 1,
                "dropout": 0.0,
                "train": True,
                "bidirectional": False,
                "batch_first": False,
            }
        ]

    return rule


def _cell(gates: int, cell_state: bool) -> Callable[[LayerSizes], Configurations]:
    """``torch.lstm_cell``/``gru_cell``/``rnn_tanh_cell``: one step."""

    def rule(s: LayerSizes) -> Configurations:
        hidden = inputs = max(1, s.features // 4)
        state = T((s.batch, hidden))
        return [
            {
                "input": T((s.batch, inputs)),
                "hx": (state, state) if cell_state else state,
                "w_ih": T((gates * hidden, inputs)),
                "w_hh": T((gates * hidden, hidden)),
                "b_ih": T((gates * hidden,)),
                "b_hh": T((gates * hidden,)),
            }
        ]

    return rule


WEIGHT_QUANTIZATION = (0.01, 0)
"""Scale and zero point of int8 weights for FBGEMM."""


def _int8_weights(rows: int, columns: int, suffix: str = "") -> dict[str, InputValue]:
    """A weight matrix quantized for FBGEMM as ``fbgemm_linear_quantize_weight`` returns it: int8
    values packed for the product, per-row offsets, scale and zero point (the offsets are drawn, not
    summed from the values: they shift the outputs, not the work)."""
    scale, zero_point = WEIGHT_QUANTIZATION
    return {
        f"packed{suffix}": T(
            (rows, columns), dtype="int8", low=-128, high=128, integral=True, storage="fbgemm_packed"
        ),
        f"col_offsets{suffix}": T((rows,), dtype="int32", low=-1000, high=1000, integral=True),
        f"scale{suffix}" if suffix else "weight_scale": scale,
        f"zero_point{suffix}" if suffix else "weight_zero_point": zero_point,
    }


def _fbgemm_linear(int8: bool) -> Callable[[LayerSizes], Configurations]:
    """FBGEMM's linear layers over prepacked weights: int8 (with the float weight beside them, which
    the operator takes for its shape) or half precision."""

    def rule(s: LayerSizes) -> Configurations:
        f = s.features
        inputs: dict[str, InputValue] = {"input": T((s.batch, f))}
        if int8:
            inputs.update(weight=T((f, f)), **_int8_weights(f, f))
        else:
            inputs.update(packed_weight=T((f, f), storage="fbgemm_packed"))
        return [{**inputs, "bias": T((f,))}]

    return rule


def _quantized_cell(gates: int, cell_state: bool) -> Callable[[LayerSizes], Configurations]:
    """``torch.quantized_lstm_cell`` and friends: a recurrent cell's step over FBGEMM int8 weights."""

    def rule(s: LayerSizes) -> Configurations:
        configurations = _cell(gates, cell_state)(s)
        for config in configurations:
            rows, columns = cast(TensorSpec, config["w_ih"]).shape
            config.update(_int8_weights(rows, columns, "_ih"), **_int8_weights(rows, columns, "_hh"))
        return configurations

    return rule


def _stored(rule: LayerRule, storage: Storage) -> LayerRule:
    """A layer rule with its ``input`` tensor in another storage (MKL-DNN's opaque layout)."""
    return lambda s: [
        {**config, "input": replace(cast(TensorSpec, config["input"]), storage=storage)} for config in rule(s)
    ]


def _channels(s: LayerSizes) -> TensorSpec:
    return T((s.channels,))


def _native_batch_norm(s: LayerSizes) -> Configurations:
    c = _channels(s)
    return [
        {
            "input": T(_images(s, 2)),
            "weight": c,
            "bias": c,
            "running_mean": c,
            "running_var": c,
            "training": True,
            "momentum": 0.1,
            "eps": 1e-5,
        }
    ]


def _batch_norm(s: LayerSizes) -> Configurations:
    """``native_batch_norm``'s inputs, and the flag ``torch.batch_norm`` adds."""
    return [{**inputs, "cudnn_enabled": True} for inputs in _native_batch_norm(s)]


def _quantized_batch_norm(s: LayerSizes) -> Configurations:
    c = _channels(s)
    return [
        {
            "input": T(_images(s, 2), dtype="quint8"),
            "weight": c,
            "bias": c,
            "mean": c,
            "var": c,
            "eps": 1e-5,
            "output_scale": 0.1,
            "output_zero_point": 0,
        }
    ]


def _instance_norm(s: LayerSizes) -> Configurations:
    c = _channels(s)
    return [
        {
            "input": T(_images(s, 2)),
            "weight": c,
            "bias": c,
            "use_input_stats": True,
            "momentum": 0.1,
            "eps": 1e-5,
            "cudnn_enabled": True,
        }
    ]


def _layer_norm(s: LayerSizes, **extra: InputValue) -> Configurations:
    f = T((s.features,))
    return [
        {
            "input": T((s.batch, s.sequence, s.features)),
            "normalized_shape": (s.features,),
            "weight": f,
            **extra,
        }
    ]


def _group_norm(s: LayerSizes) -> Configurations:
    c = _channels(s)
    return [{"input": T(_images(s, 2)), "num_groups": divisor(s.channels), "weight": c, "bias": c}]


def _native_group_norm(s: LayerSizes) -> Configurations:
    c = _channels(s)
    images = _images(s, 2)
    return [
        {
            "input": T(images),
            "weight": c,
            "bias": c,
            "N": s.batch,
            "C": s.channels,
            "HxW": images[2] * images[3],
            "group": divisor(s.channels),
            "eps": 1e-5,
        }
    ]


def _batch_statistics(s: LayerSizes, **extra: InputValue) -> Configurations:
    """The synchronised batch norm helpers: per-device statistics of ``devices`` = 2 replicas."""
    return [{"input": T(_images(s, 2)), **extra}]


def _gathered_statistics(s: LayerSizes, **extra: InputValue) -> Configurations:
    per_device = T((2, s.channels))
    return _batch_statistics(
        s,
        mean=per_device,
        invstd=per_device,
        running_mean=_channels(s),
        running_var=_channels(s),
        momentum=0.1,
        eps=1e-5,
        **extra,
    )


def _embedding(s: LayerSizes) -> Configurations:
    vocabulary = s.features * 4
    return [
        {
            "weight": T((vocabulary, s.features)),
            "indices": T((s.batch, s.sequence), dtype="int64", low=0, high=vocabulary, integral=True),
        }
    ]


def _embedding_bag(s: LayerSizes) -> Configurations:
    vocabulary = s.features * 4
    return [
        {
            "weight": T((vocabulary, s.features)),
            "indices": T((s.batch * s.sequence,), dtype="int64", low=0, high=vocabulary, integral=True),
            "offsets": T((1,), dtype="int64", low=0, high=1, integral=True),
        }
    ]


def _linear(s: LayerSizes) -> Configurations:
    f = s.features
    return [{"input": T((s.batch, f)), "weight": T((f, f)), "bias": T((f,))}]


def _bilinear(s: LayerSizes) -> Configurations:
    f = max(1, s.features // 4)
    return [{"input1": T((s.batch, f)), "input2": T((s.batch, f)), "weight": T((f, f, f)), "bias": T((f,))}]


def _attention(s: LayerSizes) -> Configurations:
    heads = divisor(s.channels)
    q = T((s.batch, heads, s.sequence, s.features // heads))
    return [{"query": q, "key": q, "value": q}]


def _class_targets(s: LayerSizes, **extra: InputValue) -> Configurations:
    """Scores over ``features`` classes and one class index per sample (nll_loss, multi_margin_loss)."""
    classes = s.features
    target = T((s.batch,), dtype="int64", low=0, high=classes, integral=True)
    return [{"input": T((s.batch, classes)), "target": target, **extra}]


def _multilabel_targets(s: LayerSizes) -> Configurations:
    classes = s.features
    target = T((s.batch, classes), dtype="int64", low=0, high=classes, integral=True)
    return [{"input": T((s.batch, classes)), "target": target}]


def _ctc_loss(s: LayerSizes) -> Configurations:
    classes, steps = s.features, s.sequence * 2
    labels = max(1, s.sequence // 2)

    def lengths(value: int) -> TensorSpec:
        return T((s.batch,), dtype="int64", low=value, high=value + 1, integral=True)

    return [
        {
            "log_probs": T((steps, s.batch, classes), low=-3.0, high=-0.1),
            "targets": T((s.batch, labels), dtype="int64", low=1, high=classes, integral=True),
            "input_lengths": lengths(steps),
            "target_lengths": lengths(labels),
        }
    ]


def _pair_loss(s: LayerSizes) -> Configurations:
    """Losses over two inputs and a +1/-1 target per sample."""
    x = T((s.batch, s.features))
    return [{"input1": x, "input2": x, "target": T((s.batch,), low=1, high=2, integral=True)}]


def _poisson_nll_loss(s: LayerSizes) -> Configurations:
    x = T((s.batch, s.features))
    return [
        {"input": x, "target": x, "log_input": True, "full": False, "eps": 1e-8, "reduction": 1},
    ]


def _grid_sampler(dims: int) -> Callable[[LayerSizes], Configurations]:
    def rule(s: LayerSizes) -> Configurations:
        images = _images(s, dims)
        return [
            {
                "input": T(images),
                "grid": T((s.batch, *images[2:], dims), low=-1.0, high=1.0),
                "interpolation_mode": 0,
                "padding_mode": 0,
                "align_corners": False,
            }
        ]

    return rule


def _affine_grid(s: LayerSizes) -> Configurations:
    return [{"theta": T((s.batch, 2, 3)), "size": _images(s, 2), "align_corners": False}]


def _cudnn_affine_grid(s: LayerSizes) -> Configurations:
    """cuDNN's affine grid takes the output size as four integers, not ``size``."""
    batch, channels, height, width = _images(s, 2)
    return [{"theta": T((batch, 2, 3)), "N": batch, "C": channels, "H": height, "W": width}]


def _cudnn_grid_sampler(s: LayerSizes) -> Configurations:
    """cuDNN's grid sampler: bilinear, zero padding, no aligned corners, fixed (no mode arguments)."""
    images = _images(s, 2)
    return [{"input": T(images), "grid": T((s.batch, *images[2:], 2), low=-1.0, high=1.0)}]


def _cudnn_batch_norm(s: LayerSizes) -> Configurations:
    """``native_batch_norm``'s inputs, its momentum and eps under cuDNN's names."""
    renamed = {"momentum": "exponential_average_factor", "eps": "epsilon"}
    return [
        {renamed.get(name, name): value for name, value in inputs.items()} for inputs in _native_batch_norm(s)
    ]


def _im2col(s: LayerSizes) -> Configurations:
    return [
        {
            "input": T(_images(s, 2)),
            "kernel_size": (2, 2),
            "dilation": (1, 1),
            "padding": (0, 0),
            "stride": (1, 1),
        }
    ]


def _col2im(s: LayerSizes) -> Configurations:
    blocks = (s.spatial - 1) ** 2
    return [
        {
            "input": T((s.batch, s.channels * 4, blocks)),
            "output_size": (s.spatial, s.spatial),
            "kernel_size": (2, 2),
            "dilation": (1, 1),
            "padding": (0, 0),
            "stride": (1, 1),
        }
    ]


def _pixel_shuffle(s: LayerSizes) -> Configurations:
    return [{"input": T(_images(s, 2, channels=s.channels * 4)), "upscale_factor": 2}]


def _pixel_unshuffle(s: LayerSizes) -> Configurations:
    return [{"input": T(_images(s, 2)), "downscale_factor": 2}]


def _tensordot(s: LayerSizes) -> Configurations:
    """``torch.tensordot`` is a Python wrapper: one ``dims`` pair instead of the schema's two lists."""
    f = T((s.features, s.features))
    return [{"input": f, "other": f, "dims": ((1,), (0,))}]


def _mkldnn_rnn_layer(s: LayerSizes) -> Configurations:
    """One oneDNN LSTM layer (mode 2), the building block of ``torch.lstm`` on CPU."""
    (config,) = _lstm_like(4, cell_state=True)(s)
    w_ih, w_hh, b_ih, b_hh = cast("tuple[TensorSpec, ...]", config["params"])
    h, _ = cast("tuple[TensorSpec, ...]", config["hx"])
    hidden = w_hh.shape[1]
    return [
        {
            "input": config["input"],
            "weight0": w_ih,
            "weight1": w_hh,
            "weight2": b_ih,
            "weight3": b_hh,
            "hx_": h,
            "cx_": h,
            "reverse": False,
            "batch_sizes": (),
            "mode": 2,
            "hidden_size": hidden,
            "num_layers": 1,
            "has_biases": True,
            "bidirectional": False,
            "batch_first": False,
            "train": True,
        }
    ]


def _padded(s: LayerSizes) -> Configurations:
    """A batch of sequences of up to ``sequence * features`` values (a nested tensor of ``batch``
    components: autograd and the profiler handle each component on its own, so thousands of them
    would time the bookkeeping)."""
    return [{"self": T((s.batch, s.sequence * s.features), storage="nested"), "padding": 0.0}]


def _channel_shuffle(s: LayerSizes) -> Configurations:
    return [{"input": T(_images(s, 2)), "groups": divisor(s.channels)}]


HAND_RULES: dict[str, Callable[[LayerSizes], Configurations]] = {
    "conv1d": _convolution(1),
    "conv2d": _convolution(2),
    "conv3d": _convolution(3),
    "conv_transpose1d": _transposed_convolution(1),
    "conv_transpose2d": _transposed_convolution(2),
    "conv_transpose3d": _transposed_convolution(3),
    "convolution": _generic_convolution,
    "mkldnn_convolution": _mkldnn_convolution,
    "conv_tbc": _conv_tbc,
    "max_pool1d": _pooling(1),
    "max_pool2d": _pooling(2),
    "max_pool3d": _pooling(3),
    "max_pool1d_with_indices": _pooling(1),
    "max_pool2d_with_indices": _pooling(2),
    "max_pool3d_with_indices": _pooling(3),
    "avg_pool1d": _pooling(1),
    "avg_pool2d": _pooling(2),
    "avg_pool3d": _pooling(3),
    "adaptive_avg_pool1d": _adaptive_pooling(1),
    "adaptive_avg_pool2d": _adaptive_pooling(2),
    "adaptive_avg_pool3d": _adaptive_pooling(3),
    "adaptive_max_pool1d": _adaptive_pooling(1),
    "adaptive_max_pool2d": _adaptive_pooling(2),
    "adaptive_max_pool3d": _adaptive_pooling(3),
    # The stride is given: MKL-DNN's backward does not default it to the window as the forward does.
    "mkldnn_max_pool2d": _stored(_pooling(2, stride=(2, 2)), "mkldnn"),
    "mkldnn_max_pool3d": _stored(_pooling(3, stride=(2, 2, 2)), "mkldnn"),
    "mkldnn_adaptive_avg_pool2d": _stored(_adaptive_pooling(2), "mkldnn"),
    "fractional_max_pool2d": _fractional_max_pooling(2),
    "fractional_max_pool3d": _fractional_max_pooling(3),
    "max_unpool2d": _max_unpooling(2),
    "max_unpool3d": _max_unpooling(3),
    "lstm": _lstm_like(4, cell_state=True),
    "gru": _lstm_like(3, cell_state=False),
    "rnn_tanh": _lstm_like(1, cell_state=False),
    "rnn_relu": _lstm_like(1, cell_state=False),
    "lstm_cell": _cell(4, cell_state=True),
    "gru_cell": _cell(3, cell_state=False),
    "rnn_tanh_cell": _cell(1, cell_state=False),
    "rnn_relu_cell": _cell(1, cell_state=False),
    "quantized_lstm_cell": _quantized_cell(4, cell_state=True),
    "quantized_gru_cell": _quantized_cell(3, cell_state=False),
    "quantized_rnn_tanh_cell": _quantized_cell(1, cell_state=False),
    "quantized_rnn_relu_cell": _quantized_cell(1, cell_state=False),
    "fbgemm_linear_fp16_weight": _fbgemm_linear(int8=False),
    "fbgemm_linear_fp16_weight_fp32_activation": _fbgemm_linear(int8=False),
    "fbgemm_linear_int8_weight": _fbgemm_linear(int8=True),
    "fbgemm_linear_int8_weight_fp32_activation": _fbgemm_linear(int8=True),
    "batch_norm": _batch_norm,
    "native_batch_norm": _native_batch_norm,
    "quantized_batch_norm": _quantized_batch_norm,
    "instance_norm": _instance_norm,
    "layer_norm": lambda s: _layer_norm(s, bias=T((s.features,))),
    "native_layer_norm": lambda s: _layer_norm(s, bias=T((s.features,)), eps=1e-5),
    "rms_norm": _layer_norm,
    "group_norm": _group_norm,
    "native_group_norm": _native_group_norm,
    "batch_norm_stats": lambda s: _batch_statistics(s, eps=1e-5),
    "batch_norm_elemt": lambda s: _batch_statistics(
        s, weight=_channels(s), bias=_channels(s), mean=_channels(s), invstd=_channels(s), eps=1e-5
    ),
    "batch_norm_update_stats": lambda s: _batch_statistics(
        s, running_mean=_channels(s), running_var=_channels(s), momentum=0.1
    ),
    "batch_norm_gather_stats": lambda s: _gathered_statistics(s, count=s.batch),
    "batch_norm_gather_stats_with_counts": lambda s: _gathered_statistics(s, counts=T((2,))),
    "embedding": _embedding,
    "embedding_bag": _embedding_bag,
    "linear": _linear,
    "bilinear": _bilinear,
    "scaled_dot_product_attention": _attention,
    "nll_loss": _class_targets,
    "multi_margin_loss": _class_targets,
    "multilabel_margin_loss": _multilabel_targets,
    "ctc_loss": _ctc_loss,
    "cosine_embedding_loss": _pair_loss,
    "margin_ranking_loss": lambda s: [
        {"input1": T((s.batch,)), "input2": T((s.batch,)), "target": T((s.batch,), low=1, high=2)}
    ],
    "poisson_nll_loss": _poisson_nll_loss,
    "grid_sampler": _grid_sampler(2),
    "grid_sampler_2d": _grid_sampler(2),
    "grid_sampler_3d": _grid_sampler(3),
    "affine_grid_generator": _affine_grid,
    "cudnn_affine_grid_generator": _cudnn_affine_grid,
    "cudnn_grid_sampler": _cudnn_grid_sampler,
    "cudnn_batch_norm": _cudnn_batch_norm,
    "im2col": _im2col,
    "col2im": _col2im,
    "pixel_shuffle": _pixel_shuffle,
    "pixel_unshuffle": _pixel_unshuffle,
    "channel_shuffle": _channel_shuffle,
    "native_channel_shuffle": _channel_shuffle,
    "tensordot": _tensordot,
    "to_padded_tensor": _padded,
    "mkldnn_rnn_layer": _mkldnn_rnn_layer,
}
