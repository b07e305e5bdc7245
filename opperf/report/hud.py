"""The record format of PyTorch's OSS benchmark database (``--output-format hud``), so results flow
into the dashboards built on it: one record per measured phase, each naming the ``benchmark`` (opperf,
with the run's settings), the ``model`` (the operator and its inputs) and the ``metric`` (the phase's
median in milliseconds, with every sample as ``benchmark_values``)."""

from __future__ import annotations

import json
from typing import Any

from opperf.results.record import Record, read_records

MS = 1e3


def hud_records(document: dict[str, Any]) -> list[dict[str, Any]]:
    environment = document["environment"]
    benchmark = {
        "name": "opperf",
        "mode": "training" if environment.get("run_backward") else "inference",
        "dtype": environment.get("dtype"),
        "extra_info": {
            key: environment.get(key)
            for key in (
                "framework",
                "framework_version",
                "device",
                "profiler",
                "threads",
                "cache",
                "sampling",
            )
        },
    }
    runner = {
        "name": environment.get("cpu_model"),
        "type": str(environment.get("device", "cpu")).split("(")[0],
    }
    hud = []
    for record, found in zip(read_records(document), document["results"], strict=True):
        if record.status != "ok":
            continue
        model = {
            "name": _model_name(record),
            "type": "operator",
            "origins": [record.framework],
            "extra_info": {
                "op": record.op,
                "category": record.category,
                "inputs": found["inputs"],  # as the file has them, in argument order
                "stage": record.stage,
                "variant": record.variant or None,
                "compile_s": record.compile_s,
            },
        }
        for name, phase in record.phases.items():
            hud.append(
                {
                    "benchmark": benchmark,
                    "model": model,
                    "metric": {
                        "name": f"{name}_median_ms",
                        "benchmark_values": [round(s * MS, 6) for s in phase.samples],
                        "extra_info": {"median_ms": round(phase.median * MS, 6), "flags": list(record.flags)},
                    },
                    "runners": [runner],
                }
            )
    return hud


def _model_name(record: Record) -> str:
    """The function, with its stage and variant where it is not plain eager (the dashboards key
    series on the name, so a compiled run is not mixed into the eager series)."""
    return record.function if record.run_form == "eager" else f"{record.function} [{record.run_form}]"


def render_hud(document: dict[str, Any]) -> str:
    return json.dumps(hud_records(document), indent=1) + "\n"
