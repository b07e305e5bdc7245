"""Operators that cannot be benchmarked standalone, each with the specific reason, kept as data."""

from __future__ import annotations

_SUBGRAPH = "takes a subgraph (symbol) argument; it runs only inside a hybridized graph"
_CUSTOM = "dispatches to a user-registered custom operator; there is none to run"
_FUSED = "a fused operator created by the MKL-DNN graph pass, not callable on NDArrays"
_IMAGE_FILE = "decodes or reads an encoded image file; benchmarking image codecs is out of scope"
_POINTER = "takes a raw C pointer argument"

_SAMPLER_OUTPUT = (
    "compacts the sampled subgraphs a DGL neighbour sampler returns, with their vertex mappings; "
    "it is meaningful only on that output"
)

SKIP_REASONS: dict[str, str] = {
    "_CachedOp": _SUBGRAPH,
    "_CachedOpThreadSafe": _SUBGRAPH,
    "_foreach": _SUBGRAPH,
    "_while_loop": _SUBGRAPH,
    "_cond": _SUBGRAPH,
    "Custom": _CUSTOM,
    "_CustomFunction": _CUSTOM,
    "_NDArray": _POINTER,
    "_Native": _POINTER,
    "_sg_mkldnn_conv": _FUSED,
    "_sg_mkldnn_fully_connected": _FUSED,
    "_sg_mkldnn_selfatt_qk": _FUSED,
    "_sg_mkldnn_selfatt_valatt": _FUSED,
    "_cvimread": _IMAGE_FILE,
    "_cvimdecode": _IMAGE_FILE,
    "_imdecode": _IMAGE_FILE,
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
