"""The long-tail operators in PyTorch, each written once from its definition (``opperf.operators.longtail``).

Written as the detection and NLP code they come from writes them: Python over basic operators, typed
so that ``torch.jit.script`` can try them (the graph stage); where it cannot, the stage is skipped
with its error. MXNet's are in ``opperf/frameworks/mxnet/longtail.py``, the same names and arguments.
"""

import math
from collections.abc import Callable
from typing import cast

import torch
import torch.nn.functional as F  # noqa: N812

from opperf.operators import longtail

_RATIO_CLIP = abs(math.log(16.0 / 1000))


def _centres(boxes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    widths = boxes[..., 2] - boxes[..., 0]
    heights = boxes[..., 3] - boxes[..., 1]
    return boxes[..., 0] + 0.5 * widths, boxes[..., 1] + 0.5 * heights, widths, heights


def bbox2delta(
    proposals: torch.Tensor,
    gt: torch.Tensor,
    means: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0),
    stds: tuple[float, float, float, float] = (0.1, 0.1, 0.2, 0.2),
) -> torch.Tensor:
    px, py, pw, ph = _centres(proposals)
    gx, gy, gw, gh = _centres(gt)
    deltas = torch.stack([(gx - px) / pw, (gy - py) / ph, torch.log(gw / pw), torch.log(gh / ph)], dim=-1)
    mean = deltas.new_tensor(means).unsqueeze(0)
    std = deltas.new_tensor(stds).unsqueeze(0)
    return (deltas - mean) / std


def delta2bbox(
    rois: torch.Tensor,
    deltas: torch.Tensor,
    max_shape: tuple[float, float] | None = None,
    means: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0),
    stds: tuple[float, float, float, float] = (0.1, 0.1, 0.2, 0.2),
) -> torch.Tensor:
    denorm = deltas * deltas.new_tensor(stds).view(1, -1) + deltas.new_tensor(means).view(1, -1)
    dx, dy = denorm[:, 0], denorm[:, 1]
    dw = denorm[:, 2].clamp(min=-_RATIO_CLIP, max=_RATIO_CLIP)
    dh = denorm[:, 3].clamp(min=-_RATIO_CLIP, max=_RATIO_CLIP)
    px, py, pw, ph = _centres(rois)
    gw, gh = pw * dw.exp(), ph * dh.exp()
    gx, gy = px + pw * dx, py + ph * dy
    x1, y1, x2, y2 = gx - gw * 0.5, gy - gh * 0.5, gx + gw * 0.5, gy + gh * 0.5
    if max_shape is not None:
        x1 = x1.clamp(min=0.0, max=max_shape[1])
        y1 = y1.clamp(min=0.0, max=max_shape[0])
        x2 = x2.clamp(min=0.0, max=max_shape[1])
        y2 = y2.clamp(min=0.0, max=max_shape[0])
    return torch.stack([x1, y1, x2, y2], dim=-1)


def tblr2bbox(
    priors: torch.Tensor, tblr: torch.Tensor, normalizer: float = 4.0, normalize_by_wh: bool = True
) -> torch.Tensor:
    offsets = tblr * normalizer
    centres = (priors[:, 0:2] + priors[:, 2:4]) / 2
    if normalize_by_wh:
        sizes = priors[:, 2:4] - priors[:, 0:2]
        heights, widths = sizes[:, 1:2], sizes[:, 0:1]
        offsets = offsets * torch.cat([heights, heights, widths, widths], dim=1)
    top, bottom, left, right = offsets.split(1, dim=1)
    cx, cy = centres[:, 0:1], centres[:, 1:2]
    return torch.cat([cx - left, cy - top, cx + right, cy + bottom], dim=1)


def yolo_decode(bboxes: torch.Tensor, pred_bboxes: torch.Tensor, stride: float) -> torch.Tensor:
    centres = (bboxes[..., :2] + bboxes[..., 2:]) * 0.5 + (pred_bboxes[..., :2] - 0.5) * stride
    half_sizes = (bboxes[..., 2:] - bboxes[..., :2]) * 0.5 * pred_bboxes[..., 2:].exp()
    return torch.stack(
        [
            centres[..., 0] - half_sizes[..., 0],
            centres[..., 1] - half_sizes[..., 1],
            centres[..., 0] + half_sizes[..., 0],
            centres[..., 1] + half_sizes[..., 1],
        ],
        dim=-1,
    )


def _area(boxes: torch.Tensor) -> torch.Tensor:
    return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])


