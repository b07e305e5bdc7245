"""Indexing and gathering (take, pick, gather_nd, ...)."""

from opperf.nd_operations.runner import category_runner

run_indexing_routines_benchmarks = category_runner("indexing")
