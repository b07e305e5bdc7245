"""MXNet's names in the shared vocabulary of jobs that frameworks name differently (see
``opperf.frameworks.torch.counterparts``): ``conv2d`` is what MXNet calls ``Convolution``.
Framework-free: imports nothing.
"""

from __future__ import annotations

JOBS: tuple[tuple[str, str], ...] = (
    ("conv1d", "Convolution"), ("conv2d", "Convolution"), ("conv3d", "Convolution"),
    ("conv_transpose1d", "Deconvolution"), ("conv_transpose2d", "Deconvolution"),
    ("conv_transpose3d", "Deconvolution"), ("max_pool1d", "Pooling"), ("max_pool2d", "Pooling"),
    ("max_pool3d", "Pooling"), ("avg_pool1d", "Pooling"), ("avg_pool2d", "Pooling"),
    ("avg_pool3d", "Pooling"), ("adaptive_avg_pool2d", "_contrib_AdaptiveAvgPooling2D"),
    ("linear", "FullyConnected"), ("addmm", "FullyConnected"), ("batch_norm", "BatchNorm"),
    ("layer_norm", "LayerNorm"), ("group_norm", "GroupNorm"), ("instance_norm", "InstanceNorm"),
    ("embedding", "Embedding"), ("dropout", "Dropout"), ("leaky_relu", "LeakyReLU"), ("elu", "LeakyReLU"),
    ("selu", "LeakyReLU"), ("gelu", "LeakyReLU"), ("prelu", "LeakyReLU"), ("hardsigmoid", "hard_sigmoid"),
    ("lstm", "RNN"), ("gru", "RNN"), ("rnn_tanh", "RNN"), ("rnn_relu", "RNN"), ("mm", "dot"),
    ("matmul", "dot"), ("bmm", "batch_dot"), ("cat", "concat"), ("ctc_loss", "CTCLoss"),
    ("pixel_shuffle", "depth_to_space"), ("pixel_unshuffle", "space_to_depth"), ("gather", "pick"),
    ("index_select", "take"), ("clamp", "clip"), ("permute", "transpose"), ("flip", "reverse"),
    ("repeat_interleave", "repeat"), ("expand", "broadcast_to"), ("unsqueeze", "expand_dims"),
    ("chunk", "split"), ("narrow", "slice_axis"), ("multinomial", "_sample_multinomial"),
    ("normal", "_random_normal"), ("uniform", "_random_uniform"), ("randint", "_random_randint"),
)  # fmt: skip
"""(job, MXNet registry operator) pairs: its operator for each job another framework names
differently."""

SEVERAL_OPERATORS: dict[str, tuple[str, ...]] = {}
"""Public functions that are no one registry operator (none of MXNet's is listed)."""
