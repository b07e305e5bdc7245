"""Transposes and reorderings."""

from opperf.nd_operations.runner import category_runner

run_rearrange_operators_benchmarks = category_runner("rearrange")
