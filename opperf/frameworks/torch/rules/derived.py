"""Input rules for PyTorch operators, derived from the aten schema with hand-written layer defaults.

Each required argument gets a value from, in order: the operator's own override (``OVERRIDES``, keyed by
operator name), a rule for the argument's name (``TENSOR_RULES``, ``SCALAR_RULES``), or its schema type.
Optional arguments keep their defaults. Layers whose inputs must agree with each other (convolution,
pooling, recurrent, normalisation, embedding, losses with class targets) have hand-written rules sized
by ``profile.layers`` (``HAND_RULES``); matrix products and linear algebra use square matrices of
``profile.layers.features``. Operators that cannot run standalone are skipped with the reason kept here
as data (``SKIP_REASONS``, ``DEVICE_SKIP_REASONS``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from opperf.op_info import ArgKind, Argument, OpInfo
from opperf.results import InputValue, TensorSpec
from opperf.rules.generic import LIST_LENGTH, NoRuleError, RuleContext, type_default
from opperf.rules.profiles import LayerSizes, SizeProfile

Configurations = list[dict[str, InputValue]]
Override = Callable[[RuleContext], dict[str, InputValue]]
LayerRule = Callable[[LayerSizes], Configurations]
T = TensorSpec

# ---------------------------------------------------------------------------------------------------
# Operators that cannot run standalone, with the reason.

_CELL_PARAMS = (
    "takes CellParamsBase objects (torch.classes.rnn, made by quantized::make_quantized_cell_params), "
    "not tensors; its Tensor[] overloads are no longer supported"
)
_MIOPEN = "a MIOpen kernel: it runs only on a ROCm build of PyTorch"
_STREAM = "takes a CUDA stream object"
_FUNCTIONALIZATION = "a copy for traced graphs with no kernel for the sparse tensors it takes"
_AUTOGRAD_ONLY = "autograd bookkeeping on a tensor that requires grad; it runs no tensor computation"
_FILE = "reads a file from disk; benchmarking file I/O is out of scope"

SKIP_REASONS: dict[str, str] = {
    "quantized_gru": _CELL_PARAMS,
    "quantized_lstm": _CELL_PARAMS,
    "miopen_batch_norm": _MIOPEN,
    "miopen_convolution": _MIOPEN,
    "miopen_convolution_add_relu": _MIOPEN,
    "miopen_convolution_relu": _MIOPEN,
    "miopen_convolution_transpose": _MIOPEN,
    "miopen_ctc_loss": _MIOPEN,
    "miopen_depthwise_convolution": _MIOPEN,
    "miopen_rnn": _MIOPEN,
    "indices_copy": _FUNCTIONALIZATION,
    "values_copy": _FUNCTIONALIZATION,
    "retain_grad": _AUTOGRAD_ONLY,
    "record_stream": _STREAM,
    "from_file": _FILE,
}

_CUDA_ONLY = "a cuDNN or CUDA-only kernel: it has no CPU implementation"
_CPU_ONLY = "an MKL-DNN (oneDNN) or FBGEMM kernel for CPU tensors: it has no GPU implementation"
_SYNC_BATCH_NORM = "a SyncBatchNorm helper with CUDA kernels only: it has no CPU implementation"

# Skipped only on the device kind named: the operator runs elsewhere.
DEVICE_SKIP_REASONS: dict[str, dict[str, str]] = {
    "cpu": {
        "cudnn_affine_grid_generator": _CUDA_ONLY,
        "cudnn_batch_norm": _CUDA_ONLY,
        "cudnn_convolution": _CUDA_ONLY,
        "cudnn_convolution_add_relu": _CUDA_ONLY,
        "cudnn_convolution_relu": _CUDA_ONLY,
        "cudnn_convolution_transpose": _CUDA_ONLY,
        "cudnn_grid_sampler": _CUDA_ONLY,
        "batch_norm_elemt": _SYNC_BATCH_NORM,
        "batch_norm_gather_stats": _SYNC_BATCH_NORM,
        "batch_norm_gather_stats_with_counts": _SYNC_BATCH_NORM,
        "batch_norm_stats": _SYNC_BATCH_NORM,
        "cuda": "copies a tensor to a CUDA device; there is none on a CPU run",
        "pin_memory": "pins host memory for transfers to an accelerator; there is none on a CPU run",
    },
    "gpu": {
        name: _CPU_ONLY
        for name in (
            "mkldnn_adaptive_avg_pool2d",
            "mkldnn_max_pool2d",
            "mkldnn_max_pool3d",
            "fbgemm_linear_fp16_weight",
            "fbgemm_linear_fp16_weight_fp32_activation",
            "fbgemm_linear_int8_weight",
            "fbgemm_linear_int8_weight_fp32_activation",
            "quantized_gru_cell",
            "quantized_lstm_cell",
            "quantized_rnn_relu_cell",
            "quantized_rnn_tanh_cell",
        )
    },
}


# ---------------------------------------------------------------------------------------------------
# Values by argument name, shared by every operator that takes the argument.


def _divisor(extent: int) -> int:
    """2 where it divides ``extent``, else 1: a split or group count that is always valid."""
    return 2 if extent % 2 == 0 else 1


def _rows(c: RuleContext) -> int:
    return c.shape[0]


def _numel(c: RuleContext) -> int:
    return math.prod(c.shape)


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def _index(shape: tuple[int, ...], extent: int) -> TensorSpec:
    """Integer indices in [0, extent): in bounds of the dimension they index."""
    return T(shape, dtype="int64", low=0, high=extent, integral=True)


# Required non-tensor arguments by name.
SCALAR_RULES: dict[str, Callable[[RuleContext], InputValue]] = {
    "dim": lambda c: 0,
    "dim0": lambda c: 0,
    "dim1": lambda c: 1,
    "axis0": lambda c: 0,
    "axis1": lambda c: 1,
    "source": lambda c: 0,
    "destination": lambda c: 1,
    "dimension": lambda c: 0,
    "k": lambda c: 1,
    "n": lambda c: 2,
    "p": lambda c: 0.5,
    "chunks": lambda c: _divisor(_rows(c)),
    "sections": lambda c: 1,
    "split_size": lambda c: max(1, _rows(c) // 2),
    "split_sizes": lambda c: (_rows(c) // 2, _rows(c) - _rows(c) // 2),
    "start": lambda c: 0,
    "length": lambda c: max(1, _rows(c) // 2),
    "index": lambda c: 0,
    "step": lambda c: 1,
    "end": lambda c: float(_numel(c)),
    "steps": lambda c: _numel(c),
    "window_length": lambda c: _numel(c),
    "high": lambda c: 10,
    "num_samples": lambda c: 1,
    "fill_value": lambda c: 1.5,
    "value": lambda c: 1.5,
    "threshold": lambda c: 0.5,
    "min": lambda c: 0.2,
    "max": lambda c: 0.8,
    "maxnorm": lambda c: 1.0,
    "row": lambda c: _rows(c),
    "col": lambda c: c.shape[-1],
    "s": lambda c: 1.5,
    "t": lambda c: 1,
    "train": lambda c: True,
    "training": lambda c: True,
    "reduce": lambda c: "sum",
    "shape": lambda c: (-1,),
    "dims": lambda c: tuple(reversed(range(len(c.shape)))),
    "repeats": lambda c: (2,) + (1,) * (len(c.shape) - 1),
    "shifts": lambda c: (1,),
    "sizes": lambda c: (1, _rows(c)),
    "stride": lambda c: _contiguous_strides(c.shape),
    "physical_layout": lambda c: tuple(range(len(c.shape))),
    "pad": lambda c: (1, 1),
    "blocksize": lambda c: (_divisor(c.shape[0]), _divisor(c.shape[-1])),
    "nonzero_size": lambda c: _rows(c),
}

# Tensor arguments by name whose values must be of a kind: masks are boolean.
TENSOR_RULES: dict[str, Callable[[RuleContext], InputValue]] = {
    "mask": lambda c: T(c.shape, dtype="bool"),
    "condition": lambda c: T(c.shape, dtype="bool"),
}


def _tensor_value(arg: Argument, c: RuleContext, binary: bool) -> InputValue:
    if arg.kind is ArgKind.TENSOR_LIST:
        return tuple(T(c.shape) for _ in range(LIST_LENGTH))
    if arg.name in TENSOR_RULES:
        return TENSOR_RULES[arg.name](c)
    if binary:
        first = next(a.name for a in c.op.arguments if a.kind is ArgKind.TENSOR)
        return T(c.pair[0] if arg.name == first else c.pair[1])
    return T(c.shape)


def _type_default(arg: Argument, c: RuleContext) -> InputValue:
    """The generic value for the argument's type, else None where the schema allows it (``int?``)."""
    try:
        return type_default(arg, c)
    except NoRuleError:
        if arg.nullable:
            return None
        raise


