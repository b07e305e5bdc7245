"""Fused patterns: short chains of layers (Conv+ReLU, Conv+BatchNorm(+ReLU), the residual
Conv+BatchNorm+add+ReLU, FullyConnected+ReLU, BatchNorm+ReLU) that fusion backends turn into one
kernel, measured unfused and fused side by side.

This package is the framework-free half: the patterns as data (``opperf.operators.fused.patterns``), the
variants each framework runs a pattern in, the records that put the patterns into each framework's
registry as category ``fused``, and the proof that a fusion backend fused anything. Each framework
builds and runs a pattern in ``opperf/frameworks/<fw>/fused.py``.

A pattern's record carries its ``stage`` (eager, graph, compile or ``fused``) and its ``variant``: the
unfused chain end to end (``unfused``), the same layers each run and synchronised on its own in turn
(``parts``: the sum of its parts), or the fusion backend (``mkldnn``, ``onednn``, ``contrib``,
``inductor``, ``inductor-freezing``, ``ao``, ``freeze``). A fusion backend's record proves the fusion
with the optimised graph's operator list; a backend that left the graph as it was is ``skipped`` with
"graph unchanged", never timed as fused, and one whose graph cannot be read is ``skipped`` with
"cannot prove fusion", never trusted.
Patterns compute inference semantics (BatchNorm on its running statistics), the only semantics a fold
of BatchNorm into the convolution keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from opperf.frameworks import describe, framework_module
from opperf.operators.fused.pattern import Pattern
from opperf.operators.info import ArgKind, Argument, OpInfo
from opperf.results.measurement import InputValue, TensorSpec
from opperf.utils.errors import lookup

CATEGORY = "fused"
NAMESPACE = "opperf.operators.fused"
"""Where a pattern is "called from": opperf's own chains of layers, one builder per framework."""
STAGE = "fused"
"""The stage of a fusion backend's records (``--stages ...,fused``); patterns only."""
GRAPH_UNCHANGED = "graph unchanged"
CANNOT_PROVE = "cannot prove fusion"
FUSED_ONLY = f"the {STAGE} stage is fused patterns' only (category {CATEGORY})"
"""Why an operator that is no pattern has no record of the fused stage (a sweep's refusal says it too)."""

LAYERS: tuple[str, ...] = ("conv", "bn", "relu", "add", "fc")
"""The layers a pattern chains: a 2-D convolution keeping the channels and the spatial size (padding
kernel // 2), an inference BatchNorm, ReLU, the addition of a residual input of the same shape, and a
fully connected layer."""


@dataclass(frozen=True)
class Variant:
    """A way to run a pattern in a framework: its stage, its name, and what it is. ``fusion`` variants
    must prove that they fused (their graph has fewer nodes than the unfused one) or are skipped.
    ``backward`` is why the variant takes no backward pass (None: it takes one where the chain does)."""

    framework: str
    stage: str
    name: str
    runs: str
    fusion: bool = False
    backward: str | None = None


def framework_variants(framework: str) -> tuple[Variant, ...]:
    """Every variant ``framework`` declares (its ``fused.VARIANTS``), in the order a configuration
    runs them. A stage a framework lists no variant for (MXNet's compile) runs as it does for any
    operator: skipped with the framework's reason."""
    if not describe(framework).can("fused"):
        return ()
    return tuple(framework_module(framework, "fused").VARIANTS)


def variants(framework: str, stage: str) -> tuple[Variant, ...]:
    """The variants of ``framework`` in ``stage`` that its installed build has (its ``fused.available``);
    for a stage it lists none, the stage alone."""
    found = tuple(v for v in framework_variants(framework) if v.stage == stage)
    if found:
        available = framework_module(framework, "fused").available
        found = tuple(v for v in found if available(v.name))
    return found or (Variant(framework, stage, "unfused", f"the {stage} stage"),)


def variant(framework: str, stage: str, name: str) -> Variant:
    """The variant ``name`` of ``stage`` as the table has it, whether or not this build lists it."""
    listed = (v for v in framework_variants(framework) if (v.stage, v.name) == (stage, name))
    return next(listed, None) or next(v for v in variants(framework, stage) if v.name == name)


def backward_refusal(namespace: str, framework: str, stage: str, name: str) -> str | None:
    """Why fused-pattern variant ``name`` of ``stage`` gets no backward pass (its ``backward`` in the
    table); None for it otherwise, and for any operator that is not a fused pattern (``namespace``)."""
    return variant(framework, stage, name).backward if namespace == NAMESPACE else None


