"""One operator across namespaces (``mx.nd``, ``mx.np``/``mx.npx``, ``jnp``, ``torch``) on the same
input configurations: the job, in rounds in which the namespaces take turns, and each other
namespace's verdicts against the first (``verdicts.compare.namespaces``). What each namespace calls
is ``verdicts.compare.calls``; which operators and configurations, ``verdicts.compare.selection``; how
the comparison reads, ``verdicts.compare.rendering``."""

from __future__ import annotations

import signal
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from opperf.frameworks import framework_of_namespace
from opperf.measure.benchmark import RunOptions
from opperf.results.measurement import BenchmarkSpec, Measurement, Status
from opperf.utils.errors import OpperfError
from opperf.utils.words import counted
from opperf.verdicts.ab.job import in_round_order, round_options
from opperf.verdicts.compare.calls import call_in, check_namespaces, function_in, tensor_order
from opperf.verdicts.compare.measuring import Measurer, in_process
from opperf.verdicts.compare.namespaces import Versus, versus
from opperf.verdicts.decide import DEFAULT_ALPHA, DEFAULT_THRESHOLD, Verdict

COMPARE_THREADS = 1
"""Intra-op threads of every namespace in a comparison unless ``--threads`` says otherwise: one count
for all, whatever the import order, and one that a core shared with other processes does not collapse
(PyTorch with as many threads as cores ran a (1024, 1024) ``add`` 47x slower here: 7.7 ms, against
0.16 ms on one)."""


def comparison_options(options: RunOptions) -> RunOptions:
    """``options`` with the thread count every namespace of a comparison runs with made explicit."""
    return replace(options, threads=COMPARE_THREADS if options.threads is None else options.threads)


COMPARE_ROUNDS = 20
"""The most rounds a comparison measures a configuration in (``--rounds``): the namespaces take turns
in each, so every other namespace is a paired A/B job's new side against the first
(``verdicts.compare.namespaces``). Only an unsettled configuration gets past ``COMPARE_MIN_ROUNDS``.
With at most 10, six runs of mx.nd against mx.np (add, exp, sum, dot, softmax; load 0.3-1.0) left
5 of 22 rows without one verdict in all runs but one, each a row near 1 whose interval reached just
past the band at 10 rounds; with at most 20 (five runs, load 1.0-1.2), 1 of 22 (softmax (1024, 1024)
forward, whose rounds scatter: ``namespaces.ROUNDS_SCATTER``). Replayed from five comparisons of 40
rounds under load (``ROUNDS_SCATTER``), at most 30 or 40 rounds kept every row's verdict in 4 of 5
runs with a probability of 0.81 and 0.85, against 0.77 at 20, for 19% and 37% more rounds."""


COMPARE_MIN_ROUNDS = 3
"""The rounds every configuration gets; then another while a verdict of it is unsettled
(``Versus.settled``), up to ``COMPARE_ROUNDS``. With five fixed rounds, 3 of 22 rows of ``mx.nd``
against ``mx.np`` (add, exp, sum, dot, softmax) changed verdict from run to run, each a ratio within
2% of 1 whose interval reached just past the 5% band in some runs: more rounds narrow such an
interval; rows already ``same`` or clearly changed need none."""


ROUND_BUDGET_SHARE = 5
"""A round gets 1/ROUND_BUDGET_SHARE of ``--budget`` (1/rounds when fewer): a configuration settled
in three rounds costs three fifths of a sweep's budget a namespace, one that takes ten twice it."""


@dataclass(frozen=True)
class Row:
    """One input configuration of one operator, measured in each namespace (None where it failed to
    map): ``rounds`` holds each round's measurement, ``measurements`` their samples together."""

    operator: str
    configuration: Mapping[str, Any]
    measurements: Mapping[str, Measurement | None]
    problems: Mapping[str, str]
    rounds: Mapping[str, tuple[Measurement, ...]] = field(default_factory=dict)
    short_of: int | None = None
    """The rounds every configuration gets, where a stop left this one with fewer: its verdicts are
    ``inconclusive`` (``verdicts``), as ``opperf diff`` leaves an interrupted A/B job's short rows."""


@dataclass(frozen=True)
class Comparison:
    """What a comparison measured: a row per configuration that got at least one round in every
    namespace that can take it, and the stop that ended it early (a ``KeyboardInterrupt``, SIGTERM's
    naming its signal) with how many configurations were selected; ``stop`` is None for a finished one."""

    rows: tuple[Row, ...]
    selected: int
    stop: KeyboardInterrupt | None = None

    @property
    def signal_number(self) -> int | None:
        """The signal that stopped it (SIGINT for a Ctrl-C raised as KeyboardInterrupt); None where
        none did."""
        if self.stop is None:
            return None
        return getattr(self.stop, "signal_number", signal.SIGINT)

    @property
    def signal_name(self) -> str | None:
        """The name of the signal that stopped it (``SIGTERM``); None where none did."""
        number = self.signal_number
        return None if number is None else signal.Signals(number).name