def _value(arg: Argument, c: RuleContext, binary: bool) -> InputValue:
    if arg.is_tensor:
        return _tensor_value(arg, c, binary)
    rule = SCALAR_RULES.get(arg.name)
    return rule(c) if rule is not None else _type_default(arg, c)


# ---------------------------------------------------------------------------------------------------
# Per-operator overrides: values (or extra optional arguments) that must agree with the operator's
# other inputs. Each maps the configuration's context to the arguments it replaces or adds.


def _subject(c: RuleContext) -> str:
    """The operator's first tensor argument: ``input`` for functions, ``self`` for Tensor methods."""
    return next(a.name for a in c.op.arguments if a.is_tensor)


def _subject_is(spec: Callable[[RuleContext], TensorSpec]) -> Override:
    """An override that replaces only the operator's first tensor."""
    return lambda c: {_subject(c): spec(c)}


def _sparse(storage: str, *names: str) -> Override:
    """The named tensors (the first tensor if none) in a sparse storage: CSR, CSC, or COO for
    row_sparse."""
    return lambda c: {name: T(c.shape, storage=storage) for name in names or (_subject(c),)}


def _transposed(c: RuleContext) -> TensorSpec:
    """The right-hand matrix of a product with the input: (columns, rows)."""
    return T(tuple(reversed(c.shape)))


