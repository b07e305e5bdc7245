"""Activations and softmax."""

from opperf.compat.runner import category_runner

run_activation_operators_benchmarks = category_runner("activation")
