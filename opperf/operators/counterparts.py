"""Names a user brings from the other framework, as data: what a selection error offers instead.

``conv2d`` is torch's name for what MXNet calls ``Convolution``; ``torch.nn.functional.cross_entropy``
is no one operator but a Python function calling two (``log_softmax``, then ``nll_loss``). Both
tables hold registry operator names (``tests/test_counterparts.py`` checks them against both
registries, and the functions against what they really call); no framework is imported here.
"""

from __future__ import annotations

COUNTERPARTS: tuple[tuple[str, str], ...] = (
    ("conv1d", "Convolution"), ("conv2d", "Convolution"), ("conv3d", "Convolution"),
    ("conv_transpose1d", "Deconvolution"), ("conv_transpose2d", "Deconvolution"),
    ("conv_transpose3d", "Deconvolution"),
    ("max_pool1d", "Pooling"), ("max_pool2d", "Pooling"), ("max_pool3d", "Pooling"),
    ("avg_pool1d", "Pooling"), ("avg_pool2d", "Pooling"), ("avg_pool3d", "Pooling"),
    ("adaptive_avg_pool2d", "_contrib_AdaptiveAvgPooling2D"),
    ("linear", "FullyConnected"), ("addmm", "FullyConnected"),
    ("batch_norm", "BatchNorm"), ("layer_norm", "LayerNorm"), ("group_norm", "GroupNorm"),
    ("instance_norm", "InstanceNorm"), ("embedding", "Embedding"), ("dropout", "Dropout"),
    ("leaky_relu", "LeakyReLU"), ("elu", "LeakyReLU"), ("selu", "LeakyReLU"), ("gelu", "LeakyReLU"),
    ("prelu", "LeakyReLU"), ("hardsigmoid", "hard_sigmoid"),
    ("lstm", "RNN"), ("gru", "RNN"), ("rnn_tanh", "RNN"), ("rnn_relu", "RNN"),
    ("mm", "dot"), ("matmul", "dot"), ("bmm", "batch_dot"), ("cat", "concat"), ("ctc_loss", "CTCLoss"),
    ("pixel_shuffle", "depth_to_space"), ("pixel_unshuffle", "space_to_depth"),
    ("gather", "pick"), ("index_select", "take"), ("clamp", "clip"), ("permute", "transpose"),
    ("flip", "reverse"), ("repeat_interleave", "repeat"), ("expand", "broadcast_to"),
    ("unsqueeze", "expand_dims"), ("chunk", "split"), ("narrow", "slice_axis"),
    ("multinomial", "_sample_multinomial"), ("normal", "_random_normal"),
    ("uniform", "_random_uniform"), ("randint", "_random_randint"),
)  # fmt: skip
"""(torch operator, MXNet operator) pairs doing one job under different names."""

FRAMEWORK_COLUMN = {"torch": 0, "mxnet": 1}
DISPLAY = {"torch": "torch", "mxnet": "MXNet"}

SEVERAL_OPERATORS: dict[str, dict[str, tuple[str, ...]]] = {
    "torch": {
        "cross_entropy": ("log_softmax", "nll_loss"),
        "softmin": ("neg", "softmax"),
        "normalize": ("linalg_vector_norm", "clamp_min", "div"),
        "local_response_norm": ("constant_pad_nd", "avg_pool3d", "mul", "add", "pow", "div"),
    },
    "mxnet": {},
}
"""Per framework, public functions that are no one registry operator, and the operators they call."""


def counterparts(framework: str, name: str) -> tuple[str, ...]:
    """``framework``'s operators doing the job the other framework calls ``name``, in table order."""
    mine = FRAMEWORK_COLUMN[framework]
    return tuple(dict.fromkeys(pair[mine] for pair in COUNTERPARTS if pair[1 - mine] == name))


def several_operators(framework: str, name: str) -> tuple[str, ...]:
    """The operators ``framework``'s public function ``name`` calls, where it calls several; else ()."""
    return SEVERAL_OPERATORS[framework].get(name, ())
