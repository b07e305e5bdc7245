"""Reductions over axes (sum, mean, norm, ...)."""

from opperf.compat.runner import category_runner

run_mx_reduction_operators_benchmarks = category_runner("reduction")
