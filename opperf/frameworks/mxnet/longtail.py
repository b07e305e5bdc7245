# ruff: noqa: N803  (``F``, the array namespace first, is Gluon's hybrid_forward convention)
"""The long-tail operators in MXNet, each written once from its definition (``opperf.operators.longtail``).

Each takes ``F`` first, as a Gluon ``hybrid_forward`` does: ``mx.nd`` eagerly, ``mx.sym`` inside a
hybridized block (the graph stage). Where the definition needs what a symbol cannot give (a shape, a
value that sets a shape, a Python loop over data), the code uses it as written and hybridizing fails,
so the graph stage is skipped with that error. PyTorch's are in ``opperf/frameworks/torch/longtail.py``,
the same names and arguments.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from opperf.operators import longtail

_RATIO_CLIP = abs(math.log(16.0 / 1000))
_ZERO_MEANS = (0.0, 0.0, 0.0, 0.0)
_STDS = (0.1, 0.1, 0.2, 0.2)


def _columns(F, array, count: int = 4) -> list:
    """The last axis's entries as ``count`` arrays of one axis less."""
    return list(F.split(array, num_outputs=count, axis=-1, squeeze_axis=True))


def _centres(F, boxes) -> tuple:
    x1, y1, x2, y2 = _columns(F, boxes)
    widths, heights = x2 - x1, y2 - y1
    return x1 + 0.5 * widths, y1 + 0.5 * heights, widths, heights


def _empty(array) -> bool:
    """Whether an eager array has no elements (a symbol has no size: never)."""
    return getattr(array, "size", None) == 0


def bbox2delta(F, proposals, gt, means=_ZERO_MEANS, stds=_STDS):
    px, py, pw, ph = _centres(F, proposals)
    gx, gy, gw, gh = _centres(F, gt)
    raw = ((gx - px) / pw, (gy - py) / ph, F.log(gw / pw), F.log(gh / ph))
    return F.stack(*[(d - m) / s for d, m, s in zip(raw, means, stds, strict=True)], axis=-1)


def delta2bbox(F, rois, deltas, max_shape=None, means=_ZERO_MEANS, stds=_STDS):
    dx, dy, dw, dh = [d * s + m for d, m, s in zip(_columns(F, deltas), means, stds, strict=True)]
    dw = F.clip(dw, -_RATIO_CLIP, _RATIO_CLIP)
    dh = F.clip(dh, -_RATIO_CLIP, _RATIO_CLIP)
    px, py, pw, ph = _centres(F, rois)
    gw, gh = pw * F.exp(dw), ph * F.exp(dh)
    gx, gy = px + pw * dx, py + ph * dy
    x1, y1, x2, y2 = gx - gw * 0.5, gy - gh * 0.5, gx + gw * 0.5, gy + gh * 0.5
    if max_shape is not None:
        height, width = max_shape
        x1, x2 = F.clip(x1, 0.0, width), F.clip(x2, 0.0, width)
        y1, y2 = F.clip(y1, 0.0, height), F.clip(y2, 0.0, height)
    return F.stack(x1, y1, x2, y2, axis=-1)


def tblr2bbox(F, priors, tblr, normalizer=4.0, normalize_by_wh=True):
    top, bottom, left, right = _columns(F, tblr * normalizer)
    x1, y1, x2, y2 = _columns(F, priors)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    if normalize_by_wh:
        heights, widths = y2 - y1, x2 - x1
        top, bottom, left, right = top * heights, bottom * heights, left * widths, right * widths
    return F.stack(cx - left, cy - top, cx + right, cy + bottom, axis=1)


def yolo_decode(F, bboxes, pred_bboxes, stride):
    x1, y1, x2, y2 = _columns(F, bboxes)
    px, py, pw, ph = _columns(F, pred_bboxes)
    cx = (x1 + x2) * 0.5 + (px - 0.5) * stride
    cy = (y1 + y2) * 0.5 + (py - 0.5) * stride
    half_w = (x2 - x1) * 0.5 * F.exp(pw)
    half_h = (y2 - y1) * 0.5 * F.exp(ph)
    return F.stack(cx - half_w, cy - half_h, cx + half_w, cy + half_h, axis=-1)


def _paired(F, a, b, aligned: bool) -> tuple:
    """``a`` and ``b`` shaped to broadcast: elementwise when aligned, else (..., M, 1) against (..., 1, N)."""
    if aligned:
        return a, b
    return F.expand_dims(a, axis=-1), F.expand_dims(b, axis=-2)


