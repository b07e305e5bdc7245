"""Fused optimizer updates (sgd, adam, lamb, ...)."""

from opperf.compat.runner import category_runner

run_optimizer_operators_benchmarks = category_runner("optimizer")
