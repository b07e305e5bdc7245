"""What a JAX configs file may choose when it is replayed (``opperf.operators.rules.replay``), as data."""

from __future__ import annotations

from opperf.frameworks.jax.bodies import FUNCTION_ARGUMENTS
from opperf.operators.rules.replay import ReplayPolicy

DTYPES = frozenset(
    {"float16", "bfloat16", "float32", "complex64", "bool", "uint8", "int8", "int16", "int32", "uint32"}
)
"""The array dtypes a file may name (JAX without ``jax_enable_x64`` has no 64-bit arrays)."""

REPLAY_POLICY = ReplayPolicy(
    tensor_dtypes=DTYPES,
    storages=frozenset({"default"}),
    # Text that is data: an einsum's subscripts, a padding mode, a comparison's mode, a
    # convolution's dimension numbers (NHWC).
    text_arguments=frozenset(
        {"subscripts", "spec", "padding", "mode", "method", "side", "kind", "fft_type", "dimension_numbers"}
    ),
    # Numbers that are data where the signature says no more than a sequence: a convolution's
    # padding pairs, a product's contracting and batch dimensions, a gather's dimension numbers by
    # name, the value a gather fills out-of-bounds rows with (NaN for ``jnp.take``).
    numeric_arguments=frozenset({"padding", "dimension_numbers", "fill_value"}),
    constants={"DTypeLike": DTYPES},
    # Functions (named bodies, ``frameworks/jax/bodies.py``), devices and shardings.
    resources=FUNCTION_ARGUMENTS | {"device", "out_sharding", "sharding"},
)
