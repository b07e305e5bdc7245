"""Transposes and reorderings."""

from opperf.compat.runner import category_runner

run_rearrange_operators_benchmarks = category_runner("rearrange")
