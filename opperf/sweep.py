"""A sweep: choose operators from the registry, derive their inputs, measure each, keep every result."""

from __future__ import annotations

import datetime as _dt
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from opperf.backends import Backend, get_backend
from opperf.benchmark import RunOptions, suggest
from opperf.errors import OpperfError
from opperf.nd_operations.categories import CATEGORY_NAMES
from opperf.rules import NoRuleError, SizeProfile, inputs_for
from opperf.rules.profiles import STANDARD
from opperf.utils.environment import describe_environment
from opperf.utils.op_info import OpInfo
from opperf.utils.results import BenchmarkSpec, InputValue, Measurement, Status, freeze_inputs

Progress = Callable[[int, int, OpInfo, Sequence[Measurement]], None]


# A sweep runs hundreds of operators: fewer runs per input than a single-operator benchmark.
SWEEP_WARMUP = 10
SWEEP_RUNS = 25


@dataclass(frozen=True)
class SweepConfig:
    """What a sweep covers and how it runs."""

    options: RunOptions = field(default_factory=lambda: RunOptions(warmup=SWEEP_WARMUP, runs=SWEEP_RUNS))
    profile: SizeProfile = STANDARD
    ops: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class SweepResult:
    """Every measurement of a sweep, and the environment it ran in."""

    environment: dict[str, object]
    measurements: tuple[Measurement, ...]
    registered: int = 0


def select_operators(backend: Backend, ops: Sequence[str], categories: Sequence[str]) -> list[OpInfo]:
    """The registry's operators named in ``ops`` (canonical or alias) or in ``categories``; all if neither."""
    registry = backend.operators()
    by_name = {name: op for op in registry for name in op.all_names}
    unknown_categories = [c for c in categories if c not in CATEGORY_NAMES]
    if unknown_categories:
        bad = unknown_categories[0]
        raise OpperfError(
            f"unknown category {bad!r}{suggest(bad, CATEGORY_NAMES)} "
            f"(categories: {', '.join(CATEGORY_NAMES)})"
        )
    for name in ops:
        if name not in by_name:
            raise OpperfError(f"unknown operator {name!r}{suggest(name, by_name)}")
    if not ops and not categories:
        return list(registry)
    chosen = {by_name[name].name for name in ops}
    chosen |= {op.name for op in registry if op.category in categories}
    return [op for op in registry if op.name in chosen]


def _spec(op: OpInfo, options: RunOptions, inputs: dict[str, InputValue]) -> BenchmarkSpec:
    return BenchmarkSpec(
        framework=options.framework,
        namespace=op.namespaces[0],
        op=op.name,
        inputs=freeze_inputs(inputs),
        dtype=options.dtype,
        device=options.device,
        run_backward=options.run_backward,
        profiler=options.profiler,
        category=op.category,
        function=op.function_name if op.function_name != op.name else "",
    )


def specs_for(op: OpInfo, config: SweepConfig, backend: Backend) -> list[BenchmarkSpec]:
    """One spec per input configuration the rules give ``op``; raises NoRuleError when there are none."""
    return [
        _spec(op, config.options, backend.applicable_inputs(op, inputs))
        for inputs in inputs_for(op, config.profile)
    ]


def _skipped(op: OpInfo, config: SweepConfig, reason: str) -> Measurement:
    return Measurement(spec=_spec(op, config.options, {}), status=Status.SKIPPED, reason=reason)


def run_sweep(config: SweepConfig, progress: Progress | None = None) -> SweepResult:
    """Measure every selected operator on every input configuration; failures are recorded, not raised."""
    backend = get_backend(config.options.framework)
    options = config.options.validated(backend)
    if config.profile.needs_int64:
        backend.require_large_tensors()
    config = SweepConfig(
        options=options, profile=config.profile, ops=config.ops, categories=config.categories
    )
    operators = select_operators(backend, config.ops, config.categories)
    started = _dt.datetime.now(_dt.timezone.utc)
    wall_start = time.perf_counter()
    measurements: list[Measurement] = []
    for index, op in enumerate(operators, start=1):
        try:
            op_results = [
                backend.measure(spec, options.warmup, options.runs, options.seed)
                for spec in specs_for(op, config, backend)
            ]
        except NoRuleError as reason:
            op_results = [_skipped(op, config, str(reason))]
        measurements.extend(op_results)
        if progress is not None:
            progress(index, len(operators), op, op_results)
    environment = describe_environment(
        backend,
        options,
        profile=config.profile.name,
        started=started,
        finished=_dt.datetime.now(_dt.timezone.utc),
        wall_seconds=time.perf_counter() - wall_start,
        command_line=sys.argv,
    )
    return SweepResult(
        environment=environment,
        measurements=tuple(measurements),
        registered=len(backend.registered_names()),
    )
