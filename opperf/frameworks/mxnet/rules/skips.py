"""Operators that cannot be benchmarked standalone, each with the specific reason, kept as data."""

from __future__ import annotations

from opperf.operators.info import OpInfo

_CACHED_OP = (
    "runs a whole hybridized graph (a CachedOp): it times the graph's operators, each benchmarked on "
    "its own; MXNet's profiler records no _CachedOp of its own"
)
_POINTER = "takes a raw C pointer argument"

_SAMPLER_OUTPUT = (
    "compacts the sampled subgraphs a DGL neighbour sampler returns, with their vertex mappings; "
    "it is meaningful only on that output"
)

SKIP_REASONS: dict[str, str] = {
    "_CachedOp": _CACHED_OP,
    "_CachedOpThreadSafe": _CACHED_OP,
    "_CustomFunction": (
        "records an autograd.Function's backward for autograd; its forward is the user's Python, "
        "run outside any operator"
    ),
    "_NDArray": _POINTER,
    "_Native": _POINTER,
    "_cvimread": "reads an image file from disk: file I/O is out of scope (_cvimdecode times the decoding)",
    "_imdecode": (
        "takes the encoded image as a string attribute, which MXNet's C API cuts at the first NUL byte: "
        "no PNG or JPEG survives it (deprecated; _cvimdecode decodes from an array)"
    ),
    "_NoGradient": "a placeholder node marking an absent gradient; it has no kernel",
    "_CrossDeviceCopy": "copies between devices inside a graph; needs two devices",
    "_contrib_dgl_graph_compact": _SAMPLER_OUTPUT,
}

_GPU_ONLY = "has no CPU kernel in MXNet 1.9.1; it runs on GPU only"

# Skipped only on the device kind named: the operator runs elsewhere.
DEVICE_SKIP_REASONS: dict[str, dict[str, str]] = {
    "cpu": {
        "_contrib_fft": _GPU_ONLY,
        "_contrib_ifft": _GPU_ONLY,
        "_contrib_count_sketch": _GPU_ONLY,
        "_contrib_group_adagrad_update": _GPU_ONLY,
    },
}


def skip_reason(op: OpInfo, device_kind: str) -> str | None:
    """Why ``op`` cannot be benchmarked on a device of ``device_kind``, or None."""
    return SKIP_REASONS.get(op.name) or DEVICE_SKIP_REASONS.get(device_kind, {}).get(op.name)
