"""MXNet's graph stage: the operator inside a Gluon HybridBlock hybridized with static allocation and
static shapes (a CachedOp), built and first run once (``compile_s``), checked against eager.

A long-tail operator's implementation takes ``F`` first and runs on symbols as written; a registered
operator of an ``mx.nd`` namespace is called through ``F``'s namespace of the same name. MXNet has no
compile stage: that and anything a block cannot take (an input-dependent shape, a shape read in
Python, no input array at all, the numpy front end) are ``SkipError``s with the reason.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from opperf.measure.harness import SkipError
from opperf.measure.stages import StageCheck, compare

NO_COMPILE = "MXNet has no compile stage (its graph stage, a hybridized CachedOp, is what it compiles to)"
_ND = "mx.nd"


class Call(Protocol):
    """A session's ready-to-run operator call: its positional and keyword arguments, and the call
    (what it returns is MXNet's)."""

    @property
    def args(self) -> tuple: ...

    @property
    def kwargs(self) -> dict: ...

    def __call__(self) -> Any: ...


@dataclass(frozen=True)
class Staged:
    """The input sets' calls as the block runs them, the seconds building, hybridizing and first
    running it took, and its outputs against eager."""

    calls: tuple[Call, ...]
    compile_s: float
    check: StageCheck


def operator_body(namespace: str, name: str) -> Callable[..., object]:
    """``F``-first body of a registered ``mx.nd`` operator: ``F.<sub-namespace>.<name>(**arrays)``."""
    if namespace != _ND and not namespace.startswith(_ND + "."):
        raise SkipError(f"graph stage: opperf hybridizes mx.nd operators only, not {namespace} ones")
    path = namespace[len(_ND) :].strip(".").split(".") if namespace != _ND else []

    def body(F, **arguments: object) -> object:  # noqa: N803 (Gluon's name)
        owner = functools.reduce(getattr, [p for p in path if p], F)
        return getattr(owner, name)(**arguments)

    return body


def stage_calls(
    stage: str,
    op: str,
    body: Callable[..., object],
    calls: Sequence[Call],
    make_call: Callable[[Callable[..., object], dict], Call],
) -> Staged:
    """``calls`` (each with ``kwargs`` of arrays and scalars) run through one hybridized block of
    ``body``; ``make_call`` turns a function and keyword arguments into the session's call."""
    import mxnet as mx
    from mxnet import autograd

    if stage == "compile":
        raise SkipError(NO_COMPILE)
    if stage != "graph":
        raise SkipError(f"MXNet has no {stage} stage (its graph stage is a hybridized CachedOp)")
    first = calls[0]
    if first.args:
        raise SkipError(f"graph stage: {op} takes positional array lists, which opperf does not hybridize")
    layout = _layout(first.kwargs)
    if not layout:
        raise SkipError(f"graph stage: a HybridBlock needs at least one input array; {op} takes none")
    scalars = {name: value for name, value in first.kwargs.items() if name not in dict(layout)}
    started = time.perf_counter()
    try:
        block = _block(body, layout, scalars)
        block.hybridize(static_alloc=True, static_shape=True)
        with autograd.predict_mode():
            outputs = block(*_arrays(first.kwargs, layout))
        mx.nd.waitall()
    except Exception as error:
        from opperf.frameworks.mxnet.errors import describe_error

        raise SkipError(f"graph stage: MXNet cannot hybridize {op}: {describe_error(error)}") from error
    compile_s = time.perf_counter() - started
    with autograd.predict_mode():
        reference = first()
    check = compare(_numpy(reference), _numpy(outputs))

    def run_block(**arguments: object) -> object:
        return block(*_arrays(arguments, layout))

    return Staged(tuple(make_call(run_block, call.kwargs) for call in calls), compile_s, check)


def _layout(kwargs: dict) -> tuple[tuple[str, int | None], ...]:
    """(argument, list length or None for one array) of each array argument, in order."""
    from opperf.frameworks.mxnet.arrays import is_array

    layout: list[tuple[str, int | None]] = []
    for name, value in kwargs.items():
        if isinstance(value, list) and value and all(is_array(v) for v in value):
            layout.append((name, len(value)))
        elif is_array(value):
            layout.append((name, None))
    return tuple(layout)


def _arrays(kwargs: dict, layout: tuple[tuple[str, int | None], ...]) -> list:
    flat: list = []
    for name, count in layout:
        flat.extend(kwargs[name] if count is not None else [kwargs[name]])
    return flat


def _block(body: Callable[..., object], layout: tuple[tuple[str, int | None], ...], scalars: dict):
    from mxnet import gluon

    class Graph(gluon.HybridBlock):
        """``body`` over the flat input arrays, put back into its named arguments."""

        def hybrid_forward(self, F, *arrays):  # noqa: N803 (Gluon's name)
            remaining = iter(arrays)
            arguments = dict(scalars)
            for name, count in layout:
                arguments[name] = (
                    [next(remaining) for _ in range(count)] if count is not None else next(remaining)
                )
            return body(F, **arguments)

    return Graph()


def _numpy(outputs: Any) -> list:
    if isinstance(outputs, (list, tuple)):
        return [array for item in outputs for array in _numpy(item)]
    return [outputs.asnumpy()]
