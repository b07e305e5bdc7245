"""Interleaved comparisons between namespaces (mx.nd, mx.np, jnp, torch): the job and its verdicts."""
