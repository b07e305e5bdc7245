"""Unary element-wise operators (abs, exp, sin, ...) and rounding."""

from opperf.compat.runner import category_runner

run_mx_unary_operators_benchmarks = category_runner("unary", "rounding")
