"""The long-tail operators as data: tags (DLOP-Bench's vocabulary), origin, source attribution, what
each computes, and its input configurations (``/work/shared/LONGTAIL.md`` lists the set).

Boxes are x1y1x2y2 with positive widths and heights (``structure="boxes"``); masks, labels, lengths and
tokens are whole numbers (``integral``). Scalars fixed by the definition are the implementations'
defaults; those a configuration varies are given here.
"""

from __future__ import annotations

from opperf.operators.longtail.entry import LongTailOp
from opperf.results.measurement import InputValue, TensorSpec

_MMDET = "OpenMMLab mmdetection"


def _boxes(*shape: int, scale: float = 1.0) -> TensorSpec:
    return TensorSpec(shape, low=0.0, high=scale, structure="boxes")


def _uniform(*shape: int, low: float = -1.0, high: float = 1.0) -> TensorSpec:
    return TensorSpec(shape, low=low, high=high)


def _whole(*shape: int, high: int, low: int = 0, dtype: str | None = None) -> TensorSpec:
    return TensorSpec(shape, dtype=dtype, low=low, high=high, integral=True)


def _pair(n: int) -> dict[str, InputValue]:
    return {"proposals": _boxes(n, 4, scale=100.0), "gt": _boxes(n, 4, scale=100.0)}


def _decode(n: int) -> dict[str, InputValue]:
    return {"rois": _boxes(n, 4, scale=100.0), "deltas": _uniform(n, 4), "max_shape": (80.0, 90.0)}


def _tblr(n: int) -> dict[str, InputValue]:
    return {"priors": _boxes(n, 4, scale=100.0), "tblr": _uniform(n, 4, low=0.0, high=0.25)}


def _yolo(n: int) -> dict[str, InputValue]:
    return {
        "bboxes": _boxes(n, 4, scale=100.0),
        "pred_bboxes": _uniform(n, 4, low=0.0, high=1.0),
        "stride": 32.0,
    }


def _overlaps(batch: int, m: int, n: int) -> dict[str, InputValue]:
    return {"bboxes1": _boxes(batch, m, 4), "bboxes2": _boxes(batch, n, 4), "mode": "giou"}


def _box_iou(n: int, m: int) -> dict[str, InputValue]:
    return {"boxes1": _boxes(n, 4), "boxes2": _boxes(m, 4)}


def _giou(n: int) -> dict[str, InputValue]:
    return {"pred": _boxes(n, 4), "target": _boxes(n, 4)}


def _sigmoid_focal(n: int, classes: int) -> dict[str, InputValue]:
    return {"pred": _uniform(n, classes, low=-3.0, high=3.0), "target": _whole(n, classes, high=2)}


def _focal(n: int, classes: int) -> dict[str, InputValue]:
    # Labels in [0, classes); the last class stands for segmentation's ignored label 255.
    return {
        "logits": _uniform(n, classes, low=-3.0, high=3.0),
        "labels": _whole(n, high=classes, dtype="int64"),
        "ignore_index": classes - 1,
    }


def _smooth_l1(n: int) -> dict[str, InputValue]:
    return {"pred": _uniform(n, 4, low=0.0, high=3.0), "target": _uniform(n, 4, low=0.0, high=3.0)}


def _base_anchors(base: int, ratios: int, scales: int) -> dict[str, InputValue]:
    return {
        "ratios": _uniform(ratios, low=0.5, high=2.0),
        "scales": _uniform(scales, low=1.0, high=8.0),
        "base_size": base,
    }


def _grid(anchors: int, height: int, width: int, stride: int) -> dict[str, InputValue]:
    return {
        "base_anchors": TensorSpec((anchors, 4), low=-64.0, high=64.0, structure="boxes"),
        "feat_h": height,
        "feat_w": width,
        "stride": stride,
    }


def _valid(height: int, width: int, anchors: int) -> dict[str, InputValue]:
    return {
        "feat_h": height,
        "feat_w": width,
        "valid_h": height * 3 // 4,
        "valid_w": width * 3 // 4,
        "num_base_anchors": anchors,
    }


def _rois(k: int) -> dict[str, InputValue]:
    return {"rois": TensorSpec((k, 5), low=0.0, high=800.0, structure="boxes")}


def _for_nms(n: int) -> dict[str, InputValue]:
    return {"boxes": _boxes(n, 4, scale=100.0), "idxs": _whole(n, high=80)}


def _masks(n: int, size: int) -> dict[str, InputValue]:
    return {"masks": _whole(n, size, size, high=2)}


