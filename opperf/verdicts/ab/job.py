"""An interleaved A/B job: two builds or settings measured in one job, taking turns.

Two sweeps run one after the other see different stretches of the machine (here, identical code
read as a 1.9x regression of ``exp`` during a slow stretch); two workers pinned to the same CPUs
that take turns per configuration see the same ones. Each configuration is measured in ``rounds``
rounds, base then new in even rounds and new then base in odd ones (A B, B A, A B, ...), so neither
side always goes first; each side's workers run its own interpreter (``--base-python``,
``--new-python``: another build of the framework) with its own environment (``--base-env``,
``--new-env``: a setting such as ``MXNET_MKLDNN_ENABLED=0``). A round is a pass over the
configurations still undecided in fresh workers on both sides (a worker's state outlives its
configurations and would otherwise be the same in every round: ``interleaved``); each side's next
worker starts beside the one measuring, on the other CPUs, so a round does not wait the 2 s a
worker takes to start (``IsolatedRunner(standby=True)``). Every configuration gets ``min_rounds``
rounds, then another round while the diff of its rounds so far leaves it undecided, up to
``rounds``, within a budget for the whole job (``opperf.verdicts.ab.sequential``). Each side's worker prepares
a configuration (inputs, passes, the backward probe) in each round, checks that its tensors fit in
round 0 only (a configuration that did not measure on a side, skipped, failed or crashed, gets no
further round; peak memory is a sweep's figure, not probed here), and measures it with
``1/ROUND_SHARE`` of the sweep's time budget, a precision target sqrt(ROUND_SHARE) times looser
(``round_options``), its share of the minimum sample count and, after round 0, a re-warm of one
pass (``round_plan``). Each record says which round's preparation
it used (``prepared_in_round``).

The pairs of a round are the unit of replication: ``opperf diff AB.json`` tests the per-round log
ratios of each configuration (``opperf.verdicts``).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from opperf.frameworks import command_threads, get_backend
from opperf.measure.isolation import IsolatedRunner, WorkerStartError
from opperf.measure.messages import BuildDescription
from opperf.measure.sampling import WARMUP_SHARE, SamplingPlan
from opperf.results.document import AB_KIND, SCHEMA_VERSION, record
from opperf.results.environment import Machine
from opperf.results.key import Key
from opperf.results.load import SIDES
from opperf.results.measurement import BenchmarkSpec, Measurement, Status
from opperf.results.options import RunOptions
from opperf.sweep.checkpoint import JournalWriter
from opperf.sweep.run import SweepConfig, plan_operator, select_operators
from opperf.utils.affinity import available_cpus, worker_cpus
from opperf.utils.errors import OpperfError
from opperf.utils.words import counted
from opperf.verdicts.ab.journal import KIND, JournaledPair, load_pairs, pair_entry, spec_key
from opperf.verdicts.ab.sequential import RoundBook, Schedule, rounds_run

T = TypeVar("T")

DEFAULT_ROUNDS = 10
"""The most rounds a configuration gets (``--rounds``): in a job with a 10% slowdown injected into
58 rows above 100 us, read back with its rounds cut at 8, 10 and 12, 49, 55 and 55 were found, and
an A/A job's 578 rows took 1675, 1874 and 2006 configuration-rounds."""
DEFAULT_MIN_ROUNDS = 2
"""The rounds every configuration gets (``--min-rounds``). Two rounds already give a row its own
variance, which the prior fitted to all rows moderates; replayed offline on two recorded A/A jobs
over the full registry (the same sequential code on their first rounds), two rounds instead of three
took 10-11% fewer configuration-rounds (with ``same`` at TOST's 90% interval: 6407 → 5732 and
6300 → 5646) and called no row; on a job with 10% injected, 56 of 57 affected rows were found
either way."""
ROUND_SHARE = 12
"""A round gets 1/ROUND_SHARE of the sweep's budget (1/rounds when fewer rounds are asked for) and a
precision target sqrt(ROUND_SHARE) times looser: a configuration decided in two rounds costs a
sixth of a sweep's budget a side, one that takes ten five sixths of one. A round's figure is its fastest
pass, and the rounds' agreement the row's precision, so a round needs few passes: with 1/6 of the
budget a round took a quarter of a sweep's sampling (most rounds spent their whole share), and an
A/A job over 578 rows cost 3.5x a sweep against 2.4x with 1/12, deciding as many rows (533 and 524
``same``; measured one after the other on a shared machine)."""
ROUND_MIN_RUNS = 2
"""The fewest samples a round takes (when the plan's minimum is at least that). A round's figure is
its fastest pass, and in a full-registry A/A job the rounds' log ratios of 1-5 ms rows scattered by a
median 10.5% read from each round's first pass, 5.7% from its fastest of two, and of 5-21 ms rows
8.4% and 5.1%; configurations of 5 ms and more took one or two passes a round and ran 5-6 rounds."""
LEAST_EXTRA_BUDGETS = 8
"""However small a job, the rounds after its minimum may spend this many sweep budgets of sampling
(``--budget``: 2 s at the default), both sides together: a job of MXNet 1.8.0 against 1.9.1 on one
LayerNorm configuration (0.14 s a round) otherwise got one round beyond its two, and left its
backward row ``inconclusive``."""
MAX_ROUND_TARGET = 0.2
"""The loosest precision target a round is given, however many rounds there are."""
REWARM_PASSES = 1
"""The most warm-up passes a round after the first runs, counting the pass its fresh worker ran
while preparing the configuration just before (the recorded forward pass and the backward probe):
so none more, unless the worker measures a preparation made in another round. A round's figure is
its fastest pass, which a first pass still slower than the rest does not become; three passes (a
sweep's settle window) cost a sixth of the job's sampling here."""


