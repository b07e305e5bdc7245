"""What a results file must hold for opperf to read it: the types of every field a reader uses.

Result files travel (CI artifacts, a colleague's sweep, a file attached to a bug report) and are
edited by hand. Every reader (``merge``, ``diff``, ``report``, ``history add``, a replay) checks a
file here first, so a truncated list, a string where samples go or a record that is not an object
is one message naming the record and the field, never a traceback in the middle of a report.

``problem(document)`` returns that message, or None for a file this version reads. Fields a record
may lack are checked only where present; unknown fields are kept (later opperf versions add them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard, get_args

from opperf.measure.sampling import MOST_SAMPLES
from opperf.results.measurement import Status, TimerKind, input_from_json
from opperf.results.options import KEYED
from opperf.utils.words import clipped

Check = Callable[[object], bool]


CONFIGS_FORMAT = "opperf-configs"
"""The ``format`` of a configs file's header line (``opperf.results.configs``): results readers name it
when handed one."""


@dataclass(frozen=True)
class Expect:
    """What a field holds: a check of its value, and the words a message uses for it."""

    check: Check
    words: str

    @property
    def or_null(self) -> Expect:
        return Expect(lambda value: value is None or self.check(value), f"{self.words} or null")


def _integer(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value: object) -> bool:
    return _integer(value) and value >= 0


def _number(value: object) -> TypeGuard[float]:
    return _integer(value) or (isinstance(value, float) and not math.isnan(value))


LONGEST_SECONDS = 1e9
"""The longest time a results file may hold (31 years): no pass or sweep comes near it, and figures
far beyond it overflow the statistics taken of them (1e308 s overflowed a sum)."""


def _seconds(value: object) -> bool:
    return _number(value) and 0 <= value <= LONGEST_SECONDS


def _texts(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _device_work(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(item, dict)
        and item.get("phase") in ("forward", "backward")
        and isinstance(item.get("kind"), str)
        and isinstance(item.get("name"), str)
        and _seconds(item.get("per_call"))
        and _seconds(item.get("seconds"))
        for item in value
    )


def _gpu_state(value: object) -> bool:
    if value is None:
        return True
    readings = [value.get(when) for when in ("before", "after")] if isinstance(value, dict) else [None]
    return all(
        isinstance(reading, dict)
        and _count(reading.get("sm_clock_mhz"))
        and _count(reading.get("memory_clock_mhz"))
        and (reading.get("throttle_reasons") is None or _texts(reading["throttle_reasons"]))
        for reading in readings
    )


def _threads(value: object) -> bool:
    return (
        value is None
        or _count(value)
        or isinstance(value, str)
        or (isinstance(value, list) and all(map(_count, value)))
    )


_STATUSES = tuple(status.value for status in Status)
TEXT = Expect(lambda value: isinstance(value, str), "text")
COUNT = Expect(_count, "a non-negative integer")
NUMBER = Expect(_number, "a number")
SECONDS = Expect(_seconds, "seconds from 0 to 1e9")
FLAG = Expect(lambda value: isinstance(value, bool), "true or false")
TEXTS = Expect(_texts, "a list of text")
OBJECT = Expect(lambda value: isinstance(value, dict), "an object")
STATUS = Expect(lambda value: value in _STATUSES, f"one of {', '.join(_STATUSES)}")
THREADS = Expect(_threads, "a thread count, a list of them or auto")

_TIMING: Mapping[str, Expect] = {
    "n": COUNT,
    **{name: SECONDS.or_null for name in ("median_s", "mean_s", "min_s", "max_s", "stdev_s", "iqr_s")},
    "p90_s": SECONDS.or_null,
    "p99_s": SECONDS.or_null,
    "iqr_ratio": NUMBER.or_null,
    "noisy": FLAG.or_null,
}

_SAMPLING: Mapping[str, Expect] = {
    "warmup_runs": COUNT.or_null,
    "stop_reason": TEXT.or_null,
    "met_target": FLAG.or_null,
    "seconds": SECONDS.or_null,
    "retaken": COUNT.or_null,
    "load_dominated": FLAG.or_null,
}


def _rate(value: object) -> bool:
    return _number(value) and math.isfinite(value) and value >= 0


RATE = Expect(_rate, "a finite number >= 0")

_ROOFLINE: Mapping[str, Expect] = {
    "bytes": RATE.or_null,
    "flops": RATE.or_null,
    "gb_per_s": RATE.or_null,
    "gflop_per_s": RATE.or_null,
    "fraction_of_peak": OBJECT.or_null,
}

_FRACTION_OF_PEAK: Mapping[str, Expect] = {
    "bandwidth": RATE.or_null,
    "compute": RATE.or_null,
    "bound": TEXT.or_null,
    "of_roof": RATE.or_null,
}

_MACHINE_PEAKS: Mapping[str, Expect] = {
    "bandwidth_bytes_per_s": RATE,
    "gemm_flops_per_s": RATE,
    "measured_at": TEXT.or_null,
    "method": TEXT.or_null,
    "blas_threads": COUNT.or_null,
}

REQUIRED: Mapping[str, Expect] = {
    "framework": TEXT,
    "namespace": TEXT,
    "op": TEXT,
    "inputs": OBJECT,
    "status": STATUS,
}
"""Fields every record has, and what each holds: what no reader can do without (the results file's
contract adds the fields below, which a trimmed file may leave out)."""

OPTIONAL: Mapping[str, Expect] = {
    "category": TEXT,
    "reason": TEXT.or_null,
    "forward": OBJECT.or_null,
    "backward": OBJECT.or_null,
    "memory_peak_bytes": COUNT.or_null,
    "function": TEXT,
    "device": TEXT,
    "dtype": TEXT,
    "profiler": TEXT,
    "cache": TEXT,
    "mode": TEXT.or_null,
    "run_backward": FLAG,
    "threads": COUNT.or_null,
    "values": TEXT,
    "layout": TEXT,
    "backward_reason": TEXT.or_null,
    "profiled_ops": TEXTS,
    "sampling": OBJECT.or_null,
    "competing_load": NUMBER.or_null,
    "stage": TEXT,
    "variant": TEXT.or_null,
    "compile_s": SECONDS.or_null,
    "elapsed_s": SECONDS.or_null,
    "stage_check": OBJECT.or_null,
    "timer": Expect(lambda value: value in (None, *get_args(TimerKind)), "device, profiler, host or null"),
    "host_latency": OBJECT.or_null,
    "gpu_state": Expect(_gpu_state, "an object with before and after readings, or null"),
    "device_work": Expect(_device_work, "a list of objects with phase, kind, name, per_call, seconds"),
    "flags": TEXTS,
    "tags": TEXTS,
    "roofline": OBJECT.or_null,
    "side": TEXT,
    "round": COUNT,
    "prepared_in_round": COUNT,
}
"""Fields a record may have, and what each holds where it has them."""

MEANINGS: Mapping[str, str] = {
    "framework": "the framework measured (`mxnet`, `torch`)",
    "namespace": "where the operator is called from (`mx.nd`, `torch`, `opperf.operators.longtail`)",
    "op": "the operator's registry name (aliases folded into it)",
    "inputs": "the input configuration: each tensor as an object (`shape`, and `dtype`, `low`, `high`, "
    "`structure`, `storage`, `density` where they are not the default), other arguments as values",
    "status": "`ok`, `skipped`, `failed`, `crashed` or `timeout`",
    "category": "the operator's category (`unary`, `convolution`, ...)",
    "reason": "why it was skipped or did not measure (null when ok)",
    "forward": "the forward pass's timing block: `samples_s` and `n`, `median_s`, `mean_s`, `min_s`, "
    "`max_s`, `stdev_s`, `iqr_s`, `p90_s`, `p99_s`, `median_ci95_s`, `iqr_ratio`, `noisy` (null where "
    "not measured)",
    "backward": "the backward pass's timing block, as `forward` (null without one)",
    "memory_peak_bytes": "the peak memory one pass allocates (null where not probed: A/B rounds)",
    "function": "the function called, as its namespace names it (`mx.nd.add`)",
    "device": "a keyed option: the device (`cpu(0)`, `gpu(0)`)",
    "dtype": "a keyed option: the tensors' dtype",
    "profiler": "a keyed option: `native` (the framework's profiler) or `python`",
    "cache": "a keyed option: `hot` or `cold`",
    "mode": "a keyed option: `training` or `inference`",
    "run_backward": "a keyed option: whether backward passes were measured",
    "threads": "a keyed option: the intra-op thread count (null: the framework's own)",
    "values": "a keyed option: how floating-point input values were distributed (`uniform-positive`, "
    "`normal`, `uniform` or `uniform:LOW,HIGH`, `with-zeros`, `with-nan-inf`, `subnormal`)",
    "layout": "a keyed option: how dense inputs were laid out (`contiguous`, `transposed`, `strided`, "
    "`channels-last`)",
    "backward_reason": "why the record has no backward time (null where it has one, or none was asked)",
    "profiled_ops": "the framework operators the native profiler saw in the forward call",
    "sampling": "`warmup_runs`, `stop_reason`, `met_target` (the precision target), `seconds` spent, "
    "`retaken` (samples inflated by competing load, measured again) and `load_dominated` (half or more "
    "stayed inflated)",
    "competing_load": "other processes' load on the CPUs while it was measured (runnable per CPU)",
    "stage": "`eager`, `graph`, `compile`, `cudagraph` or `fused`",
    "variant": "a fused pattern's variant (null for other operators)",
    "compile_s": "seconds the stage's capture or compilation took (null in eager)",
    "elapsed_s": "seconds the sweep spent on the record, from asking for it to having it (inputs "
    "prepared, a crashed worker waited for); what `--costs` balances shards by (null where not timed: "
    "skipped records, A/B rounds)",
    "stage_check": "how the stage's outputs compared with eager's: `agrees`, `rtol`, `atol`, "
    "`max_abs_diff`, `detail` (and the graph's operators for a fused pattern)",
    "timer": "what made the samples: `device` (a GPU's own time), `profiler` or `host`",
    "host_latency": "a GPU record's synchronised call latency: `forward` and `backward` timing blocks",
    "gpu_state": "a GPU's NVML readings before and after: clocks, power, temperature, throttle reasons",
    "device_work": "what one call ran on the device: `phase`, `kind`, `name`, `per_call`, `seconds`",
    "flags": "doubt flags (`noisy`, `imprecise`, `busy`, `near-overhead`, ...)",
    "tags": "a long-tail operator's tags",
    "roofline": "`bytes`, `flops`, achieved `gb_per_s` and `gflop_per_s`, and `fraction_of_peak` of the "
    "machine's roofs",
    "side": "an A/B record's build: `base` or `new`",
    "round": "an A/B record's round",
    "prepared_in_round": "the round whose preparation an A/B record's measurement used",
}
"""What each field of a record holds, in words: ``field_table`` writes them into
docs/results-format.md, and a test holds every field of ``REQUIRED`` and ``OPTIONAL`` to one."""


def field_table() -> str:
    """Every field of a record as a Markdown table: its name, what it holds, and whether every
    record has it."""
    stated = {*REQUIRED, *KEYED, "stage"}  # since version 2 every record states its keyed options and stage
    rows = [
        f"| `{name}` | {MEANINGS[name]} | {'every record' if name in stated else 'where it applies'} |"
        for name in (*REQUIRED, *OPTIONAL)
    ]
    return "\n".join(["| field | holds | present |", "| --- | --- | --- |", *rows])


ENVIRONMENT: Mapping[str, Expect] = {
    **{name: TEXT.or_null for name in ("framework", "framework_version", "device", "dtype", "profiler")},
    **{name: TEXT.or_null for name in ("started", "finished", "cpu_model", "python", "shard", "kind")},
    "wall_seconds": SECONDS.or_null,
    "cpu_count": COUNT.or_null,
    "threads": COUNT.or_null,
    "command_line": Expect(lambda value: value is None or _texts(value), "a list of text or null"),
    "merged_from": Expect(
        lambda value: isinstance(value, list) and all(isinstance(item, dict) for item in value),
        "a list of objects",
    ),
    "framework_settings": OBJECT.or_null,
    "machine_peaks": OBJECT.or_null,
}
"""Environment fields readers use, and what each holds where it is present."""


def problem(document: object) -> str | None:
    """What makes ``document`` unreadable as a results file of this version, naming the record and
    field; None when it is readable. (The version itself is checked by the caller.)"""
    if not isinstance(document, dict):
        return "not a results file: the file holds no JSON object"
    if not isinstance(document.get("environment"), dict):
        return "its environment is missing or not an object"
    found = _fields_problem(document["environment"], ENVIRONMENT)
    peaks = document["environment"].get("machine_peaks")
    if found is None and peaks is not None:
        found = _nested("machine_peaks", _fields_problem(peaks, _MACHINE_PEAKS, required=True))
    if found is not None:
        return f"environment.{found}"
    if "coverage" in document and not isinstance(document["coverage"], dict):
        return "its coverage is not an object"
    for section in ("results", "skipped"):
        records = document.get(section, [] if section == "skipped" else None)
        if not isinstance(records, list):
            return f"its {section} is missing or not a list of records"
        for index, record in enumerate(records, start=1):
            found = record_problem(record)
            if found is not None:
                return f"{section} record {index}: {found}"
    return None


def record_problem(record: object) -> str | None:
    """What is wrong with one record, naming the field; None when it is readable."""
    if not isinstance(record, dict):
        return "not an object"
    missing = [name for name in REQUIRED if name not in record]
    if missing:
        return f"no field {missing[0]!r}"
    checks = (_top_fields_problem, _inputs_problem, _timings_problem, _blocks_problem)
    return next((found for found in (check(record) for check in checks) if found is not None), None)


def _top_fields_problem(record: Mapping[str, Any]) -> str | None:
    return _fields_problem(
        record, {**REQUIRED, **{name: e for name, e in OPTIONAL.items() if name in record}}
    )


def _inputs_problem(record: Mapping[str, Any]) -> str | None:
    for name, value in record["inputs"].items():
        try:
            input_from_json(value)
        except ValueError as error:
            return f"inputs.{name}: {error}"
    return None


def _timings_problem(record: Mapping[str, Any]) -> str | None:
    """The first problem of the record's timing blocks: each phase's, and its host latency's."""
    for phase in ("forward", "backward"):
        if record.get(phase) is not None:
            found = _timing_problem(record[phase])
            if found is not None:
                return f"{phase}.{found}"
        latency = (record.get("host_latency") or {}).get(phase)
        if latency is not None:
            found = _timing_problem(latency) if isinstance(latency, dict) else "not an object"
            if found is not None:
                return f"host_latency.{phase}.{found}"
    return None


