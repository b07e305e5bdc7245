"""MXNet's operator categories as data: each is a named predicate over ``OpInfo``; the first match wins.

Signature-based predicates cover the large families (unary, broadcast, reduction, ...); neural-network
operators, whose signatures share nothing, are named outright.
"""

from __future__ import annotations

from collections.abc import Callable

from opperf.operators.info import ArgKind, Category, OpInfo


def _named(*names: str) -> Callable[[OpInfo], bool]:
    wanted = frozenset(names)
    return lambda op: bool(wanted & set(op.all_names))


def _prefixed(*prefixes: str) -> Callable[[OpInfo], bool]:
    return lambda op: op.name.startswith(prefixes)


def _tensor_names(op: OpInfo) -> tuple[str, ...]:
    return tuple(a.name for a in op.tensor_arguments)


def _required_scalars(op: OpInfo) -> tuple[str, ...]:
    return tuple(a.name for a in op.arguments if a.required and not a.is_tensor)


def _is_binary(prefix: str) -> Callable[[OpInfo], bool]:
    return lambda op: op.name.startswith(prefix) and _tensor_names(op) == ("lhs", "rhs")


def _is_reduction(op: OpInfo) -> bool:
    names = {a.name for a in op.arguments}
    return _tensor_names(op) == ("data",) and {"axis", "keepdims"} <= names


def _is_scalar_op(op: OpInfo) -> bool:
    return _tensor_names(op) == ("data",) and op.argument("scalar") is not None


def _is_unary(op: OpInfo) -> bool:
    tensors = op.tensor_arguments
    return (
        len(tensors) == 1
        and tensors[0].kind is ArgKind.TENSOR
        and not _required_scalars(op)
        and not op.name.startswith("_")
    )


CATEGORIES: tuple[Category, ...] = (
    Category("numpy", "mx.np / mx.npx operators", _prefixed("_np_", "_npi_", "_npx_")),
    Category(
        "random_sampling",
        "random number generators and samplers",
        _prefixed("_random_", "_sample_", "random_", "sample_"),
    ),
    Category(
        "optimizer",
        "fused optimizer updates",
        lambda op: "_update" in op.name or op.name.startswith(("_multi_", "multi_", "_mp_", "mp_")),
    ),
    Category("convolution", "convolutions", _named("Convolution", "_contrib_DeformableConvolution")),
    Category("transpose_convolution", "transposed convolutions", _named("Deconvolution")),
    Category(
        "pooling",
        "pooling",
        _named("Pooling", "ROIPooling", "_contrib_AdaptiveAvgPooling2D", "_contrib_ROIAlign"),
    ),
    Category("rnn", "fused recurrent layers", _named("RNN")),
    Category(
        "activation",
        "activations and softmax",
        _named(
            "Activation",
            "LeakyReLU",
            "softmax",
            "softmin",
            "log_softmax",
            "SoftmaxActivation",
            "hard_sigmoid",
            "relu",
            "sigmoid",
        ),
    ),
    Category(
        "loss",
        "losses and output layers",
        _named(
            "CTCLoss",
            "softmax_cross_entropy",
            "SoftmaxOutput",
            "LinearRegressionOutput",
            "LogisticRegressionOutput",
            "MAERegressionOutput",
            "SVMOutput",
            "MakeLoss",
            "make_loss",
        ),
    ),
    Category(
        "nn_basic",
        "layers: dense, normalisation, embedding, dropout, ...",
        _named(
            "FullyConnected",
            "Dropout",
            "BatchNorm",
            "BatchNorm_v1",
            "LayerNorm",
            "GroupNorm",
            "InstanceNorm",
            "L2Normalization",
            "Embedding",
            "LRN",
            "UpSampling",
            "SpatialTransformer",
            "GridGenerator",
            "BilinearSampler",
            "Correlation",
            "im2col",
            "col2im",
            "IdentityAttachKLSparseReg",
            "SequenceLast",
            "SequenceMask",
            "SequenceReverse",
            "Flatten",
            "moments",
        ),
    ),
    Category("binary_broadcast", "broadcasting binary operators", _is_binary("broadcast_")),
    Category("binary_elemwise", "element-wise binary operators", _is_binary("elemwise_")),
    Category(
        "gemm",
        "matrix products",
        _named("dot", "batch_dot", "khatri_rao", "_linalg_gemm", "_linalg_gemm2"),
    ),
    Category("linalg", "linear algebra", _prefixed("_linalg_")),
    Category(
        "sorting_searching",
        "sorting and searching",
        _named("sort", "argsort", "topk", "argmax", "argmin", "argmax_channel"),
    ),
    Category("reduction", "reductions over axes", _is_reduction),
    Category(
        "indexing",
        "indexing and gathering",
        _named(
            "take",
            "pick",
            "gather_nd",
            "scatter_nd",
            "one_hot",
            "slice",
            "slice_axis",
            "slice_like",
            "where",
            "batch_take",
            "ravel_multi_index",
            "unravel_index",
            "choose_element_0index",
            "fill_element_0index",
            "_contrib_index_copy",
            "_contrib_index_array",
            "_contrib_boolean_mask",
        ),
    ),
    Category(
        "rearrange",
        "transposes and reorderings",
        _named("transpose", "SwapAxis", "reverse", "depth_to_space", "space_to_depth"),
    ),
    Category(
        "join_split",
        "concatenation and splitting",
        _named("Concat", "stack", "SliceChannel", "_split_v2", "add_n"),
    ),
    Category(
        "shape",
        "reshaping",
        _named(
            "Reshape",
            "reshape_like",
            "squeeze",
            "expand_dims",
            "shape_array",
            "size_array",
            "Cast",
            "amp_cast",
            "amp_multicast",
        ),
    ),
    Category(
        "expanding",
        "broadcasting, tiling and padding",
        _named("broadcast_to", "broadcast_axis", "broadcast_like", "tile", "repeat", "Pad"),
    ),
    Category(
        "rounding",
        "rounding",
        _named("round", "rint", "fix", "floor", "ceil", "trunc"),
    ),
    Category("unary", "element-wise unary operators", _is_unary),
    Category("scalar", "tensor-scalar operators", _is_scalar_op),
    Category("contrib", "mx.nd.contrib operators", _prefixed("_contrib_")),
    Category("image", "mx.nd.image operators", _prefixed("_image_")),
    Category("sparse", "sparse-storage operators", _prefixed("_sparse_")),
    Category("internal", "mx.nd._internal operators", _prefixed("_")),
    Category("misc", "everything else", lambda op: True),
)

CATEGORY_NAMES: tuple[str, ...] = tuple(c.name for c in CATEGORIES)


def categorize(op: OpInfo) -> str:
    """The first category whose predicate accepts the operator."""
    return next(c.name for c in CATEGORIES if c.matches(op))
