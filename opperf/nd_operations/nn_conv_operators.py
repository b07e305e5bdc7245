"""Convolution, transposed convolution and pooling."""

from opperf.compat.runner import category_runner

run_convolution_operators_benchmarks = category_runner("convolution")
run_transpose_convolution_operators_benchmarks = category_runner("transpose_convolution")
run_pooling_operators_benchmarks = category_runner("pooling")
