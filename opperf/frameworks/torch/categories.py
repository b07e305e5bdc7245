"""PyTorch's operator categories as data: a named predicate over ``OpInfo`` each; the first match wins.

The names are MXNet's where the meaning is the same (``unary``, ``binary_broadcast``, ``reduction``,
``pooling``, ...), so one ``--categories`` value selects the same kind of operator in either framework.
PyTorch adds ``creation`` (tensors from sizes or other tensors' shapes), ``normalization`` and ``fft``.
Families that share a signature are recognised by it; layers, whose signatures share nothing, are named.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from opperf.operators.info import ArgKind, Argument, Category, OpInfo


def _named(*names: str) -> Callable[[OpInfo], bool]:
    wanted = frozenset(names)
    return lambda op: op.name in wanted


def _containing(*parts: str) -> Callable[[OpInfo], bool]:
    """Operator families named consistently: every ``*pool*`` is pooling, every ``*lstm*`` recurrent."""
    return lambda op: any(part in op.name for part in parts)


def _tensor_names(op: OpInfo) -> tuple[str, ...]:
    return tuple(a.name for a in op.arguments if a.kind is ArgKind.TENSOR and not a.nullable)


def _required_scalars(op: OpInfo) -> tuple[str, ...]:
    return tuple(a.name for a in op.arguments if a.required and not a.is_tensor)


def _takes_generator(op: OpInfo) -> bool:
    return any(a.type_string.startswith("Generator") for a in op.arguments)


def _is_creation(op: OpInfo) -> bool:
    """Tensors made from sizes or values alone, or shaped like another tensor (``zeros_like``)."""
    return not op.tensor_arguments or op.name.endswith("_like") or op.name.startswith("new_")


def _is_binary(op: OpInfo) -> bool:
    return len(_tensor_names(op)) == 2 and not _required_scalars(op)


def _is_reduction(op: OpInfo) -> bool:
    return len(_tensor_names(op)) == 1 and op.argument("keepdim") is not None


def _is_unary(op: OpInfo) -> bool:
    return len(_tensor_names(op)) == 1 and len(op.tensor_arguments) == 1 and not _required_scalars(op)


def _is_scalar_op(op: OpInfo) -> bool:
    """One tensor and required numbers: ``clamp_min(input, min)``, ``polygamma(n, input)``."""
    required = [cast(Argument, op.argument(name)) for name in _required_scalars(op)]
    numeric = all(a.kind in (ArgKind.INT, ArgKind.FLOAT) for a in required)
    return len(op.tensor_arguments) == 1 and bool(required) and numeric


_ACTIVATIONS = (
    "relu", "relu6", "gelu", "silu", "elu", "selu", "celu", "leaky_relu", "prelu", "rrelu", "glu",
    "hardtanh", "hardswish", "hardsigmoid", "hardshrink", "softshrink", "softplus", "mish", "sigmoid",
    "tanh", "log_sigmoid", "softmax", "log_softmax", "threshold", "special_softmax",
    "special_log_softmax", "special_expit",
)  # fmt: skip
_LOSSES = (
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "ctc_loss",
    "hinge_embedding_loss", "huber_loss", "kl_div", "l1_loss", "margin_ranking_loss", "mse_loss",
    "multi_margin_loss", "multilabel_margin_loss", "nll_loss", "poisson_nll_loss", "smooth_l1_loss",
    "soft_margin_loss", "triplet_margin_loss", "cross_entropy_loss",
)  # fmt: skip
_NORMALIZATION = (
    "batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "native_batch_norm",
    "native_layer_norm", "native_group_norm", "batch_norm_elemt", "batch_norm_gather_stats",
    "batch_norm_gather_stats_with_counts", "batch_norm_stats", "batch_norm_update_stats",
    "cudnn_batch_norm", "miopen_batch_norm", "quantized_batch_norm", "norm_except_dim",
)  # fmt: skip
_NN_BASIC = (
    "linear", "bilinear", "embedding", "embedding_bag", "dropout", "alpha_dropout", "feature_dropout",
    "feature_alpha_dropout", "native_dropout", "scaled_dot_product_attention", "cosine_similarity",
    "pairwise_distance", "pdist", "cdist", "im2col", "col2im", "affine_grid_generator", "grid_sampler",
    "grid_sampler_2d", "grid_sampler_3d", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
    "native_channel_shuffle", "cudnn_affine_grid_generator", "cudnn_grid_sampler", "one_hot",
)  # fmt: skip
_GEMM = (
    "mm", "bmm", "matmul", "addmm", "addbmm", "baddbmm", "addmv", "mv", "dot", "vdot", "inner",
    "outer", "ger", "addr", "einsum", "tensordot", "kron", "chain_matmul", "linalg_multi_dot",
    "linalg_matmul", "linalg_vecdot",
)  # fmt: skip
_LINALG = (
    "cholesky", "cholesky_inverse", "cholesky_solve", "det", "logdet", "slogdet", "inverse",
    "pinverse", "qr", "svd", "lu_solve", "lu_unpack", "triangular_solve", "ormqr", "orgqr", "geqrf",
    "matrix_exp", "matrix_power", "trace", "frobenius_norm", "nuclear_norm",
)  # fmt: skip
_SORTING = (
    "sort", "argsort", "msort", "topk", "kthvalue", "argmax", "argmin", "searchsorted", "bucketize",
    "unique_consecutive", "isin",
)  # fmt: skip
_INDEXING = (
    "gather", "scatter", "scatter_add", "scatter_reduce", "index", "index_add", "index_copy",
    "index_fill", "index_put", "index_reduce", "index_select", "take", "take_along_dim",
    "masked_fill", "masked_scatter", "masked_select", "where", "nonzero", "nonzero_static",
    "argwhere", "narrow", "narrow_copy", "select", "select_copy", "select_scatter", "slice_copy",
    "slice_scatter", "slice_inverse", "diagonal", "diagonal_copy", "diagonal_scatter", "put",
    "as_strided_scatter", "embedding_renorm",
)  # fmt: skip
_REARRANGE = (
    "transpose", "transpose_copy", "permute", "permute_copy", "t", "t_copy", "flip", "fliplr",
    "flipud", "roll", "rot90", "movedim", "moveaxis", "swapaxes", "swapdims", "adjoint",
)  # fmt: skip
_JOIN_SPLIT = (
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "row_stack",
    "column_stack", "split", "split_copy", "split_with_sizes", "split_with_sizes_copy",
    "tensor_split", "chunk", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes", "unbind",
    "unbind_copy", "hsplit", "vsplit", "dsplit", "block_diag", "cartesian_prod", "meshgrid",
    "broadcast_tensors", "combinations",
)  # fmt: skip
_SHAPE = (
    "reshape", "reshape_as", "view", "view_as", "view_copy", "flatten", "unflatten", "squeeze",
    "squeeze_copy", "unsqueeze", "unsqueeze_copy", "ravel", "contiguous", "as_strided",
    "as_strided_copy", "atleast_1d", "atleast_2d", "atleast_3d", "resize", "resize_as", "unfold",
    "unfold_copy", "alias_copy", "detach", "detach_copy", "clone", "to", "type_as", "view_as_real",
    "view_as_real_copy", "view_as_complex", "view_as_complex_copy",
)  # fmt: skip
_EXPANDING = (
    "expand", "expand_as", "expand_copy", "broadcast_to", "repeat", "repeat_interleave", "tile",
    "pad", "constant_pad_nd", "sum_to_size",
)  # fmt: skip
_SPECTRAL = ("fft_", "stft", "istft")
_TRANSPOSED = ("conv_transpose", "convolution_transpose")
_ROUNDING = ("round", "floor", "ceil", "trunc", "fix", "frac", "special_round")
_REDUCTIONS = (
    "sum", "mean", "prod", "std", "var", "std_mean", "var_mean", "amax", "amin", "aminmax", "max",
    "min", "median", "nanmedian", "nansum", "nanmean", "mode", "norm", "all", "any", "count_nonzero",
    "logsumexp", "special_logsumexp",
)  # fmt: skip
_SCANS = ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "cumulative_trapezoid")
_SPARSE = (
    "coalesce", "is_coalesced", "indices", "values", "crow_indices", "col_indices", "ccol_indices",
    "row_indices", "to_dense", "to_sparse", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr",
    "to_sparse_bsc", "sparse_mask", "sparse_dim", "dense_dim", "sparse_resize",
    "sparse_resize_and_clear", "resize_as_sparse", "hspmm", "smm", "sspaddmm",
)  # fmt: skip

CATEGORIES: tuple[Category, ...] = (
    Category("fft", "spectral transforms (torch.fft, stft)", lambda op: op.name.startswith(_SPECTRAL)),
    Category("transpose_convolution", "transposed convolutions", _containing(*_TRANSPOSED)),
    Category("convolution", "convolutions", _containing("conv")),
    Category("pooling", "pooling and unpooling", _containing("pool")),
    Category("rnn", "recurrent layers and cells", _containing("lstm", "gru", "rnn")),
    Category("normalization", "batch, layer, group, instance and RMS normalisation", _named(*_NORMALIZATION)),
    Category("activation", "activations and softmax", _named(*_ACTIVATIONS)),
    Category("loss", "losses", _named(*_LOSSES)),
    Category("nn_basic", "layers: linear, embedding, dropout, attention, distances, ...", _named(*_NN_BASIC)),
    Category("sparse", "sparse tensors", lambda op: op.name in _SPARSE or "sparse" in op.name),
    Category(
        "random_sampling",
        "random number generators and samplers",
        lambda op: _takes_generator(op)
        or (op.name in ("rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm")),
    ),
    Category("gemm", "matrix products", _named(*_GEMM)),
    Category("linalg", "linear algebra", lambda op: op.name.startswith("linalg_") or op.name in _LINALG),
    Category("sorting_searching", "sorting and searching", _named(*_SORTING)),
    Category("indexing", "indexing, gathering and scattering", _named(*_INDEXING)),
    Category("rearrange", "transposes and reorderings", _named(*_REARRANGE)),
    Category("join_split", "concatenation and splitting", _named(*_JOIN_SPLIT)),
    Category("shape", "reshaping, views and copies", _named(*_SHAPE)),
    Category("expanding", "broadcasting, tiling and padding", _named(*_EXPANDING)),
    Category("rounding", "rounding", _named(*_ROUNDING)),
    Category(
        "reduction",
        "reductions and scans over axes",
        lambda op: op.name in _REDUCTIONS or op.name in _SCANS or _is_reduction(op),
    ),
    Category("creation", "tensors from sizes, values or another tensor's shape", _is_creation),
    Category("binary_broadcast", "broadcasting binary operators", _is_binary),
    Category("unary", "element-wise unary operators", _is_unary),
    Category("scalar", "tensor-scalar operators", _is_scalar_op),
    Category("misc", "everything else", lambda op: True),
)

CATEGORY_NAMES: tuple[str, ...] = tuple(c.name for c in CATEGORIES)


def categorize(op: OpInfo) -> str:
    """The first category whose predicate accepts the operator."""
    return next(c.name for c in CATEGORIES if c.matches(op))
