"""The versioned results document (the JSON contract other tools read), built from and back to data."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from opperf.measure.sampling import StopReason
from opperf.measure.stages import EAGER, StageCheck
from opperf.operators import longtail
from opperf.results import schema
from opperf.results.measurement import BenchmarkSpec, DeviceWork, Measurement, Status, Work, input_from_json
from opperf.results.migrations import CURRENT, migrate
from opperf.results.options import RunOptions
from opperf.utils.errors import OpperfError
from opperf.utils.gpu_state import GpuState
from opperf.utils.reading import read_text

SCHEMA_VERSION = CURRENT

AB_KIND = "ab"
"""The ``kind`` of an A/B file (``opperf ab``): its records are two builds' rounds, not one sweep."""


def is_ab(document: Mapping[str, Any]) -> bool:
    """Whether a results document is an A/B file (its records have a side and a round each)."""
    return document.get("kind") == AB_KIND


class SchemaError(ValueError):
    """A results file this version of opperf cannot read."""


def timing_block(samples: tuple[float, ...] | None) -> dict[str, object] | None:
    if not samples:
        return None
    from opperf.utils.stats import summarize

    summary = summarize(samples)
    return {
        "samples_s": [_ns(s) for s in samples],
        "n": summary.n,
        "median_s": _ns(summary.median),
        "mean_s": _ns(summary.mean),
        "min_s": _ns(summary.min),
        "max_s": _ns(summary.max),
        "stdev_s": _ns(summary.stdev),
        "iqr_s": _ns(summary.iqr),
        "p90_s": _ns(summary.p90),
        "p99_s": _ns(summary.p99),
        "median_ci95_s": [_ns(summary.median_low), _ns(summary.median_high)],
        "iqr_ratio": round(summary.relative_iqr, 4) if math.isfinite(summary.relative_iqr) else None,
        "noisy": summary.noisy,
    }


SECONDS_DIGITS = 10
"""Times are written to a tenth of a nanosecond, finer than any timer opperf reads (the Python
timer's nanoseconds, the profilers' microseconds): float noise such as 0.00028199999999999997 goes,
and no figure loses a digit it had."""


def _ns(seconds: float) -> float:
    return round(seconds, SECONDS_DIGITS)


DERIVED_DIGITS = 6
"""Significant digits of derived figures (rates, roofline fractions, competing load): what their
inputs support, without float noise such as 1.9999999999999998."""


def _derived(value: object) -> object:
    """``value`` with every float in it to ``DERIVED_DIGITS`` significant digits."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.{DERIVED_DIGITS}g}")
    if isinstance(value, dict):
        return {key: _derived(item) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class Assessment:
    """What a measurement's numbers mean, derived before its record is written
    (``opperf.measure.roofline.assessment.assess``): the flags that say when not to trust them, and
    the roofline context as the record holds it (None where there is none)."""

    flags: tuple[str, ...]
    roofline: Mapping[str, object] | None


def record(measurement: Measurement, assessment: Assessment | None = None) -> dict[str, object]:
    """The measurement as a results record; with its ``assessment``, also its flags and roofline
    context (derived, so journal records, written without one, keep raw facts only)."""
    spec = measurement.spec
    derived = {}
    if assessment is not None:
        derived = {"flags": list(assessment.flags), "roofline": _derived(assessment.roofline)}
    return {
        **spec.options.keyed(),
        "namespace": spec.namespace,
        "op": spec.op,
        "function": spec.label,
        "category": spec.category,
        "inputs": spec.describe_inputs(),
        "status": measurement.status.value,
        "reason": measurement.reason,
        "forward": timing_block(measurement.forward),
        "backward": timing_block(measurement.backward),
        "backward_reason": measurement.backward_reason,
        "memory_peak_bytes": measurement.memory_peak_bytes,
        "profiled_ops": list(measurement.profiled_ops),
        "sampling": {
            "warmup_runs": measurement.warmup_runs,
            "stop_reason": measurement.stop_reason.value if measurement.stop_reason else None,
            "met_target": measurement.met_target,
            "seconds": _derived(measurement.sampling_s),
            "retaken": measurement.retaken,
            "load_dominated": measurement.load_dominated,
        },
        "competing_load": _derived(measurement.competing_load),
        "stage": spec.stage,
        "variant": spec.variant or None,
        "compile_s": measurement.compile_s,
        "elapsed_s": _derived(measurement.elapsed_s),
        "stage_check": measurement.stage_check.to_json() if measurement.stage_check else None,
        "timer": measurement.timer,
        **_device_times(measurement),
        **_tags(spec),
        **derived,
    }


def _device_times(measurement: Measurement) -> dict[str, object]:
    """A GPU record's host latency, device work and GPU state (nothing for other records)."""
    if measurement.host_forward is None and not measurement.device_work and not measurement.gpu_state:
        return {}
    return {
        "host_latency": {
            "forward": timing_block(measurement.host_forward),
            "backward": timing_block(measurement.host_backward),
        },
        "device_work": [work.to_json() for work in measurement.device_work],
        "gpu_state": measurement.gpu_state.to_json() if measurement.gpu_state else None,
    }


def _tags(spec: BenchmarkSpec) -> dict[str, object]:
    """A long-tail operator's DLOP-Bench tags, on its record (a reader of the file needs no catalogue)."""
    entry = longtail.by_name().get(spec.op) if spec.namespace == longtail.NAMESPACE else None
    return {"tags": list(entry.tags)} if entry is not None else {}


