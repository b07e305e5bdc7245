"""Turning input descriptions into MXNet arrays on a device, from a seeded generator."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Hashable
from typing import Any

import numpy as np

from opperf.results.measurement import InputValue, Structure, TensorSpec, is_given_array, is_tensor_list
from opperf.utils.draws import DrawCache, GeneratorState, drawn

NUMPY_FRONTEND = "np"
ND_FRONTEND = "nd"

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
        values = _boxes(values, spec.low, spec.high)
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


def _boxes(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """Uniform values whose last four entries (last axis) become x1, y1, x2, y2 inside [low, high)
    with sizes 5% to 50% of the range (see ``opperf.results.measurement.Structure``)."""
    span = high - low
    fraction = (values[..., -4:] - low) / span
    start = low + 0.5 * span * fraction[..., :2]
    end = start + span * (0.05 + 0.45 * fraction[..., 2:])
    return np.concatenate([values[..., :-4], start, end], axis=-1)


def _structured(values: np.ndarray, structure: Structure) -> np.ndarray:
    """Square matrices (over the last two axes) that factorizations and inverses accept."""
    n = values.shape[-1]
    identity = n * np.eye(n)
    if structure == "spd":
        return values @ np.swapaxes(values, -1, -2) + identity
    return np.tril(values) + identity


def _frozen(state: object) -> Hashable:
    """A generator state (nested dicts of numbers) as a hashable value."""
    if isinstance(state, dict):
        return tuple((key, _frozen(value)) for key, value in sorted(state.items()))
    return state


def _restore(rng: np.random.Generator, state: Any) -> None:
    rng.bit_generator.state = state


NUMPY_STATE = GeneratorState(
    key=lambda rng: _frozen(rng.bit_generator.state),
    read=lambda rng: rng.bit_generator.state,
    restore=_restore,
)


def host_draws() -> DrawCache[np.ndarray]:
    """A cache of host values drawn from numpy generators (``opperf.utils.draws``): kept arrays are
    read-only, and every caller copies them into an MXNet array, so they are handed out as they are."""
    return DrawCache(NUMPY_STATE, size=lambda values: values.nbytes, copy=lambda values: values)


def _read_only(values: np.ndarray) -> np.ndarray:
    values.flags.writeable = False
    return values


def make_array(
    spec: TensorSpec, dtype: str, ctx, frontend: str, rng: np.random.Generator, draws: DrawCache | None = None
):
    """An MXNet array of the spec's values; ``draws`` remembers values drawn before."""
    import mxnet as mx

    values = drawn(draws, (spec, dtype), rng, lambda: _read_only(host_values(spec, dtype, rng)))
    array = mx.nd.array(values, ctx=ctx, dtype=values.dtype)
    if spec.storage != "default":
        return array.tostype(spec.storage)
    return array.as_np_ndarray() if frontend == NUMPY_FRONTEND else array


def materialize(
    value: InputValue,
    dtype: str,
    ctx,
    frontend: str,
    rng: np.random.Generator,
    draws: DrawCache | None = None,
) -> Any:
    """Arrays for TensorSpecs (and tuples of them); given arrays move to the frontend; scalars pass."""
    if isinstance(value, TensorSpec):
        return make_array(value, dtype, ctx, frontend, rng, draws)
    if is_tensor_list(value):
        return [make_array(v, dtype, ctx, frontend, rng, draws) for v in value]
    if is_given_array(value):
        return _to_frontend(value, frontend)
    return value


def _to_frontend(array, frontend: str):
    import mxnet as mx

    if frontend == NUMPY_FRONTEND and not isinstance(array, mx.np.ndarray):
        return array.as_np_ndarray()
    if frontend == ND_FRONTEND and isinstance(array, mx.np.ndarray):
        return array.as_nd_ndarray()
    return array


def is_array(value: object) -> bool:
    import mxnet as mx

    return isinstance(value, mx.nd.NDArray)


def is_float_array(value: Any) -> bool:
    return is_array(value) and np.issubdtype(value.dtype, np.floating)


def flatten_outputs(outputs: object) -> list:
    """The operator's array outputs as a flat list (operators return one array or a list)."""
    if is_array(outputs):
        return [outputs]
    if isinstance(outputs, (list, tuple)):
        return [o for o in outputs if is_array(o)]
    return []