SIDE_OPTIONS = ("values", "layout", "cache", "dtype")
"""The run options a side may set otherwise (``--new-option values=normal``): what the inputs are
and how they sit in memory, not how they are timed; a job whose sides differ in one measures its
effect, interleaved, and its rows pair across it (``diff`` reads them as ``--across`` would)."""


@dataclass(frozen=True)
class Build:
    """One side of an A/B job: the interpreter its workers run, what their environment adds, and
    the run options (``SIDE_OPTIONS``) it sets otherwise than the job's."""

    python: str = sys.executable
    environment: Mapping[str, str] = field(default_factory=dict)
    options: Mapping[str, object] = field(default_factory=dict)

    def describe(self) -> dict[str, object]:
        return {"python": self.python, "environment": dict(self.environment), "options": dict(self.options)}

    def on_side(self, spec: BenchmarkSpec) -> BenchmarkSpec:
        """``spec`` as this side measures it: with its own run options."""
        return replace(spec, options=spec.options.replacing(self.options)) if self.options else spec


def varied_options(builds: Mapping[str, Build]) -> tuple[str, ...]:
    """The run options the sides set otherwise, in ``SIDE_OPTIONS``'s order."""
    return tuple(name for name in SIDE_OPTIONS if any(name in build.options for build in builds.values()))


@dataclass(frozen=True)
class Pair:
    """One configuration in one round: each side's measurement, and the round whose preparation
    (inputs, passes) each side's measurement used."""

    round: int
    base: Measurement
    new: Measurement
    prepared_in: Mapping[str, int] = field(default_factory=dict)
    from_journal: bool = False
    """Whether an interrupted job measured it (``--resume`` took it from the journal)."""


@dataclass(frozen=True)
class AbResult:
    """Everything an A/B job measured, and what each side's workers said their build is."""

    config: SweepConfig
    builds: Mapping[str, Build]
    descriptions: Mapping[str, BuildDescription]
    rounds: int
    pairs: tuple[Pair, ...]
    skipped: tuple[Measurement, ...]
    started: _dt.datetime
    wall_seconds: float
    interrupted: bool
    schedule: Schedule | None = None

    @property
    def configurations(self) -> int:
        return len({pair.base.spec for pair in self.pairs})

    @property
    def resumed(self) -> int:
        """Pairs taken from an interrupted job's journal."""
        return sum(pair.from_journal for pair in self.pairs)

    def rounds_run(self) -> dict[str, int]:
        """How many configurations got how many rounds."""
        counts: dict[BenchmarkSpec, int] = {}
        for pair in self.pairs:
            counts[pair.base.spec] = counts.get(pair.base.spec, 0) + 1
        return rounds_run(counts)


