"""MXNet's in-place forms (``--in-place``): the generated front end of an ``mx.nd`` operator writing
its result into an array given as ``out=``, allocated once, instead of a new one each call.

The inputs are not overwritten, so repeated calls see the same values and nothing is copied back.
There is no backward pass: autograd does not record ``out=`` writes.
"""

from __future__ import annotations

from opperf.operators.info import OpInfo

FORM = "out="


def form(op: OpInfo) -> str | None:
    """``out=`` for an operator called from ``mx.nd`` (its generated front end takes it), else None."""
    return FORM if op.namespaces and op.namespaces[0].startswith("mx.nd") else None
