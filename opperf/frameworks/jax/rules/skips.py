"""JAX operators that cannot be benchmarked alone, each with the specific reason, as data: everywhere
(``SKIP_REASONS``), or on one kind of device only (``DEVICE_SKIP_REASONS``)."""

from __future__ import annotations

from opperf.operators.info import OpInfo

_COLLECTIVE = (
    "a collective over a named mapped axis: it runs only inside pmap or shard_map, which give the axis "
    "its name and size"
)
_TOKEN = "host-device token I/O (infeed, outfeed, effect ordering): no array computation to time alone"
_HOST = "reads a Python object on the host (bytes, an iterator): a host conversion, not an array operator"
_PLATFORM = "chooses among Python functions by the platform it is lowered for: no operator of its own"
_PRIMITIVE_BINDING = "binds scan's primitive directly (an internal entry point); lax.scan measures scan"

SKIP_REASONS: dict[str, str] = {
    **dict.fromkeys(
        (
            "lax.all_gather", "lax.all_to_all", "lax.axis_index", "lax.pbroadcast", "lax.pdot", "lax.pmax",
            "lax.pmean", "lax.pmin", "lax.ppermute", "lax.pshuffle", "lax.psum", "lax.psum_scatter",
            "lax.pswapaxes",
        ),
        _COLLECTIVE,
    ),
    **dict.fromkeys(("lax.infeed", "lax.outfeed", "lax.create_token", "lax.after_all"), _TOKEN),
    **dict.fromkeys(("frombuffer", "fromiter"), _HOST),
    "lax.platform_dependent": _PLATFORM,
    "lax.scan_bind": _PRIMITIVE_BINDING,
}  # fmt: skip
"""Operators skipped on every device."""

DEVICE_SKIP_REASONS: dict[str, dict[str, str]] = {
    "cpu": {
        "nn.scaled_matmul": "cuDNN's block-scaled matrix product (JAX 0.6 and later): XLA has no CPU "
        "lowering for it",
    },
    "gpu": {},
}
"""Operators skipped on one kind of device only."""


def skip_reason(op: OpInfo, device_kind: str = "cpu") -> str | None:
    """Why ``op`` is not benchmarked on a device of ``device_kind``, or None."""
    return SKIP_REASONS.get(op.name) or DEVICE_SKIP_REASONS.get(device_kind, {}).get(op.name)
