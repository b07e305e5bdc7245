"""JAX's timing and memory probe. JAX has no per-operator profiler opperf reads: a run takes the
Python timer by default and refuses ``--profiler native`` (``FRAMEWORK.profilers``); a spec that asks
for it anyway is refused at sampling, and the harness records the Python timer's reading with the
reason. Memory and
work are XLA's analyses of the configuration on abstract arrays, before any input exists: what a pass
allocates (and so whether it may run at all), and the FLOPs and bytes of the roofline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opperf.frameworks.jax import FRAMEWORK
from opperf.frameworks.jax.arrays import total_bytes
from opperf.frameworks.jax.calls import Call
from opperf.frameworks.jax.gradients import Differentiable, float_seeds, full_pass
from opperf.measure.harness import Passes, Samples, UnmeasurableError
from opperf.measure.sampling import SamplingPlan
from opperf.results.measurement import Work

NO_NATIVE_TIMER = FRAMEWORK.profiler_note

ANALYSIS_OPTIONS: dict[str, str | bool] = {"xla_backend_optimization_level": "0"}
"""XLA's options for the programs compiled to be analysed, never run: no LLVM optimisation, which
changes machine code alone. Memory and cost analyses read the optimised HLO program and its buffer
assignment, which come before it: over the 1,444 configurations a sweep of JAX's registry prepares
on the CPU, both read the same as at the default level, and the analyses took 89 s instead of 158 s.
(``insert`` of a (1024, 1024) array still spends 9 s a compile constant-folding index arithmetic:
that pass is XLA's HLO optimisation, which the analyses read.)"""


@dataclass(frozen=True)
class NoNativeTimer:
    """The ``native`` sampler of a framework without one: it refuses to sample."""

    name: str = "native"

    def sample(self, passes: Passes, plan: SamplingPlan) -> Samples:
        raise UnmeasurableError(NO_NATIVE_TIMER)


@dataclass(frozen=True)
class Analysis:
    """What XLA says of a configuration before any input exists: the forward pass's work (None where
    it cannot be traced) and the bytes a pass allocates (None where it cannot be compiled whole)."""

    work: Work | None
    pass_bytes: int | None


def analyse(call: Call, differentiable: Differentiable) -> Analysis:
    """The call on abstract arrays (``jax.ShapeDtypeStruct``): its forward pass traced and compiled
    for its work, and compiled with its backward pass for what a pass allocates.

    Work: the FLOPs of XLA's cost analysis of the compiled forward pass, its transcendental
    operations (``exp``, ``tanh``), which XLA counts apart, included; where the compiled program
    cannot count them (it calls a library: oneDNN's ``matmul`` and ``softmax``, ``TopK``), the
    unoptimised program's; None where that calls one too (LAPACK's factorisations,
    ``CUSTOM_CALLS``). The unoptimised count alone overcounts what XLA rewrites: ``cumsum`` along
    the rows of a (1024, 1024) array is 1.07e9 FLOPs there, 3.5e7 compiled; ``unique(size=10)``
    1.1e12 against 7.0e7. The bytes are the compulsory ones (every input read once, every output
    written once), as opperf counts them for every framework: XLA's own ``bytes accessed`` sums every
    operation of the unfused program (50 MB for ``nn.softmax`` of an 8 MB array).

    Bytes: XLA's memory analysis of the compiled call, with its backward pass where
    ``differentiable`` names arrays to differentiate and an output is floating point (the forward
    pass alone where there is no backward pass: ``argmax`` counted the zero gradient XLA allocates
    for its input, 4 MiB of a (1024, 1024) array, where 36 bytes are all its pass allocates):
    outputs and temporaries; the arguments, which exist before a pass, are not counted, as in every
    framework. None where XLA cannot compile the call on abstract arrays: an output's shape depends
    on values (``nonzero``), Python branches on them (``roots``), or the call is invalid (running it
    says why)."""
    import jax

    try:
        forward = jax.jit(call.run).lower(*call.arrays)
        compiled = forward.compile(ANALYSIS_OPTIONS)
    except Exception:
        return Analysis(None, None)
    work = _work(call, forward, compiled)
    for plan in (differentiable, ()) if any(differentiable) else ((),):
        try:
            seeds = float_seeds(call, plan) if plan else ()
            if seeds:
                lowered = jax.jit(full_pass(call, plan)).lower(*call.arrays, seeds)
                analysis = lowered.compile(ANALYSIS_OPTIONS).memory_analysis()
            else:
                analysis = compiled.memory_analysis()
        except Exception:
            continue
        if analysis is None:  # a backend without memory analysis
            return Analysis(work, None)
        return Analysis(work, int(analysis.output_size_in_bytes + analysis.temp_size_in_bytes))
    return Analysis(work, None)


def _costs(stage: Any) -> dict[str, float]:
    costs = stage.cost_analysis()
    if isinstance(costs, list):  # one per device in older JAX
        costs = costs[0] if costs else None
    return dict(costs or {})


CUSTOM_CALLS = ("custom-call(", "stablehlo.custom_call")
"""How a library call reads in a compiled (HLO) and an unoptimised (StableHLO) program's text. XLA's
cost analysis counts a library call as -1 FLOPs and adds that to the program's total, which reads -1
only where the call is all the program does: ``linalg.inv`` of a (256, 256) array read 197,646 FLOPs
(some 4e7 done), its LAPACK factorisation and solves uncounted. A program that holds one is not
counted at all."""


def _flops(stage: Any) -> float | None:
    """A program's FLOPs and transcendentals together; None where XLA could not count them (-1) or
    the program calls a library (``CUSTOM_CALLS``)."""
    costs = _costs(stage)
    counted = [costs.get("flops", 0.0), costs.get("transcendentals", 0.0)]
    if any(value < 0 for value in counted) or any(call in stage.as_text() for call in CUSTOM_CALLS):
        return None
    return sum(counted)


def _work(call: Call, lowered: Any, compiled: Any) -> Work | None:
    """The compiled program's FLOPs, else the unoptimised one's; None where neither counts them."""

    flops = _flops(compiled)
    if flops is None:
        flops = _flops(lowered)
    if flops is None:
        return None
    return Work(bytes_moved=total_bytes((call.arrays, lowered.out_info)), flops=int(flops))
