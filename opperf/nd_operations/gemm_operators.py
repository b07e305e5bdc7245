"""Matrix products: dot, batch_dot, khatri_rao, linalg gemm."""

from opperf.compat.runner import category_runner

run_gemm_operators_benchmarks = category_runner("gemm")