def bbox_overlaps(
    bboxes1: torch.Tensor,
    bboxes2: torch.Tensor,
    mode: str = "iou",
    is_aligned: bool = False,
    eps: float = 1e-6,
) -> torch.Tensor:
    area1, area2 = _area(bboxes1), _area(bboxes2)
    if is_aligned:
        lt = torch.max(bboxes1[..., :2], bboxes2[..., :2])
        rb = torch.min(bboxes1[..., 2:], bboxes2[..., 2:])
        union = area1 + area2 if mode != "iof" else area1
        enclosed_lt = torch.min(bboxes1[..., :2], bboxes2[..., :2])
        enclosed_rb = torch.max(bboxes1[..., 2:], bboxes2[..., 2:])
    else:
        lt = torch.max(bboxes1[..., :, None, :2], bboxes2[..., None, :, :2])
        rb = torch.min(bboxes1[..., :, None, 2:], bboxes2[..., None, :, 2:])
        union = area1[..., None] + area2[..., None, :] if mode != "iof" else area1[..., None]
        enclosed_lt = torch.min(bboxes1[..., :, None, :2], bboxes2[..., None, :, :2])
        enclosed_rb = torch.max(bboxes1[..., :, None, 2:], bboxes2[..., None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    overlap = wh[..., 0] * wh[..., 1]
    if mode != "iof":
        union = union - overlap
    union = union.clamp(min=eps)
    ious = overlap / union
    if mode in ("iou", "iof"):
        return ious
    enclose_wh = (enclosed_rb - enclosed_lt).clamp(min=0)
    enclose_area = (enclose_wh[..., 0] * enclose_wh[..., 1]).clamp(min=eps)
    return ious - (enclose_area - union) / enclose_area


def box_iou(boxes1: torch.Tensor, boxes2: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    area1, area2 = _area(boxes1), _area(boxes2)
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    union = area1[:, None] + area2 - inter
    return inter / union, union


def giou_loss(pred: torch.Tensor, target: torch.Tensor, eps: float = 1e-7) -> torch.Tensor:
    gious = bbox_overlaps(pred, target, mode="giou", is_aligned=True, eps=eps)
    return (1 - gious).mean()


def sigmoid_focal_loss(
    pred: torch.Tensor,
    target: torch.Tensor,
    gamma: float = 2.0,
    alpha: float = 0.25,
    reduction: str = "mean",
) -> torch.Tensor:
    probabilities = pred.sigmoid()
    target = target.type_as(pred)
    one_minus_pt = (1 - probabilities) * target + probabilities * (1 - target)
    weight = (alpha * target + (1 - alpha) * (1 - target)) * one_minus_pt.pow(gamma)
    loss = F.binary_cross_entropy_with_logits(pred, target, reduction="none") * weight
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def focal_loss(
    logits: torch.Tensor,
    labels: torch.Tensor,
    ignore_index: int = 255,
    alpha: float = 0.25,
    gamma: float = 2.0,
) -> torch.Tensor:
    ce = F.cross_entropy(logits, labels, ignore_index=ignore_index, reduction="none")
    return (alpha * (1 - torch.exp(-ce)) ** gamma * ce).mean()


def mmdet_smooth_l1_loss(pred: torch.Tensor, target: torch.Tensor, beta: float = 1.0) -> torch.Tensor:
    if target.numel() == 0:
        return pred.sum() * 0
    diff = torch.abs(pred - target)
    return torch.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta).mean()


def gen_base_anchors(ratios: torch.Tensor, scales: torch.Tensor, base_size: int) -> torch.Tensor:
    x_centre = y_centre = 0.5 * (base_size - 1)
    h_ratios = torch.sqrt(ratios)
    w_ratios = 1 / h_ratios
    widths = (base_size * w_ratios[:, None] * scales[None, :]).view(-1)
    heights = (base_size * h_ratios[:, None] * scales[None, :]).view(-1)
    anchors = torch.stack(
        [
            x_centre - 0.5 * (widths - 1),
            y_centre - 0.5 * (heights - 1),
            x_centre + 0.5 * (widths - 1),
            y_centre + 0.5 * (heights - 1),
        ],
        dim=-1,
    )
    return anchors.round()


def _meshgrid(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    xx = x.repeat(y.numel())
    yy = y.view(-1, 1).repeat(1, x.numel()).view(-1)
    return xx, yy


def grid_anchors(base_anchors: torch.Tensor, feat_h: int, feat_w: int, stride: int) -> torch.Tensor:
    shift_x = torch.arange(0, feat_w, device=base_anchors.device).to(base_anchors.dtype) * stride
    shift_y = torch.arange(0, feat_h, device=base_anchors.device).to(base_anchors.dtype) * stride
    shift_xx, shift_yy = _meshgrid(shift_x, shift_y)
    shifts = torch.stack([shift_xx, shift_yy, shift_xx, shift_yy], dim=-1)
    return (base_anchors[None, :, :] + shifts[:, None, :]).view(-1, 4)


def valid_flags(feat_h: int, feat_w: int, valid_h: int, valid_w: int, num_base_anchors: int) -> torch.Tensor:
    valid_x = torch.zeros(feat_w, dtype=torch.uint8)
    valid_y = torch.zeros(feat_h, dtype=torch.uint8)
    valid_x[:valid_w] = 1
    valid_y[:valid_h] = 1
    valid_xx, valid_yy = _meshgrid(valid_x, valid_y)
    valid = valid_xx & valid_yy
    return valid[:, None].expand(valid.size(0), num_base_anchors).contiguous().view(-1)


def map_roi_levels(rois: torch.Tensor, num_levels: int = 4, finest_scale: float = 56.0) -> torch.Tensor:
    scale = torch.sqrt((rois[:, 3] - rois[:, 1]) * (rois[:, 4] - rois[:, 2]))
    levels = torch.floor(torch.log2(scale / finest_scale + 1e-6))
    return levels.clamp(min=0, max=num_levels - 1).long()


def boxes_for_nms(boxes: torch.Tensor, idxs: torch.Tensor, class_agnostic: bool = False) -> torch.Tensor:
    if class_agnostic:
        return boxes
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + 1)
    return boxes + offsets[:, None]


def masks_to_boxes(masks: torch.Tensor) -> torch.Tensor:
    if masks.numel() == 0:
        return torch.zeros((0, 4), device=masks.device)
    h, w = masks.shape[-2:]
    y = torch.arange(0, h, dtype=masks.dtype, device=masks.device)
    x = torch.arange(0, w, dtype=masks.dtype, device=masks.device)
    y, x = torch.meshgrid(y, x, indexing="ij")
    x_mask = masks * x.unsqueeze(0)
    x_max = x_mask.flatten(1).max(-1)[0]
    x_min = x_mask.masked_fill(~(masks.bool()), 1e8).flatten(1).min(-1)[0]
    y_mask = masks * y.unsqueeze(0)
    y_max = y_mask.flatten(1).max(-1)[0]
    y_min = y_mask.masked_fill(~(masks.bool()), 1e8).flatten(1).min(-1)[0]
    return torch.stack([x_min, y_min, x_max, y_max], 1)


def bbox2roi(bbox_list: list[torch.Tensor]) -> torch.Tensor:
    rois_list = []
    for image, bboxes in enumerate(bbox_list):
        if bboxes.size(0) > 0:
            image_column = bboxes.new_full((bboxes.size(0), 1), float(image))
            rois = torch.cat([image_column, bboxes[:, :4]], dim=-1)
        else:
            rois = bboxes.new_zeros((0, 5))
        rois_list.append(rois)
    return torch.cat(rois_list, 0)


def sequence_mask(lengths: torch.Tensor, max_len: int | None = None) -> torch.Tensor:
    batch_size = lengths.numel()
    max_len = max_len or cast(int, lengths.max())  # a 0-d tensor, which arange takes as its end
    return (
        torch.arange(0, max_len, device=lengths.device)
        .type_as(lengths)
        .repeat(batch_size, 1)
        .lt(lengths.unsqueeze(1))
    )


def make_positions(tokens: torch.Tensor, padding_idx: int = 1) -> torch.Tensor:
    mask = tokens.ne(padding_idx).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + padding_idx


def nms_loop(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float = 0.5) -> torch.Tensor:
    order = scores.argsort(descending=True).tolist()
    keep = []
    while order:
        best, order = order[0], order[1:]
        keep.append(best)
        if not order:
            break
        ious = box_iou(boxes[best : best + 1], boxes[order])[0][0]
        order = [index for index, iou in zip(order, ious.tolist(), strict=True) if iou <= iou_threshold]
    return torch.tensor(keep, dtype=torch.long, device=boxes.device)


IMPLEMENTATIONS: dict[str, Callable[..., object]] = longtail.implementations(globals())
"""Long-tail operator name -> its PyTorch implementation."""
