"""A Gluon model's in-model operator time, from MXNet's profiler (aggregate statistics as JSON).

The model runs imperatively, as ``capture`` records it, so the profiler lists exactly the operators
the capture saw (by registered name, folded here to the registry's canonical names). A hybridized
model would run the same operators as one cached graph, which the profiler lumps into one entry
unless bulk execution is off (``MXNET_EXEC_BULK_EXEC_INFERENCE=0`` before MXNet is imported); the
imperative pass needs no such setting.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from opperf.frameworks.mxnet.profiling import ENGINE_BOOKKEEPING, _session
from opperf.frameworks.mxnet.registry import load_registry
from opperf.results.configs import Captured
from opperf.results.model_report import InModel
from opperf.utils.stats import summarize

PROFILED_BY = "MXNet profiler aggregate statistics over imperative (non-hybridized) forward passes"
WARMUP_PASSES = 2


def profile(model: Any, inputs: tuple, passes: int, captured: Captured) -> InModel:
    """Per-operator time and calls per forward pass over ``passes`` profiled passes, and the median
    end-to-end time of as many unprofiled ones. ``captured`` is unused: the profiler names operators."""
    import mxnet as mx

    def forward() -> None:
        model(*inputs)
        mx.nd.waitall()

    for _ in range(WARMUP_PASSES):
        forward()
    wall = []
    for _ in range(passes):
        start = time.perf_counter()
        forward()
        wall.append(time.perf_counter() - start)
    start = time.perf_counter()
    # Ignored: the list only runs the passes (``forward`` returns None).
    _, stats = _session(lambda: [forward() for _ in range(passes)], memory=False)  # type: ignore[func-returns-value]
    profiled_wall = (time.perf_counter() - start) / passes
    by_name = load_registry().by_name
    seconds: dict[str, float] = defaultdict(float)
    calls: dict[str, float] = defaultdict(float)
    for name, entry in stats.get("Time", {}).get("operator", {}).items():
        if name in ENGINE_BOOKKEEPING:
            continue
        op = by_name[name].name if name in by_name else name
        seconds[op] += entry["Total"] * 1e-3 / passes
        calls[op] += entry["Count"] / passes
    return InModel(dict(seconds), dict(calls), profiled_wall, summarize(wall).median, passes, PROFILED_BY)
