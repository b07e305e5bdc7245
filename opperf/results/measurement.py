"""What is benchmarked (``BenchmarkSpec``) and what was measured (``Measurement``).

Both are immutable and pass through every layer: rules produce specs, backends turn specs into
measurements, reports render measurements. Units are SI: seconds and bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal, Protocol, TypeGuard, get_args

from opperf.measure.sampling import StopReason
from opperf.measure.stages import EAGER, StageCheck
from opperf.results.draws import UNIFORM_POSITIVE
from opperf.results.options import RunOptions
from opperf.utils.gpu_state import GpuState
from opperf.utils.stats import Summary, ratio, summarize


class Status(str, Enum):
    """How a benchmark ended."""

    OK = "ok"
    SKIPPED = "skipped"
    FAILED = "failed"
    CRASHED = "crashed"
    TIMEOUT = "timeout"


SEVERITY: dict[str, int] = {
    Status.OK: 0,
    Status.SKIPPED: 1,
    Status.TIMEOUT: 2,
    Status.FAILED: 3,
    Status.CRASHED: 4,
}
"""Each status by how bad it is (a status's text finds its member): a row's side takes its worst
run's, an operator's coverage its worst configuration's."""


Storage = Literal[
    "default",
    "csr",
    "row_sparse",
    "csc",
    "mkldnn",
    "per_channel",
    "fbgemm_packed",
    "nested",
    "sliced",
    "transposed",
    "channels_last",
]
"""How a tensor is stored: dense, compressed sparse rows, or a subset of non-zero rows (MXNet and
PyTorch); and for PyTorch only: compressed sparse columns, MKL-DNN's opaque layout, quantized per
channel along dimension 0 (a quantized dtype), packed for FBGEMM's matrix product, a nested (jagged)
tensor of the rows, a non-contiguous view (every second element along the last axis), the transpose
of a contiguous tensor (column-major over the last two axes), or channels-last memory (rank 4 or 5)."""


Structure = Literal["spd", "lower_triangular", "sorted_unique", "png", "boxes"]
"""Matrix structure over the last two axes: symmetric positive-definite, or lower-triangular with a
dominant diagonal (factorizations, inverses and triangular solves need one of them); or, for a vector,
distinct integers in [low, high) in ascending order (vertex and row id lists); or, for a (height, width,
channels) shape, the PNG file of a uint8 image of random pixels that size, as a vector of its bytes
(what image decoders take; MXNet only); or ``boxes``: the last four entries of the last axis are
x1, y1, x2, y2 within [low, high), each width and height 5% to 50% of the range (long-tail operators)."""


@dataclass(frozen=True)
class TensorSpec:
    """A tensor input to generate: its shape, an optional dtype (else the run's dtype) and value range.

    Values are drawn uniformly from [low, high), positive by default so logarithms and roots stay
    finite; ``integral`` rounds them down, which is how index arguments stay within bounds. A sparse
    ``storage`` keeps a ``density`` fraction of the elements (CSR, CSC) or of the rows (row_sparse)
    non-zero. ``values`` names another distribution (``--values``, see ``opperf.operators.values``):
    the run's option sets it where it may touch the tensor, just before the tensor is drawn, so a
    record's inputs never carry it (the record's ``values`` does).
    """

    shape: tuple[int, ...]
    dtype: str | None = None
    low: float = 0.1
    high: float = 1.0
    integral: bool = False
    structure: Structure | None = None
    storage: Storage = "default"
    density: float = 1.0
    values: str = UNIFORM_POSITIVE

    @property
    def size(self) -> int:
        count = 1
        for dim in self.shape:
            count *= dim
        return count

    def describe(self) -> dict[str, object]:
        described: dict[str, Any] = {"shape": list(self.shape)}
        if self.dtype is not None:
            described["dtype"] = self.dtype
        if self.storage != "default":
            described["storage"] = self.storage
            described["density"] = self.density
        return described


@dataclass(frozen=True)
class Alias:
    """The arrays of another input (every ``step``-th of a list), for operators that write in place:
    ``out=Alias("data", step=2)`` passes the weights of a flat (weight, grad) list as ``out``."""

    source: str
    step: int = 1
    count: int | None = None

    def select(self, arrays: list) -> list:
        return arrays[:: self.step][: self.count]

    def describe(self) -> dict[str, object]:
        return {"alias_of": self.source, "step": self.step, "count": self.count}


InputValue = object
"""A TensorSpec, a tuple of TensorSpecs (a tensor list), or a scalar/tuple/string argument value."""


def freeze_inputs(inputs: dict[str, InputValue]) -> tuple[tuple[str, InputValue], ...]:
    """Inputs as a hashable, order-preserving tuple of (argument name, value) pairs."""
    return tuple((name, _freeze(value)) for name, value in inputs.items())


def _freeze(value: InputValue) -> InputValue:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark: an operator in a namespace, with one input configuration, run as ``options`` say.

    ``op`` is the registry's canonical name (the stable key); ``function`` the name in ``namespace``
    when it differs; ``stage`` how it runs (``opperf.measure.stages``: eager, graph, compile), one of the
    options' ``stages``; ``variant`` which of a fused pattern's ways to run in that stage
    (``opperf.operators.fused``: unfused, parts, mkldnn, ...), empty for every other operator.
    """

    namespace: str
    op: str
    inputs: tuple[tuple[str, InputValue], ...]
    options: RunOptions = field(default_factory=RunOptions)
    category: str = "misc"
    function: str = ""
    stage: str = EAGER
    variant: str = ""

    @property
    def framework(self) -> str:
        return self.options.framework

    @property
    def label(self) -> str:
        """How users call it: ``mx.np.add`` for the registry's ``_npi_add``."""
        return f"{self.namespace}.{self.function or self.op}"

    def describe_inputs(self) -> dict[str, object]:
        """The inputs as plain data: tensors as ``{"shape": [...]}``, tuples as lists."""
        return {name: describe_value(value) for name, value in self.inputs}


class GivenArray(Protocol):
    """What opperf reads of an array the caller passed in (any framework's)."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def dtype(self) -> object: ...


def is_tensor_list(value: object) -> TypeGuard[tuple[TensorSpec, ...]]:
    """A non-empty tuple of TensorSpecs: a variable-length tensor argument."""
    return isinstance(value, tuple) and bool(value) and all(isinstance(v, TensorSpec) for v in value)


def is_given_array(value: object) -> TypeGuard[GivenArray]:
    """An array the caller passed in (any framework's): it has a shape and a dtype."""
    return (
        hasattr(value, "shape")
        and hasattr(value, "dtype")
        and not isinstance(value, (TensorSpec, tuple, list))
    )


def describe_value(value: InputValue) -> object:
    if isinstance(value, (TensorSpec, Alias)):
        return value.describe()
    if is_given_array(value):
        return {"shape": list(value.shape), "dtype": str(value.dtype), "given": True}
    if isinstance(value, tuple):
        return [describe_value(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return {NON_FINITE_KEY: repr(value)}
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return repr(value)


NON_FINITE_KEY = "float"
"""A non-finite number as an input (``a_min=-inf``) is ``{"float": "-inf"}`` (``inf``, ``nan``):
JSON has no such number, and a results file must load in every JSON reader."""
NON_FINITE = ("inf", "-inf", "nan")


MAX_NESTING = 8
"""How deep a described input's lists may nest (a pad width's pairs are two deep)."""

_TENSOR_KEYS = frozenset({"shape", "dtype", "storage", "density", "given"})
_ALIAS_KEYS = frozenset({"alias_of", "step", "count"})


def input_from_json(value: object, depth: int = 0) -> InputValue:
    """A described input (``describe_value``'s form, as results and configs files hold it) back as an
    input value: ``{"shape": [...]}`` is a tensor, ``{"alias_of": ...}`` an alias, a list a tuple.
    Raises ValueError naming what is wrong with anything ``describe_value`` never writes."""
    if depth > MAX_NESTING:
        raise ValueError(f"lists nested more than {MAX_NESTING} deep")
    if isinstance(value, dict):
        if "shape" in value:
            return _tensor_from_json(value)
        if "alias_of" in value:
            return _alias_from_json(value)
        if NON_FINITE_KEY in value:
            return _non_finite_from_json(value)
        raise ValueError(
            f"an object with keys {', '.join(sorted(map(str, value))) or 'none'} is no input; a tensor is "
            '{"shape": [...]}'
        )
    if isinstance(value, list):
        return tuple(input_from_json(item, depth + 1) for item in value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ValueError(f"{value!r} is no input value")


def _tensor_from_json(value: dict) -> TensorSpec:
    _known_keys(value, _TENSOR_KEYS, "a tensor")
    shape = value["shape"]
    if not isinstance(shape, list) or not all(_natural(d) for d in shape):
        raise ValueError(f"a tensor's shape is {shape!r}; it is a list of non-negative integers")
    dtype = value.get("dtype")
    if dtype is not None and not isinstance(dtype, str):
        raise ValueError(f'a tensor\'s dtype is {dtype!r}; it is a name such as "float32"')
    storage = value.get("storage", "default")
    if storage not in get_args(Storage):
        raise ValueError(f"a tensor's storage is {storage!r}, not one of {', '.join(get_args(Storage))}")
    density = value.get("density", 1.0)
    if isinstance(density, bool) or not isinstance(density, (int, float)) or not 0 < density <= 1:
        raise ValueError(f"a tensor's density is {density!r}; it is a fraction in (0, 1]")
    return TensorSpec(tuple(shape), dtype=dtype, storage=storage, density=float(density))


def _non_finite_from_json(value: dict) -> float:
    _known_keys(value, frozenset({NON_FINITE_KEY}), "a non-finite number")
    if value[NON_FINITE_KEY] not in NON_FINITE:
        raise ValueError(f'a non-finite number is {value!r}; it is {{"float": "inf"}}, "-inf" or "nan"')
    return float(value[NON_FINITE_KEY])


def _alias_from_json(value: dict) -> Alias:
    _known_keys(value, _ALIAS_KEYS, "an alias")
    source, step, count = value["alias_of"], value.get("step", 1), value.get("count")
    valid_count = count is None or _natural(count)
    if not isinstance(source, str) or not _natural(step) or step < 1 or not valid_count:
        raise ValueError(
            f'an alias is {value!r}; it is {{"alias_of": NAME, "step": N >= 1, "count": N or null}}'
        )
    return Alias(source, step, count)


def _known_keys(value: dict, known: frozenset[str], what: str) -> None:
    unknown = sorted(set(map(str, value)) - known)
    if unknown:
        raise ValueError(f"{what} has no key {unknown[0]!r} (it has: {', '.join(sorted(known))})")


def _natural(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


TimerKind = Literal["device", "profiler", "host"]
"""What made a measurement's samples: ``device``, the device time of the work each call ran on a GPU
(kernels, memory copies and sets, from CUPTI through the framework's profiler); ``profiler``, the host
time of the operators the framework's profiler recorded; ``host``, the synchronised wall-clock time of
each call (the Python timer)."""


@dataclass(frozen=True)
class DeviceWork:
    """One piece of device work a configuration's calls ran in one phase (``forward``/``backward``):
    a kernel, memory copy or memory set by name, how many times a call ran it, and its device seconds
    per call (all runs together)."""

    phase: str
    kind: str
    name: str
    per_call: float
    seconds: float

    def to_json(self) -> dict[str, object]:
        return {
            "phase": self.phase,
            "kind": self.kind,
            "name": self.name,
            "per_call": round(self.per_call, 4),
            "seconds": round(self.seconds, 10),
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> DeviceWork:
        return cls(
            phase=str(value["phase"]),
            kind=str(value["kind"]),
            name=str(value["name"]),
            per_call=float(value["per_call"]),
            seconds=float(value["seconds"]),
        )


@dataclass(frozen=True)
class Work:
    """Compulsory bytes moved (inputs read once, outputs written once) and floating-point operations."""

    bytes_moved: int
    flops: int

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOPs per byte: which roof bounds the operator."""
        return ratio(self.flops, self.bytes_moved)


@dataclass(frozen=True)
class Measurement:
    """The outcome of one spec: samples in seconds, peak memory in bytes, status and reason.

    ``backward`` is None exactly when the backward pass was not measured; ``backward_reason`` says why
    (not requested, no gradient registered, no differentiable input). ``warmup_runs``, ``stop_reason``
    and ``met_target`` say how sampling went (``met_target`` is None for fixed run counts), ``retaken``
    how many samples a stretch of competing load inflated were measured again, and
    ``load_dominated`` whether half or more stayed inflated (``opperf.measure.sampling``);
    ``competing_load`` is the cores' worth of CPU other processes used meanwhile (None if unknown);
    ``sampling_s`` the wall-clock seconds warm-up and measured passes took together (the part of a
    sweep spent running the operator rather than preparing or reporting it). For a graph or compile
    stage, ``compile_s`` is the seconds capturing or compiling took (with the first call, measured once,
    never a sample) and ``stage_check`` how its outputs compared with eager ones. ``timer`` says what
    made the samples (None in files written before it was recorded). On a GPU, where samples are device
    time, ``host_forward``/``host_backward`` are the synchronised wall-clock times of calls timed apart
    from them, ``device_work`` what the calls ran on the device, and ``gpu_state`` the GPU's clocks,
    power, temperature and throttle reasons before and after (``opperf.utils.gpu_state``).
    ``counted_work`` is the forward pass's work as the framework counted it while preparing (XLA's
    cost analysis for JAX), for the roofline where opperf's own counters have none. ``elapsed_s`` is
    the wall-clock seconds a sweep spent on the spec, from asking for it to having its result (inputs
    prepared, a crashed worker waited for): what ``--costs`` balances the next sweep's shards by.
    """

    spec: BenchmarkSpec
    status: Status
    reason: str | None = None
    forward: tuple[float, ...] | None = None
    backward: tuple[float, ...] | None = None
    backward_reason: str | None = None
    memory_peak_bytes: int | None = None
    profiled_ops: tuple[str, ...] = field(default=())
    warmup_runs: int | None = None
    stop_reason: StopReason | None = None
    met_target: bool | None = None
    retaken: int | None = None
    load_dominated: bool = False
    competing_load: float | None = None
    sampling_s: float | None = None
    compile_s: float | None = None
    stage_check: StageCheck | None = None
    timer: TimerKind | None = None
    host_forward: tuple[float, ...] | None = None
    host_backward: tuple[float, ...] | None = None
    device_work: tuple[DeviceWork, ...] = ()
    gpu_state: GpuState | None = None
    counted_work: Work | None = None
    elapsed_s: float | None = None

    @property
    def forward_summary(self) -> Summary | None:
        return summarize(self.forward) if self.forward else None

    @property
    def backward_summary(self) -> Summary | None:
        return summarize(self.backward) if self.backward else None
