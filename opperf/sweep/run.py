"""A sweep: choose operators from the registry, derive their inputs, measure each, keep every result."""

from __future__ import annotations

import contextlib
import datetime as _dt
import gc
import hashlib
import os
import sys
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple, cast

from opperf.frameworks import (
    FRAMEWORKS,
    Backend,
    command_threads,
    describe,
    framework_module,
    gemm_rates,
    get_backend,
    started_environment,
    worker_python,
)
from opperf.measure import harness
from opperf.measure.benchmark import RunOptions
from opperf.measure.isolation import STOP_GRACE_S, IsolatedRunner
from opperf.measure.memory import ITEMSIZE, available_host_bytes, memory_limit_bytes, peak_rss_bytes
from opperf.measure.roofline.peaks import MachinePeaks, calibrate_peaks, load_peaks
from opperf.measure.stages import EAGER, IN_PLACE
from opperf.measure.threads import ThreadFactorRunner, ThreadPlan
from opperf.operators.fused import CATEGORY as FUSED_CATEGORY
from opperf.operators.fused import FUSED_ONLY, stage_variants
from opperf.operators.fused import STAGE as FUSED_STAGE
from opperf.operators.info import OpInfo
from opperf.operators.longtail import check_tags, has_tags
from opperf.operators.rules import (
    FuzzSettings,
    NoRuleError,
    SizeProfile,
    distinct,
    fuzzed_inputs,
    inputs_for,
    replay_refusal,
)
from opperf.operators.rules.fuzz import REGIMES, memory_cap_elements, shapes_checksum
from opperf.operators.rules.profiles import STANDARD
from opperf.results.configs import Configuration
from opperf.results.environment import Environment, Machine
from opperf.results.measurement import BenchmarkSpec, InputValue, Measurement, Status, freeze_inputs
from opperf.results.options import SweepFactors
from opperf.sweep import shards
from opperf.sweep.checkpoint import JournalWriter, check_settings, load_journal
from opperf.sweep.costs import MeasuredCosts
from opperf.sweep.devices import WORKER_DEVICE, DevicePool, check_devices, cpu_shares
from opperf.sweep.engines import EngineTask
from opperf.sweep.public_names import resolve_selection
from opperf.sweep.shards import Shard
from opperf.utils.affinity import AUTO, NONE, available_cpus, worker_cpus
from opperf.utils.devices import Device
from opperf.utils.errors import OpperfError, suggest
from opperf.utils.words import counted

Progress = Callable[[int, int, OpInfo, Sequence[Measurement]], None]
"""Called with (operators done, operators selected, an operator, its results): with no results as the
operator starts, with them once it has finished."""


# The slowest operator of a default CPU sweep here takes about 10 s for all its configurations.
DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class SweepConfig:
    """What a sweep covers and how it runs."""

    options: RunOptions = field(default_factory=RunOptions)
    factors: SweepFactors = field(default_factory=SweepFactors)
    """What the sweep varies over each configuration: thread counts, stages, drawn shapes, in-place forms."""
    profile: SizeProfile = STANDARD
    ops: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    tags_all: bool = False
    isolate: bool = True
    timeout_s: float = DEFAULT_TIMEOUT_S
    journal: str | None = None
    resume: bool = False
    recalibrate_peaks: bool = False
    affinity: str = AUTO
    shard: Shard | None = None
    costs: MeasuredCosts | None = None
    """What each operator cost a previous sweep: shards are balanced by it (``opperf.sweep.costs``)."""
    batch_job: EngineTask | None = None
    """The batch engine's task this sweep runs as, recorded in its environment."""
    devices: tuple[int, ...] = ()
    """GPUs to measure on at once, a worker each (``opperf.sweep.devices``); none: one worker."""
    fresh: bool = False
    framework_flags: Mapping[str, str] = field(default_factory=dict)
    configs: Mapping[str, tuple[Configuration, ...]] = field(default_factory=dict)
    build: Mapping[str, object] = field(default_factory=dict)
    """The framework build that measures (its version and build as the workers' interpreter reports
    them, and that interpreter), set once it has started (``_checked``): a journal is resumed only by
    the build that began it."""

    def selection(self) -> dict[str, object]:
        """What the sweep was asked to measure, as its environment records it (empty: everything)."""
        return {
            **({"ops": sorted(self.ops)} if self.ops else {}),
            **({"categories": sorted(self.categories)} if self.categories else {}),
            **({"tags": sorted(self.tags), "tags_all": self.tags_all} if self.tags else {}),
            **({"configs": configs_digest(self.configs)} if self.configs else {}),
        }

    def settings(self) -> dict[str, object]:
        """What must match for results to be comparable, and so for a journal to be resumed: the
        options, factors and build, and the selection (a journal resumed with another would leave its
        operators out of the report, then be removed)."""
        shard = str(self.shard) if self.shard else None
        return {
            **self.options.settings(),
            **self.selection(),
            **({"build": dict(self.build)} if self.build else {}),
            **self.factors.settings(),
            "affinity": self.affinity,
            "profile": self.profile.name,
            "shard": shard,
            **({"devices": list(self.devices)} if self.devices else {}),
            **({"costs": self.costs.source} if self.costs and self.shard else {}),
            "isolate": self.isolate,
            "framework_flags": dict(self.framework_flags),
        }