def bbox_overlaps(F, bboxes1, bboxes2, mode="iou", is_aligned=False, eps=1e-6):
    ax1, ay1, ax2, ay2 = _columns(F, bboxes1)
    bx1, by1, bx2, by2 = _columns(F, bboxes2)
    area1, area2 = _paired(F, (ax2 - ax1) * (ay2 - ay1), (bx2 - bx1) * (by2 - by1), is_aligned)
    corners = [_paired(F, a, b, is_aligned) for a, b in ((ax1, bx1), (ay1, by1), (ax2, bx2), (ay2, by2))]
    lt = [F.broadcast_maximum(a, b) for a, b in corners[:2]]
    rb = [F.broadcast_minimum(a, b) for a, b in corners[2:]]
    overlap = F.relu(rb[0] - lt[0]) * F.relu(rb[1] - lt[1])
    if mode == "iof":
        union = F.broadcast_add(area1, F.zeros_like(overlap))
    else:
        union = F.broadcast_add(area1, area2) - overlap
    union = F.maximum(union, eps)
    ious = overlap / union
    if mode in ("iou", "iof"):
        return ious
    enclosed_lt = [F.broadcast_minimum(a, b) for a, b in corners[:2]]
    enclosed_rb = [F.broadcast_maximum(a, b) for a, b in corners[2:]]
    enclose_area = F.relu(enclosed_rb[0] - enclosed_lt[0]) * F.relu(enclosed_rb[1] - enclosed_lt[1])
    enclose_area = F.maximum(enclose_area, eps)
    return ious - (enclose_area - union) / enclose_area


def box_iou(F, boxes1, boxes2):
    ax1, ay1, ax2, ay2 = (F.expand_dims(c, axis=1) for c in _columns(F, boxes1))
    bx1, by1, bx2, by2 = (F.expand_dims(c, axis=0) for c in _columns(F, boxes2))
    width = F.relu(F.broadcast_minimum(ax2, bx2) - F.broadcast_maximum(ax1, bx1))
    height = F.relu(F.broadcast_minimum(ay2, by2) - F.broadcast_maximum(ay1, by1))
    inter = width * height
    union = F.broadcast_add((ax2 - ax1) * (ay2 - ay1), (bx2 - bx1) * (by2 - by1)) - inter
    return inter / union, union


def giou_loss(F, pred, target, eps=1e-7):
    gious = bbox_overlaps(F, pred, target, mode="giou", is_aligned=True, eps=eps)
    return F.mean(1 - gious)


def sigmoid_focal_loss(F, pred, target, gamma=2.0, alpha=0.25, reduction="mean"):
    probabilities = F.sigmoid(pred)
    one_minus_pt = (1 - probabilities) * target + probabilities * (1 - target)
    weight = (alpha * target + (1 - alpha) * (1 - target)) * one_minus_pt**gamma
    with_logits = F.relu(pred) - pred * target + F.log1p(F.exp(-F.abs(pred)))
    loss = with_logits * weight
    if reduction == "mean":
        return F.mean(loss)
    if reduction == "sum":
        return F.sum(loss)
    return loss


def focal_loss(F, logits, labels, ignore_index=255, alpha=0.25, gamma=2.0):
    ce = -F.pick(F.log_softmax(logits, axis=-1), labels, axis=-1)
    ce = F.where(labels != ignore_index, ce, F.zeros_like(ce))
    return F.mean(alpha * (1 - F.exp(-ce)) ** gamma * ce)


def mmdet_smooth_l1_loss(F, pred, target, beta=1.0):
    if _empty(target):
        return F.sum(pred) * 0
    diff = F.abs(pred - target)
    return F.mean(F.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta))


def gen_base_anchors(F, ratios, scales, base_size):
    centre = 0.5 * (base_size - 1)
    h_ratios = F.sqrt(ratios)
    w_ratios = 1 / h_ratios
    row = F.expand_dims(scales, axis=0)
    widths = F.reshape(F.broadcast_mul(F.expand_dims(w_ratios * base_size, axis=1), row), shape=(-1,))
    heights = F.reshape(F.broadcast_mul(F.expand_dims(h_ratios * base_size, axis=1), row), shape=(-1,))
    anchors = F.stack(
        centre - 0.5 * (widths - 1),
        centre - 0.5 * (heights - 1),
        centre + 0.5 * (widths - 1),
        centre + 0.5 * (heights - 1),
        axis=-1,
    )
    return F.round(anchors)