def round_options(options: RunOptions, rounds: int) -> RunOptions:
    """What one round of ``rounds`` measures with: ``1/rounds`` of the time budget, and a precision
    target ``sqrt(rounds)`` times looser (at most ``MAX_ROUND_TARGET``). A row's figure combines its
    rounds, so rounds each known within target x sqrt(rounds) give it about the sweep's target; held
    to the sweep's target, a round rarely met it in its share of the budget and spent all of it,
    which made the rounds together cost more sampling than the sweep (a sweep's configurations
    mostly stop early, at their target)."""
    target = min(options.target_precision * math.sqrt(rounds), MAX_ROUND_TARGET)
    return replace(options, budget_s=options.budget_s / rounds, target_precision=target)


def round_plan(plan: SamplingPlan, rounds: int, index: int, pass_s: float | None) -> SamplingPlan:
    """Round ``index``'s share of a configuration's sampling ``plan`` (already ``round_options``'s).

    Every round takes at least ceil(min_runs / rounds) samples and ``ROUND_MIN_RUNS`` (never more
    than min_runs), so the rounds together take about the configuration's minimum, not ``rounds``
    times it: held to the whole minimum, a round of a slow configuration (20 ms a pass and more)
    spent several times its budget share, and such configurations cost 7x a sweep. Round 0 warms
    up as a sweep does; later rounds only re-warm (the other side's worker ran on the same CPUs
    meanwhile), with at most ``REWARM_PASSES`` passes, and none when one pass (``pass_s``, the
    previous round's forward and backward medians) takes longer than the round's warm-up share of
    its budget. Fixed counts (``--warmup``, ``--runs``) mean exactly that many passes in every round,
    and are left as they are."""
    if not plan.adaptive:
        return plan
    min_runs = min(plan.min_runs, max(ROUND_MIN_RUNS, math.ceil(plan.min_runs / rounds)))
    plan = replace(plan, min_runs=min_runs, max_runs=max(plan.max_runs, min_runs))
    if index == 0 or plan.warmup is not None:
        return plan
    slow = pass_s is not None and pass_s > plan.budget_s * WARMUP_SHARE
    return replace(plan, max_warmup=0 if slow else min(REWARM_PASSES, plan.max_warmup))


def pass_seconds(measurement: Measurement | None) -> float | None:
    """Seconds of one full pass (forward and backward medians) of a measured round; None if it
    did not measure."""
    if measurement is None or measurement.status is not Status.OK or not measurement.forward:
        return None
    seconds = statistics.median(measurement.forward)
    return seconds + (statistics.median(measurement.backward) if measurement.backward else 0.0)


def in_round_order(specs: Sequence[T], round_index: int) -> list[T]:
    """The configurations in the order round ``round_index`` measures them: the selection's in round
    0, a shuffle seeded by the round's number after it (the same on ``--resume``).

    A worker's state after the configurations it ran before one can move that one's time, and the
    same for every round when every round runs them in one order: in a oneDNN on/off job,
    ``broadcast_add`` (10000, 1) + (10000, 100) read 2 ms in one side's workers and 0.6 ms in the
    other's in every round (a plain loop reads 0.6 ms with oneDNN on and off), and was called 3.3x
    faster. In another order each round, such a state moves from round to round, and shows in the
    rounds' disagreement instead of as a change."""
    if round_index == 0:
        return list(specs)
    shuffled = list(specs)
    random.Random(round_index).shuffle(shuffled)
    return shuffled


def order(round_index: int) -> tuple[str, str]:
    """Which side goes first in a round: base in even rounds, new in odd ones."""
    return SIDES if round_index % 2 == 0 else SIDES[::-1]


