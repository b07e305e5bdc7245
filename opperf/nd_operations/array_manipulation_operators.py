"""Joining, splitting, reshaping, expanding."""

from opperf.compat.runner import category_runner

run_join_split_operators_benchmarks = category_runner("join_split")
run_shape_operators_benchmarks = category_runner("shape")
run_expanding_operators_benchmarks = category_runner("expanding")
run_rounding_operators_benchmarks = category_runner("rounding")