def _meshgrid(F, x, y, x_count: int, y_count: int) -> tuple:
    return F.tile(x, reps=(y_count,)), F.repeat(y, repeats=x_count)


def grid_anchors(F, base_anchors, feat_h, feat_w, stride):
    shift_x = F.arange(0, feat_w) * stride
    shift_y = F.arange(0, feat_h) * stride
    shift_xx, shift_yy = _meshgrid(F, shift_x, shift_y, feat_w, feat_h)
    shifts = F.stack(shift_xx, shift_yy, shift_xx, shift_yy, axis=-1)
    anchors = F.broadcast_add(F.expand_dims(base_anchors, axis=0), F.expand_dims(shifts, axis=1))
    return F.reshape(anchors, shape=(-1, 4))


def valid_flags(F, feat_h, feat_w, valid_h, valid_w, num_base_anchors):
    valid_x = F.arange(0, feat_w) < valid_w
    valid_y = F.arange(0, feat_h) < valid_h
    valid_xx, valid_yy = _meshgrid(F, valid_x, valid_y, feat_w, feat_h)
    return F.cast(F.repeat(valid_xx * valid_yy, repeats=num_base_anchors), dtype="uint8")


def map_roi_levels(F, rois, num_levels=4, finest_scale=56.0):
    _, x1, y1, x2, y2 = _columns(F, rois, 5)
    scale = F.sqrt((x2 - x1) * (y2 - y1))
    return F.clip(F.floor(F.log2(scale / finest_scale + 1e-6)), 0, num_levels - 1)


def boxes_for_nms(F, boxes, idxs, class_agnostic=False):
    if class_agnostic:
        return boxes
    offsets = F.broadcast_mul(idxs, F.max(boxes) + 1)
    return F.broadcast_add(boxes, F.expand_dims(offsets, axis=1))


def masks_to_boxes(F, masks):
    if _empty(masks):
        return F.zeros((0, 4))
    x = F.reshape(F.contrib.arange_like(masks, axis=2), shape=(1, 1, -1))
    y = F.reshape(F.contrib.arange_like(masks, axis=1), shape=(1, -1, 1))
    x_mask, y_mask = F.broadcast_mul(masks, x), F.broadcast_mul(masks, y)
    background = (1 - masks) * 1e8
    return F.stack(
        F.min(x_mask + background, axis=(1, 2)),
        F.min(y_mask + background, axis=(1, 2)),
        F.max(x_mask, axis=(1, 2)),
        F.max(y_mask, axis=(1, 2)),
        axis=1,
    )


def bbox2roi(F, bbox_list):
    rois_list = []
    for image, bboxes in enumerate(bbox_list):
        if bboxes.shape[0] > 0:
            image_column = F.ones_like(F.slice_axis(bboxes, axis=1, begin=0, end=1)) * image
            rois = F.concat(image_column, F.slice_axis(bboxes, axis=1, begin=0, end=4), dim=-1)
        else:
            rois = F.zeros((0, 5))
        rois_list.append(rois)
    return F.concat(*rois_list, dim=0)


def sequence_mask(F, lengths, max_len=None):
    batch_size = lengths.shape[0]
    max_len = max_len or int(lengths.max().asscalar())
    positions = F.tile(F.arange(0, max_len, dtype="int64").reshape((1, -1)), reps=(batch_size, 1))
    return F.broadcast_lesser(positions, F.expand_dims(lengths, axis=1))


def make_positions(F, tokens, padding_idx=1):
    mask = tokens != padding_idx
    return F.cumsum(mask, axis=1) * mask + padding_idx


def nms_loop(F, boxes, scores, iou_threshold=0.5):
    order = [int(i) for i in F.argsort(scores, is_ascend=False).asnumpy()]
    keep = []
    while order:
        best, order = order[0], order[1:]
        keep.append(best)
        if not order:
            break
        others = F.take(boxes, F.array(order, ctx=boxes.context))
        ious = box_iou(F, F.slice_axis(boxes, axis=0, begin=best, end=best + 1), others)[0][0]
        order = [
            index for index, iou in zip(order, ious.asnumpy().tolist(), strict=True) if iou <= iou_threshold
        ]
    return F.array(keep, ctx=boxes.context, dtype="int64")


IMPLEMENTATIONS: dict[str, Callable[..., object]] = longtail.implementations(globals())
"""Long-tail operator name -> its MXNet implementation (``F`` first)."""
