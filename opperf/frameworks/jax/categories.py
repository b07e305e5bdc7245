"""JAX's operator categories as data: a named predicate over ``OpInfo`` each; the first match wins.

The names are MXNet's and PyTorch's where the meaning is the same (``unary``, ``binary_broadcast``,
``reduction``, ...), so one ``--categories`` value selects the same kind of operator in every
framework. Operators are matched by their name in their namespace (``lax.exp`` as ``exp``); JAX adds
``control_flow`` (``lax.scan``, ``lax.cond``) and ``collective`` (``lax.psum``).
"""

from __future__ import annotations

from collections.abc import Callable

from opperf.operators.info import ArgKind, Category, OpInfo


def base_name(op: OpInfo) -> str:
    """The operator's name in its namespace: ``exp`` for ``lax.exp``."""
    return op.name.rpartition(".")[2]


def _named(*names: str) -> Callable[[OpInfo], bool]:
    wanted = frozenset(names)
    return lambda op: base_name(op) in wanted


def _containing(*parts: str) -> Callable[[OpInfo], bool]:
    return lambda op: any(part in base_name(op) for part in parts)


def _required_arrays(op: OpInfo) -> tuple[str, ...]:
    return tuple(a.name for a in op.arguments if a.kind is ArgKind.TENSOR and a.required)


def _required_others(op: OpInfo) -> tuple[str, ...]:
    return tuple(a.name for a in op.arguments if a.required and not a.is_tensor)


def _is_binary(op: OpInfo) -> bool:
    return len(_required_arrays(op)) == 2 and not _required_others(op) and len(op.tensor_arguments) <= 3


def _is_unary(op: OpInfo) -> bool:
    return len(_required_arrays(op)) == 1 and not _required_others(op)


def _is_reduction(op: OpInfo) -> bool:
    return len(_required_arrays(op)) == 1 and op.argument("keepdims") is not None


def _is_creation(op: OpInfo) -> bool:
    return not op.tensor_arguments or base_name(op).endswith("_like")


_COLLECTIVES = (
    "psum", "pmean", "pmax", "pmin", "ppermute", "pshuffle", "pswapaxes", "all_gather", "all_to_all",
    "axis_index", "psum_scatter", "pbroadcast", "pdot",
)  # fmt: skip
_CONTROL_FLOW = (
    "scan", "cond", "switch", "while_loop", "fori_loop", "map", "associative_scan", "select_n",
    "stop_gradient", "optimization_barrier", "piecewise", "apply_along_axis", "apply_over_axes",
)  # fmt: skip
_ACTIVATIONS = (
    "relu", "relu6", "gelu", "silu", "swish", "elu", "selu", "celu", "leaky_relu", "glu", "hard_tanh",
    "hard_swish", "hard_silu", "hard_sigmoid", "soft_sign", "softplus", "sparse_plus", "sparse_sigmoid",
    "mish", "sigmoid", "log_sigmoid", "softmax", "log_softmax", "logsumexp", "squareplus", "standardize",
    "one_hot", "expit", "logit", "tanh", "logistic",
)  # fmt: skip
_GEMM = (
    "matmul", "dot", "vdot", "vecdot", "inner", "outer", "einsum", "tensordot", "kron", "dot_general",
    "batch_matmul", "matvec", "vecmat", "scaled_dot", "scaled_matmul", "ragged_dot", "xeinsum",
)  # fmt: skip
_LINALG = ("trace", "cholesky", "triangular_solve", "tridiagonal_solve", "linalg", "dot_product_attention")
_SORTING = (
    "sort", "argsort", "lexsort", "sort_complex", "partition", "argpartition", "top_k", "argmax",
    "argmin", "nanargmax", "nanargmin", "searchsorted", "digitize", "isin", "in1d", "unique",
    "sort_key_val", "argwhere", "nonzero", "flatnonzero", "intersect1d", "setdiff1d", "setxor1d",
    "union1d", "bincount", "histogram", "histogram2d", "histogramdd", "histogram_bin_edges",
    "unique_all", "unique_counts", "unique_inverse", "unique_values", "count_nonzero", "extract",
)  # fmt: skip
_INDEXING = (
    "take", "take_along_axis", "put", "place", "choose", "compress", "select", "where", "gather",
    "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max", "scatter_apply",
    "dynamic_slice", "dynamic_slice_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim",
    "dynamic_index_in_dim", "dynamic_update_index_in_dim", "index_in_dim", "slice", "slice_in_dim",
    "diagonal", "diag", "diag_indices_from", "tril_indices_from", "triu_indices_from", "fill_diagonal",
    "ravel_multi_index", "unravel_index", "indices", "ix_", "diag_indices", "tril_indices",
    "triu_indices", "mask_indices", "nonzero", "clip", "clamp",
)  # fmt: skip
_REARRANGE = (
    "transpose", "permute_dims", "matrix_transpose", "swapaxes", "moveaxis", "rollaxis", "flip",
    "fliplr", "flipud", "roll", "rot90", "rev",
)  # fmt: skip
_JOIN_SPLIT = (
    "concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack",
    "split", "array_split", "hsplit", "vsplit", "dsplit", "unstack", "block", "append", "insert",
    "delete", "meshgrid", "broadcast_arrays", "trim_zeros",
)  # fmt: skip
_SHAPE = (
    "reshape", "ravel", "squeeze", "expand_dims", "atleast_1d", "atleast_2d", "atleast_3d", "asarray",
    "array", "copy", "astype", "convert_element_type", "bitcast_convert_type", "reduce_precision",
    "real", "imag", "conj", "conjugate", "view", "collapse", "resize", "reshape",
)  # fmt: skip
_EXPANDING = (
    "broadcast_to", "broadcast", "broadcast_in_dim", "broadcast_to_rank", "repeat", "tile", "pad",
)  # fmt: skip
_ROUNDING = ("round", "around", "round_", "floor", "ceil", "trunc", "fix", "rint")
_SCANS = (
    "cumsum",
    "cumprod",
    "cummax",
    "cummin",
    "cumlogsumexp",
    "cumulative_sum",
    "cumulative_prod",
    "nancumsum",
    "nancumprod",
    "cumproduct",
    "diff",
    "ediff1d",
    "gradient",
    "trapezoid",
    "reduce",
)
_RANDOM = ("rng_uniform", "rng_bit_generator")

