"""Interleaved comparisons between namespaces (mx.nd, mx.np, torch): the job and its verdicts."""