def measurement_from_record(result: dict[str, Any]) -> Measurement:
    """The Measurement a record was rendered from, as far as records keep it (value ranges are not kept;
    a record rendered from the result is identical)."""
    spec = BenchmarkSpec(
        namespace=result["namespace"],
        op=result["op"],
        inputs=tuple((name, input_from_json(value)) for name, value in result["inputs"].items()),
        options=RunOptions.from_record(result),
        category=result.get("category", "misc"),
        function=_function_name(result),
        stage=str(result.get("stage", EAGER)),
        variant=str(result.get("variant") or ""),
    )
    sampling = result.get("sampling") or {}
    samples = {
        phase: tuple(result[phase]["samples_s"]) if result.get(phase) else None
        for phase in ("forward", "backward")
    }
    latency = result.get("host_latency") or {}
    host = {
        phase: tuple(latency[phase]["samples_s"]) if latency.get(phase) else None
        for phase in ("forward", "backward")
    }
    return Measurement(
        spec=spec,
        status=Status(result["status"]),
        reason=result.get("reason"),
        forward=samples["forward"],
        backward=samples["backward"],
        backward_reason=result.get("backward_reason"),
        memory_peak_bytes=result.get("memory_peak_bytes"),
        profiled_ops=tuple(result.get("profiled_ops", ())),
        warmup_runs=sampling.get("warmup_runs"),
        stop_reason=StopReason(sampling["stop_reason"]) if sampling.get("stop_reason") else None,
        met_target=sampling.get("met_target"),
        retaken=sampling.get("retaken"),
        load_dominated=sampling.get("load_dominated") is True,
        competing_load=result.get("competing_load"),
        sampling_s=sampling.get("seconds"),
        compile_s=result.get("compile_s"),
        elapsed_s=result.get("elapsed_s"),
        stage_check=StageCheck.from_json(result.get("stage_check")),
        timer=result.get("timer"),
        host_forward=host["forward"],
        host_backward=host["backward"],
        device_work=tuple(DeviceWork.from_json(work) for work in result.get("device_work") or ()),
        gpu_state=GpuState.from_json(result.get("gpu_state")),
        counted_work=_counted_work(result.get("roofline")),
    )


def _counted_work(roofline: object) -> Work | None:
    """The work a record's roofline block holds: a framework's own count (XLA's cost analysis) is
    known again where a record is read back (a resumed sweep assesses its journal's records anew)."""
    if not isinstance(roofline, dict):
        return None
    moved, flops = roofline.get("bytes"), roofline.get("flops")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (moved, flops)):
        return None
    return Work(bytes_moved=cast(int, moved), flops=cast(int, flops))


def _function_name(result: dict[str, Any]) -> str:
    label = str(result.get("function") or "")
    prefix = f"{result['namespace']}."
    name = label[len(prefix) :] if label.startswith(prefix) else ""
    return "" if name == result["op"] else name


def check_document(document: Any) -> dict[str, Any]:
    """The document if this opperf can read it, migrated to this version from an earlier one
    (``migrations``); raises SchemaError naming the version, or the record and field that no reader
    could use (``schema``), otherwise."""
    if isinstance(document, dict):
        document = migrate(document)
    version = document.get("schema_version") if isinstance(document, dict) else None
    if version != SCHEMA_VERSION or isinstance(version, bool):
        if not isinstance(document, dict):
            raise SchemaError("not a results file: it holds no JSON object with a schema_version")
        raise SchemaError(
            f"results file has schema_version {version!r}; this opperf reads version {SCHEMA_VERSION}"
        )
    found = schema.problem(document)
    if found is not None:
        raise SchemaError(found)
    return document


def read_json(path: str, fix: str) -> object:
    """The JSON value in the file at ``path``; OpperfError naming the file, what is wrong and ``fix``
    (which files to pass) when it is missing, unreadable, not JSON, or a configs file."""
    try:
        text = read_text(path)
    except FileNotFoundError:
        raise OpperfError(f"{path}: no such file; {fix}") from None
    except OSError as error:
        raise OpperfError(f"{path}: cannot be read as JSON text ({error.strerror}); {fix}") from None
    except UnicodeDecodeError as error:
        raise OpperfError(f"{path}: cannot be read as JSON text ({error}); {fix}") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:  # ValueError: malformed, or a number of 4,300+ digits
        if _configs_header(text):
            raise OpperfError(
                f"{path}: a configs file (`opperf capture`), which holds configurations, not timings; "
                f"measure them with `opperf sweep --configs {path} --output-file results.json` and "
                "pass that file"
            ) from None
        detail = (
            error.msg
            if isinstance(error, json.JSONDecodeError)
            else "nested too deep"
            if isinstance(error, RecursionError)
            else "a number too long to read"
        )
        raise OpperfError(f"{path}: not valid JSON ({detail}); {fix}") from None


def read_document(path: str, fix: str) -> dict[str, object]:
    """The results file at ``path``, checked (``check_document``); OpperfError naming the file, the
    problem and ``fix`` otherwise."""
    try:
        return check_document(read_json(path, fix))
    except SchemaError as error:
        raise OpperfError(f"{path}: {error}; {fix}") from None


def _configs_header(text: str) -> bool:
    """Whether ``text``'s first line is a configs file's header (JSON Lines, ``opperf.results.configs``)."""
    try:
        header = json.loads(text.split("\n", 1)[0])
    except (ValueError, RecursionError):
        return False
    return isinstance(header, dict) and header.get("format") == schema.CONFIGS_FORMAT