def run_ab(
    config: SweepConfig,
    builds: Mapping[str, Build],
    rounds: int = DEFAULT_ROUNDS,
    min_rounds: int = DEFAULT_MIN_ROUNDS,
    progress: Callable[[Pair], None] | None = None,
    done: Callable[[], None] | None = None,
    journal: str | None = None,
    resume: bool = False,
    fresh: bool = False,
) -> AbResult:
    """Measure every selected configuration on both sides, interleaved in ``min_rounds`` rounds
    and up to ``rounds`` for those still undecided (``opperf.verdicts.ab.sequential``; ``min_rounds`` at least
    ``rounds``: exactly ``rounds`` rounds for every configuration). ``progress`` is called with
    each pair as it is measured; ``done`` once no round is left (all run, or the job stopped), before
    the workers close, as ``run_sweep``'s is. Each pair measured goes to ``journal`` (when given);
    ``resume`` takes the pairs an interrupted job left there instead of measuring them again, and
    ``fresh`` discards them (``opperf.verdicts.ab.journal``)."""
    if rounds < 1 or min_rounds < 1:
        raise OpperfError(f"rounds must be at least 1, got {min(rounds, min_rounds)}")
    share = min(rounds, ROUND_SHARE)
    backend = get_backend(config.options.framework)
    options = config.options.validated(backend)
    config = replace(config, factors=config.factors.validated(options.framework))
    for side in SIDES:
        unknown = set(builds[side].options) - set(SIDE_OPTIONS)
        if unknown:
            raise OpperfError(
                f"--{side}-option {sorted(unknown)[0]}: a side may set only {', '.join(SIDE_OPTIONS)}"
            )
        options.replacing(builds[side].options).validated(backend)
    settings = ab_settings(config, options, builds, rounds, min_rounds)
    prior = load_pairs(journal, settings, resume=resume, fresh=fresh) if journal else {}
    schedule = Schedule(min(min_rounds, rounds), rounds, least_extra_s=LEAST_EXTRA_BUDGETS * options.budget_s)
    config = replace(config, options=round_options(options, share))
    operators = select_operators(backend, config.ops, config.categories)
    threads = command_threads(backend, options.threads, in_workers=True)
    cpus = worker_cpus(config.affinity, threads, available_cpus())
    started = _dt.datetime.now(_dt.timezone.utc)
    wall_start = time.perf_counter()
    pairs: list[Pair] = []
    skipped: list[Measurement] = []
    interrupted = False
    with contextlib.ExitStack() as stack:
        runners = {
            side: stack.enter_context(
                IsolatedRunner(
                    options.framework,
                    config.timeout_s,
                    threads if cpus else options.threads,
                    cpus,
                    python=builds[side].python,
                    environment=builds[side].environment,
                    standby=True,
                )
            )
            for side in SIDES
        }
        descriptions = {
            side: _described(runners[side], side, builds[side], options.framework) for side in SIDES
        }
        writer = None
        try:  # from the journal's creation on, a stop keeps what finished and says so
            if journal:
                writer = JournalWriter(journal, settings, append=bool(prior), kind=KIND)
                stack.callback(writer.close)
            planned: list[BenchmarkSpec] = []
            for op in operators:
                specs, unmeasured = plan_operator(op, config, backend)
                skipped += unmeasured
                planned += specs
            for pair in interleaved(planned, runners, schedule, share, prior, builds):
                pairs.append(pair)  # kept before it is journaled: a stop during the write loses nothing
                if writer is not None and not pair.from_journal:
                    writer.write(pair_entry(pair.round, pair.base, pair.new, pair.prepared_in))
                if progress is not None:
                    progress(pair)
        except KeyboardInterrupt:
            interrupted = True
        if done is not None:
            done()
    return AbResult(
        config=config,
        builds=builds,
        descriptions=descriptions,
        rounds=max((pair.round + 1 for pair in pairs), default=0),
        pairs=tuple(pairs),
        skipped=tuple(skipped),
        started=started,
        wall_seconds=time.perf_counter() - wall_start,
        interrupted=interrupted,
        schedule=schedule,
    )


