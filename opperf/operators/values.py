"""An input description's values on the host, drawn from a seeded numpy generator: what every
framework turns into its own arrays, so that one seed gives every framework the same values."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from opperf.results.measurement import Structure, TensorSpec

# Integer tensors that are not indices are drawn from [1, 10): no zero divisors, no overflow.
INTEGER_RANGE = (1, 10)


def host_values(spec: TensorSpec, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """The tensor's values on the host: uniform in the spec's range, shaped by its structure."""
    target = np.dtype(spec.dtype or dtype)
    if spec.structure == "png":
        pixels = rng.integers(0, 256, size=spec.shape, dtype=np.uint8)
        return np.frombuffer(png_file(pixels), dtype=np.uint8)
    if spec.structure == "sorted_unique":
        ids = rng.choice(np.arange(int(spec.low), int(spec.high)), size=spec.shape, replace=False)
        return np.sort(ids).astype(target)
    if spec.integral:
        values = np.floor(rng.uniform(spec.low, spec.high, size=spec.shape))
        if target == np.float16:
            target = np.dtype(np.float32)  # float16 cannot hold large indices exactly
    elif np.issubdtype(target, np.integer):
        values = rng.integers(*INTEGER_RANGE, size=spec.shape)
    else:
        values = rng.uniform(spec.low, spec.high, size=spec.shape)
    if spec.structure == "boxes":
        values = boxes(values, spec.low, spec.high)
    elif spec.structure is not None:
        values = _structured(values, spec.structure)
    if spec.storage != "default":
        values = _sparsified(values, spec, rng)
    return values.astype(target, copy=False)


# PNG colour types by channel count: grey, RGB, RGBA.
_PNG_COLOUR_TYPES = {1: 0, 3: 2, 4: 6}


def png_file(pixels: np.ndarray) -> bytes:
    """A PNG file of a (height, width, channels) uint8 image: 8 bits per channel, rows unfiltered,
    zlib-compressed as the format requires."""
    height, width, channels = pixels.shape
    rows = pixels.reshape(height, width * channels)
    raw = b"".join(b"\x00" + row.tobytes() for row in rows)  # filter type 0 before each row
    header = struct.pack(">IIBBBBB", width, height, 8, _PNG_COLOUR_TYPES[channels], 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + b"".join(
        _png_chunk(kind, data)
        for kind, data in ((b"IHDR", header), (b"IDAT", zlib.compress(raw)), (b"IEND", b""))
    )


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _sparsified(values: np.ndarray, spec: TensorSpec, rng: np.random.Generator) -> np.ndarray:
    """``values`` with all but a ``density`` fraction of the elements (CSR) or rows zeroed."""
    kept_shape = values.shape if spec.storage == "csr" else values.shape[:1] + (1,) * (values.ndim - 1)
    return np.where(rng.uniform(size=kept_shape) < spec.density, values, 0)


def boxes(values: Any, low: float, high: float, concatenate: Callable[..., Any] = np.concatenate) -> Any:
    """Uniform values whose last four entries (last axis) become x1, y1, x2, y2 inside [low, high)
    with sizes 5% to 50% of the range (see ``opperf.results.measurement.Structure``): NumPy arrays,
    or a framework's tensors with its ``concatenate(parts, axis)``."""
    span = high - low
    fraction = (values[..., -4:] - low) / span
    start = low + 0.5 * span * fraction[..., :2]
    end = start + span * (0.05 + 0.45 * fraction[..., 2:])
    return concatenate([values[..., :-4], start, end], -1)


def _structured(values: np.ndarray, structure: Structure) -> np.ndarray:
    """Square matrices (over the last two axes) that factorizations and inverses accept."""
    n = values.shape[-1]
    identity = n * np.eye(n)
    if structure == "spd":
        return values @ np.swapaxes(values, -1, -2) + identity
    return np.tril(values) + identity
