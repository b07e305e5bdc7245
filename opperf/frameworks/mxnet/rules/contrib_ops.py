"""Hand-written input rules for ``mx.nd.contrib``, ``mx.nd.image`` and internal operators with specific
input layouts: bounding boxes, interleaved attention, images, in-place assignment; and for operators that
run only inside a graph (control flow, MKL-DNN's fused nodes), a custom operator and image decoding,
whose calls ``opperf.frameworks.mxnet.invoke`` makes."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from opperf.frameworks.mxnet.rules.layers import DEFAULT_RULES, Configurations, T
from opperf.operators.rules.profiles import LayerSizes
from opperf.results.measurement import Alias

HEADS = 4


def _boxes(s: LayerSizes, count: int, width: int = 4) -> T:
    """Corner boxes (x1, y1, x2, y2) in a unit square, batched."""
    return T((s.batch // 4 or 1, count, width), low=0.0, high=1.0)


def _box_nms(s: LayerSizes) -> Configurations:
    # Rows are (class id, score, x1, y1, x2, y2).
    return [{"data": _boxes(s, s.features, width=6), "coord_start": 2, "score_index": 1, "id_index": 0}]


def _box_iou(s: LayerSizes) -> Configurations:
    return [{"lhs": T((s.features, 4)), "rhs": T((s.features, 4))}]


def _box_encode(s: LayerSizes) -> Configurations:
    batch, anchors, references = s.batch // 4 or 1, s.features, s.features // 4 or 1
    return [
        {
            "samples": T((batch, anchors), low=-1, high=2, integral=True),
            "matches": T((batch, anchors), low=0, high=references, integral=True),
            "anchors": T((batch, anchors, 4)),
            "refs": T((batch, references, 4)),
            "means": T((4,), low=0.0, high=0.1),
            "stds": T((4,), low=0.1, high=0.2),
        }
    ]


def _box_decode(s: LayerSizes) -> Configurations:
    return [{"data": _boxes(s, s.features), "anchors": T((1, s.features, 4))}]


def _attention(s: LayerSizes) -> tuple[int, int, int]:
    """(sequence length, batch, head dimension x heads)."""
    return s.sequence, s.batch, HEADS * (s.features // HEADS or 1)


def _selfatt_qk(s: LayerSizes) -> Configurations:
    length, batch, embed = _attention(s)
    return [{"queries_keys_values": T((length, batch, 3 * embed)), "heads": HEADS}]


def _selfatt_valatt(s: LayerSizes) -> Configurations:
    length, batch, embed = _attention(s)
    return [
        {
            "queries_keys_values": T((length, batch, 3 * embed)),
            "attention": T((batch * HEADS, length, length)),
            "heads": HEADS,
        }
    ]


def _encdec_qk(s: LayerSizes) -> Configurations:
    length, batch, embed = _attention(s)
    return [
        {"queries": T((length, batch, embed)), "keys_values": T((length, batch, 2 * embed)), "heads": HEADS}
    ]


def _encdec_valatt(s: LayerSizes) -> Configurations:
    length, batch, embed = _attention(s)
    return [
        {
            "keys_values": T((length, batch, 2 * embed)),
            "attention": T((batch * HEADS, length, length)),
            "heads": HEADS,
        }
    ]


def _multibox_prior(s: LayerSizes) -> Configurations:
    return [{"data": T((s.batch, s.channels, s.spatial, s.spatial)), "sizes": (0.5, 0.25), "ratios": (1, 2)}]


def _normalize_image(s: LayerSizes) -> Configurations:
    return [{"data": T((3, s.spatial * 4, s.spatial * 4)), "mean": (0.5, 0.5, 0.5), "std": (0.2, 0.2, 0.2)}]


def _resize_image(s: LayerSizes) -> Configurations:
    return [{"data": T((s.spatial * 4, s.spatial * 4, 3)), "size": (s.spatial * 2, s.spatial * 2)}]


def _ravel(s: LayerSizes) -> Configurations:
    return [
        {
            "data": T((2, s.batch * 4), low=0, high=s.features, integral=True),
            "shape": (s.features, s.features),
        }
    ]


def _unravel(s: LayerSizes) -> Configurations:
    extent = s.features * s.features
    return [{"data": T((s.batch * 4,), low=0, high=extent, integral=True), "shape": (s.features, s.features)}]


def _batch_take(s: LayerSizes) -> Configurations:
    rows = s.batch * 4
    return [
        {
            "a": T((rows, s.features)),
            "indices": T((rows,), dtype="int32", low=0, high=s.features, integral=True),
        }
    ]


def _fill_element(s: LayerSizes) -> Configurations:
    rows = s.batch * 4
    return [
        {
            "lhs": T((rows, s.features)),
            "mhs": T((rows,)),
            "rhs": T((rows,), low=0, high=s.features, integral=True),
        }
    ]


def _boolean_mask(s: LayerSizes) -> Configurations:
    rows = s.features * 4
    return [{"data": T((rows, s.features)), "index": T((rows,), low=0, high=2, integral=True)}]


def _amp_cast(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features * 4, s.features)), "dtype": "float16"}]


def _amp_multicast(s: LayerSizes) -> Configurations:
    shape = (s.features * 4, s.features)
    return [{"data": (T(shape), T(shape)), "num_outputs": 2}]


def _histogram(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features * 64,)), "bin_cnt": 16, "range": (0.0, 1.0)}]


def _onehot_encode(s: LayerSizes) -> Configurations:
    rows = s.batch * 4
    return [{"lhs": T((rows,), low=0, high=s.features, integral=True), "rhs": T((rows, s.features))}]


def _scatter_set(s: LayerSizes) -> Configurations:
    count = s.batch * 4
    return [
        {
            "lhs": T((s.features, s.features)),
            "rhs": T((count,)),
            "indices": T((2, count), low=0, high=s.features, integral=True),
            "shape": (s.features, s.features),
            "out": Alias("lhs"),  # scatter_set_nd writes into lhs in place
        }
    ]


def _slice_assign(s: LayerSizes) -> Configurations:
    half = s.features // 2 or 1
    return [
        {
            "lhs": T((s.features, s.features)),
            "rhs": T((half, half)),
            "begin": (0, 0),
            "end": (half, half),
        }
    ]


def _sample_unique_zipfian(s: LayerSizes) -> Configurations:
    return [{"range_max": s.features * 64, "shape": (s.batch, s.features)}]


def _sync_batch_norm(s: LayerSizes) -> Configurations:
    shape = (s.batch, s.channels, s.spatial, s.spatial)
    return [
        {
            "data": T(shape),
            "gamma": T((s.channels,)),
            "beta": T((s.channels,)),
            "moving_mean": T((s.channels,)),
            "moving_var": T((s.channels,)),
            "key": "opperf",
            "ndev": 1,
        }
    ]


def _copy_to(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features * 4, s.features)), "out": T((s.features * 4, s.features))}]


def _hawkes_log_likelihood(s: LayerSizes) -> Configurations:
    """A batch of marked point sequences: inter-arrival lags, integer marks, per-mark parameters.

    The excitation ``alpha`` stays below the decay ``beta`` (a stationary process) and ``max_time``
    beyond the sum of the lags. Lags and times are whole time units: integral tensors take no
    gradient, and MXNet's hawkesll has none for them.
    """
    sequences, marks, length = s.batch, HEADS, s.sequence
    return [
        {
            "lda": T((sequences, marks)),
            "alpha": T((marks,), low=0.1, high=0.5),
            "beta": T((marks,), low=1.0, high=2.0),
            "state": T((sequences, marks), low=0.0, high=0.1),
            "lags": T((sequences, length), low=1, high=3, integral=True),
            "marks": T((sequences, length), dtype="int32", low=0, high=marks, integral=True),
            "valid_length": T((sequences,), low=length, high=length + 1, integral=True),
            "max_time": T((sequences,), low=3 * length, high=3 * length + 1, integral=True),
        }
    ]


def _foreach(s: LayerSizes) -> Configurations:
    """A recurrent loop over ``sequence`` steps of a (batch, features) state."""
    return [{"data": T((s.sequence, s.batch, s.features)), "state": T((s.batch, s.features))}]


def _while_loop(s: LayerSizes) -> Configurations:
    """``sequence`` iterations, counted by a loop variable starting at 0."""
    state = T((s.batch, s.features))
    return [
        {"counter": T((1,), low=0, high=1, integral=True), "data": state, "state": state, "steps": s.sequence}
    ]


def _fused_convolution(s: LayerSizes) -> Configurations:
    """Convolution's 2-D configuration, the one MKL-DNN's pass fuses with the ReLU after it."""
    return [config for config in DEFAULT_RULES["Convolution"](s) if len(cast(tuple, config["kernel"])) == 2]


CUSTOM_OP_TYPE = "opperf_scale"
"""The name opperf registers its CustomOp (y = 2x) under for ``Custom``."""


def _image_files(s: LayerSizes) -> Configurations:
    """PNG files of RGB images of ``spatial`` and 8 x ``spatial`` pixels a side."""
    return [
        {"buf": T((side, side, 3), dtype="uint8", structure="png")} for side in (s.spatial, 8 * s.spatial)
    ]


CONTRIB_RULES: dict[str, Callable[[LayerSizes], Configurations]] = {
    "_contrib_box_nms": _box_nms,
    "_contrib_hawkesll": _hawkes_log_likelihood,
    "_contrib_box_iou": _box_iou,
    "_contrib_box_encode": _box_encode,
    "_contrib_box_decode": _box_decode,
    "_contrib_interleaved_matmul_selfatt_qk": _selfatt_qk,
    "_contrib_interleaved_matmul_selfatt_valatt": _selfatt_valatt,
    "_contrib_interleaved_matmul_encdec_qk": _encdec_qk,
    "_contrib_interleaved_matmul_encdec_valatt": _encdec_valatt,
    "_contrib_MultiBoxPrior": _multibox_prior,
    "_contrib_BatchNormWithReLU": DEFAULT_RULES["BatchNorm"],
    "_contrib_SyncBatchNorm": _sync_batch_norm,
    "_contrib_boolean_mask": _boolean_mask,
    "_image_normalize": _normalize_image,
    "_image_resize": _resize_image,
    "_ravel_multi_index": _ravel,
    "_unravel_index": _unravel,
    "batch_take": _batch_take,
    "fill_element_0index": _fill_element,
    "amp_cast": _amp_cast,
    "amp_multicast": _amp_multicast,
    "_histogram": _histogram,
    "_onehot_encode": _onehot_encode,
    "_scatter_set_nd": _scatter_set,
    "_slice_assign": _slice_assign,
    "_sample_unique_zipfian": _sample_unique_zipfian,
    "_copyto": _copy_to,
    "_foreach": _foreach,
    "_while_loop": _while_loop,
    "_cond": lambda s: [{"data": T((s.batch, s.features))}],
    "_sg_mkldnn_conv": _fused_convolution,
    "_sg_mkldnn_fully_connected": DEFAULT_RULES["FullyConnected"],
    "_sg_mkldnn_selfatt_qk": _selfatt_qk,
    "_sg_mkldnn_selfatt_valatt": _selfatt_valatt,
    "Custom": lambda s: [{"data": T((s.batch, s.features)), "op_type": CUSTOM_OP_TYPE}],
    "_cvimdecode": _image_files,
}