def _bbox_list(images: int, n: int) -> dict[str, InputValue]:
    return {"bbox_list": tuple(_boxes(n, 4, scale=100.0) for _ in range(images))}


def _lengths(batch: int) -> dict[str, InputValue]:
    return {"lengths": _whole(batch, low=1, high=64, dtype="int64")}


def _tokens(batch: int, length: int) -> dict[str, InputValue]:
    return {"tokens": _whole(batch, length, high=6, dtype="int64")}


def _nms(n: int) -> dict[str, InputValue]:
    return {"boxes": _boxes(n, 4, scale=100.0), "scores": _uniform(n, low=0.0, high=1.0)}


OPERATORS: tuple[LongTailOp, ...] = (
    LongTailOp(
        "bbox2delta",
        ("ViewAttribute",),
        "mmdet",
        f"{_MMDET}, DeltaXYWHBBoxCoder (bbox2delta); sample collected by DLOP-Bench",
        "deltas (dx, dy, dw, dh) from proposals to ground truth, normalised by means and stds",
        _pair,
        ((8,), (64,), (128,)),
        (6,),
    ),
    LongTailOp(
        "delta2bbox",
        ("ThirdPartyCodes", "IfElseBranch", "ViewAttribute"),
        "mmdet",
        f"{_MMDET}, DeltaXYWHBBoxCoder (delta2bbox); sample collected by DLOP-Bench",
        "boxes from rois and deltas: de-normalise, clamp dw/dh, exp, recentre, clip to the image",
        _decode,
        ((1000,), (3000,)),
        (6,),
    ),
    LongTailOp(
        "tblr2bbox",
        ("IfElseBranch", "ViewAttribute", "Broadcast"),
        "mmdet",
        f"{_MMDET}, TBLRBBoxCoder (tblr2bboxes); sample collected by DLOP-Bench",
        "boxes from priors and top/bottom/left/right offsets scaled by the normaliser and prior size",
        _tblr,
        ((3000,), (4000,), (5000,)),
        (6,),
    ),
    LongTailOp(
        "yolo_decode",
        ("ViewAttribute",),
        "mmdet",
        f"{_MMDET}, YOLOBBoxCoder (decode); sample collected by DLOP-Bench",
        "centre + (pred_xy - 0.5) * stride, size * exp(pred_wh), back to x1y1x2y2",
        _yolo,
        ((1000,), (3000,)),
        (6,),
    ),
    LongTailOp(
        "bbox_overlaps",
        ("IfElseBranch",),
        "mmdet",
        f"{_MMDET}, bbox_overlaps (iou/iof/giou, pairwise or aligned); sample collected by DLOP-Bench",
        "pairwise GIoU of two batched box sets, the union clamped below by eps",
        _overlaps,
        ((32, 16, 16), (32, 64, 64)),
        (2, 3, 5),
    ),
    LongTailOp(
        "box_iou",
        ("Reduce",),
        "DETR",
        "facebookresearch/detr, util/box_ops.py box_iou; sample collected by DLOP-Bench",
        "pairwise IoU and union of two box sets by broadcasting corner maxima and minima",
        _box_iou,
        ((400, 72), (1600, 288)),
        (5, 3),
    ),
    LongTailOp(
        "giou_loss",
        ("ViewAttribute", "IfElseBranch", "BuiltInDataStructure"),
        "mmdet",
        f"{_MMDET}, losses/iou_loss.py giou_loss; sample collected by DLOP-Bench",
        "mean of 1 - aligned GIoU(pred, target)",
        _giou,
        ((1000,), (2000,), (3000,)),
        (6,),
    ),
    LongTailOp(
        "sigmoid_focal_loss",
        ("IfElseBranch", "ViewAttribute"),
        "mmcls",
        "OpenMMLab mmclassification, losses/focal_loss.py sigmoid_focal_loss; sample collected by DLOP-Bench",
        "BCE with logits x (alpha t + (1 - alpha)(1 - t)) x (1 - p_t)^gamma, mean",
        _sigmoid_focal,
        ((3000, 4), (5000, 4)),
        (6, 4),
    ),
    LongTailOp(
        "focal_loss",
        ("Reduce",),
        "segmentation",
        "semantic-segmentation focal loss (cross-entropy based); sample collected by DLOP-Bench",
        "ce = cross-entropy ignoring one label; mean(alpha (1 - exp(-ce))^gamma ce)",
        _focal,
        ((128, 19), (256, 19), (512, 19)),
        (8, 5),
    ),
    LongTailOp(
        "mmdet_smooth_l1_loss",
        ("IfElseBranch", "AdvancedIndexing"),
        "mmdet",
        f"{_MMDET}, losses/smooth_l1_loss.py smooth_l1_loss; sample collected by DLOP-Bench",
        "where(|p - t| < beta, 0.5 d^2 / beta, d - 0.5 beta), mean; an empty input gives 0",
        _smooth_l1,
        ((3000,), (6000,)),
        (6,),
    ),
    LongTailOp(
        "gen_base_anchors",
        ("ViewAttribute",),
        "mmdet",
        f"{_MMDET}, AnchorGenerator.gen_single_level_base_anchors; sample collected by DLOP-Bench",
        "anchor widths and heights base * (1/sqrt(r), sqrt(r)) * scale around the cell centre, rounded",
        _base_anchors,
        ((4, 3, 1), (8, 6, 2), (16, 12, 4)),
        (4, 3, 2),
    ),
    LongTailOp(
        "grid_anchors",
        ("ViewAttribute",),
        "mmdet",
        f"{_MMDET}, AnchorGenerator.single_level_grid_anchors; sample collected by DLOP-Bench",
        "base anchors shifted to every cell of an H x W feature map with the stride: (H W A, 4)",
        _grid,
        ((3, 50, 68, 16), (9, 100, 136, 8)),
        (3, 4, 5, 8),
    ),
    LongTailOp(
        "valid_flags",
        ("AdvancedIndexing", "ViewAttribute"),
        "mmdet",
        f"{_MMDET}, AnchorGenerator.single_level_valid_flags; sample collected by DLOP-Bench",
        "uint8 validity of each anchor: x and y flags up to the valid size, outer AND, per anchor",
        _valid,
        ((160, 120, 3), (480, 360, 9)),
        (6, 5, 2),
    ),
    LongTailOp(
        "map_roi_levels",
        ("ViewAttribute",),
        "mmdet",
        f"{_MMDET}, SingleRoIExtractor.map_roi_levels; sample collected by DLOP-Bench",
        "FPN level per roi: clamp(floor(log2(sqrt(w h) / 56 + 1e-6)), 0, 3)",
        _rois,
        ((20,), (40,), (60,)),
        (7,),
        differentiable=False,  # MXNet's backward through floor(log2(.)) segfaults besides
    ),
    LongTailOp(
        "boxes_for_nms",
        ("IfElseBranch", "Reduce"),
        "mmcv",
        "OpenMMLab mmcv, ops/nms.py batched_nms (class-aware offsets); sample collected by DLOP-Bench",
        "boxes + class index x (max coordinate + 1), so one NMS pass separates classes",
        _for_nms,
        ((3000,), (5000,)),
        (6,),
    ),
    LongTailOp(
        "masks_to_boxes",
        ("ViewAttribute", "IfElseBranch", "Reduce"),
        "DETR",
        "facebookresearch/detr, util/box_ops.py masks_to_boxes; sample collected by DLOP-Bench",
        "each mask's box: max of arange-weighted masks, min after filling the background with 1e8",
        _masks,
        ((8, 64), (16, 128)),
        (3, 5),
    ),
    LongTailOp(
        "bbox2roi",
        ("ForLoop", "IfElseBranch"),
        "mmdet",
        f"{_MMDET}, core/bbox/transforms.py bbox2roi; sample collected by DLOP-Bench",
        "a Python loop over images: prepend the image index as a column, concatenate",
        _bbox_list,
        ((8, 32), (8, 64), (8, 128)),
        (3, 4),
    ),
    LongTailOp(
        "sequence_mask",
        ("InputAware", "Broadcast", "ViewAttribute"),
        "OpenNMT",
        "OpenNMT-py, utils/misc.py sequence_mask; sample collected by DLOP-Bench",
        "arange(max(lengths)) < lengths[:, None]: the output shape depends on the values",
        _lengths,
        ((12,), (16,), (32,)),
        (5,),
    ),
    LongTailOp(
        "make_positions",
        ("InputAware", "Reduce"),
        "fairseq",
        "facebookresearch/fairseq, utils.py make_positions; sample collected by DLOP-Bench",
        "mask = tokens != pad; cumsum(mask) * mask + pad",
        _tokens,
        ((12, 12), (16, 16), (32, 32)),
        (3, 6),
    ),
    LongTailOp(
        "nms_loop",
        ("ForLoop", "InputAware", "AdvancedIndexing"),
        "(opperf)",
        "opperf: greedy NMS from its textbook definition, as a Python while-loop",
        "sort by score, keep the best box, drop the others with IoU > 0.5, repeat; the kept indices",
        _nms,
        ((300,), (1000,), (3000,)),
        (12,),
    ),
)
