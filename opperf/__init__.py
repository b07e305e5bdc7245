"""opperf: benchmark every operator of a deep-learning framework, forward, backward and memory.

The public names below are loaded when first used (PEP 562): ``import opperf.results.options`` (or
any one module) does not import the whole package, and ``from opperf import benchmark`` still works.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opperf.compat.upstream import run_benchmark_operator, run_performance_test
    from opperf.measure.benchmark import benchmark
    from opperf.results.measurement import BenchmarkSpec, Measurement, Status, TensorSpec
    from opperf.results.options import RunOptions
    from opperf.utils.errors import OpperfError

_PUBLIC = {
    "BenchmarkSpec": "opperf.results.measurement",
    "Measurement": "opperf.results.measurement",
    "OpperfError": "opperf.utils.errors",
    "RunOptions": "opperf.results.options",
    "Status": "opperf.results.measurement",
    "TensorSpec": "opperf.results.measurement",
    "benchmark": "opperf.measure.benchmark",
    "run_benchmark_operator": "opperf.compat.upstream",
    "run_performance_test": "opperf.compat.upstream",
}
"""Each public name -> the module that defines it."""

__all__ = [
    "BenchmarkSpec",
    "Measurement",
    "OpperfError",
    "RunOptions",
    "Status",
    "TensorSpec",
    "benchmark",
    "run_benchmark_operator",
    "run_performance_test",
]


def __getattr__(name: str) -> object:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'opperf' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