def configs_digest(configs: Mapping[str, tuple[Configuration, ...]]) -> str:
    """A short fingerprint of replayed configurations: a journal resumes only the same ones."""
    text = repr(sorted((op, tuple(c.inputs for c in group)) for op, group in configs.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class SweepResult:
    """Every measurement of a sweep, and the environment it ran in.

    ``aliases`` lists, per operator measured, the other registered names benchmarked with it;
    ``interrupted`` says the sweep stopped early (Ctrl-C) and covers ``measured`` of ``selected``.
    """

    environment: Environment
    measurements: tuple[Measurement, ...]
    registered: int = 0
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    selected: int = 0
    interrupted: bool = False
    resumed: int = 0

    @property
    def measured(self) -> int:
        return len({m.spec.op for m in self.measurements})


def canonical_names(operators: Sequence[OpInfo]) -> dict[str, str]:
    """Every name an operator goes by (canonical or alias) -> its canonical name."""
    return {name: op.name for op in operators for name in op.all_names}


def select_operators(
    backend: Backend,
    ops: Sequence[str],
    categories: Sequence[str],
    tags: Sequence[str] = (),
    tags_all: bool = False,
) -> list[OpInfo]:
    """The registry's operators named in ``ops`` (canonical, alias, or a public function such as
    ``mx.nd.add``: ``opperf.sweep.public_names``), in ``categories``, or carrying
    any of ``tags`` (every one of them with ``tags_all``); all if none of these is given."""
    registry = backend.operators()
    check_tags(tags)
    known = sorted({op.category for op in registry})
    unknown_categories = [c for c in categories if c not in known]
    if unknown_categories:
        bad = unknown_categories[0]
        raise OpperfError(
            f"unknown category {bad!r}{suggest(bad, known)} "
            f"({backend.framework} categories: {', '.join(known)})"
        )
    selected, public_names = resolve_selection(backend.framework, ops, canonical_names(registry))
    for public in public_names:
        print(f"note: {public.describe()}", file=sys.stderr)
    chosen = set(selected)
    if not ops and not categories and not tags:
        return list(registry)
    chosen |= {op.name for op in registry if op.category in categories}
    chosen |= {op.name for op in registry if tags and has_tags(op.name, tags, every=tags_all)}
    if not chosen:  # only tags can select nothing: a framework without long-tail operators, or
        # tags no operator carries together (an empty selection elsewhere means everything)
        having = [describe(name).display_name for name in FRAMEWORKS if describe(name).can("longtail")]
        raise OpperfError(
            f"no {describe(backend.framework).display_name} operator carries "
            f"{('every one of ' if tags_all else 'any of ') if len(tags) > 1 else ''}--tags {','.join(tags)}"
            f"; tags mark the long-tail operators of {' and '.join(having)} (opperf list --tags shows them)"
        )
    return [op for op in registry if op.name in chosen]


def _spec(
    op: OpInfo, options: RunOptions, inputs: dict[str, InputValue], stage: str = "eager", variant: str = ""
) -> BenchmarkSpec:
    return BenchmarkSpec(
        namespace=op.namespaces[0],
        op=op.name,
        inputs=freeze_inputs(inputs),
        options=options,
        category=op.category,
        function=op.function_name if op.function_name != op.name else "",
        stage=stage,
        variant=variant,
    )


def configurations_for(op: OpInfo, config: SweepConfig) -> list[dict[str, InputValue]]:
    """The input configurations to measure ``op`` with: the replayed ones (``config.configs``, from a
    captured model) where given, else the size profile's, or shapes drawn under ``--shapes``;
    raises NoRuleError when the rules have none."""
    if config.configs:
        return [dict(c.inputs) for c in config.configs.get(op.name, ())]
    options, factors = config.options, config.factors
    kind = options.device.kind
    if factors.shapes == "standard":
        return inputs_for(op, config.profile, kind)
    ceiling = max(high for _, high in REGIMES.values())
    cap = memory_cap_elements(available_host_bytes(), ITEMSIZE.get(options.dtype, 8), ceiling)
    settings = FuzzSettings(factors.shapes, options.seed, factors.fuzz_count, cap)
    return fuzzed_inputs(op, config.profile, kind, settings)


def in_place_runs(op: OpInfo, factors: SweepFactors) -> list[tuple[str, str]]:
    """The (stage, variant) of ``op``'s in-place form where ``--in-place`` asks for it and the
    framework has one (``opperf.frameworks.<name>.in_place``): eager only."""
    if not factors.in_place or EAGER not in factors.stages:
        return []
    form = framework_module(op.framework, "in_place").form(op)
    return [(EAGER, IN_PLACE)] if form else []


def specs_for(op: OpInfo, config: SweepConfig, backend: Backend) -> list[BenchmarkSpec]:
    """One spec per input configuration ``op`` is measured with and stage the factors name (a
    configuration's stages one after another; a fused pattern's variants of each stage, see
    ``opperf.operators.fused.stage_variants``); raises NoRuleError when there are none."""
    runs = stage_variants(op, config.factors.stages) + in_place_runs(op, config.factors)
    if not runs:
        raise NoRuleError(f"{FUSED_ONLY}; {op.name} is none")
    return distinct(  # configurations differing only in tensors the operator then ignores are one
        _spec(op, config.options, backend.applicable_inputs(op, inputs), stage, variant)
        for inputs in configurations_for(op, config)
        for stage, variant in runs
    )


class Planned(NamedTuple):
    """What a sweep does with an operator: the specs to measure, and the records of what it does not
    measure (the operator skipped or its rule broken; replayed configurations refused)."""

    specs: list[BenchmarkSpec]
    unmeasured: list[Measurement]


def _unmeasured(
    op: OpInfo,
    config: SweepConfig,
    status: Status,
    reason: str,
    inputs: dict[str, InputValue] | None = None,
    stage: str = EAGER,
) -> Measurement:
    return Measurement(spec=_spec(op, config.options, inputs or {}, stage), status=status, reason=reason)


def _refused(op: OpInfo, config: SweepConfig) -> tuple[SweepConfig, list[Measurement]]:
    """``config`` with only the replayed configurations of ``op`` a sweep runs, and a ``skipped``
    record, naming the file's line and the reason, of each it refuses (``rules.replay_refusal``)."""
    kind = config.options.device.kind
    kept: list[Configuration] = []
    refused: list[Measurement] = []
    for configuration in config.configs.get(op.name, ()):
        reason = replay_refusal(op, configuration.inputs, config.profile, kind)
        if reason is None:
            kept.append(configuration)
        else:
            where = f"{configuration.source}: " if configuration.source else ""
            refused.append(
                _unmeasured(op, config, Status.SKIPPED, f"{where}{reason}", dict(configuration.inputs))
            )
    return replace(config, configs={**config.configs, op.name: tuple(kept)}), refused


def run_sweep(
    config: SweepConfig, progress: Progress | None = None, done: Callable[[], None] | None = None
) -> SweepResult:
    """Measure every selected operator on every input configuration; failures are recorded, not raised.

    Each operator runs in a worker process (unless ``config.isolate`` is off) within
    ``config.timeout_s``; finished operators go to the journal as they finish; Ctrl-C stops the sweep
    and returns what finished, marked ``interrupted``. ``done`` is called once no operator is left to
    run (all measured, or the sweep stopped), before the workers close: the caller's signal handling
    (``utils.signals.Stopping.settle``) then notes a later stop instead of raising it where nothing
    would catch it, and what was measured is returned.
    """
    backend = get_backend(config.options.framework)
    # the thread count first: a framework that fixes its pool as it starts (JAX's CPU backend) is
    # started by ``_checked``, and --threads 1 was then refused as "already runs here with 2 threads"
    thread_plan = _thread_plan(config)
    threads = None if thread_plan else command_threads(backend, config.options.threads, config.isolate)
    config = _checked(config, backend)
    options = config.options
    operators = _selected(config, backend)
    finished = _resume(config)
    cpus = worker_cpus(config.affinity, threads, available_cpus()) if config.isolate else None
    peaks = _machine_peaks(config) if not options.device.on_gpu else None
    started = _dt.datetime.now(_dt.timezone.utc)
    wall_start = time.perf_counter()
    measurements: list[Measurement] = []
    measured_now: list[Measurement] = []
    interrupted = False
    in_flight: list[OpInfo] = []
    with contextlib.ExitStack() as stack:
        writer = _journal_writer(config, append=bool(finished), stack=stack)
        pool = stack.enter_context(_device_pool(config, threads)) if config.devices else None
        runner = (
            pool.first
            if pool
            else cast(
                "IsolatedRunner | InProcessRunner | ThreadFactorRunner",
                stack.enter_context(_runner(config, backend, thread_plan, threads, cpus)),
            )
        )
        overhead = runner.harness_overhead(options.profiler_in_effect, options.device)
        if pool is not None:
            outcomes = _on_devices(pool, operators, finished, config, backend)
        else:
            outcomes = _one_by_one(
                operators, finished, config, backend, runner, thread_plan, progress, in_flight
            )
        # Closed before the workers, however the loop ends: a pool's threads then stop taking operators.
        outcomes = stack.enter_context(contextlib.closing(outcomes))
        try:
            for index, (op, op_results, fresh) in enumerate(outcomes, start=1):
                # Kept before it is journaled: an interrupt during the journal's sync loses nothing.
                measurements.extend(op_results)
                if fresh:
                    measured_now.extend(op_results)
                    if writer is not None:
                        writer.add(op.name, op_results)
                if progress is not None:
                    progress(index, len(operators), op, op_results)
        except KeyboardInterrupt:
            interrupted = True
            if config.isolate:
                _say_abandoned(list(pool.in_flight.values()) if pool else [op.name for op in in_flight])
        if done is not None:
            done()
    if pool is not None:
        order = {op.name: index for index, op in enumerate(operators)}
        measurements.sort(key=lambda m: order.get(m.spec.op, len(order)))
    wall_seconds = time.perf_counter() - wall_start
    environment = Environment(
        machine=Machine.this_one(),
        framework=backend.environment(),
        options=options,
        factors=config.factors,
        size_profile=config.profile.name,
        command_line=tuple(sys.argv),
        started=started,
        finished=_dt.datetime.now(_dt.timezone.utc),
        wall_seconds=wall_seconds,
        isolated=config.isolate,
        timeout_s=config.timeout_s,
        interrupted=interrupted,
        threads=threads,
        worker_cpus=tuple(cpus) if cpus else None,
        harness_overhead_s=overhead,
        harness_efficiency=harness_efficiency(measured_now, wall_seconds, max(1, len(config.devices))),
        machine_peaks=peaks,
        shard=str(config.shard) if config.shard else None,
        batch_job=config.batch_job.describe() if config.batch_job else None,
        worker_peak_rss_bytes=(pool or runner).peak_rss_bytes,
        shapes_checksum=_shapes_checksum(measurements, config.factors),
        usable_cpus=len(available_cpus()),
        thread_workers=thread_plan.describe() if thread_plan else None,
        device_workers=pool.placement if pool else None,
        selection=config.selection() or None,
    )
    measured = {m.spec.op for m in measurements}
    return SweepResult(
        environment=environment,
        measurements=tuple(measurements),
        registered=len(backend.registered_names()),
        aliases={op.name: op.aliases for op in operators if op.name in measured},
        selected=len(operators),
        interrupted=interrupted,
        resumed=len(set(finished) & measured),
    )


def _say_abandoned(names: Sequence[str]) -> None:
    """Say which operators a stopped sweep abandons mid-measurement (none: nothing to say)."""
    if names:
        which = (
            "is abandoned; waiting up to {} s for its worker"
            if len(names) == 1
            else ("are abandoned; waiting up to {} s for their workers")
        )
        print(
            f"stopping: {', '.join(names)} {which.format(f'{STOP_GRACE_S:g}')} to exit (another Ctrl-C "
            "does not lose what finished)",
            file=sys.stderr,
        )


Outcome = tuple[OpInfo, Sequence[Measurement], bool]
"""An operator, its results, and whether they were measured now (not read back from the journal)."""


def _one_by_one(
    operators: Sequence[OpInfo],
    finished: Mapping[str, Sequence[Measurement]],
    config: SweepConfig,
    backend: Backend,
    runner: IsolatedRunner | InProcessRunner | ThreadFactorRunner,
    thread_plan: ThreadPlan | None,
    progress: Progress | None,
    in_flight: list[OpInfo],
) -> Generator[Outcome, None, None]:
    """Each operator in the selection's order: the journal's results, or measured now by ``runner``;
    ``in_flight`` holds the operator being measured, for the message of a sweep stopped during it."""
    for index, op in enumerate(operators):
        done = finished.get(op.name)
        if done is not None:
            yield op, done, False
            continue
        if progress is not None:  # the operator now running, none of its results yet
            progress(index, len(operators), op, ())
        in_flight[:] = [op]
        results = _measure_operator(op, config, backend, runner, thread_plan, index)
        in_flight.clear()
        yield op, results, True


def _on_devices(
    pool: DevicePool,
    operators: Sequence[OpInfo],
    finished: Mapping[str, Sequence[Measurement]],
    config: SweepConfig,
    backend: Backend,
) -> Generator[Outcome, None, None]:
    """The journal's results, then each other operator as one of the GPUs finishes it."""
    pending = [op for op in operators if op.name not in finished]
    yield from ((op, finished[op.name], False) for op in operators if op.name in finished)
    costs = {op.name: expected_cost(op, config) for op in pending}
    completed = pool.completed(
        pending, costs, lambda op, runner: _measure_operator(op, config, backend, runner)
    )
    yield from ((op, results, True) for op, results in completed)


def _device_pool(config: SweepConfig, threads: int | None) -> DevicePool:
    """A worker for each of ``config.devices``, each pinned to its own share of the CPUs
    ``--affinity`` allows (all of them by default; none pinned with ``--affinity none``)."""
    options = config.options
    available = available_cpus()
    chosen = available if config.affinity in (AUTO, NONE) else worker_cpus(config.affinity, None, available)
    count = len(config.devices)
    shares = [None] * count if config.affinity == NONE else cpu_shares(chosen or available, count)
    return DevicePool(
        config.devices,
        options.framework,
        config.timeout_s,
        threads if threads is not None else options.threads,
        shares,
        python=worker_python(options.framework) or sys.executable,
    )


def _machine_peaks(config: SweepConfig) -> MachinePeaks:
    """This machine's roofs (cached); the GEMM roof is the best of NumPy's and each framework's own."""
    return load_peaks(
        redo=config.recalibrate_peaks, calibrate=lambda: calibrate_peaks(gemm_elsewhere=gemm_rates)
    )


def _checked(config: SweepConfig, backend: Backend) -> SweepConfig:
    """``config`` with its options and factors validated; raises OpperfError for what is refused
    before the journal opens: a bad option or factor, a malformed ``OPPERF_MEMORY_LIMIT``, large
    tensors the build lacks, measuring in this process a framework that runs in another interpreter,
    a framework that cannot start here (``started_environment``)."""
    started = started_environment(backend)
    config = replace(
        config,
        options=config.options.validated(backend),
        factors=config.factors.validated(config.options.framework),
        build={
            "framework_version": started.get("framework_version"),
            "framework_build": started.get("framework_build"),
            "python": os.path.realpath(worker_python(config.options.framework) or sys.executable),
        },
    )
    if config.devices:
        check_devices(
            config.devices, config.options.device, config.isolate, config.factors.thread_counts is not None
        )
        for index in config.devices:
            backend.normalize_device(Device("gpu", index))
        config = replace(config, options=replace(config.options, device=WORKER_DEVICE))
    memory_limit_bytes()
    if config.profile.needs_int64:
        backend.require_large_tensors()
    if not config.isolate:
        _ = backend.session  # a framework whose workers run in another interpreter has none here
    return config


def _runner(
    config: SweepConfig,
    backend: Backend,
    thread_plan: ThreadPlan | None,
    threads: int | None,
    cpus: Sequence[int] | None,
) -> IsolatedRunner | InProcessRunner | ThreadFactorRunner:
    """What measures the operators: a worker per thread count, one worker, or this process."""
    options = config.options
    if thread_plan:
        return ThreadFactorRunner(options.framework, config.timeout_s, thread_plan)
    if config.isolate:
        return IsolatedRunner(
            options.framework,
            config.timeout_s,
            threads if cpus else options.threads,
            cpus,
            python=worker_python(options.framework) or sys.executable,
        )
    return InProcessRunner(backend)


def _shapes_checksum(measurements: Sequence[Measurement], factors: SweepFactors) -> str | None:
    """The checksum of every configuration drawn under ``--shapes`` fuzz or skewed (None otherwise)."""
    if factors.shapes == "standard":
        return None
    return shapes_checksum((m.spec.op, m.spec.describe_inputs()) for m in measurements)


def expected_cost(op: OpInfo, config: SweepConfig) -> float:
    """What an operator is expected to cost a sweep: what it cost a previous one (``config.costs``),
    else its number of input configurations (adaptive sampling spends at most the budget on each;
    a tenth of one when it is skipped), at a previous sweep's seconds per configuration where given."""
    try:
        configurations = float(len(configurations_for(op, config)))
    except NoRuleError:
        configurations = 0.1
    return config.costs.of(op.name, configurations) if config.costs else configurations


def shard_plan(
    operators: Sequence[OpInfo], config: SweepConfig, count: int
) -> list[list[tuple[OpInfo, float]]]:
    """Each of ``count`` shards' operators, in the selection's order, with their expected costs: on
    the ring, or longest first where a previous sweep's costs are given (``opperf.sweep.shards``)."""
    costs = {op.name: expected_cost(op, config) for op in operators}
    names = [op.name for op in operators]
    by_name = {op.name: op for op in operators}
    balanced = config.costs is not None
    shards.check_count(count)
    return [
        [(by_name[name], costs[name]) for name in shard]
        for shard in shards.placed(names, costs, count, balanced)
    ]


def _in_shard(operators: Sequence[OpInfo], config: SweepConfig) -> list[OpInfo]:
    shard = cast(Shard, config.shard)
    return [op for op, _ in shard_plan(operators, config, shard.count)[shard.index - 1]]


def harness_efficiency(
    measurements: Sequence[Measurement], wall_seconds: float, workers: int = 1
) -> float | None:
    """The share of a sweep's wall time its operators ran (warm-up and measured passes, ``sampling_s``),
    rather than opperf preparing, probing, messaging or starting workers, per worker measuring at
    once (``--devices``: one a GPU); None before anything ran."""
    sampled = sum(m.sampling_s or 0.0 for m in measurements)
    return round(sampled / (wall_seconds * workers), 4) if sampled and wall_seconds > 0 else None


class InProcessRunner:
    """Measures specs in the sweep's own process (``--no-isolation``), as ``IsolatedRunner`` does in a
    worker: faster to start, but a crash ends the sweep and a hang blocks it."""

    def __init__(self, backend: Backend) -> None:
        self._session = backend.session
        self._froze = False

    def __enter__(self) -> InProcessRunner:
        """Freeze the objects alive now, as a worker does once its framework is loaded: the memory
        probes' full collections then skip them (in a process holding two frameworks and a test
        suite, each collection took 0.35 s, not a few milliseconds). Left alone if the caller froze
        objects already."""
        self._froze = gc.get_freeze_count() == 0
        if self._froze:
            gc.freeze()
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Return the frozen objects to the collector."""
        if self._froze:
            gc.unfreeze()

    def run(self, specs: Sequence[BenchmarkSpec]) -> Iterator[Measurement]:
        return (harness.measure(self._session, spec) for spec in specs)

    def harness_overhead(self, profiler: str, device: Device) -> float:
        return harness.harness_overhead(self._session, profiler, device)

    @property
    def peak_rss_bytes(self) -> int | None:
        """This process's peak resident memory: it measured every operator."""
        return peak_rss_bytes()


def _measure_operator(
    op: OpInfo,
    config: SweepConfig,
    backend: Backend,
    runner: IsolatedRunner | InProcessRunner | ThreadFactorRunner,
    thread_plan: ThreadPlan | None = None,
    turn: int = 0,
) -> list[Measurement]:
    variants = thread_plan.variants(config.options, turn) if thread_plan else [config.options]
    measured: list[Measurement] = []
    for options in variants:
        started = time.perf_counter()
        planned = plan_operator(op, replace(config, options=options), backend)
        measured += [*planned.unmeasured, *_timed(runner.run(planned.specs), started)]
    return measured


def _timed(results: Iterable[Measurement], started: float) -> Iterator[Measurement]:
    """Each result with the seconds from ``started`` (then from the result before it) until it came:
    its ``elapsed_s``, crashes and worker restarts included, the cost ``--costs`` balances by."""
    for result in results:
        now = time.perf_counter()
        yield replace(result, elapsed_s=now - started)
        started = time.perf_counter()


def _selected(config: SweepConfig, backend: Backend) -> list[OpInfo]:
    """The operators the sweep (its shard) measures; OpperfError where ``--stages`` asks only for a
    stage none of them takes (the fused stage is fused patterns' only)."""
    operators = select_operators(
        backend, config.ops or tuple(config.configs), config.categories, config.tags, config.tags_all
    )
    if config.configs:
        operators = [op for op in operators if op.name in config.configs]
    if operators and not any(stage_variants(op, config.factors.stages) for op in operators):
        raise OpperfError(
            f"--stages {','.join(config.factors.stages)}: {FUSED_ONLY}, and none of the "
            f"{counted(len(operators), 'selected operator')} is one; select patterns with --categories "
            f"{FUSED_CATEGORY}, or add a stage such as eager"
        )
    return _in_shard(operators, config) if config.shard is not None else operators


def _thread_plan(config: SweepConfig) -> ThreadPlan | None:
    """The thread counts of a sweep where threads are a factor (``--threads 1,2`` or auto), else None;
    a factor needs workers, one per count."""
    if config.factors.thread_counts is None:
        return None
    if not config.isolate:
        raise OpperfError(
            "--threads with several counts measures each count in its own workers; drop --no-isolation"
        )
    return ThreadPlan.of(config.factors.thread_counts, config.affinity, available_cpus())


def plan_operator(op: OpInfo, config: SweepConfig, backend: Backend) -> Planned:
    """The specs to measure ``op`` with, and the records of what is not measured: ``skipped`` with
    the rules' reason (for the operator, or a replayed configuration they refuse), or ``failed`` when
    a rule itself broke (the sweep goes on either way)."""
    refused: list[Measurement] = []
    if config.configs:
        config, refused = _refused(op, config)
        if not config.configs[op.name]:
            return Planned([], refused)
    try:
        return Planned(specs_for(op, config, backend), refused)
    except NoRuleError as reason:  # the record says the first stage ``op`` was to run in
        runs = stage_variants(op, config.factors.stages)
        stage = runs[0][0] if runs else FUSED_STAGE
        return Planned([], [*refused, _unmeasured(op, config, Status.SKIPPED, str(reason), stage=stage)])
    except Exception as error:
        failed = _unmeasured(
            op, config, Status.FAILED, f"its input rule raised {type(error).__name__}: {error}"
        )
        return Planned([], [*refused, failed])


def _resume(config: SweepConfig) -> dict[str, tuple[Measurement, ...]]:
    """What the journal had finished, when resuming; an existing journal is never overwritten by
    accident: without --resume or --fresh it is refused."""
    if not config.journal:
        return {}
    if not config.resume:
        if os.path.exists(config.journal) and not config.fresh:
            raise OpperfError(
                f"{config.journal} holds an interrupted sweep: continue it with --resume, or discard it "
                "with --fresh"
            )
        return {}
    journal = load_journal(config.journal)
    if journal is None:
        print(
            f"note: --resume: no journal at {config.journal}; the sweep starts from the beginning",
            file=sys.stderr,
        )
        return {}
    check_settings(config.journal, journal, config.settings())
    said = [f"{journal.damaged} damaged lines skipped (those operators run again)"] if journal.damaged else []
    said += ["its torn last line is cut off"] if journal.torn else []
    if said:
        print(f"note: {config.journal}: {'; '.join(said)}", file=sys.stderr)
    return journal.finished


def _journal_writer(
    config: SweepConfig, *, append: bool, stack: contextlib.ExitStack
) -> JournalWriter | None:
    if not config.journal:
        return None
    writer = JournalWriter(config.journal, config.settings(), append=append)
    stack.callback(writer.close)
    return writer
