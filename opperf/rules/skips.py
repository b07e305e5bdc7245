"""Operators that cannot be benchmarked standalone, each with the specific reason, kept as data."""

from __future__ import annotations

_SUBGRAPH = "takes a subgraph (symbol) argument; it runs only inside a hybridized graph"
_CUSTOM = "dispatches to a user-registered custom operator; there is none to run"
_FUSED = "a fused operator created by the MKL-DNN graph pass, not callable on NDArrays"
_IMAGE_FILE = "decodes or reads an encoded image file; benchmarking image codecs is out of scope"
_POINTER = "takes a raw C pointer argument"

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
    "_broadcast_backward": "a helper of broadcast operators' gradients, run only inside a backward pass",
}