# Operators of a per-tensor quantized tensor (generated as quint8 with scale 0.1, zero point 0).
_QUANTIZED_INPUTS = ("dequantize", "int_repr", "q_scale", "q_zero_point", "qscheme")
# Operators of a per-channel quantized tensor.
_PER_CHANNEL_INPUTS = ("q_per_channel_axis", "q_per_channel_scales", "q_per_channel_zero_points")


def _quantized(c: RuleContext) -> TensorSpec:
    return T(c.shape, dtype="quint8")


def _per_channel(c: RuleContext) -> TensorSpec:
    """A tensor quantized per channel along dimension 0 (a scale and zero point per row)."""
    return T(c.shape, dtype="quint8", storage="per_channel")


def _fused_fake_quant(c: RuleContext) -> dict[str, InputValue]:
    """Per-tensor observer state: one-element flags, range, scale and zero point."""
    flag = T((1,), dtype="int64", low=1, high=2, integral=True)
    return {
        "observer_on": flag,
        "fake_quant_on": flag,
        "running_min": T((1,)),
        "running_max": T((1,)),
        "scale": T((1,)),
        "zero_point": T((1,), dtype="int32", low=0, high=1, integral=True),
        "averaging_const": 0.01,
        "quant_min": 0,
        "quant_max": 255,
        "ch_axis": 0,
    }


def _integer_operands(c: RuleContext) -> dict[str, InputValue]:
    """Bitwise and integer-only operators: integer tensors in [1, 10)."""
    return {"input": T(c.pair[0], dtype="int64"), "other": T(c.pair[1], dtype="int64")}


def _gather_like(name: str) -> Override:
    """``gather``/``scatter``: an index of the input's shape, in bounds along dimension 0."""
    return lambda c: {"dim": 0, name: _index(c.shape, _rows(c))}


def _index_select_like(c: RuleContext) -> dict[str, InputValue]:
    """``index_select``/``index_add``: a vector of row indices, one per source row."""
    return {"dim": 0, "index": _index((_rows(c),), _rows(c))}


def _flat_index(c: RuleContext) -> dict[str, InputValue]:
    """``take``: indices into the flattened input."""
    return {"index": _index((_rows(c),), _numel(c))}


def _last_dim(extent: int) -> Override:
    return lambda c: {"input": T((_rows(c), extent)), "other": T((_rows(c), extent))}


COMBINATION_ELEMENTS = 512
"""Elements ``combinations`` draws pairs from: about 130,000 pairs."""


def _vector(c: RuleContext) -> TensorSpec:
    return T((_rows(c),))


