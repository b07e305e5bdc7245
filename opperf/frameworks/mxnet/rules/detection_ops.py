"""Input rules for object-detection operators: anchors, region proposals, position-sensitive and
rotated region pooling, modulated deformable convolution."""

from __future__ import annotations

from collections.abc import Callable

from opperf.frameworks.mxnet.rules.layers import DEFAULT_RULES, Configurations, T
from opperf.operators.rules.profiles import LayerSizes

CLASSES = 4
ANCHORS_PER_CELL = 3  # scales (8,) x ratios (0.5, 1, 2)
FEATURE_STRIDE = 16


def _regions(s: LayerSizes, width: int) -> T:
    """Regions as rows starting with their batch index, coordinates inside the feature map."""
    return T((s.batch, width), low=0, high=min(s.batch, s.spatial // 2), integral=True)


def _ps_roi_pooling(s: LayerSizes) -> Configurations:
    pooled, output_dim = 2, s.channels
    return [
        {
            "data": T((s.batch, output_dim * pooled * pooled, s.spatial, s.spatial)),
            "rois": _regions(s, 5),
            "spatial_scale": 1.0,
            "output_dim": output_dim,
            "pooled_size": pooled,
        }
    ]


def _deformable_ps_roi_pooling(s: LayerSizes) -> Configurations:
    pooled, output_dim = 2, s.channels
    regions = s.batch
    return [
        {
            "data": T((s.batch, output_dim * pooled * pooled, s.spatial, s.spatial)),
            "rois": _regions(s, 5),
            # One class-agnostic (x, y) offset per part, small against the region size.
            "trans": T((regions, 2, pooled, pooled), low=-0.1, high=0.1),
            "spatial_scale": 1.0,
            "output_dim": output_dim,
            "group_size": pooled,
            "pooled_size": pooled,
            "part_size": pooled,
            "sample_per_part": 2,
            "trans_std": 0.1,
        }
    ]


def _rotated_roi_align(s: LayerSizes) -> Configurations:
    return [
        {
            "data": T((s.batch, s.channels, s.spatial, s.spatial)),
            "rois": _regions(s, 6),  # batch index, centre x, centre y, width, height, angle
            "pooled_size": (2, 2),
            "spatial_scale": 1.0,
        }
    ]


def _modulated_deformable_convolution(s: LayerSizes) -> Configurations:
    out = s.spatial - 2
    return [
        {
            "data": T((s.batch, s.channels, s.spatial, s.spatial)),
            "offset": T((s.batch, 2 * 9, out, out)),
            "mask": T((s.batch, 9, out, out)),
            "weight": T((s.channels * 2, s.channels, 3, 3)),
            "bias": T((s.channels * 2,)),
            "kernel": (3, 3),
            "num_filter": s.channels * 2,
        }
    ]


def _anchors(s: LayerSizes) -> T:
    return T((1, s.features, 4), low=0.0, high=1.0)


def _multibox_target(s: LayerSizes) -> Configurations:
    batch = s.batch // 4 or 1
    return [
        {
            "anchor": _anchors(s),
            # Ground truth rows: class id, then corner coordinates.
            "label": T((batch, 4, 5), low=0.0, high=1.0),
            "cls_pred": T((batch, CLASSES + 1, s.features)),
        }
    ]


def _multibox_detection(s: LayerSizes) -> Configurations:
    batch = s.batch // 4 or 1
    return [
        {
            "cls_prob": T((batch, CLASSES + 1, s.features)),
            "loc_pred": T((batch, s.features * 4), low=-0.1, high=0.1),
            "anchor": _anchors(s),
        }
    ]


def _proposal(batch: int | None) -> Callable[[LayerSizes], Configurations]:
    """Region proposals for ``batch`` images (None: a few); Proposal takes one image per call."""
    return lambda s: _proposals(s, batch or s.batch // 8 or 1)


def _proposals(s: LayerSizes, batch: int) -> Configurations:
    size = s.spatial
    return [
        {
            "cls_prob": T((batch, 2 * ANCHORS_PER_CELL, size, size)),
            "bbox_pred": T((batch, 4 * ANCHORS_PER_CELL, size, size), low=-0.1, high=0.1),
            "im_info": T((batch, 3), low=size * FEATURE_STRIDE, high=size * FEATURE_STRIDE + 1),
            "scales": (8.0,),
            "ratios": (0.5, 1.0, 2.0),
            "feature_stride": FEATURE_STRIDE,
        }
    ]


def _image_source(s: LayerSizes) -> T:
    return T((s.spatial * 4, s.spatial * 4, 3), dtype="uint8")


def _make_border(s: LayerSizes) -> Configurations:
    return [{"src": _image_source(s), "top": 2, "bot": 2, "left": 2, "right": 2}]


def _resize(s: LayerSizes) -> Configurations:
    return [{"src": _image_source(s), "w": s.spatial * 2, "h": s.spatial * 2}]


DETECTION_RULES: dict[str, Callable[[LayerSizes], Configurations]] = {
    "_contrib_PSROIPooling": _ps_roi_pooling,
    "_contrib_DeformablePSROIPooling": _deformable_ps_roi_pooling,
    "_contrib_RROIAlign": _rotated_roi_align,
    "_contrib_ModulatedDeformableConvolution": _modulated_deformable_convolution,
    "_contrib_MultiBoxTarget": _multibox_target,
    "_contrib_MultiBoxDetection": _multibox_detection,
    "_contrib_Proposal": _proposal(batch=1),
    "_contrib_MultiProposal": _proposal(batch=None),
    "_contrib_SparseEmbedding": DEFAULT_RULES["Embedding"],  # the same inputs as Embedding
    "_cvcopyMakeBorder": _make_border,
    "_cvimresize": _resize,
}