def _blocks_problem(record: Mapping[str, Any]) -> str | None:
    """The first problem of the record's sampling and roofline blocks."""
    sampling = record.get("sampling")
    if sampling is not None:
        found = _fields_problem(sampling, _SAMPLING)
        if found is not None:
            return f"sampling.{found}"
    roofline = record.get("roofline")
    if roofline is not None:
        found = _fields_problem(roofline, _ROOFLINE)
        fractions = roofline.get("fraction_of_peak")
        if found is None and fractions is not None:
            found = _nested("fraction_of_peak", _fields_problem(fractions, _FRACTION_OF_PEAK))
        if found is not None:
            return f"roofline.{found}"
    return None


def _nested(name: str, found: str | None) -> str | None:
    return None if found is None else f"{name}.{found}"


def _timing_problem(block: Mapping[str, Any]) -> str | None:
    samples = block.get("samples_s")
    if not isinstance(samples, list) or not samples or not all(map(_seconds, samples)):
        return f"samples_s is {_shown(samples)}; expected a non-empty list of seconds from 0 to 1e9"
    if len(samples) > MOST_SAMPLES:
        return f"samples_s holds {len(samples):,} samples; expected at most {MOST_SAMPLES:,}"
    interval = block.get("median_ci95_s")
    if interval is not None and not (
        isinstance(interval, list) and len(interval) == 2 and all(map(SECONDS.or_null.check, interval))
    ):
        return f"median_ci95_s is {_shown(interval)}; expected [low, high] in seconds"
    return _fields_problem(block, _TIMING)


def _fields_problem(
    block: Mapping[str, Any], expected: Mapping[str, Expect], required: bool = False
) -> str | None:
    """The first field of ``block`` that ``expected`` says holds something else (or, ``required``,
    that it lacks)."""
    for name, expect in expected.items():
        if name in block and not expect.check(block[name]):
            return f"{name} is {_shown(block[name])}; expected {expect.words}"
        if required and name not in block and not expect.check(None):
            return f"{name} is missing; expected {expect.words}"
    return None


def _shown(value: object) -> str:
    return clipped(repr(value))