def _diagonal(c: RuleContext) -> TensorSpec:
    """A vector whose diagonal matrix has about as many elements as the configuration's tensor (the
    flattened tensor itself would give a matrix of its square: 4 TB for (1024, 1024))."""
    return T((math.isqrt(_numel(c)),))


def _complex(c: RuleContext) -> TensorSpec:
    return T(c.shape, dtype="complex64")


def _one_element(c: RuleContext) -> TensorSpec:
    return T((1,))


def _even_last_dim(c: RuleContext) -> TensorSpec:
    """Inverse real FFTs output 2 * (n - 1) points along the last axis: n must exceed 1."""
    return T((*c.shape[:-1], c.shape[-1] + 1))


def _block_sparse(compressed: str, plain: str) -> Override:
    """A valid block-compressed index: one 1x1 block per row (or column)."""
    base = _compressed(compressed, plain)
    return lambda c: {**base(c), "values": T((_rows(c), 1, 1))}


def _scalar_tensor(name: str) -> Override:
    return lambda c: {name: T(())}


def _few_vectors(count: int, cap: int) -> Override:
    """Operators whose output grows as a product of their inputs' lengths (meshgrid, cartesian_prod)."""
    return lambda c: {"tensors": tuple(T((min(_rows(c), cap),)) for _ in range(count))}


def _stft(c: RuleContext) -> dict[str, InputValue]:
    n_fft = min(64, _numel(c))
    return {"input": T((_numel(c),)), "n_fft": n_fft, "return_complex": True}


