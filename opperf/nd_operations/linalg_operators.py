"""Linear algebra (potrf, trsm, syrk, ...)."""

from opperf.compat.runner import category_runner

run_linalg_operators_benchmarks = category_runner("linalg")
