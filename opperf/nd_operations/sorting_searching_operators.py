"""Sorting and searching (sort, topk, argmax, ...)."""

from opperf.compat.runner import category_runner

run_sorting_searching_operators_benchmarks = category_runner("sorting_searching")
