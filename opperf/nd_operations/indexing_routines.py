"""Indexing and gathering (take, pick, gather_nd, ...)."""

from opperf.compat.runner import category_runner

run_indexing_routines_benchmarks = category_runner("indexing")
