"""Upstream opperf's ``benchmark/opperf/utils/benchmark_utils.py``, kept importable at its path."""

from opperf.compat.upstream import run_benchmark_operator, run_performance_test

__all__ = ["run_benchmark_operator", "run_performance_test"]
