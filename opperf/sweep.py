"""A sweep: choose operators from the registry, derive their inputs, measure each, keep every result."""

from __future__ import annotations

import contextlib
import datetime as _dt
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from opperf.backends import Backend, get_backend
from opperf.benchmark import RunOptions, suggest
from opperf.checkpoint import JournalWriter, check_settings, load_journal
from opperf.errors import OpperfError
from opperf.isolation import IsolatedRunner, Job
from opperf.rules import NoRuleError, SizeProfile, inputs_for
from opperf.rules.profiles import STANDARD
from opperf.utils.affinity import AUTO, available_cpus, worker_cpus
from opperf.utils.environment import describe_environment
from opperf.utils.memory import peak_rss_bytes
from opperf.utils.op_info import OpInfo
from opperf.utils.peaks import load_peaks
from opperf.utils.results import BenchmarkSpec, InputValue, Measurement, Status, freeze_inputs

Progress = Callable[[int, int, OpInfo, Sequence[Measurement]], None]


# The slowest operator of a default CPU sweep here takes about 10 s for all its configurations.
DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class SweepConfig:
    """What a sweep covers and how it runs."""

    options: RunOptions = field(default_factory=RunOptions)
    profile: SizeProfile = STANDARD
    ops: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    isolate: bool = True
    timeout_s: float = DEFAULT_TIMEOUT_S
    journal: str | None = None
    resume: bool = False
    recalibrate_peaks: bool = False
    affinity: str = AUTO

    def settings(self) -> dict[str, object]:
        """What must match for results to be comparable, and so for a journal to be resumed."""
        options = self.options
        return {
            "framework": options.framework,
            "device": options.device,
            "dtype": options.dtype,
            "profiler": options.profiler,
            "warmup": options.warmup,
            "runs": options.runs,
            "target": options.target,
            "budget_s": options.budget_s,
            "seed": options.seed,
            "cache": options.cache,
            "threads": options.threads,
            "affinity": self.affinity,
            "run_backward": options.run_backward,
            "profile": self.profile.name,
        }


@dataclass(frozen=True)
class SweepResult:
    """Every measurement of a sweep, and the environment it ran in.

    ``aliases`` lists, per operator measured, the other registered names benchmarked with it;
    ``interrupted`` says the sweep stopped early (Ctrl-C) and covers ``measured`` of ``selected``.
    """

    environment: dict[str, object]
    measurements: tuple[Measurement, ...]
    registered: int = 0
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    selected: int = 0
    interrupted: bool = False
    resumed: int = 0

    @property
    def measured(self) -> int:
        return len({m.spec.op for m in self.measurements})


def select_operators(backend: Backend, ops: Sequence[str], categories: Sequence[str]) -> list[OpInfo]:
    """The registry's operators named in ``ops`` (canonical or alias) or in ``categories``; all if neither."""
    registry = backend.operators()
    by_name = {name: op for op in registry for name in op.all_names}
    known = sorted({op.category for op in registry})
    unknown_categories = [c for c in categories if c not in known]
    if unknown_categories:
        bad = unknown_categories[0]
        raise OpperfError(
            f"unknown category {bad!r}{suggest(bad, known)} "
            f"({backend.framework} categories: {', '.join(known)})"
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
        cache=options.cache,
        threads=options.threads,
    )


def specs_for(op: OpInfo, config: SweepConfig, backend: Backend) -> list[BenchmarkSpec]:
    """One spec per input configuration the rules give ``op``; raises NoRuleError when there are none."""
    return [
        _spec(op, config.options, backend.applicable_inputs(op, inputs))
        for inputs in inputs_for(op, config.profile, config.options.device.split("(")[0])
    ]


def _skipped(op: OpInfo, config: SweepConfig, reason: str) -> Measurement:
    return Measurement(spec=_spec(op, config.options, {}), status=Status.SKIPPED, reason=reason)


