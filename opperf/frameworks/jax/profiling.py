"""JAX's timing and memory probe. JAX has no per-operator profiler opperf reads, so ``native`` is
refused at sampling and the harness records the Python timer's reading with the reason. Memory and
work are XLA's analyses of the configuration on abstract arrays, before any input exists: what a pass
allocates (and so whether it may run at all), and the FLOPs and bytes of the roofline."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from opperf.frameworks.jax.calls import Call
from opperf.frameworks.jax.gradients import Differentiable, float_seeds, full_pass
from opperf.measure.harness import Passes, Samples, UnmeasurableError
from opperf.measure.sampling import SamplingPlan
from opperf.results.measurement import Work

NO_NATIVE_TIMER = "JAX has no per-operator profiler opperf reads (its traces are TensorBoard files)"


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
    """The call on abstract arrays (``jax.ShapeDtypeStruct``), traced once for the forward pass's work
    and compiled as one executable for what a pass allocates.

    Work: the FLOPs of XLA's cost analysis of the lowered forward pass, its transcendental operations
    (``exp``, ``tanh``), which XLA counts apart, included; and the compulsory bytes (every input read
    once, every output written once), as opperf counts them for every framework. XLA's own ``bytes
    accessed`` sums every operation of the unfused program: 50 MB for ``nn.softmax`` of a (1024,
    1024) array, whose input and output are 8 MB; and the compiled program's analysis reports -1 for
    the library calls (``matmul``) that matter most.

    Bytes: XLA's memory analysis of the compiled call, with its backward pass where
    ``differentiable`` names arrays to differentiate (the forward pass alone where JAX cannot
    differentiate it): outputs and temporaries; the arguments, which exist before a pass, are not
    counted, as in every framework. None where an output's shape depends on values (``nonzero``), or
    the call is invalid (running it says why)."""
    import jax

    try:
        forward = jax.jit(call.run).lower(*call.arrays)
    except Exception:
        return Analysis(None, None)
    work = _work(call, forward)
    for plan in (differentiable, ()) if any(differentiable) else ((),):
        try:
            if plan:
                seeds = float_seeds(call, plan)
                lowered = jax.jit(full_pass(call, plan)).lower(*call.arrays, seeds)
            else:
                lowered = forward
            analysis = lowered.compile().memory_analysis()
        except Exception:
            continue
        if analysis is None:  # a backend without memory analysis
            return Analysis(work, None)
        return Analysis(work, int(analysis.output_size_in_bytes + analysis.temp_size_in_bytes))
    return Analysis(work, None)


def _work(call: Call, lowered: Any) -> Work | None:
    import jax

    costs = lowered.cost_analysis()
    if isinstance(costs, list):  # one per device in older JAX
        costs = costs[0] if costs else None
    if not costs:
        return None
    flops = max(costs.get("flops", 0.0), 0.0) + max(costs.get("transcendentals", 0.0), 0.0)
    leaves = [*jax.tree_util.tree_leaves(call.arrays), *jax.tree_util.tree_leaves(lowered.out_info)]
    moved = sum(math.prod(leaf.shape) * np.dtype(leaf.dtype).itemsize for leaf in leaves)
    return Work(bytes_moved=int(moved), flops=int(flops))
