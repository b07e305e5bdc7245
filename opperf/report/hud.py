"""The record format of PyTorch's OSS benchmark database (``--output-format hud``), so results flow
into the dashboards built on it: one record per measured phase, each naming the ``benchmark`` (opperf,
with the run's settings), the ``model`` (the operator and its inputs) and the ``metric`` (the phase's
median in milliseconds, with every sample as ``benchmark_values``)."""

from __future__ import annotations

import json
from typing import Any

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
    records = []
    for result in document["results"]:
        if result["status"] != "ok":
            continue
        model = {
            "name": _model_name(result),
            "type": "operator",
            "origins": [result["framework"]],
            "extra_info": {
                "op": result["op"],
                "category": result["category"],
                "inputs": result["inputs"],
                **{key: result.get(key) for key in ("stage", "variant", "compile_s")},
            },
        }
        for phase in ("forward", "backward"):
            block = result.get(phase)
            if block:
                records.append(
                    {
                        "benchmark": benchmark,
                        "model": model,
                        "metric": {
                            "name": f"{phase}_median_ms",
                            "benchmark_values": [round(s * MS, 6) for s in block["samples_s"]],
                            "extra_info": {
                                "median_ms": round(block["median_s"] * MS, 6),
                                "flags": result.get("flags", []),
                            },
                        },
                        "runners": [runner],
                    }
                )
    return records


def _model_name(result: dict[str, Any]) -> str:
    """The function, with its stage and variant where it is not plain eager (the dashboards key
    series on the name, so a compiled run is not mixed into the eager series)."""
    stage = str(result.get("stage") or "eager")
    shown = f"{stage}: {result['variant']}" if result.get("variant") else stage
    return str(result["function"]) if shown == "eager" else f"{result['function']} [{shown}]"


def render_hud(document: dict[str, Any]) -> str:
    return json.dumps(hud_records(document), indent=1) + "\n"