def run_sweep(config: SweepConfig, progress: Progress | None = None) -> SweepResult:
    """Measure every selected operator on every input configuration; failures are recorded, not raised.

    Each operator runs in a worker process (unless ``config.isolate`` is off) within
    ``config.timeout_s``; finished operators go to the journal as they finish; Ctrl-C stops the sweep
    and returns what finished, marked ``interrupted``.
    """
    backend = get_backend(config.options.framework)
    config = replace(config, options=config.options.validated(backend))
    options = config.options
    if config.profile.needs_int64:
        backend.require_large_tensors()
    operators = select_operators(backend, config.ops, config.categories)
    finished = _resume(config)
    threads = backend.set_threads(options.threads)
    cpus = worker_cpus(config.affinity, threads, available_cpus()) if config.isolate else None
    peaks = load_peaks(redo=config.recalibrate_peaks) if options.device.startswith("cpu") else None
    started = _dt.datetime.now(_dt.timezone.utc)
    wall_start = time.perf_counter()
    measurements: list[Measurement] = []
    interrupted = False
    with contextlib.ExitStack() as stack:
        writer = _journal_writer(config, append=bool(finished), stack=stack)
        if config.isolate:
            runner = stack.enter_context(
                IsolatedRunner(
                    options.framework, config.timeout_s, threads if cpus else options.threads, cpus
                )
            )
            overhead = runner.harness_overhead(options.profiler, options.device)
            measure = _isolated_measure(runner, options)
        else:
            overhead = backend.harness_overhead(options.profiler, options.device)
            measure = _in_process_measure(config, backend)
        try:
            for index, op in enumerate(operators, start=1):
                op_results = finished.get(op.name)
                if op_results is None:
                    op_results = _measure_operator(op, config, backend, measure)
                    if writer is not None:
                        writer.add(op.name, op_results)
                measurements.extend(op_results)
                if progress is not None:
                    progress(index, len(operators), op, op_results)
        except KeyboardInterrupt:
            interrupted = True
    # The runner's workers, or (not isolated) this process, which measured every operator.
    worker_peak = runner.peak_rss_bytes if config.isolate else peak_rss_bytes()
    environment = describe_environment(
        backend,
        options,
        profile=config.profile.name,
        started=started,
        finished=_dt.datetime.now(_dt.timezone.utc),
        wall_seconds=time.perf_counter() - wall_start,
        command_line=sys.argv,
    )
    environment.update(
        isolated=config.isolate,
        timeout_s=config.timeout_s,
        interrupted=interrupted,
        threads=threads,
        worker_cpus=list(cpus) if cpus else None,
        harness_overhead_s=overhead,
        machine_peaks=peaks.to_json() if peaks else None,
        worker_peak_rss_bytes=worker_peak,
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


Measure = Callable[[list[BenchmarkSpec]], list[Measurement]]


def _measure_operator(
    op: OpInfo, config: SweepConfig, backend: Backend, measure: Measure
) -> list[Measurement]:
    try:
        specs = specs_for(op, config, backend)
    except NoRuleError as reason:
        return [_skipped(op, config, str(reason))]
    return measure(specs)


def _isolated_measure(runner: IsolatedRunner, options: RunOptions) -> Measure:
    return lambda specs: list(runner.run([Job(s, options.plan, options.seed) for s in specs]))


def _in_process_measure(config: SweepConfig, backend: Backend) -> Measure:
    options = config.options
    return lambda specs: [backend.measure(s, options.plan, options.seed) for s in specs]


def _resume(config: SweepConfig) -> dict[str, tuple[Measurement, ...]]:
    if not (config.resume and config.journal):
        return {}
    journal = load_journal(config.journal)
    if journal is None:
        return {}
    check_settings(config.journal, journal, config.settings())
    return journal.finished


def _journal_writer(
    config: SweepConfig, *, append: bool, stack: contextlib.ExitStack
) -> JournalWriter | None:
    if not config.journal:
        return None
    writer = JournalWriter(config.journal, config.settings(), append=append)
    stack.callback(writer.close)
    return writer
