"""A PyTorch model's in-model operator time, from ``torch.profiler``'s CPU events.

Each aten call the capture kept is attributed to its registry operator; the profiler's event of that
aten name counts where no other kept call's event encloses it (``aten::addmm`` inside ``aten::linear``
counts, as ``linear`` is no captured call; a kept call inside another kept call would count once).
Events of calls the capture filtered (views, factories) are not attributed: their time shows as the
gap between the operators' total and the end-to-end time.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from opperf.frameworks.torch.profiling import _session, raw_events
from opperf.results.configs import Captured
from opperf.results.model_report import InModel
from opperf.utils.stats import summarize

PROFILED_BY = "torch.profiler CPU events of the captured aten calls over forward passes (mha fast path off)"
WARMUP_PASSES = 2


def profile(model: Any, inputs: tuple, passes: int, captured: Captured) -> InModel:
    """Per-operator time and calls per forward pass over ``passes`` profiled passes, and the median
    end-to-end time of as many unprofiled ones."""
    import torch

    operator_of = dict(zip(captured.native_names, (c.op for c in captured.calls), strict=True))
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    model.eval()
    try:
        with torch.no_grad():
            for _ in range(WARMUP_PASSES):
                model(*inputs)
            wall = []
            for _ in range(passes):
                start = time.perf_counter()
                model(*inputs)
                wall.append(time.perf_counter() - start)
            with _session(on_gpu=False, memory=False) as session:
                start = time.perf_counter()
                for _ in range(passes):
                    model(*inputs)
                profiled_wall = (time.perf_counter() - start) / passes
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
    seconds: dict[str, float] = defaultdict(float)
    calls: dict[str, float] = defaultdict(float)
    enclosing_end: dict[int, int] = {}
    kept = sorted(
        (span for span in raw_events(session.profiler.kineto_results.events()) if span.name in operator_of),
        key=lambda span: (span.thread, span.start, -span.end),
    )
    for span in kept:
        if span.end <= enclosing_end.get(span.thread, -1):
            continue
        enclosing_end[span.thread] = span.end
        op = operator_of[span.name]
        seconds[op] += (span.end - span.start) * 1e-9 / passes
        calls[op] += 1 / passes
    return InModel(dict(seconds), dict(calls), profiled_wall, summarize(wall).median, passes, PROFILED_BY)
