"""The versioned results document (the JSON contract other tools read), built from and back to data."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from opperf.utils.results import Measurement, Status

SCHEMA_VERSION = 1
STATUS_KEYS = tuple(s.value for s in Status)


class SchemaError(ValueError):
    """A results file this version of opperf cannot read."""


def timing_block(samples: tuple[float, ...] | None) -> dict[str, object] | None:
    if not samples:
        return None
    from opperf.utils.stats import summarize

    summary = summarize(samples)
    return {
        "samples_s": list(samples),
        "n": summary.n,
        "median_s": summary.median,
        "mean_s": summary.mean,
        "min_s": summary.min,
        "max_s": summary.max,
        "stdev_s": summary.stdev,
        "iqr_s": summary.iqr,
    }


def record(measurement: Measurement) -> dict[str, object]:
    spec = measurement.spec
    return {
        "framework": spec.framework,
        "namespace": spec.namespace,
        "op": spec.op,
        "function": spec.label,
        "category": spec.category,
        "inputs": spec.describe_inputs(),
        "dtype": spec.dtype,
        "device": spec.device,
        "profiler": spec.profiler,
        "status": measurement.status.value,
        "reason": measurement.reason,
        "forward": timing_block(measurement.forward),
        "backward": timing_block(measurement.backward),
        "backward_reason": measurement.backward_reason,
        "memory_peak_bytes": measurement.memory_peak_bytes,
        "profiled_ops": list(measurement.profiled_ops),
    }


def operator_status(measurements: Iterable[Measurement]) -> dict[tuple[str, str], str]:
    """One status per distinct operator: ok if every configuration ran, else the worst one."""
    severity = {Status.OK: 0, Status.SKIPPED: 1, Status.TIMEOUT: 2, Status.FAILED: 3, Status.CRASHED: 4}
    worst: dict[tuple[str, str], Status] = {}
    for m in measurements:
        key = (m.spec.category, m.spec.op)
        if key not in worst or severity[m.status] > severity[worst[key]]:
            worst[key] = m.status
    return {key: status.value for key, status in worst.items()}


def coverage(measurements: Iterable[Measurement], registered: int) -> dict[str, object]:
    """Counts of distinct operators by status, in total and per category."""
    statuses = operator_status(measurements)
    total = Counter(statuses.values())
    by_category: dict[str, Counter] = {}
    for (category, _), status in statuses.items():
        by_category.setdefault(category, Counter())[status] += 1
    return {
        "registered": registered,
        "operators": len(statuses),
        **{key: total.get(key, 0) for key in STATUS_KEYS},
        "by_category": {
            category: {"operators": sum(c.values()), **{key: c.get(key, 0) for key in STATUS_KEYS}}
            for category, c in sorted(by_category.items())
        },
    }


def build_document(
    measurements: Iterable[Measurement], environment: dict[str, object], registered: int
) -> dict[str, object]:
    measurements = list(measurements)
    return {
        "schema_version": SCHEMA_VERSION,
        "environment": environment,
        "coverage": coverage(measurements, registered),
        "results": [record(m) for m in measurements],
    }


def check_document(document: dict[str, object]) -> dict[str, object]:
    """The document if this opperf can read it; raises SchemaError naming the version otherwise."""
    version = document.get("schema_version") if isinstance(document, dict) else None
    if version != SCHEMA_VERSION:
        raise SchemaError(
            f"results file has schema_version {version!r}; this opperf reads version {SCHEMA_VERSION}"
        )
    return document
