"""opperf: benchmark every operator of a deep-learning framework, forward, backward and memory."""

from opperf.benchmark import RunOptions, benchmark
from opperf.errors import OpperfError
from opperf.utils.benchmark_utils import run_benchmark_operator, run_performance_test
from opperf.utils.results import BenchmarkSpec, Measurement, Status, TensorSpec

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