def _istft(c: RuleContext) -> dict[str, InputValue]:
    n_fft = min(64, _numel(c))
    frames = max(2, _numel(c) // (n_fft // 4))
    return {"input": T((n_fft // 2 + 1, frames), dtype="complex64"), "n_fft": n_fft}


def _sparse_coo(c: RuleContext) -> dict[str, InputValue]:
    nnz = _rows(c)
    return {"indices": _index((2, nnz), min(c.shape)), "values": T((nnz,))}


def _compressed(compressed: str, plain: str) -> Override:
    """A valid compressed sparse index: one stored element per row (or column)."""

    def rule(c: RuleContext) -> dict[str, InputValue]:
        rows = _rows(c)
        return {
            compressed: T((rows + 1,), dtype="int64", low=0, high=rows + 1, structure="sorted_unique"),
            plain: _index((rows,), c.shape[-1]),
            "values": T((rows,)),
        }

    return rule


def _segment_reduce(c: RuleContext) -> dict[str, InputValue]:
    rows = _rows(c)
    return {"reduce": "sum", "lengths": T((1,), dtype="int64", low=rows, high=rows + 1, integral=True)}


OVERRIDES: dict[str, Override] = {
    **{
        name: _integer_operands
        for name in (
            "bitwise_and",
            "bitwise_or",
            "bitwise_xor",
            "bitwise_left_shift",
            "bitwise_right_shift",
            "gcd",
            "lcm",
        )  # fmt: skip
    },
    "bitwise_not": lambda c: {"input": T(c.shape, dtype="int64")},
    "gather": _gather_like("index"),
    "scatter": _gather_like("index"),
    "scatter_add": _gather_like("index"),
    "scatter_reduce": _gather_like("index"),
    "take_along_dim": _gather_like("indices"),
    "index_select": _index_select_like,
    "index_add": _index_select_like,
    "index_copy": _index_select_like,
    "index_fill": _index_select_like,
    "index_reduce": lambda c: {**_index_select_like(c), "reduce": "prod"},
    "take": _flat_index,
    "put": lambda c: {"index": _index((_rows(c),), _numel(c)), "source": T((_rows(c),))},
    "index_put": lambda c: {
        "indices": (_index((_rows(c),), _rows(c)),),
        "values": T(c.shape[1:]),
    },
    "masked_fill": _scalar_tensor("value"),
    "fill": _scalar_tensor("value"),
    "diagonal_scatter": lambda c: {"src": T((min(c.shape[:2]),))},
    "select_scatter": lambda c: {"src": T(c.shape[1:])},
    "as_strided_scatter": lambda c: {"src": T(c.shape)},
    "cross": _last_dim(3),
    "linalg_cross": _last_dim(3),
    "bucketize": lambda c: {"boundaries": T((_rows(c),))},
    "histogramdd": lambda c: {"input": T((_rows(c), 2)), "bins": (4, 4)},
    # r=2 combinations of n elements are n(n-1)/2 pairs: a 10,000-vector would give 50 million.
    "combinations": _subject_is(lambda c: T((min(_rows(c), COMBINATION_ELEMENTS),))),
    "vander": lambda c: {"x": _vector(c)},
    "bincount": lambda c: {"input": _index((_rows(c),), 10)},
    "one_hot": lambda c: {"input": _index((_rows(c),), 10)},
    "repeat_interleave": lambda c: {"repeats": T((_rows(c),), dtype="int64", low=1, high=3, integral=True)},
    "cartesian_prod": _few_vectors(2, 256),
    "meshgrid": _few_vectors(2, 256),
    "view_as_complex": lambda c: {"input": T((*c.shape, 2))},
    "view_as_complex_copy": lambda c: {"input": T((*c.shape, 2))},
    "view_as_real": _subject_is(_complex),
    "view_as_real_copy": _subject_is(_complex),
    "imag": _subject_is(_complex),
    # A real tensor's conjugate is itself, and a contiguous tensor is returned as it is: neither runs
    # a kernel. A complex tensor gets its conjugate bit set; a non-contiguous one is copied.
    "conj": _subject_is(_complex),
    "contiguous": _subject_is(lambda c: T(c.shape, storage="sliced")),
    "item": _subject_is(_one_element),
    "is_nonzero": _subject_is(_one_element),
    **{
        name: _subject_is(_even_last_dim)
        for name in ("fft_irfft", "fft_irfft2", "fft_irfftn", "fft_hfft", "fft_hfft2", "fft_hfftn")
    },
    "clamp": lambda c: {"min": 0.2, "max": 0.8},
    "clip": lambda c: {"min": 0.2, "max": 0.8},
    # copy_ broadcasts the source into self: self takes the larger shape of the pair.
    "copy": lambda c: {"self": T(c.pair[1]), "src": T(c.pair[0])},
    "diagflat": _subject_is(_diagonal),
    "dsplit": lambda c: {_subject(c): T((*c.shape, 2))},
    "embedding_renorm": lambda c: {
        "indices": _index((_rows(c),), _rows(c)),
        "max_norm": 1.0,
        "norm_type": 2.0,
    },
    "fbgemm_pack_quantized_matrix": lambda c: {"input": T(c.shape, dtype="int8")},
    "gradient": lambda c: {"dim": 0},
    "glu": lambda c: {"dim": 0},
    "quantile": lambda c: {"q": T((3,))},
    "nanquantile": lambda c: {"q": T((3,))},
    "prelu": lambda c: {"weight": T((1,))},
    "to": lambda c: {"dtype": "float64"},
    "coalesce": _sparse("row_sparse"),
    "is_coalesced": _sparse("row_sparse"),
    "indices": _sparse("row_sparse"),
    "indices_copy": _sparse("row_sparse"),
    "values": _sparse("row_sparse"),
    "values_copy": _sparse("row_sparse"),
    "native_norm": _sparse("row_sparse"),
    "crow_indices": _sparse("csr"),
    "crow_indices_copy": _sparse("csr"),
    "col_indices": _sparse("csr"),
    "col_indices_copy": _sparse("csr"),
    "hspmm": lambda c: {**_sparse("row_sparse", "mat1")(c), "mat2": _transposed(c)},
    **{name: _subject_is(_per_channel) for name in _PER_CHANNEL_INPUTS},
    "empty_quantized": lambda c: {"size": c.shape, "qtensor": _quantized(c)},
    "ccol_indices": _sparse("csc"),
    "ccol_indices_copy": _sparse("csc"),
    "row_indices": _sparse("csc"),
    "row_indices_copy": _sparse("csc"),
    **{name: _subject_is(_quantized) for name in _QUANTIZED_INPUTS},
    "quantized_max_pool1d": lambda c: {"input": _quantized(c), "kernel_size": (1,)},
    "quantized_max_pool2d": lambda c: {"input": T((1, *c.shape), dtype="quint8"), "kernel_size": (1, 1)},
    "quantized_max_pool3d": lambda c: {
        "input": T((1, 1, 1, *c.shape), dtype="quint8"),
        "kernel_size": (1, 1, 1),
    },
    "fused_moving_avg_obs_fake_quant": _fused_fake_quant,
    "sparse_mask": _sparse("row_sparse", "mask"),
    "resize_as_sparse": _sparse("row_sparse", "input", "the_template"),
    "sparse_resize": lambda c: {**_sparse("row_sparse")(c), "sparse_dim": len(c.shape), "dense_dim": 0},
    "sparse_resize_and_clear": lambda c: {
        **_sparse("row_sparse")(c),
        "sparse_dim": len(c.shape),
        "dense_dim": 0,
    },
    "sparse_bsr_tensor": _block_sparse("crow_indices", "col_indices"),
    "sparse_bsc_tensor": _block_sparse("ccol_indices", "row_indices"),
    "sparse_compressed_tensor": lambda c: {
        **_compressed("compressed_indices", "plain_indices")(c),
        "layout": "sparse_csr",
    },
    "expand": lambda c: {"size": (2, *c.shape)},
    "expand_copy": lambda c: {"size": (2, *c.shape)},
    "broadcast_to": lambda c: {"size": (2, *c.shape)},
    "sum_to_size": lambda c: {"size": (1, c.shape[-1])},
    "unflatten": lambda c: {"sizes": (_divisor(_rows(c)), _rows(c) // _divisor(_rows(c)))},
    "tensor_split": lambda c: {"indices": (_rows(c) // 2,)},
    "flip": lambda c: {"dims": (0,)},
    "tile": lambda c: {"dims": (2, 1)},
    "unfold": lambda c: {"size": min(2, _rows(c))},
    "unfold_copy": lambda c: {"size": min(2, _rows(c))},
    "frobenius_norm": lambda c: {"dim": (0,)},
    "logsumexp": lambda c: {"dim": (0,)},
    "special_logsumexp": lambda c: {"dim": (0,)},
    "polygamma": lambda c: {"n": 1},
    "special_polygamma": lambda c: {"n": 1},
    "mvlgamma": lambda c: {"p": 1},
    "special_multigammaln": lambda c: {"p": 1},
    "renorm": lambda c: {"p": 2.0},
    "stft": _stft,
    "istft": _istft,
    "nonzero_static": lambda c: {"size": _rows(c)},
    "segment_reduce": _segment_reduce,
    "sparse_coo_tensor": _sparse_coo,
    "sparse_csr_tensor": _compressed("crow_indices", "col_indices"),
    "sparse_csc_tensor": _compressed("ccol_indices", "row_indices"),
    "quantize_per_tensor": lambda c: {"scale": 0.1, "zero_point": 0, "dtype": "quint8"},
    "quantize_per_tensor_dynamic": lambda c: {"dtype": "quint8"},
    "quantize_per_channel": lambda c: {
        "scales": T((c.shape[1],)),
        "zero_points": T((c.shape[1],), dtype="int64", low=0, high=1, integral=True),
        "axis": 1,
        "dtype": "quint8",
    },
    "fake_quantize_per_tensor_affine": lambda c: {
        "scale": 0.1,
        "zero_point": 0,
        "quant_min": 0,
        "quant_max": 255,
    },
    "fake_quantize_per_channel_affine": lambda c: {
        "scale": T((c.shape[1],)),
        "zero_point": T((c.shape[1],), dtype="int32", low=0, high=1, integral=True),
        "axis": 1,
        "quant_min": 0,
        "quant_max": 255,
    },
    "choose_qparams_optimized": lambda c: {
        "input": T((_numel(c),)),
        "numel": _numel(c),
        "n_bins": 200,
        "ratio": 0.16,
        "bit_width": 8,
    },
}


# ---------------------------------------------------------------------------------------------------
# Hand-written layer rules, sized by the profile's layer dimensions.


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
            rows, columns = config["w_ih"].shape
            config.update(_int8_weights(rows, columns, "_ih"), **_int8_weights(rows, columns, "_hh"))
        return configurations

    return rule


def _stored(rule: LayerRule, storage: str) -> LayerRule:
    """A layer rule with its ``input`` tensor in another storage (MKL-DNN's opaque layout)."""
    return lambda s: [{**config, "input": replace(config["input"], storage=storage)} for config in rule(s)]


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
    return [{"input": T(_images(s, 2)), "num_groups": _divisor(s.channels), "weight": c, "bias": c}]


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
            "group": _divisor(s.channels),
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
    heads = _divisor(s.channels)
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
    w_ih, w_hh, b_ih, b_hh = config["params"]
    h, _ = config["hx"]
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
    return [{"input": T(_images(s, 2)), "groups": _divisor(s.channels)}]


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


# ---------------------------------------------------------------------------------------------------
# Matrix products and linear algebra: square matrices of ``features``, structured where needed (sparse
# products too: their output's non-zeros grow with the product of the operands' extents).

MATRIX_CATEGORIES = frozenset({"gemm", "linalg"})


def _spd(c: RuleContext) -> dict[str, InputValue]:
    """Factorizations of symmetric positive-definite matrices (Cholesky, eigh, LDL)."""
    return {"input": T(c.shape, structure="spd")}


def _square(c: RuleContext, structure: str | None = None) -> TensorSpec:
    return T(c.shape, structure=structure)


def _pivots(c: RuleContext) -> TensorSpec:
    """1-based LU/LDL pivots of the identity permutation: 1, 2, ..., n."""
    n = _rows(c)
    return T((n,), dtype="int32", low=1, high=n + 1, structure="sorted_unique")


_LOWER = "lower_triangular"

SPARSE_PRODUCT_DENSITY = 0.1
"""Fraction of a sparse operand's rows that are non-zero in sparse matrix products."""


def _sparse_square(c: RuleContext) -> TensorSpec:
    return T(c.shape, storage="row_sparse", density=SPARSE_PRODUCT_DENSITY)


MATRIX_OVERRIDES: dict[str, Override] = {
    "cholesky": _spd,
    "linalg_cholesky": _spd,
    "linalg_cholesky_ex": _spd,
    "linalg_eigh": _spd,
    "linalg_eigvalsh": _spd,
    "linalg_ldl_factor": _spd,
    "linalg_ldl_factor_ex": _spd,
    "logdet": _spd,
    "cholesky_inverse": lambda c: {"input": _square(c, _LOWER)},
    "cholesky_solve": lambda c: {"input": _square(c), "input2": _square(c, _LOWER)},
    "linalg_solve": lambda c: {"A": _square(c, "spd"), "B": _square(c)},
    "linalg_solve_ex": lambda c: {"A": _square(c, "spd"), "B": _square(c)},
    "linalg_solve_triangular": lambda c: {"input": _square(c, _LOWER), "B": _square(c), "upper": False},
    "triangular_solve": lambda c: {"input": _square(c), "A": _square(c, _LOWER), "upper": False},
    "linalg_lu_solve": lambda c: {"LU": _square(c, _LOWER), "pivots": _pivots(c), "B": _square(c)},
    "lu_solve": lambda c: {"input": _square(c), "LU_data": _square(c, _LOWER), "LU_pivots": _pivots(c)},
    "lu_unpack": lambda c: {"LU_data": _square(c, _LOWER), "LU_pivots": _pivots(c)},
    "linalg_ldl_solve": lambda c: {"LD": _square(c, _LOWER), "pivots": _pivots(c), "B": _square(c)},
    "linalg_householder_product": lambda c: {"input": _square(c), "tau": _vector(c)},
    "orgqr": lambda c: {"input": _square(c), "input2": _vector(c)},
    "ormqr": lambda c: {"input": _square(c), "input2": _vector(c), "input3": _square(c)},
    "linalg_matrix_norm": lambda c: {"ord": 2.0},
    "linalg_matrix_rank": lambda c: {"tol": 1e-5},
    "linalg_pinv": lambda c: {"rcond": 1e-5},
    "linalg_tensorinv": lambda c: {
        "input": T((_divisor(_rows(c)), _rows(c) // _divisor(_rows(c)), _rows(c)))
    },
    "linalg_tensorsolve": lambda c: {"input": _square(c, "spd"), "other": _vector(c)},
    "linalg_vander": lambda c: {"x": _vector(c)},
    "linalg_multi_dot": lambda c: {"tensors": tuple(_square(c) for _ in range(LIST_LENGTH))},
    "chain_matmul": lambda c: {"matrices": tuple(_square(c) for _ in range(LIST_LENGTH))},
    "bmm": lambda c: {"input": T((2, *c.shape)), "mat2": T((2, *c.shape))},
    "baddbmm": lambda c: {"input": T((2, *c.shape)), "batch1": T((2, *c.shape)), "batch2": T((2, *c.shape))},
    "addbmm": lambda c: {"batch1": T((2, *c.shape)), "batch2": T((2, *c.shape))},
    "addmv": lambda c: {"input": _vector(c), "vec": _vector(c)},
    "mv": lambda c: {"vec": _vector(c)},
    "dot": lambda c: {"input": _vector(c), "tensor": _vector(c)},
    "vdot": lambda c: {"input": _vector(c), "other": _vector(c)},
    "outer": lambda c: {"input": _vector(c), "vec2": _vector(c)},
    "ger": lambda c: {"input": _vector(c), "vec2": _vector(c)},
    "addr": lambda c: {"vec1": _vector(c), "vec2": _vector(c)},
    "kron": lambda c: {"input": T((4, 4)), "other": _square(c)},
    "einsum": lambda c: {"equation": "ij,jk->ik", "tensors": (_square(c), _square(c))},
    "smm": lambda c: {"input": _sparse_square(c), "mat2": _square(c)},
    "sspaddmm": lambda c: {"input": _sparse_square(c), "mat1": _sparse_square(c), "mat2": _square(c)},
}


# ---------------------------------------------------------------------------------------------------
# Derivation: overrides first, then the rules by argument name, then the schema type.


def skip_reason(op: OpInfo, device_kind: str) -> str | None:
    """Why ``op`` cannot be benchmarked on a device of ``device_kind``, or None."""
    return SKIP_REASONS.get(op.name) or DEVICE_SKIP_REASONS.get(device_kind, {}).get(op.name)


def _shapes(op: OpInfo, profile: SizeProfile) -> tuple[tuple[int, ...], ...]:
    if op.category not in MATRIX_CATEGORIES and op.name not in MATRIX_OVERRIDES:
        return profile.shapes_for(op.category)
    if profile.layers is None:
        raise NoRuleError(f"the {profile.name!r} size profile has no matrix size for {op.name}")
    return ((profile.layers.features, profile.layers.features),)


def derive(op: OpInfo, profile: SizeProfile) -> Configurations:
    """One configuration per profile shape, from the schema, the name rules and the operator's overrides.

    Arguments keep the schema's order (the backend passes leading ones by position); overrides may add
    optional arguments, which then follow in schema order too.
    """
    override = OVERRIDES.get(op.name) or MATRIX_OVERRIDES.get(op.name)
    shapes = _shapes(op, profile)
    binary = op.category == "binary_broadcast" and shapes == profile.shapes
    pairs = profile.broadcast_pairs if binary else tuple((s, s) for s in shapes)
    configurations = []
    for shape, pair in zip(shapes, pairs, strict=False):
        context = RuleContext(op=op, shape=shape, pair=pair)
        given = override(context) if override else {}
        derived = {
            arg.name: _value(arg, context, binary)
            for arg in op.arguments
            if arg.required and arg.name not in given
        }
        configurations.append(_in_schema_order(op, {**derived, **given}))
    return configurations


def inputs_for(op: OpInfo, profile: SizeProfile, device_kind: str) -> Configurations:
    """The input configurations to benchmark the PyTorch operator ``op`` with; raises ``NoRuleError``
    with the reason if there are none."""
    reason = skip_reason(op, device_kind)
    if reason:
        raise NoRuleError(reason)
    hand_rule = HAND_RULES.get(op.name)
    if hand_rule is None:
        return derive(op, profile)
    if profile.layers is None:
        raise NoRuleError(f"the {profile.name!r} size profile has no configuration for {op.name}")
    return [_in_schema_order(op, config) for config in hand_rule(profile.layers)]


def _in_schema_order(op: OpInfo, config: dict[str, InputValue]) -> dict[str, InputValue]:
    """A configuration in the schema's argument order (the backend passes leading arguments by
    position); names the schema lacks (a Python wrapper's own) are kept last, by keyword."""
    order = {arg.name: index for index, arg in enumerate(op.arguments)}
    return dict(sorted(config.items(), key=lambda item: order.get(item[0], len(order))))
