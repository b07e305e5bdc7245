"""PyTorch inputs derived from the aten schema: the operator's own override (``OVERRIDES``, keyed by
operator name), else a rule for the argument's name (``TENSOR_RULES``, ``SCALAR_RULES``), else its
schema type. Optional arguments keep their defaults; matrix products and linear algebra use square
matrices of ``profile.layers.features`` (``MATRIX_OVERRIDES``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from opperf.operators.info import ArgKind, Argument, OpInfo
from opperf.operators.rules.generic import (
    LIST_LENGTH,
    NoRuleError,
    RuleContext,
    derive_configurations,
    type_default,
)
from opperf.operators.rules.profiles import SizeProfile
from opperf.results.measurement import InputValue, Storage, Structure, TensorSpec

Configurations = list[dict[str, InputValue]]
Override = Callable[[RuleContext], dict[str, InputValue]]
T = TensorSpec


# ---------------------------------------------------------------------------------------------------
# Values by argument name, shared by every operator that takes the argument.


def divisor(extent: int) -> int:
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
    "chunks": lambda c: divisor(_rows(c)),
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
    "blocksize": lambda c: (divisor(c.shape[0]), divisor(c.shape[-1])),
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


def _sparse(storage: Storage, *names: str) -> Override:
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


QUADRATIC_EXTENT = 1024
"""The extent an operator whose output is quadratic in it gets: a (1024, 1024) float32 output, 4 MiB,
like the standard inputs (10,000 would make it 381 MiB)."""


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
    # Creation operators sized by an extent, not a tensor: an n x n matrix, n values.
    "eye": lambda c: {"n": math.isqrt(_numel(c))},
    **{name: (lambda c: {"n": _numel(c)}) for name in ("randperm", "fft_fftfreq", "fft_rfftfreq")},
    "cross": _last_dim(3),
    "linalg_cross": _last_dim(3),
    "bucketize": lambda c: {"boundaries": T((_rows(c),))},
    "histogramdd": lambda c: {"input": T((_rows(c), 2)), "bins": (4, 4)},
    # r=2 combinations of n elements are n(n-1)/2 pairs: a 10,000-vector would give 50 million.
    "combinations": _subject_is(lambda c: T((min(_rows(c), COMBINATION_ELEMENTS),))),
    "vander": lambda c: {"x": T((min(_rows(c), QUADRATIC_EXTENT),))},
    # Outputs quadratic in an extent of the input: that extent capped so the output stays 4 MiB.
    "cdist": lambda c: {"x1": T((QUADRATIC_EXTENT, 64)), "x2": T((QUADRATIC_EXTENT, 64))},
    "corrcoef": lambda c: {"input": T((QUADRATIC_EXTENT, 256))},
    "cov": lambda c: {"input": T((QUADRATIC_EXTENT, 256))},
    "diag_embed": lambda c: {"input": T((64, 256))},
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
    "unflatten": lambda c: {"sizes": (divisor(_rows(c)), _rows(c) // divisor(_rows(c)))},
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
        "scales": T((c.shape[-1],)),
        "zero_points": T((c.shape[-1],), dtype="int64", low=0, high=1, integral=True),
        "axis": len(c.shape) - 1,
        "dtype": "quint8",
    },
    "fake_quantize_per_tensor_affine": lambda c: {
        "scale": 0.1,
        "zero_point": 0,
        "quant_min": 0,
        "quant_max": 255,
    },
    "fake_quantize_per_channel_affine": lambda c: {
        "scale": T((c.shape[-1],)),
        "zero_point": T((c.shape[-1],), dtype="int32", low=0, high=1, integral=True),
        "axis": len(c.shape) - 1,
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
# Matrix products and linear algebra: square matrices of ``features``, structured where needed (sparse
# products too: their output's non-zeros grow with the product of the operands' extents).

MATRIX_CATEGORIES = frozenset({"gemm", "linalg"})


def _spd(c: RuleContext) -> dict[str, InputValue]:
    """Factorizations of symmetric positive-definite matrices (Cholesky, eigh, LDL)."""
    return {"input": T(c.shape, structure="spd")}


def _square(c: RuleContext, structure: Structure | None = None) -> TensorSpec:
    return T(c.shape, structure=structure)


def _pivots(c: RuleContext) -> TensorSpec:
    """1-based LU/LDL pivots of the identity permutation: 1, 2, ..., n."""
    n = _rows(c)
    return T((n,), dtype="int32", low=1, high=n + 1, structure="sorted_unique")


_LOWER: Structure = "lower_triangular"

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
    "linalg_tensorinv": lambda c: {"input": T((divisor(_rows(c)), _rows(c) // divisor(_rows(c)), _rows(c)))},
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


def _shapes(op: OpInfo, profile: SizeProfile) -> tuple[tuple[int, ...], ...]:
    if op.category not in MATRIX_CATEGORIES and op.name not in MATRIX_OVERRIDES:
        return profile.shapes_for(op.category)
    if profile.layers is None:
        raise NoRuleError(f"the {profile.name!r} size profile has no matrix size for {op.name}")
    return ((profile.layers.features, profile.layers.features),)


def derive(op: OpInfo, profile: SizeProfile) -> Configurations:
    """One configuration per profile shape, from the schema, the name rules and the operator's overrides
    (``generic.derive_configurations``), in schema order."""
    override = OVERRIDES.get(op.name) or MATRIX_OVERRIDES.get(op.name)
    return derive_configurations(op, profile, _shapes(op, profile), override, _value)
