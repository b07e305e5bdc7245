"""Dense, normalisation, embedding, dropout and other basic layers."""

from opperf.compat.runner import category_runner

run_nn_basic_operators_benchmarks = category_runner("nn_basic")
