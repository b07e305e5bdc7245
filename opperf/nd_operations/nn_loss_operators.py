"""Losses and output layers."""

from opperf.compat.runner import category_runner

run_loss_operators_benchmarks = category_runner("loss")
