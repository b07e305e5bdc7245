"""Operators outside the other categories: contrib, image, internal, numpy, sparse, misc."""

from opperf.compat.runner import category_runner

run_mx_misc_operators_benchmarks = category_runner("misc", "contrib", "image", "internal", "sparse")
run_mx_numpy_operators_benchmarks = category_runner("numpy")
