"""Linear algebra (potrf, trsm, syrk, ...)."""

from opperf.nd_operations.runner import category_runner

run_linalg_operators_benchmarks = category_runner("linalg")