def interleaved(
    specs: Sequence[BenchmarkSpec],
    runners: Mapping[str, IsolatedRunner],
    schedule: Schedule,
    share: int,
    prior: Mapping[tuple[Key, int], JournaledPair] | None = None,
    builds: Mapping[str, Build] | None = None,
) -> Iterator[Pair]:
    """The rounds, each a pass over the configurations still undecided (``schedule``) with the
    sides taking turns per configuration, and fresh workers on both sides for every round; each
    measurement is one worker call with the round's share of the plan (``round_plan``, ``share``
    rounds to the budget).

    A worker's state outlives its configurations: in jobs over 578 rows, measured here, after the
    large convolution and pooling configurations one side's worker ran a dozen memory-bound
    element-wise operators 5-11% faster or slower than the other's, in every round, which paired
    rounds in one worker pair cannot tell from a change of build (A/A jobs called 4% of rows
    changed). With each round in its own workers, such a state varies from round to round and
    shows in the rounds' disagreement instead; the two sides of a configuration in one round stay
    adjacent in time.

    A configuration that did not measure on a side (skipped because its tensors do not fit, failed,
    crashed, timed out) gets no further round, ``min_rounds`` or not: a row's status is the worst of
    its rounds', so no later round could change its verdict, and a crash repeated each round cost
    a worker start each time (in a full-registry job, five such configurations, three of them
    ``_contrib_quantize_asym`` crashing MXNet on both sides, took 2.9 s of round 1, most of it
    waiting for a worker to start).

    A pair in ``prior`` (an interrupted job's journal, by configuration and round) is taken as it is,
    marked ``from_journal``, instead of measured; a configuration the journal holds a round of gets
    that round whatever the decisions replayed say (they replay the same figures, rounded as files
    round them).

    A side with run options of its own (``builds``, ``Build.options``) measures each configuration
    with them; its rows pair with the other side's across them."""
    prior = prior or {}
    builds = builds or {side: Build() for side in SIDES}
    keys = {spec: spec_key(spec) for spec in specs} if prior else {}
    last: dict[tuple[BenchmarkSpec, str], Measurement] = {}
    book = RoundBook(varied_options(builds))
    active = list(specs)
    round_index = 0
    while active and round_index < schedule.max_rounds:
        for side in SIDES if round_index else ():
            runners[side].retire_worker()  # the next request gets a fresh worker
        for spec in in_round_order(active, round_index):
            journaled = prior.get((keys[spec], round_index)) if prior else None
            if journaled is not None:
                measured = {
                    side: replace(getattr(journaled, side), spec=builds[side].on_side(spec)) for side in SIDES
                }
                prepared_in = journaled.prepared_in
            else:
                measured, prepared_in = {}, {}
                for side in order(round_index):
                    previous = pass_seconds(last.get((spec, side)))
                    plan = round_plan(spec.options.plan, share, round_index, previous)
                    result = runners[side].run_round(builds[side].on_side(spec), round_index, plan)
                    measured[side], prepared_in[side] = result.measurement, result.prepared_in
            for side in SIDES:
                last[spec, side] = measured[side]
                book.add(round_index, side, measured[side], spec)
            yield Pair(round_index, measured["base"], measured["new"], prepared_in, journaled is not None)
        round_index += 1
        active = [spec for spec in active if all(last[spec, side].status is Status.OK for side in SIDES)]
        if round_index < schedule.min_rounds:
            continue
        chosen = set(book.undecided(schedule, active) if schedule.looks_after(round_index) else ())
        chosen |= {spec for spec in active if prior and (keys[spec], round_index) in prior}
        active = [spec for spec in active if spec in chosen]