def catalogue() -> tuple[Pattern, ...]:
    """Every pattern, in the table's order."""
    from opperf.operators.fused.patterns import PATTERNS

    return PATTERNS


def entry(name: str) -> Pattern:
    """The pattern ``name``; OpperfError with the closest names otherwise."""
    return lookup({p.name: p for p in catalogue()}, name, "fused pattern")


def inputs_for(name: str) -> list[dict[str, InputValue]]:
    """The sweep's input configurations of pattern ``name``."""
    return entry(name).configurations()


def _argument(name: str, value: InputValue) -> Argument:
    kind = ArgKind.TENSOR if isinstance(value, TensorSpec) else ArgKind.INT
    return Argument(name=name, kind=kind, required=True, type_string=kind.value)


def operators(framework: str) -> tuple[OpInfo, ...]:
    """The patterns as registry records of ``framework``: category ``fused``, namespace
    ``opperf.operators.fused``."""
    return tuple(
        OpInfo(
            name=p.name,
            aliases=(),
            namespaces=(NAMESPACE,),
            function_name=p.name,
            arguments=tuple(_argument(n, v) for n, v in p.configure(*p.small).items()),
            has_backward=True,
            category=CATEGORY,
            framework=framework,
        )
        for p in catalogue()
    )


def parameters(pattern: Pattern, config: dict[str, Any], seed: int) -> dict[str, np.ndarray]:
    """The layers' parameters as float32 arrays drawn from ``seed``, the same in every framework:
    ``conv_weight`` (F, C, k, k) and ``conv_bias``, BatchNorm's ``gamma``, ``beta``, ``mean`` and ``var``
    (around 1, 0, 0 and 1, so outputs keep their scale), ``fc_weight`` (units, in) and ``fc_bias``."""
    rng = np.random.default_rng(seed)
    data = config["data"]
    channels = data.shape[1]
    drawn: dict[str, np.ndarray] = {}

    def uniform(shape: tuple[int, ...], low: float, high: float) -> np.ndarray:
        return rng.uniform(low, high, size=shape).astype(np.float32)

    if "conv" in pattern.layers:
        kernel = int(config["kernel"])
        bound = 1.0 / np.sqrt(channels * kernel * kernel)
        drawn["conv_weight"] = uniform((channels, channels, kernel, kernel), -bound, bound)
        drawn["conv_bias"] = uniform((channels,), -bound, bound)
    if "bn" in pattern.layers:
        drawn["gamma"] = uniform((channels,), 0.5, 1.5)
        drawn["beta"] = uniform((channels,), -0.5, 0.5)
        drawn["mean"] = uniform((channels,), -0.5, 0.5)
        drawn["var"] = uniform((channels,), 0.5, 1.5)
    if "fc" in pattern.layers:
        units = int(config["units"])
        bound = 1.0 / np.sqrt(channels)
        drawn["fc_weight"] = uniform((units, channels), -bound, bound)
        drawn["fc_bias"] = uniform((units,), -bound, bound)
    return drawn


def fewer_nodes(unfused: Sequence[str], optimised: Sequence[str]) -> bool:
    """Whether an optimised graph fused anything: it runs fewer compute nodes than the unfused one (a
    renamed node, MXNet's ``_sg_mkldnn_conv`` around a lone convolution, is no fusion)."""
    return len(optimised) < len(unfused)


def unchanged_reason(backend: str, unfused: Sequence[str], optimised: Sequence[str]) -> str:
    """The skip reason of a fusion backend that fused nothing, with both graphs as evidence."""
    return (
        f"{GRAPH_UNCHANGED}: {backend} fused nothing (optimised graph {list(optimised)}, unfused "
        f"{list(unfused)}); no time is recorded as fused"
    )


def stage_variants(op: OpInfo, stages: Sequence[str]) -> list[tuple[str, str]]:
    """(stage, variant) of each record a configuration of ``op`` gets for ``stages``: a pattern's
    variants of each stage; for any other operator its stages with no variant, less ``fused``."""
    if op.category != CATEGORY:
        return [(stage, "") for stage in stages if stage != STAGE]
    return [(v.stage, v.name) for stage in stages for v in variants(op.framework, stage)]
