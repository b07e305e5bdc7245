"""An input description's values on the host, drawn from a seeded numpy generator: what every
framework turns into its own arrays, so that one seed gives every framework the same values.

``--values`` chooses how the values of a floating-point tensor are distributed (``DISTRIBUTIONS``):
operators take other paths for negatives, zeros, NaNs and subnormal numbers, at other costs. A
distribution touches only what it may (``touches``): tensors the rules left at the default range;
a range a rule chose (``grid`` in [-1, 1], a probability) is the operator's domain and stays, as do
structured tensors, integer tensors and indices (but ``normal`` concentrates indices about the middle
of their range, still inside it). Every distribution is a function of uniform draws on [0, 1)
(``distributed``), written once over the array module (numpy or torch) a framework draws with.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from opperf.results.draws import (
    INDEX_SPREAD,
    NON_FINITE_FRACTION,
    NORMAL,
    SUBNORMAL,
    UNIFORM,
    UNIFORM_POSITIVE,
    WITH_NAN_INF,
    WITH_ZEROS,
    ZERO_FRACTION,
    uniform_range,
)
from opperf.results.measurement import InputValue, Structure, TensorSpec

# Integer tensors that are not indices are drawn from [1, 10): no zero divisors, no overflow.
INTEGER_RANGE = (1, 10)

FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64", "complex64", "complex128"})
_FORMATS = {
    "float16": (-14, 10),
    "bfloat16": (-126, 7),
    "float32": (-126, 23),
    "float64": (-1022, 52),
    "complex64": (-126, 23),
    "complex128": (-1022, 52),
}
"""Each float dtype's least normal exponent and its fraction bits."""
SMALLEST_NORMAL = {name: 2.0**exponent for name, (exponent, _) in _FORMATS.items()}
LARGEST_SUBNORMAL = {name: 2.0**exponent * (1 - 2.0**-bits) for name, (exponent, bits) in _FORMATS.items()}
"""Below it, a value drawn in float64 stays subnormal when it is rounded to the dtype."""


def touches(spec: TensorSpec, distribution: str, dtype: str) -> bool:
    """Whether ``distribution`` may change ``spec``'s values in a run of ``dtype``: a floating-point
    tensor at the default range, unstructured; or, for ``normal``, an index tensor."""
    if distribution == UNIFORM_POSITIVE or spec.structure is not None:
        return False
    if spec.integral:
        return distribution == NORMAL
    default_range = (spec.low, spec.high) == (TensorSpec.low, TensorSpec.high)
    return default_range and (spec.dtype or dtype) in FLOAT_DTYPES


def with_distribution(value: InputValue, distribution: str, dtype: str) -> InputValue:
    """``value`` (an input: a TensorSpec, a tuple of them, or anything else) with ``distribution``
    set on the tensors it may touch."""
    if isinstance(value, TensorSpec):
        return replace(value, values=distribution) if touches(value, distribution, dtype) else value
    if isinstance(value, tuple) and all(isinstance(item, TensorSpec) for item in value):
        return tuple(with_distribution(item, distribution, dtype) for item in value)
    return value


def distributed(spec: TensorSpec, dtype: str, uniform: Callable[[], Any], xp: Any) -> Any:
    """``spec``'s values (float64, of ``spec.shape``) in its distribution, from draws of
    ``uniform()`` (uniform on [0, 1), of the spec's shape, float64) with the array module ``xp``
    (numpy or torch: both have where, log, sqrt, cos, floor and clip)."""
    distribution = spec.values
    if distribution == NORMAL:
        normal = _standard_normal(uniform, xp)
        if not spec.integral:
            return normal
        middle, spread = (spec.low + spec.high) / 2, (spec.high - spec.low) * INDEX_SPREAD
        return xp.clip(xp.floor(middle + spread * normal), math.ceil(spec.low), math.ceil(spec.high) - 1)
    if distribution.partition(":")[0] == UNIFORM:
        low, high = uniform_range(distribution)
        return low + (high - low) * uniform()
    if distribution == SUBNORMAL:
        return LARGEST_SUBNORMAL[spec.dtype or dtype] * uniform()
    values = spec.low + (spec.high - spec.low) * uniform()
    chosen = uniform()
    if distribution == WITH_ZEROS:
        return xp.where(chosen < ZERO_FRACTION, 0.0, values)
    if distribution == WITH_NAN_INF:
        for index, special in enumerate((math.nan, math.inf, -math.inf)):
            band = (chosen >= index * NON_FINITE_FRACTION) & (chosen < (index + 1) * NON_FINITE_FRACTION)
            values = xp.where(band, special, values)
        return values
    raise ValueError(f"unknown value distribution {distribution!r}")


def _standard_normal(uniform: Callable[[], Any], xp: Any) -> Any:
    """Box and Muller's transform of two uniform draws (1 - u keeps the logarithm finite)."""
    radius = xp.sqrt(-2.0 * xp.log(1.0 - uniform()))
    return radius * xp.cos(2.0 * math.pi * uniform())


def describe_distribution(spec: TensorSpec, dtype: str) -> str:
    """What values ``spec`` gets, as ``opperf explain`` shows it."""
    target = spec.dtype or dtype
    if spec.structure is not None:
        return f"{spec.structure} structure"
    if spec.integral:
        indices = f"indices in [{math.ceil(spec.low)}, {math.ceil(spec.high) - 1}]"
        return f"{indices}, concentrated about the middle" if spec.values == NORMAL else indices
    if target not in FLOAT_DTYPES:
        return f"integers in [{INTEGER_RANGE[0]}, {INTEGER_RANGE[1] - 1}]" if target != "bool" else "booleans"
    if spec.values == UNIFORM_POSITIVE:
        return f"uniform in [{spec.low:g}, {spec.high:g})"
    if spec.values.partition(":")[0] == UNIFORM:
        low, high = uniform_range(spec.values)
        return f"uniform in [{low:g}, {high:g})"
    return {
        NORMAL: "standard normal",
        WITH_ZEROS: f"uniform in [{spec.low:g}, {spec.high:g}), a quarter zeros",
        WITH_NAN_INF: f"uniform in [{spec.low:g}, {spec.high:g}), 5% each NaN, +inf, -inf",
        SUBNORMAL: f"subnormal, in [0, {SMALLEST_NORMAL.get(target, 0):g})",
    }[spec.values]


def host_values(spec: TensorSpec, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """The tensor's values on the host: in its distribution (uniform in the spec's range unless
    ``--values`` set another), shaped by its structure."""
    target = np.dtype(spec.dtype or dtype)
    if spec.values != UNIFORM_POSITIVE:
        values = distributed(spec, target.name, lambda: rng.uniform(size=spec.shape), np)
        if spec.integral and target == np.float16:
            target = np.dtype(np.float32)  # float16 cannot hold large indices exactly
        if spec.storage != "default":
            values = _sparsified(values, spec, rng)
        return values.astype(target, copy=False)
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