def compare(
    name: str,
    configurations: Sequence[Mapping[str, Any]],
    namespaces: Sequence[str],
    options: RunOptions | None = None,
    rounds: int = COMPARE_ROUNDS,
    min_rounds: int = COMPARE_MIN_ROUNDS,
    measure: Measurer = in_process,
) -> list[Row]:
    """Benchmark ``name`` (as called in the first namespace) with each configuration in every
    namespace (``compare_operators``, for one operator); a stop is raised again."""
    found = compare_operators({name: configurations}, namespaces, options, rounds, min_rounds, measure)
    if found.stop is not None:
        raise found.stop
    return list(found.rows)


def compare_operators(
    operators: Mapping[str, Sequence[Mapping[str, Any]]],
    namespaces: Sequence[str],
    options: RunOptions | None = None,
    rounds: int = COMPARE_ROUNDS,
    min_rounds: int = COMPARE_MIN_ROUNDS,
    measure: Measurer = in_process,
    progress: Callable[[int, int], None] | None = None,
) -> Comparison:
    """Benchmark each operator (as called in the first namespace) with each of its configurations in
    every namespace, in rounds: a round is a pass over the configurations still unsettled, in the
    order given in round 0 and in one shuffled per round after it (``ab.job.in_round_order``), each
    configuration measured in every namespace in turn (the first goes first in even rounds, last in
    odd ones: what runs first meets the machine in another state). Every configuration gets
    ``min_rounds`` rounds, then another while a verdict of it is unsettled, up to ``rounds``.
    ``measure`` says where a round runs (``opperf.verdicts.compare.measuring``: here, or in fresh
    workers each round); ``progress`` is told each round's index and how many configurations it
    measures.

    A stop (Ctrl-C, or SIGTERM raised as ``KeyboardInterrupt``) ends the rounds: each configuration
    keeps the rounds every namespace finished, one with none is left out, and one short of
    ``min_rounds`` is marked so (``Row.short_of``); ``Comparison.stop`` holds the stop.

    A namespace with no counterpart, or whose counterpart cannot take a configuration, gets no
    measurement for it and the problem is recorded; an unknown operator in the first namespace raises.
    """
    if rounds < 1:
        raise OpperfError(f"a comparison takes at least one round, got {rounds}")
    options = comparison_options(options or RunOptions())
    check_namespaces(namespaces)
    share = round_options(options, min(rounds, ROUND_BUDGET_SHARE)) if rounds > 1 else options
    pending = []
    first = namespaces[0]
    for name, configurations in operators.items():
        source_tensors = tensor_order(function_in(first, name), framework_of_namespace(first))
        for configuration in configurations:
            calls, problems = _calls(name, configuration, namespaces, source_tensors, share)
            pending.append(_Pending(name, dict(configuration), calls, problems))
    least = min(min_rounds, rounds)
    active = list(pending)
    try:
        for index in range(rounds):
            if not active:
                break
            if progress is not None:
                progress(index, len(active))
            measure.start_round(index)
            for unsettled in in_round_order(active, index):
                unsettled.measure_round(index, measure)
            if index + 1 >= least:
                active = [found for found in active if not _settled(found.measured, namespaces)]
    except KeyboardInterrupt as stop:
        finished = [found.row(namespaces, least) for found in pending if found.finish_rounds()]
        return Comparison(tuple(finished), len(pending), stop)
    return Comparison(tuple(found.row(namespaces) for found in pending), len(pending))