CATEGORIES: tuple[Category, ...] = (
    Category("collective", "collectives over a named mapped axis (pmap, shard_map)", _named(*_COLLECTIVES)),
    Category("control_flow", "loops, branches and function application", _named(*_CONTROL_FLOW)),
    Category("fft", "spectral transforms", _containing("fft")),
    Category("convolution", "convolutions and correlations", _containing("conv", "correlate")),
    Category("pooling", "windowed reductions", _containing("reduce_window", "_window", "pool")),
    Category("activation", "activations and softmax", _named(*_ACTIVATIONS)),
    Category("random_sampling", "random number generators", _named(*_RANDOM)),
    Category("gemm", "matrix products", _named(*_GEMM)),
    Category("linalg", "linear algebra", _containing(*_LINALG)),
    Category("sorting_searching", "sorting, searching and counting", _named(*_SORTING)),
    Category("indexing", "indexing, gathering and scattering", _named(*_INDEXING)),
    Category("rearrange", "transposes and reorderings", _named(*_REARRANGE)),
    Category("join_split", "concatenation and splitting", _named(*_JOIN_SPLIT)),
    Category("shape", "reshaping, views, conversions and copies", _named(*_SHAPE)),
    Category("expanding", "broadcasting, tiling and padding", _named(*_EXPANDING)),
    Category("rounding", "rounding", _named(*_ROUNDING)),
    Category(
        "reduction", "reductions and scans over axes", lambda op: base_name(op) in _SCANS or _is_reduction(op)
    ),
    Category("creation", "arrays from sizes, values or another array's shape", _is_creation),
    Category("binary_broadcast", "broadcasting binary operators", _is_binary),
    Category("unary", "element-wise unary operators", _is_unary),
    Category("misc", "everything else", lambda op: True),
)

CATEGORY_NAMES: tuple[str, ...] = tuple(c.name for c in CATEGORIES)


def categorize(op: OpInfo) -> str:
    """The first category whose predicate accepts the operator."""
    return next(c.name for c in CATEGORIES if c.matches(op))
