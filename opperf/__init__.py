"""opperf: benchmark every operator of a deep-learning framework, forward, backward and memory."""

from opperf.benchmark import RunOptions, benchmark
from opperf.errors import OpperfError
from opperf.results import BenchmarkSpec, Measurement, Status, TensorSpec
from opperf.utils.benchmark_utils import run_benchmark_operator, run_performance_test

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
