"""JAX's timing and memory probe. JAX has no per-operator profiler opperf reads, so ``native`` is
refused at sampling and the harness records the Python timer's reading with the reason. Memory is
XLA's analysis of the configuration compiled as one executable on abstract arrays, before any input
exists: what a pass allocates, and so whether it may run at all."""

from __future__ import annotations

from dataclasses import dataclass

from opperf.frameworks.jax.calls import Call
from opperf.frameworks.jax.gradients import Differentiable, float_seeds, full_pass
from opperf.measure.harness import Passes, Samples, UnmeasurableError
from opperf.measure.sampling import SamplingPlan

NO_NATIVE_TIMER = "JAX has no per-operator profiler opperf reads (its traces are TensorBoard files)"


@dataclass(frozen=True)
class NoNativeTimer:
    """The ``native`` sampler of a framework without one: it refuses to sample."""

    name: str = "native"

    def sample(self, passes: Passes, plan: SamplingPlan) -> Samples:
        raise UnmeasurableError(NO_NATIVE_TIMER)


def compiled_bytes(call: Call, differentiable: Differentiable) -> int | None:
    """Output and temporary bytes of a call on abstract arrays (``jax.ShapeDtypeStruct``) compiled as
    one executable, with its backward pass where ``differentiable`` names arrays to differentiate
    (the forward pass alone where JAX cannot differentiate it), from XLA's memory analysis; the
    arguments, which exist before a pass, are not counted, as in every framework. None where the
    call cannot be compiled whole: an output's shape depends on values (``nonzero``), or the call is
    invalid (running it says why)."""
    import jax

    for plan in (differentiable, ()) if any(differentiable) else ((),):
        try:
            arguments = (*call.arrays, float_seeds(call, plan)) if plan else call.arrays
            run = full_pass(call, plan)
            analysis = jax.jit(run).lower(*arguments).compile().memory_analysis()
        except Exception:
            continue
        if analysis is None:  # a backend without memory analysis
            return None
        return int(analysis.output_size_in_bytes + analysis.temp_size_in_bytes)
    return None