def ab_settings(
    config: SweepConfig, options: RunOptions, builds: Mapping[str, Build], rounds: int, min_rounds: int
) -> dict[str, object]:
    """What must match for an interrupted job to be resumed: the run options and factors, the
    selection, both builds and the rounds."""
    return {
        **options.settings(),
        **config.factors.settings(),
        "ops": list(config.ops or ()),
        "categories": list(config.categories or ()),
        "builds": {side: builds[side].describe() for side in SIDES},
        "rounds": rounds,
        "min_rounds": min_rounds,
    }


def _described(runner: IsolatedRunner, side: str, build: Build, framework: str) -> BuildDescription:
    """The build ``side``'s workers run; OpperfError before any round when they cannot start (an
    interpreter that is no Python, or lacks numpy or the framework, or a setting the side adds to
    their environment that the framework refuses), which a job would otherwise have run to the end,
    every row of that side failing."""
    try:
        return runner.describe()
    except OSError as error:
        why, lacks = (
            (error.why, error.lacks_module) if isinstance(error, WorkerStartError) else (str(error), False)
        )
        settings = " ".join(f"{name}={value}" for name, value in build.environment.items())
        if lacks:
            fix = f"pass a Python with numpy and {framework} installed as --{side}-python"
        elif settings:
            fix = f"correct its --{side}-env settings ({settings}) or --{side}-python"
        else:
            fix = f"correct --{side}-python as that says"
        raise OpperfError(
            f"the {side} side's workers do not start in {build.python} ({why}); {fix}"
        ) from None


def mismatches(descriptions: Mapping[str, BuildDescription]) -> list[str]:
    """What differs between the two sides' builds, in words (a different framework version is
    often the point of the job; operators one side lacks fail there, and are named here)."""
    base, new = descriptions["base"], descriptions["new"]
    found = []
    if base.framework_version != new.framework_version:
        found.append(f"framework version: base {base.framework_version}, new {new.framework_version}")
    only_base = sorted(set(base.registered) - set(new.registered))
    only_new = sorted(set(new.registered) - set(base.registered))
    if only_base:
        found.append(f"{counted(len(only_base), 'operator')} only in base: {', '.join(only_base[:20])}")
    if only_new:
        found.append(f"{counted(len(only_new), 'operator')} only in new: {', '.join(only_new[:20])}")
    return found


def ab_document(result: AbResult, environment: Mapping[str, Any]) -> dict[str, object]:
    """The A/B file: each round's records per side (``side`` and ``round`` in each record), the
    builds, and what differs between them. ``opperf diff`` reads it."""
    records = []
    for pair in result.pairs:
        for side in SIDES:
            records.append(
                {
                    **record(getattr(pair, side)),
                    "side": side,
                    "round": pair.round,
                    "prepared_in_round": pair.prepared_in.get(side, pair.round),
                }
            )
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": AB_KIND,
        "environment": dict(environment),
        "ab": {
            "rounds": result.rounds,
            "schedule": {**result.schedule.describe(), "rounds_run": result.rounds_run()}
            if result.schedule is not None
            else None,
            "order": "base first in even rounds, new first in odd rounds",
            "builds": {
                side: {
                    **result.builds[side].describe(),
                    "framework_version": getattr(result.descriptions.get(side), "framework_version", None),
                    "registered": len(getattr(result.descriptions.get(side), "registered", ())),
                }
                for side in SIDES
            },
            "mismatches": mismatches(result.descriptions),
            "wall_seconds": round(result.wall_seconds, 3),
            "interrupted": result.interrupted,
        },
        "results": records,
        "skipped": [record(m) for m in result.skipped],
    }


def ab_environment(result: AbResult) -> dict[str, object]:
    """The job's environment: the machine, the run options, the selection and timing."""
    machine = Machine.this_one()
    return {
        "python": machine.python,
        "platform": machine.platform,
        "cpu_model": machine.cpu_model,
        "cpu_count": machine.cpu_count,
        **result.config.options.settings(),
        **result.config.factors.settings(),
        "rounds": result.rounds,
        "size_profile": result.config.profile.name,
        "command_line": list(sys.argv),
        "started": result.started.isoformat(),
        "wall_seconds": round(result.wall_seconds, 3),
    }