@dataclass(frozen=True)
class _Pending:
    """A configuration of an operator while its rounds are measured: what each namespace calls, the
    problems of those that cannot, and each namespace's rounds so far (filled in as they come)."""

    operator: str
    configuration: Mapping[str, Any]
    calls: Mapping[str, tuple[Callable[..., object], BenchmarkSpec]]
    problems: dict[str, str]
    measured: dict[str, list[Measurement]] = field(default_factory=dict)

    def measure_round(self, index: int, measure: Measurer) -> None:
        """Round ``index`` in each namespace that can still take it: one with a problem, or whose
        measurement failed, crashed or timed out in an earlier round, is not run again."""
        for namespace in self.calls if index % 2 == 0 else reversed(list(self.calls)):
            if namespace in self.problems or _failed(self.measured.get(namespace)):
                continue
            function, spec = self.calls[namespace]
            try:
                self.measured.setdefault(namespace, []).append(measure(namespace, spec, function, index))
            except OpperfError as error:
                self.problems[namespace] = str(error)
                self.measured.pop(namespace, None)

    def finish_rounds(self) -> bool:
        """After a stop: keep the rounds every namespace still measuring finished (a round a stop cut
        between namespaces pairs nothing; one that failed keeps its failure); whether the row is kept:
        with a round left, or with nothing any namespace could call (its problems are its row)."""
        measuring = [
            self.measured.setdefault(namespace, [])
            for namespace in self.calls
            if namespace not in self.problems and not _failed(self.measured.get(namespace))
        ]
        complete = min((len(found) for found in measuring), default=0)
        for found in measuring:
            del found[complete:]
        for namespace in [namespace for namespace, found in self.measured.items() if not found]:
            del self.measured[namespace]
        return bool(self.measured) or not self.calls  # one no namespace can take is listed as such

    def row(self, namespaces: Sequence[str], least: int = 0) -> Row:
        """The configuration's row; ``least``, the rounds a stop may have left it short of."""
        measurements = {ns: _together(self.measured.get(ns)) for ns in namespaces}
        rounds = {ns: tuple(found) for ns, found in self.measured.items()}
        done = min((len(found) for found in rounds.values() if not _failed(found)), default=least)
        return Row(
            self.operator,
            self.configuration,
            measurements,
            dict(self.problems),
            rounds,
            short_of=least if done < least else None,
        )


def _calls(
    name: str,
    configuration: Mapping[str, Any],
    namespaces: Sequence[str],
    source_tensors: Sequence[str],
    options: RunOptions,
) -> tuple[dict[str, tuple[Callable[..., object], BenchmarkSpec]], dict[str, str]]:
    """What each namespace calls for ``name`` with ``configuration`` (its tensors named as in the
    first namespace, ``source_tensors``), and why those that cannot."""
    first, calls, problems = namespaces[0], {}, {}
    for namespace in namespaces:
        try:
            calls[namespace] = call_in(name, namespace, configuration, source_tensors, options, first)
        except OpperfError as error:
            problems[namespace] = str(error)
    return calls, problems


def _failed(rounds: Sequence[Measurement] | None) -> bool:
    return any(m.status is not Status.OK for m in rounds or ())


def _settled(measured: Mapping[str, Sequence[Measurement]], namespaces: Sequence[str]) -> bool:
    """Whether every verdict of a configuration's rounds so far is settled (``Versus.settled``)."""
    present = [ns for ns in namespaces if ns in measured]
    if len(present) < 2:
        return True
    found = versus([measured], present, DEFAULT_THRESHOLD, DEFAULT_ALPHA)
    return all(found_versus.settled(DEFAULT_ALPHA, DEFAULT_THRESHOLD) for found_versus in found.values())


def _together(rounds: Sequence[Measurement] | None) -> Measurement | None:
    """A namespace's rounds as one measurement: every round's samples together (the first round
    that did not measure, where one did not)."""
    if not rounds:
        return None
    failed = next((m for m in rounds if m.status is not Status.OK), None)
    if failed is not None:
        return failed
    backward = tuple(s for m in rounds for s in m.backward or ()) or None
    return replace(rounds[0], forward=tuple(s for m in rounds for s in m.forward or ()), backward=backward)


def forward_ratio(row: Row, namespace: str, first: str) -> float | None:
    """``namespace``'s forward median over ``first``'s, or None where either has none."""
    forward = median_of(row.measurements.get(namespace), "forward")
    base = median_of(row.measurements.get(first), "forward")
    return forward / base if forward and base else None


def verdicts(rows: Sequence[Row], namespaces: Sequence[str]) -> dict[tuple[int, str, str], Versus]:
    """Every other namespace against the first, per row and phase (``verdicts.compare.namespaces``), at
    ``opperf diff``'s default threshold and FDR level; a row a stop left short of its rounds is
    ``inconclusive`` whatever its rounds read."""
    found = versus([row.rounds for row in rows], namespaces, DEFAULT_THRESHOLD, DEFAULT_ALPHA)
    for (index, namespace, phase), judged in found.items():
        short_of = rows[index].short_of
        if short_of is not None:
            done = len(rows[index].rounds.get(namespace, ()))
            reason = SHORT.format(done=counted(done, "round"), least=short_of)
            found[index, namespace, phase] = replace(judged, verdict=Verdict.INCONCLUSIVE, reason=reason)
    return found


SHORT = "the comparison was stopped after {done} of this configuration, short of the {least} each gets"
"""Why a row an interrupted comparison left short of its minimum rounds has no verdict."""


def median_of(measurement: Measurement | None, phase: str) -> float | None:
    """The median of a measurement's samples of ``phase`` (``forward``, ``backward``); None where it
    has none."""
    samples = getattr(measurement, phase, None) if measurement is not None else None
    return statistics.median(samples) if samples else None
