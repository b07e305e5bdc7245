"""JAX's names in the shared vocabulary of jobs that frameworks name differently: what a selection
error offers a user who brings a name from another framework (``opperf.sweep.public_names``).
Framework-free: imports nothing.

A job is named as PyTorch's functional API names it (``conv2d``, ``linear``); each framework lists
(job, its registry operator) pairs, and two frameworks' operators for one job are counterparts.
"""

from __future__ import annotations

JOBS: tuple[tuple[str, str], ...] = (
    ("conv1d", "lax.conv_general_dilated"), ("conv2d", "lax.conv_general_dilated"),
    ("conv3d", "lax.conv_general_dilated"), ("conv_transpose2d", "lax.conv_transpose"),
    ("max_pool2d", "lax.reduce_window"), ("avg_pool2d", "lax.reduce_window"), ("linear", "matmul"),
    ("mm", "matmul"), ("bmm", "lax.batch_matmul"), ("addmm", "matmul"), ("cat", "concatenate"),
    ("gather", "take_along_axis"), ("index_select", "take"), ("embedding", "take"), ("clamp", "clip"),
    ("permute", "transpose"), ("flip", "flip"), ("repeat_interleave", "repeat"), ("expand", "broadcast_to"),
    ("unsqueeze", "expand_dims"), ("chunk", "array_split"), ("narrow", "lax.slice_in_dim"),
    ("leaky_relu", "nn.leaky_relu"), ("elu", "nn.elu"), ("selu", "nn.selu"), ("gelu", "nn.gelu"),
    ("hardsigmoid", "nn.hard_sigmoid"), ("layer_norm", "nn.standardize"),
)  # fmt: skip
"""(job, JAX registry operator) pairs: its operator for each job another framework names differently."""

SEVERAL_OPERATORS: dict[str, tuple[str, ...]] = {}
"""Public functions that are no one registry operator: none among JAX's namespaces (each public
function is an operator of its own)."""
