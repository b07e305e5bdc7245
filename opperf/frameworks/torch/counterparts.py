"""PyTorch's names in the shared vocabulary of jobs that frameworks name differently, and the public
functions that are no one registry operator: what a selection error offers a user who brings a name
from another framework (``opperf.sweep.public_names``). Framework-free: imports nothing.

A job is named as PyTorch's functional API names it (``conv2d``, ``linear``); each framework lists
(job, its registry operator) pairs, and two frameworks' operators for one job are counterparts.
"""

from __future__ import annotations

JOBS: tuple[tuple[str, str], ...] = (
    ("conv1d", "conv1d"), ("conv2d", "conv2d"), ("conv3d", "conv3d"),
    ("conv_transpose1d", "conv_transpose1d"), ("conv_transpose2d", "conv_transpose2d"),
    ("conv_transpose3d", "conv_transpose3d"), ("max_pool1d", "max_pool1d"), ("max_pool2d", "max_pool2d"),
    ("max_pool3d", "max_pool3d"), ("avg_pool1d", "avg_pool1d"), ("avg_pool2d", "avg_pool2d"),
    ("avg_pool3d", "avg_pool3d"), ("adaptive_avg_pool2d", "adaptive_avg_pool2d"), ("linear", "linear"),
    ("addmm", "addmm"), ("batch_norm", "batch_norm"), ("layer_norm", "layer_norm"),
    ("group_norm", "group_norm"), ("instance_norm", "instance_norm"), ("embedding", "embedding"),
    ("dropout", "dropout"), ("leaky_relu", "leaky_relu"), ("elu", "elu"), ("selu", "selu"),
    ("gelu", "gelu"), ("prelu", "prelu"), ("hardsigmoid", "hardsigmoid"), ("lstm", "lstm"), ("gru", "gru"),
    ("rnn_tanh", "rnn_tanh"), ("rnn_relu", "rnn_relu"), ("mm", "mm"), ("matmul", "matmul"), ("bmm", "bmm"),
    ("cat", "cat"), ("ctc_loss", "ctc_loss"), ("pixel_shuffle", "pixel_shuffle"),
    ("pixel_unshuffle", "pixel_unshuffle"), ("gather", "gather"), ("index_select", "index_select"),
    ("clamp", "clamp"), ("permute", "permute"), ("flip", "flip"),
    ("repeat_interleave", "repeat_interleave"), ("expand", "expand"), ("unsqueeze", "unsqueeze"),
    ("chunk", "chunk"), ("narrow", "narrow"), ("multinomial", "multinomial"), ("normal", "normal"),
    ("uniform", "uniform"), ("randint", "randint"),
)  # fmt: skip
"""(job, PyTorch registry operator) pairs: its operator for each job another framework names
differently."""

SEVERAL_OPERATORS: dict[str, tuple[str, ...]] = {
    "cross_entropy": ("log_softmax", "nll_loss"),
    "softmin": ("neg", "softmax"),
    "normalize": ("linalg_vector_norm", "clamp_min", "div"),
    "local_response_norm": ("constant_pad_nd", "avg_pool3d", "mul", "add", "pow", "div"),
}
"""Public functions that are no one registry operator, and the operators they call."""
