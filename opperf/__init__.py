"""opperf: benchmark every operator of a deep-learning framework, forward, backward and memory."""

from opperf.compat.upstream import run_benchmark_operator, run_performance_test
from opperf.measure.benchmark import RunOptions, benchmark
from opperf.results.measurement import BenchmarkSpec, Measurement, Status, TensorSpec
from opperf.utils.errors import OpperfError

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
