"""Hand-written input rules for operators whose inputs cannot be derived from their signature.

Keyed by canonical operator name; each rule maps the profile's layer sizes to input configurations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from opperf.operators.rules.profiles import LayerSizes
from opperf.results.measurement import InputValue, Structure, TensorSpec

Configurations = list[dict[str, InputValue]]
T = TensorSpec


def _images(s: LayerSizes, dims: int) -> tuple[int, ...]:
    return (s.batch, s.channels) + (s.spatial,) * dims


def _convolution(s: LayerSizes) -> Configurations:
    configs: Configurations = []
    for dims, kernel in ((1, (3,)), (2, (3, 3)), (3, (3, 3, 3))):
        spatial = s.spatial if dims < 3 else max(4, s.spatial // 4)
        data = (s.batch, s.channels) + (spatial,) * dims
        configs.append(
            {
                "data": T(data),
                "weight": T((s.channels * 2, s.channels, *kernel)),
                "bias": T((s.channels * 2,)),
                "kernel": kernel,
                "num_filter": s.channels * 2,
                "pad": (1,) * dims,
            }
        )
    return configs


def _deconvolution(s: LayerSizes) -> Configurations:
    return [
        {
            "data": T((s.batch, s.channels) + (s.spatial,) * dims),
            "weight": T((s.channels, s.channels * 2, *kernel)),
            "bias": T((s.channels * 2,)),
            "kernel": kernel,
            "num_filter": s.channels * 2,
            "no_bias": False,
        }
        for dims, kernel in ((1, (3,)), (2, (3, 3)))
    ]


def _pooling(s: LayerSizes) -> Configurations:
    configs: Configurations = []
    for dims in (1, 2, 3):
        spatial = s.spatial if dims < 3 else max(4, s.spatial // 4)
        for pool_type in ("max", "avg", "sum"):
            configs.append(
                {
                    "data": T((s.batch, s.channels) + (spatial,) * dims),
                    "kernel": (2,) * dims,
                    "stride": (2,) * dims,
                    "pool_type": pool_type,
                }
            )
        configs.append(
            {"data": T((s.batch, s.channels) + (spatial,) * dims), "global_pool": True, "kernel": (1,) * dims}
        )
    return configs


def _rnn(s: LayerSizes) -> Configurations:
    gates = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
    hidden, inputs = s.features // 4 or 1, s.features // 4 or 1
    configs = []
    for mode, gate_count in gates.items():
        size = gate_count * hidden * (inputs + hidden + 2)
        config: dict[str, InputValue] = {
            "data": T((s.sequence, s.batch, inputs)),
            "parameters": T((size,)),
            "state": T((1, s.batch, hidden)),
            "mode": mode,
            "state_size": hidden,
            "num_layers": 1,
        }
        if mode == "lstm":
            config["state_cell"] = T((1, s.batch, hidden))
        configs.append(config)
    return configs


def _normalization(s: LayerSizes, **extra: InputValue) -> Configurations:
    return [
        {
            "data": T(_images(s, 2)),
            "gamma": T((s.channels,)),
            "beta": T((s.channels,)),
            **extra,
        }
    ]


def _batch_norm(s: LayerSizes) -> Configurations:
    return _normalization(s, moving_mean=T((s.channels,)), moving_var=T((s.channels,)))


def _kl_sparse_regularization(s: LayerSizes) -> Configurations:
    # Activations are sigmoid outputs in (0, 1); the moving average of each unit's mean is an input.
    return [{"data": T((s.batch, s.features)), "moving_avg": T((s.features,))}]


def _zeros_without_dtype(s: LayerSizes) -> Configurations:
    return [{"shape": (s.features * 4, s.features), "dtype": 0}]  # MXNet's type number for float32


def _set_value(s: LayerSizes) -> Configurations:
    return [{"src": 1.5, "out": T((s.features * 4, s.features))}]  # fills ``out`` in place


def _layer_norm(s: LayerSizes) -> Configurations:
    return [
        {"data": T((s.batch, s.sequence, s.features)), "gamma": T((s.features,)), "beta": T((s.features,))}
    ]


def _group_norm(s: LayerSizes) -> Configurations:
    groups = 2 if s.channels % 2 == 0 else 1
    return [{"data": T(_images(s, 2)), "gamma": T((groups,)), "beta": T((groups,)), "num_groups": groups}]


def _fully_connected(s: LayerSizes) -> Configurations:
    return [
        {
            "data": T((s.batch * 4, s.features)),
            "weight": T((s.features * 2, s.features)),
            "bias": T((s.features * 2,)),
            "num_hidden": s.features * 2,
        },
        {
            "data": T(_images(s, 2)),
            "weight": T((s.features, s.channels * s.spatial * s.spatial)),
            "bias": T((s.features,)),
            "num_hidden": s.features,
            "flatten": True,
        },
    ]


def _embedding(s: LayerSizes) -> Configurations:
    vocabulary = s.features * 16
    return [
        {
            "data": T((s.batch, s.sequence), low=0, high=vocabulary, integral=True),
            "weight": T((vocabulary, s.features)),
            "input_dim": vocabulary,
            "output_dim": s.features,
        }
    ]


def _labelled(data: tuple[int, ...], label: tuple[int, ...], classes: int) -> Configurations:
    return [{"data": T(data), "label": T(label, low=0, high=classes, integral=True)}]


def _classifier(s: LayerSizes) -> Configurations:
    return _labelled((s.batch * 4, s.features), (s.batch * 4,), s.features)


def _regression(s: LayerSizes) -> Configurations:
    return [{"data": T((s.batch * 4, s.features)), "label": T((s.batch * 4, s.features))}]


def _ctc_loss(s: LayerSizes) -> Configurations:
    alphabet = 8
    return [
        {
            "data": T((s.sequence * 2, s.batch, alphabet)),
            "label": T((s.batch, max(1, s.sequence // 2)), low=1, high=alphabet, integral=True),
        }
    ]


def _sequence(s: LayerSizes) -> Configurations:
    return [
        {
            "data": T((s.sequence, s.batch, s.features)),
            "sequence_length": T((s.batch,), low=1, high=s.sequence + 1, integral=True),
            "use_sequence_length": True,
        }
    ]


def _spatial_transformer(s: LayerSizes) -> Configurations:
    return [
        {
            "data": T(_images(s, 2)),
            "loc": T((s.batch, 6)),
            "target_shape": (s.spatial, s.spatial),
            "transform_type": "affine",
            "sampler_type": "bilinear",
        }
    ]


def _bilinear_sampler(s: LayerSizes) -> Configurations:
    return [{"data": T(_images(s, 2)), "grid": T((s.batch, 2, s.spatial, s.spatial), low=-1.0, high=1.0)}]


def _grid_generator(s: LayerSizes) -> Configurations:
    return [
        {"data": T((s.batch, 6)), "transform_type": "affine", "target_shape": (s.spatial, s.spatial)},
        {"data": T((s.batch, 2, s.spatial, s.spatial)), "transform_type": "warp"},
    ]


def _upsampling(s: LayerSizes) -> Configurations:
    return [{"data": (T(_images(s, 2)),), "scale": 2, "sample_type": "nearest"}]


def _crop(s: LayerSizes) -> Configurations:
    return [{"data": (T(_images(s, 2)),), "h_w": (s.spatial // 2, s.spatial // 2), "center_crop": True}]


def _two_dimensional(rule: Callable[[LayerSizes], Configurations]) -> Callable[[LayerSizes], Configurations]:
    """The 2-D configurations of a layer rule, for the legacy ``*_v1`` operators that only do 2-D."""
    return lambda s: [
        c for c in rule(s) if len(cast(TensorSpec, c["data"]).shape) == 4 and c.get("kernel") != (1, 1)
    ]


def _range(s: LayerSizes) -> Configurations:
    return [{"start": 0.0, "stop": float(s.features * s.features)}]


def _linspace(s: LayerSizes) -> Configurations:
    return [{"start": 0.0, "stop": 1.0, "num": s.features * s.features}]


def _eye(s: LayerSizes) -> Configurations:
    return [{"N": s.features * 2}]


def _index_copy(s: LayerSizes) -> Configurations:
    rows, count = s.features * 4, s.batch
    return [
        {
            "old_tensor": T((rows, s.features)),
            "index_vector": T((count,), low=0, high=rows, integral=True),
            "new_tensor": T((count, s.features)),
        }
    ]


def _delete(s: LayerSizes) -> Configurations:
    rows = s.features * 4
    return [
        {
            "arr": T((rows, s.features)),
            "obj": T((s.batch,), dtype="int64", low=0, high=rows, integral=True),
            "axis": 0,
        }
    ]


def _tensordot(s: LayerSizes) -> Configurations:
    n = s.features
    return [{"a": T((n, n)), "b": T((n, n)), "a_axes_summed": (1,), "b_axes_summed": (0,)}]


def _bilinear_resize(s: LayerSizes) -> Configurations:
    return [{"data": T(_images(s, 2)), "height": s.spatial * 2, "width": s.spatial * 2}]


def _roi_pooling(s: LayerSizes) -> Configurations:
    """Regions of interest as (batch index, x1, y1, x2, y2) rows; ROIPooling and ROIAlign share them."""
    return [
        {
            "data": T(_images(s, 2)),
            "rois": T((s.batch, 5), low=0, high=min(s.batch, s.spatial // 2), integral=True),
            "pooled_size": (2, 2),
            "spatial_scale": 1.0,
        }
    ]


def _im2col(s: LayerSizes) -> Configurations:
    return [{"data": T(_images(s, 2)), "kernel": (3, 3), "pad": (1, 1)}]


def _col2im(s: LayerSizes) -> Configurations:
    return [
        {
            "data": T((s.batch, s.channels * 9, s.spatial * s.spatial)),
            "output_size": (s.spatial, s.spatial),
            "kernel": (3, 3),
            "pad": (1, 1),
        }
    ]


def _correlation(s: LayerSizes) -> Configurations:
    return [{"data1": T(_images(s, 2)), "data2": T(_images(s, 2)), "kernel_size": 1, "max_displacement": 2}]


def _dropout(s: LayerSizes) -> Configurations:
    return [{"data": T(_images(s, 2)), "p": 0.5, "mode": "always"}, {"data": T((s.batch * 4, s.features))}]


def _matrices(s: LayerSizes) -> tuple[int, int]:
    return s.features, s.features


def _dot(s: LayerSizes) -> Configurations:
    n, _ = _matrices(s)
    return [
        {"lhs": T((n * 4, n)), "rhs": T((n, n * 2))},
        {"lhs": T((n, n * 4)), "rhs": T((n * 4, n)), "transpose_a": False},
        {"lhs": T((n, n)), "rhs": T((n, n)), "transpose_b": True},
    ]


def _batch_dot(s: LayerSizes) -> Configurations:
    n = s.features // 4 or 1
    return [{"lhs": T((s.batch, n, n)), "rhs": T((s.batch, n, n))}]


def _gemm(s: LayerSizes) -> Configurations:
    n, _ = _matrices(s)
    return [{"A": T((n, n)), "B": T((n, n)), "C": T((n, n))}]


def _gemm2(s: LayerSizes) -> Configurations:
    n, _ = _matrices(s)
    return [{"A": T((n, n)), "B": T((n, n))}]


def _square(s: LayerSizes, structure: Structure | None = None, **extra: InputValue) -> Configurations:
    """Batches of square matrices, structured so factorizations, inverses and solves are defined."""
    n = s.features // 2 or 1
    return [{"A": T((s.batch // 4 or 1, n, n), structure=structure), **extra}]


def _spd(s: LayerSizes) -> Configurations:
    return _square(s, "spd")


def _triangular(s: LayerSizes) -> Configurations:
    return _square(s, "lower_triangular")


def _triangular_product(s: LayerSizes) -> Configurations:
    n = s.features // 2 or 1
    return _square(s, "lower_triangular", B=T((s.batch // 4 or 1, n, n)))


def _general_square(s: LayerSizes) -> Configurations:
    return _square(s)


def _lq(s: LayerSizes) -> Configurations:
    n = s.features // 2 or 1
    return [{"A": T((s.batch // 4 or 1, n, 2 * n))}]


def _make_diagonal(s: LayerSizes) -> Configurations:
    return [{"A": T((s.batch // 4 or 1, s.features // 2 or 1))}]


def _make_triangular(s: LayerSizes) -> Configurations:
    n = s.features // 2 or 1
    return [{"A": T((s.batch // 4 or 1, n * (n + 1) // 2))}]


def _adaptive_pooling(s: LayerSizes) -> Configurations:
    return [{"data": T(_images(s, 2)), "output_size": (s.spatial // 4 or 1, s.spatial // 4 or 1)}]


def _deformable_convolution(s: LayerSizes) -> Configurations:
    kernel = (3, 3)
    out = s.spatial - 2
    return [
        {
            "data": T(_images(s, 2)),
            "offset": T((s.batch, 2 * 9, out, out)),
            "weight": T((s.channels * 2, s.channels, *kernel)),
            "bias": T((s.channels * 2,)),
            "kernel": kernel,
            "num_filter": s.channels * 2,
        }
    ]


def _matrix_batch(name: str) -> Callable[[LayerSizes], Configurations]:
    """Batches of general square matrices under argument ``name`` (decompositions: svd, pinv, ...)."""

    def rule(s: LayerSizes) -> Configurations:
        n = s.features // 2 or 1
        return [{name: T((s.batch // 4 or 1, n, n))}]

    return rule


def _matrix(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features, s.features))}]


def _vector(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features,))}]


def _unique(s: LayerSizes) -> Configurations:
    count = s.features * 64
    return [{"data": T((count,), low=0, high=count // 4, integral=True)}]


def _bipartite_matching(s: LayerSizes) -> Configurations:
    n = s.features // 2 or 1
    return [{"data": T((s.batch // 4 or 1, n, n)), "threshold": 0.5}]


def _khatri_rao(s: LayerSizes) -> Configurations:
    columns = s.features // 4 or 1
    return [{"args": (T((s.batch, columns)), T((s.batch, columns)))}]


def _pick(s: LayerSizes) -> Configurations:
    rows = s.batch * 4
    return [{"data": T((rows, s.features)), "index": T((rows,), low=0, high=s.features, integral=True)}]


def _take(s: LayerSizes) -> Configurations:
    rows = s.features * 4
    return [{"a": T((rows, s.features)), "indices": T((s.batch * 4,), low=0, high=rows, integral=True)}]


def _one_hot(s: LayerSizes) -> Configurations:
    return [{"indices": T((s.batch * 4,), low=0, high=s.features, integral=True), "depth": s.features}]


def _gather_nd(s: LayerSizes) -> Configurations:
    rows = s.features * 4
    return [
        {"data": T((rows, s.features)), "indices": T((2, s.batch * 4), low=0, high=s.features, integral=True)}
    ]


def _scatter_nd(s: LayerSizes) -> Configurations:
    count = s.batch * 4
    return [
        {
            "data": T((count,)),
            "indices": T((2, count), low=0, high=s.features, integral=True),
            "shape": (s.features, s.features),
        }
    ]


def _where(s: LayerSizes) -> Configurations:
    shape = (s.features * 4, s.features)
    return [{"condition": T(shape, low=0, high=2, integral=True), "x": T(shape), "y": T(shape)}]


def _slice_like(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features * 4, s.features)), "shape_like": T((s.features, s.features // 2 or 1))}]


def _slice_axis(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features * 4, s.features)), "axis": 0, "begin": 0, "end": s.features}]


def _topk(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features * 4, s.features)), "k": 5, "axis": -1}]


def _space_to_depth(s: LayerSizes) -> Configurations:
    return [{"data": T(_images(s, 2)), "block_size": 2}]


def _depth_to_space(s: LayerSizes) -> Configurations:
    return [{"data": T((s.batch, s.channels * 4, s.spatial, s.spatial)), "block_size": 2}]


def _reshape(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features * 4, s.features)), "shape": (s.features * 2, -1)}]


def _reshape_like(s: LayerSizes) -> Configurations:
    return [{"lhs": T((s.features * 4, s.features)), "rhs": T((s.features * 2, s.features * 2))}]


def _broadcast_to(s: LayerSizes) -> Configurations:
    return [{"data": T((1, s.features)), "shape": (s.features * 4, s.features)}]


def _broadcast_axis(s: LayerSizes) -> Configurations:
    return [{"data": T((1, s.features)), "axis": 0, "size": s.features * 4}]


def _broadcast_like(s: LayerSizes) -> Configurations:
    return [{"lhs": T((1, s.features)), "rhs": T((s.features * 4, s.features))}]


def _tile(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features, s.features)), "reps": (2, 2)}]


def _repeat(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features, s.features)), "repeats": 2, "axis": 0}]


def _pad(s: LayerSizes) -> Configurations:
    return [
        {"data": T(_images(s, 2)), "mode": mode, "pad_width": (0, 0, 0, 0, 1, 1, 1, 1)}
        for mode in ("constant", "edge", "reflect")
    ]


def _squeeze(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features, 1, s.features)), "axis": 1}]


def _expand_dims(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features, s.features)), "axis": 1}]


def _split(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features * 4, s.features)), "num_outputs": 4, "axis": 0}]


def _split_v2(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features * 4, s.features)), "indices": (0, s.features), "axis": 0}]


def _cast(s: LayerSizes) -> Configurations:
    shape = (s.features * 4, s.features)
    return [{"data": T(shape), "dtype": "float16"}, {"data": T(shape), "dtype": "int32"}]


def _activation(s: LayerSizes) -> Configurations:
    shape = (s.features * 4, s.features)
    return [
        {"data": T(shape), "act_type": act} for act in ("relu", "sigmoid", "softrelu", "softsign", "tanh")
    ]


def _leaky_relu(s: LayerSizes) -> Configurations:
    shape = (s.features * 4, s.features)
    configs: Configurations = [
        {"data": T(shape), "act_type": act} for act in ("leaky", "elu", "selu", "gelu")
    ]
    configs.append({"data": T(shape), "act_type": "prelu", "gamma": T((1,))})
    return configs


def _softmax_output(s: LayerSizes) -> Configurations:
    return _classifier(s)


def _l2_normalization(s: LayerSizes) -> Configurations:
    return [{"data": T(_images(s, 2)), "mode": mode} for mode in ("channel", "instance", "spatial")]


def _lrn(s: LayerSizes) -> Configurations:
    return [{"data": T(_images(s, 2)), "nsize": 3}]


def _concat(s: LayerSizes) -> Configurations:
    shape = (s.features * 4, s.features)
    return [{"data": (T(shape), T(shape), T(shape)), "dim": 1}]


def _stack(s: LayerSizes) -> Configurations:
    shape = (s.features * 4, s.features)
    return [{"data": (T(shape), T(shape), T(shape)), "axis": 0}]


def _moments(s: LayerSizes) -> Configurations:
    return [{"data": T(_images(s, 2)), "axes": (0, 2, 3)}]


def _instance_norm(s: LayerSizes) -> Configurations:
    return [{"data": T(_images(s, 2)), "gamma": T((s.channels,)), "beta": T((s.channels,))}]


def _softmax_cross_entropy(s: LayerSizes) -> Configurations:
    return _classifier(s)


def _svm_output(s: LayerSizes) -> Configurations:
    return _classifier(s)


DEFAULT_RULES: dict[str, Callable[[LayerSizes], Configurations]] = {
    "Convolution": _convolution,
    "Deconvolution": _deconvolution,
    "Pooling": _pooling,
    "RNN": _rnn,
    "BatchNorm": _batch_norm,
    "BatchNorm_v1": _batch_norm,
    "_zeros_without_dtype": _zeros_without_dtype,
    "_set_value": _set_value,
    "IdentityAttachKLSparseReg": _kl_sparse_regularization,
    "LayerNorm": _layer_norm,
    "GroupNorm": _group_norm,
    "InstanceNorm": _instance_norm,
    "FullyConnected": _fully_connected,
    "Embedding": _embedding,
    "Dropout": _dropout,
    "SoftmaxOutput": _softmax_output,
    "softmax_cross_entropy": _softmax_cross_entropy,
    "SVMOutput": _svm_output,
    "LinearRegressionOutput": _regression,
    "LogisticRegressionOutput": _regression,
    "MAERegressionOutput": _regression,
    "CTCLoss": _ctc_loss,
    "SequenceLast": _sequence,
    "SequenceMask": _sequence,
    "SequenceReverse": _sequence,
    "SpatialTransformer": _spatial_transformer,
    "BilinearSampler": _bilinear_sampler,
    "GridGenerator": _grid_generator,
    "UpSampling": _upsampling,
    "Crop": _crop,
    "Convolution_v1": _two_dimensional(_convolution),
    "Pooling_v1": _two_dimensional(_pooling),
    **{op: _range for op in ("_arange", "_npi_arange")},
    **{op: _linspace for op in ("_linspace", "_npi_logspace")},
    **{op: _eye for op in ("_eye", "_npi_eye")},
    "_contrib_index_copy": _index_copy,
    "_contrib_BilinearResize2D": _bilinear_resize,
    "_npi_delete": _delete,
    "_npi_tensordot": _tensordot,
    "ROIPooling": _roi_pooling,
    "im2col": _im2col,
    "col2im": _col2im,
    "Correlation": _correlation,
    "L2Normalization": _l2_normalization,
    "LRN": _lrn,
    "Activation": _activation,
    "LeakyReLU": _leaky_relu,
    "dot": _dot,
    "batch_dot": _batch_dot,
    "_linalg_gemm": _gemm,
    "_linalg_gemm2": _gemm2,
    "_linalg_potrf": _spd,
    "_linalg_inverse": _spd,
    "_linalg_det": _spd,
    "_linalg_slogdet": _spd,
    "_linalg_syevd": _spd,
    "_linalg_potri": _triangular,
    "_linalg_sumlogdiag": _triangular,
    "_linalg_trmm": _triangular_product,
    "_linalg_trsm": _triangular_product,
    "_linalg_extractdiag": _general_square,
    "_linalg_extracttrian": _general_square,
    "_linalg_syrk": _general_square,
    "_linalg_gelqf": _lq,
    "_linalg_makediag": _make_diagonal,
    "_linalg_maketrian": _make_triangular,
    "khatri_rao": _khatri_rao,
    "_contrib_AdaptiveAvgPooling2D": _adaptive_pooling,
    "_contrib_ROIAlign": _roi_pooling,
    "_contrib_DeformableConvolution": _deformable_convolution,
    "_npi_svd": _matrix_batch("A"),
    "_npi_pinv_scalar_rcond": _matrix_batch("A"),
    "_npi_norm": _matrix,
    "_np_diagflat": _vector,
    "_npi_unique": _unique,
    "_contrib_bipartite_matching": _bipartite_matching,
    "pick": _pick,
    "take": _take,
    "one_hot": _one_hot,
    "gather_nd": _gather_nd,
    "scatter_nd": _scatter_nd,
    "where": _where,
    "slice_like": _slice_like,
    "slice_axis": _slice_axis,
    "topk": _topk,
    "space_to_depth": _space_to_depth,
    "depth_to_space": _depth_to_space,
    "Reshape": _reshape,
    "reshape_like": _reshape_like,
    "broadcast_to": _broadcast_to,
    "broadcast_axis": _broadcast_axis,
    "broadcast_like": _broadcast_like,
    "tile": _tile,
    "repeat": _repeat,
    "Pad": _pad,
    "squeeze": _squeeze,
    "expand_dims": _expand_dims,
    "SliceChannel": _split,
    "_split_v2": _split_v2,
    "Cast": _cast,
    "Concat": _concat,
    "stack": _stack,
    "moments": _moments,
}
