"""A JAX model's in-model operator time: its jaxpr run equation by equation, each timed.

JAX has no per-operator profiler opperf reads, so the model's traced program is interpreted the way
eager JAX runs it: each primitive dispatched on its own (``Primitive.bind``) and blocked until its
result is ready, the recorded equations (``capture.equations``, as the capture kept them) timed one
by one. Equations the capture filtered run untimed, each blocked as well (on a GPU, or wherever JAX
dispatches asynchronously, their work would otherwise finish inside the next timed equation): their
time shows as the gap between the operators' total and the interpreted pass. The end-to-end time is
the model called as it is, eagerly.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from opperf.frameworks.jax.capture import ENTERED, describe_equation, equations
from opperf.results.configs import Call, Captured
from opperf.results.model_report import InModel
from opperf.utils.stats import summarize

PROFILED_BY = "the model's jaxpr run equation by equation (each primitive dispatched and blocked alone)"
WARMUP_PASSES = 2


def profile(model: Callable[..., object], inputs: tuple, passes: int, captured: Captured) -> InModel:
    """Per-operator seconds and calls per pass over ``passes`` interpreted passes, and the median
    end-to-end time of as many eager ones. The equations are described once, before any pass, as
    the capture (``captured``, made from the same trace) described them."""
    import jax

    traced = jax.make_jaxpr(model)(*inputs)
    arguments = jax.tree_util.tree_leaves(inputs)
    # A jitted function called twice at one shape is one traced jaxpr: its equations repeat.
    walked = [(e, d) for e in equations(traced.jaxpr) if isinstance(d := describe_equation(e), Call)]
    if len(walked) != len(captured.calls):
        raise RuntimeError(
            f"the model traced to {len(walked)} kept calls, its capture to {len(captured.calls)}"
        )
    kept = {id(equation): described.op for equation, described in walked}
    seconds: dict[str, float] = defaultdict(float)
    calls: dict[str, float] = defaultdict(float)

    def timed(equation: Any, values: list[Any]) -> list[Any]:
        op = kept.get(id(equation))
        if op is None:  # blocked too, or its work would finish inside the next timed equation
            return jax.block_until_ready(_bind(equation, values))
        start = time.perf_counter()
        outputs = jax.block_until_ready(_bind(equation, values))
        seconds[op] += (time.perf_counter() - start) / passes
        calls[op] += 1 / passes
        return outputs

    for _ in range(WARMUP_PASSES):
        jax.block_until_ready(model(*inputs))
        _run(traced.jaxpr, traced.consts, arguments, lambda equation, values: _bind(equation, values))
    wall = []
    for _ in range(passes):
        start = time.perf_counter()
        jax.block_until_ready(model(*inputs))
        wall.append(time.perf_counter() - start)
    start = time.perf_counter()
    for _ in range(passes):
        _run(traced.jaxpr, traced.consts, arguments, timed)
    interpreted = (time.perf_counter() - start) / passes
    return InModel(dict(seconds), dict(calls), interpreted, summarize(wall).median, passes, PROFILED_BY)


def _bind(equation: Any, values: list[Any]) -> list[Any]:
    outputs = equation.primitive.bind(*values, **equation.params)
    return list(outputs) if equation.primitive.multiple_results else [outputs]


def _run(
    jaxpr: Any, consts: list[Any], arguments: list[Any], apply: Callable[[Any, list[Any]], list[Any]]
) -> list[Any]:
    """``jaxpr`` evaluated on ``arguments``, each primitive equation through ``apply``; the functions
    it calls (``ENTERED``) evaluated the same way, as the capture walks them."""
    values: dict[Any, Any] = dict(zip(jaxpr.constvars, consts, strict=True))
    values.update(zip(jaxpr.invars, arguments, strict=True))

    def read(operand: Any) -> Any:
        return operand.val if hasattr(operand, "val") else values[operand]

    for equation in jaxpr.eqns:
        operands = [read(v) for v in equation.invars]
        inner = ENTERED.get(equation.primitive.name)
        if inner is not None and inner in equation.params:
            called = equation.params[inner]
            body, body_consts = getattr(called, "jaxpr", called), getattr(called, "consts", [])
            outputs = _run(body, body_consts, operands[len(operands) - len(body.invars) :], apply)
        else:
            outputs = apply(equation, operands)
        values.update(zip(equation.outvars, outputs, strict=True))
    return [read(v) for v in jaxpr.outvars]
