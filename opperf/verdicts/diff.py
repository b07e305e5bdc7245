"""Match two sides' runs row by row and give each row its verdict.

A row is (key, phase). Rows of the same key on both sides are compared; a key on one side whose
identity (framework, namespace, operator, inputs) appears on the other under other settings is
``incomparable``, naming the settings that differ; any other key on one side only is ``new`` or
``gone``. Status changes decide before timings (``newly-failing``, ``fixed``); timings of rows that
ran on both sides go through ``inference`` and ``decide``.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import cast

from opperf.results.key import Key
from opperf.results.load import AbJob, Run, worst_status
from opperf.results.record import PHASES, Record
from opperf.utils.errors import OpperfError
from opperf.utils.words import counted
from opperf.verdicts.decide import Verdict, noise, resolution, status_verdict, tick_floor, timing_verdict
from opperf.verdicts.distributions import t_ppf
from opperf.verdicts.inference import (
    MIN_ROWS,
    REPLICATED_RUNS,
    Contrast,
    NoiseModel,
    RowTest,
    assess,
    bh_qvalues,
    own_variance,
    trimmed,
)


@dataclass(frozen=True)
class Side:
    """One side's figures for a row: the median of its runs' medians (seconds), the envelope of the
    runs' 95% median intervals, each run's median, and the doubt flags any of its runs carried."""

    median: float
    low: float
    high: float
    run_medians: tuple[float, ...]
    precision: float
    noisy: bool
    imprecise: bool
    busy: bool
    imprecise_runs: int = 0
    run_paired: tuple[float, ...] = ()
    tick: float | None = None
    run_precisions: tuple[float, ...] = ()

    @property
    def runs(self) -> int:
        return len(self.run_medians)

    def compared(self, paired: bool) -> float:
        """The figure a row's ratio compares, in seconds: for paired rounds of an A/B job the median
        of the rounds' paired figures (their fastest passes), else the median of the runs' medians."""
        return statistics.median(self.run_paired) if paired and self.run_paired else self.median

    @property
    def relative_tick(self) -> float | None:
        """One tick of a quantising timer as a share of the side's fastest paired figure; None
        unless the side has paired figures and its timer quantises."""
        return self.tick / min(self.run_paired) if self.tick and self.run_paired else None


@dataclass(frozen=True)
class Row:
    """A row's verdict and the figures behind it. ``ratio`` and its interval are new over base;
    ``noise`` is the pair's own noise as a relative figure; ``p`` and ``q`` exist for rows tested."""

    key: Key
    phase: str
    verdict: Verdict
    base_status: str | None
    new_status: str | None
    base: Side | None = None
    new: Side | None = None
    ratio: float | None = None
    ratio_low: float | None = None
    ratio_high: float | None = None
    noise: float | None = None
    p: float | None = None
    q: float | None = None
    indicative: bool = False
    reason: str | None = None
    paired: bool = False
    """Whether the ratio compares paired rounds of an A/B job (``Side.compared``)."""


@dataclass(frozen=True)
class Summary:
    """The diff at a glance: counts per verdict, runs per side, the geometric mean of the ratios
    with its 95% interval, the machine factor (median ratio) and the noise model used."""

    counts: tuple[tuple[Verdict, int], ...]
    base_files: tuple[str, ...]
    new_files: tuple[str, ...]
    indicative: bool
    compared: int
    geomean: float | None
    geomean_low: float | None
    geomean_high: float | None
    machine_factor: float | None
    model: NoiseModel | None
    threshold: float
    alpha: float
    paired: bool = False
    notes: tuple[str, ...] = ()

    @property
    def machine_shift(self) -> bool:
        """Whether the whole new side of separate sweeps ran faster or slower than the base beyond the
        threshold, so that its rows were left inconclusive (``shift_doubt``): the centre of the rows
        the diff could call, which takes ``MIN_ROWS`` of them. Never for paired rounds: their sides
        took turns on the machine, round by round, so no stretch of it fell on one side only (a
        median ratio beyond the threshold there is the operators' change)."""
        return not self.paired and shift_doubt(self.model, self.threshold) is not None

    @property
    def unweighed_shift(self) -> bool:
        """Whether the median ratio of separate sweeps is beyond the threshold where too few rows
        could be called to take it for the machine's (``machine_shift`` then does not hold): the rows
        were judged as measured."""
        if self.paired or self.machine_shift or self.machine_factor is None:
            return False
        return abs(math.log(self.machine_factor)) > math.log1p(self.threshold)

    @property
    def said(self) -> tuple[str, ...]:
        """What the diff says of its verdicts beside the rows, in the order every format shows it:
        its notes (an A/B job's compared-across settings, a stopped job, other machines or builds),
        then a machine factor beyond the threshold, then one run a side."""
        said = list(self.notes)
        if self.machine_shift:
            said.append(MACHINE_SHIFT_NOTE)
        if self.unweighed_shift:
            said.append(UNWEIGHED_SHIFT_NOTE)
        if self.indicative:
            said.append(INDICATIVE_NOTE)
        return tuple(said)


MACHINE_SHIFT_NOTE = (
    "The machine factor is beyond the threshold: one side probably ran in a slower stretch of the "
    "machine, or on another machine (or every operator changed alike). Rows of separate sweeps are "
    "inconclusive then: measure both sides interleaved with opperf ab."
)
UNWEIGHED_SHIFT_NOTE = (
    f"The median ratio is beyond the threshold, but fewer than {MIN_ROWS} rows could be called: too few "
    "to take it for the machine's change (a slower stretch, another machine) apart from the operators'. "
    "Rows are judged as measured; where one side may have run slower, measure both interleaved with "
    "opperf ab."
)
INDICATIVE_NOTE = (
    "One run on a side: verdicts are indicative. Repeat the sweeps (FILE1,FILE2,...), or interleave them, "
    "for verdicts that rest on more than one run."
)


@dataclass(frozen=True)
class Diff:
    summary: Summary
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class Compared:
    """A row measured on both sides, waiting for the diff-wide test: its contrast, and why it
    cannot be called (``doubt``) if it cannot."""

    key: Key
    phase: str
    base: Side
    new: Side
    contrast: Contrast
    doubt: str | None
    median_estimate: float | None = None
    """Paired rounds: the log ratio of the rounds' medians (their trimmed mean) beside that of their
    fastest passes (``contrast``), which ``same`` must also hold for (``_same_by_medians``)."""


def side(records: Sequence[Record], phase: str) -> Side | None:
    """A side's figures for one phase from the runs that measured it; None when none did."""
    measured = [(r, r.phases[phase]) for r in records if phase in r.phases]
    if not measured:
        return None
    return Side(
        median=statistics.median(m.median for _, m in measured),
        low=min(m.low for _, m in measured),
        high=max(m.high for _, m in measured),
        run_medians=tuple(m.median for _, m in measured),
        precision=statistics.median(m.relative_precision for _, m in measured),
        noisy=any(m.noisy for _, m in measured),
        imprecise=any(r.imprecise for r, _ in measured),
        busy=any(r.busy for r, _ in measured),
        imprecise_runs=sum(r.imprecise for r, _ in measured),
        run_paired=tuple(m.paired_figure for _, m in measured),
        tick=min((m.tick for _, m in measured if m.tick is not None), default=None),
        run_precisions=tuple(m.relative_precision for _, m in measured),
    )


def doubt(base: Side, new: Side, rounds: bool = False) -> str | None:
    """Why a row measured on both sides cannot be called at all, or None.

    Separate sweeps: any run on a busy machine, or half or more of a side's runs short of their
    precision target (so a single sweep's imprecise row stays uncalled). Fewer imprecise runs do not
    disqualify the row: its figure is the median of the side's runs, which a minority cannot carry,
    and the runs' spread enters its test (with three sweeps a side, an any-run rule left no row
    callable: nearly every row had one run of the six short of its target). Paired rounds of an A/B
    job never: their sides share the machine's state turn by turn, so a busy machine shows in the
    rounds' disagreement, which the row's test weighs (on this shared machine most rounds were
    busy, and a rule of "busy in most rounds" left 30 of 43 rows with an injected 10% slowdown
    uncalled, their rounds agreeing within 2%); and each round had a share of the budget, so the
    rounds' agreement, not a round's precision target, is the row's precision. Likewise a side of
    ``REPLICATED_RUNS`` sweeps or more: its runs' agreement is its precision (each run's sampling
    error is part of their spread, which the row's test weighs), so imprecise runs do not hold it
    back (with three sweeps a side and a 25% slowdown injected, 10 of 57 rows were held back so,
    their runs agreeing on 1.24-1.30 within 0.6-5.5%)."""
    reasons = [
        f"{flag} ({name})"
        for name, figures in (("base", base), ("new", new))
        for flag, raised in (
            ("busy machine", not rounds and figures.busy),
            ("short of its precision target", not rounds and _short(figures)),
        )
        if raised
    ]
    return ", ".join(reasons) or None


def _short(figures: Side) -> bool:
    """Whether a side of separate sweeps is short of its precision target: half or more of its
    runs are, and it has fewer than ``REPLICATED_RUNS`` runs to replace their precision."""
    return figures.runs < REPLICATED_RUNS and 2 * figures.imprecise_runs >= figures.runs


def _by_key(runs: Sequence[Run]) -> dict[Key, list[Record]]:
    grouped: dict[Key, list[Record]] = defaultdict(list)
    for run in runs:
        for key, record in run.records.items():
            grouped[key].append(record)
    return grouped


def _phases(records: Sequence[Record]) -> tuple[str, ...]:
    found = {phase for r in records for phase in r.phases}
    return tuple(p for p in PHASES if p in found) or ("forward",)


def _one_sided(key: Key, records: Sequence[Record], base_side: bool, indicative: bool) -> list[Row]:
    status = worst_status([r.status for r in records])
    verdict = status_verdict(status, None) if base_side else status_verdict(None, status)
    if verdict is None:  # neither side measured it (e.g. failed, then absent)
        verdict = Verdict.GONE if base_side else Verdict.NEW
    return [
        Row(
            key=key,
            phase=phase,
            verdict=verdict,
            base_status=status if base_side else None,
            new_status=None if base_side else status,
            base=side(records, phase) if base_side else None,
            new=None if base_side else side(records, phase),
            indicative=indicative,
        )
        for phase in _phases(records)
    ]


def _incomparable(
    base_key: Key, base: Sequence[Record], new_key: Key, new: Sequence[Record], indicative: bool
) -> list[Row]:
    differing = ", ".join(
        f"{name} {getattr(base_key, name)!r} -> {getattr(new_key, name)!r}"
        for name in base_key.differing(new_key)
    )
    return [
        Row(
            key=base_key,
            phase=phase,
            verdict=Verdict.INCOMPARABLE,
            base_status=worst_status([r.status for r in base]),
            new_status=worst_status([r.status for r in new]),
            base=side(base, phase),
            new=side(new, phase),
            indicative=indicative,
            reason=f"settings differ: {differing}",
        )
        for phase in _phases([*base, *new])
    ]


def diff(
    base_runs: Sequence[Run],
    new_runs: Sequence[Run],
    threshold: float,
    alpha: float,
    paired: bool = False,
    min_rounds: int = 0,
    notes: Sequence[str] = (),
) -> Diff:
    """Every row of two sides (each a tuple of runs of one sweep) with its verdict, and a summary.

    ``paired``: run i of base and run i of new are one round of an interleaved A/B job; each row is
    then tested on its per-round log ratios, and a round short of its precision target (each had a
    share of the budget) does not make the row inconclusive: the rounds' agreement is its precision.
    """
    base, new = _by_key(base_runs), _by_key(new_runs)
    if not {k.identity for k in base} & {k.identity for k in new}:
        raise OpperfError(
            f"{', '.join(r.path for r in base_runs)} and {', '.join(r.path for r in new_runs)} share no "
            "operator configuration; diff result files of the same operators (framework, namespace, "
            "operator and inputs)"
        )
    indicative = min(len(base_runs), len(new_runs)) == 1
    rows: list[Row] = []
    compared: list[Compared] = []
    unmatched_new: dict[tuple[str, str, str, str], list[Key]] = defaultdict(list)
    for key in new:
        if key not in base:
            unmatched_new[key.identity].append(key)
    paired_new: set[Key] = set()
    for key, records in base.items():
        if key not in new:
            candidates = unmatched_new.get(key.identity)
            if candidates:
                other = candidates.pop(0)
                paired_new.add(other)
                rows += _incomparable(key, records, other, new[other], indicative)
            else:
                rows += _one_sided(key, records, True, indicative)
            continue
        paired_rows, paired_compared = _paired(key, records, new[key], indicative, paired, min_rounds)
        rows += paired_rows
        compared += paired_compared
    for key, records in new.items():
        if key not in base and key not in paired_new:
            rows += _one_sided(key, records, False, indicative)
    timed, model = _timing_rows(compared, threshold, alpha)
    rows += timed
    return Diff(
        summary=replace(
            _summary(rows, base_runs, new_runs, model, threshold, alpha, paired), notes=tuple(notes)
        ),
        rows=tuple(_ordered(rows)),
    )


def diff_ab(job: AbJob, threshold: float, alpha: float) -> Diff:
    """The rows of an A/B job's rounds (``diff`` with ``paired``). A job stopped part way says so, and
    a row it left with fewer rounds than every configuration was to get is not judged."""
    note: tuple[str, ...] = ()
    if job.interrupted:
        note = (
            f"The A/B job was stopped after {counted(len(job.base), 'round')}: a row with fewer than its "
            f"{counted(job.min_rounds, 'round')} is inconclusive; run the job again for verdicts on all.",
        )
    if job.varied:
        note += (across_note(job.varied),)
    minimum = job.min_rounds if job.interrupted else 0
    return diff(job.base, job.new, threshold, alpha, paired=True, min_rounds=minimum, notes=note)


def across_note(varied: Mapping[str, tuple[object, object]]) -> str:
    """The note of a diff whose rows pair across settings: which, and each side's value."""
    shown = "; ".join(f"{name} {base} (base) against {new} (new)" for name, (base, new) in varied.items())
    return f"Compared across {shown}: each verdict is the effect of that change."


def _paired(
    key: Key,
    base: Sequence[Record],
    new: Sequence[Record],
    indicative: bool,
    rounds: bool,
    min_rounds: int = 0,
) -> tuple[list[Row], list[Compared]]:
    """The rows of a key both sides ran: a status verdict, or per phase new, gone or compared
    (rows with neither side ok carry nothing to compare and give no row)."""
    base_status = worst_status([r.status for r in base])
    new_status = worst_status([r.status for r in new])
    verdict = status_verdict(base_status, new_status)
    if verdict is not None:
        return [
            Row(
                key=key,
                phase=phase,
                verdict=verdict,
                base_status=base_status,
                new_status=new_status,
                base=side(base, phase),
                new=side(new, phase),
                indicative=indicative,
                reason=_status_reason(base, new),
            )
            for phase in _phases(new if verdict in (Verdict.FIXED, Verdict.NEW) else base)
        ], []
    if base_status != "ok" or new_status != "ok":
        return [], []
    rows, compared = [], []
    for phase in PHASES:
        b, n = side(base, phase), side(new, phase)
        if b is not None and n is not None and min((*b.run_medians, *n.run_medians)) <= 0:
            rows.append(
                Row(
                    key=key,
                    phase=phase,
                    verdict=Verdict.INCONCLUSIVE,
                    base_status=base_status,
                    new_status=new_status,
                    base=b,
                    new=n,
                    indicative=indicative,
                    reason="a run's median is 0 s: below its timer's resolution, no ratio to take",
                )
            )
        elif b is not None and n is not None:
            median_estimate = None
            if rounds and b.runs == n.runs:
                ratios = [math.log(y / x) for x, y in zip(b.run_paired, n.run_paired, strict=True)]
                contrast = Contrast.paired(ratios, math.log(b.median), round_noise(b, n))
                by_median = [math.log(y / x) for x, y in zip(b.run_medians, n.run_medians, strict=True)]
                median_estimate = trimmed(by_median)[0]
            else:
                contrast = Contrast.two_sample(
                    [math.log(m) for m in b.run_medians], [math.log(m) for m in n.run_medians]
                )
            short = f"{counted(b.runs, 'round')} of the job's {min_rounds}" if b.runs < min_rounds else None
            reason = short or doubt(b, n, rounds)
            compared.append(Compared(key, phase, b, n, contrast, reason, median_estimate))
        elif b is not None or n is not None:
            rows.append(
                Row(
                    key=key,
                    phase=phase,
                    verdict=Verdict.NEW if b is None else Verdict.GONE,
                    base_status=base_status,
                    new_status=new_status,
                    base=b,
                    new=n,
                    indicative=indicative,
                )
            )
    return rows, compared


def round_noise(base: Side, new: Side) -> list[float]:
    """Each round's own variance of its log ratio: the two sides' (``own_variance``; an interval of
    no width, a single pass, adds nothing to the other side's)."""
    return [
        own_variance(b) + own_variance(n)
        for b, n in zip(base.run_precisions, new.run_precisions, strict=True)
    ]


def _status_reason(base: Sequence[Record], new: Sequence[Record]) -> str | None:
    return next((r.reason for r in (*new, *base) if r.status != "ok" and r.reason), None)


def measured_noise(c: Compared) -> float:
    """What the two sides' measurements resolve, in log units: at least ``TICK_FLOOR`` ticks of a
    quantising timer on the faster side (5 us against 6 us is one tick, not a 20% change; three
    sweeps a side of ``diag`` reading 7, 7, 7 against 6, 6, 6 us were otherwise called 14% faster),
    and for separate sweeps their median intervals (``decide.resolution``). Paired rounds: the
    rounds' agreement, which the row's test weighs, is their precision (a round's figure is its
    fastest pass, with a share of the budget, and its median's interval says little of it: measured
    here, 15% wide intervals held back rows whose six rounds agreed on a 10% change within 3%), so
    only the floor remains."""
    floor = tick_floor(tick_share(c.base, c.new))
    if not c.contrast.from_rounds:
        return max(resolution(c.base.precision, c.new.precision), floor)
    return floor


def tick_share(base: Side | None, new: Side | None) -> float:
    """One tick of the timer as a share of a row's time (each side's fastest figure) on the side
    where it is largest; 0 when the timer does not quantise."""
    return max([0.0, *(s.relative_tick for s in (base, new) if s is not None and s.relative_tick)])


def below_resolution(row: Row, threshold: float) -> bool:
    """Whether a paired row is inconclusive because its timer's tick exceeds the threshold of its
    time (a 10 us operator under MXNet's 1 us profiler tick). Its rounds' figures are then mostly
    the same count of ticks, so more rounds add little evidence: in an A/A job over the MXNet
    registry, the 321 configurations with a phase under 20 us took 3069 of its 8764
    configuration-rounds, 272 of them all ten."""
    return row.verdict is Verdict.INCONCLUSIVE and tick_share(row.base, row.new) > threshold


def _timing_rows(
    compared: Sequence[Compared], threshold: float, alpha: float
) -> tuple[list[Row], NoiseModel | None]:
    """Test the rows that can be called (no doubt), correct for their number, decide every row."""
    callable_rows = [c for c in compared if c.doubt is None]
    paired = any(c.contrast.from_rounds for c in callable_rows)
    model, tests = assess([c.contrast for c in callable_rows], paired) if callable_rows else (None, ())
    test_of = {c: t for c, t in zip(callable_rows, tests, strict=True)}
    tested = [c for c in callable_rows if test_of[c] is not None]
    q_of = {
        c: q for c, q in zip(tested, bh_qvalues([cast(RowTest, test_of[c]).p for c in tested]), strict=True)
    }
    shifted = None if paired else shift_doubt(model, threshold)
    rows = []
    for c in compared:
        test, q = test_of.get(c), q_of.get(c)
        row_noise = noise(test, measured_noise(c))
        verdict, reason = Verdict.INCONCLUSIVE, c.doubt or shifted
        if reason is None:
            verdict, reason = timing_verdict(c.contrast.estimate, test, q, row_noise, threshold, alpha)
        if verdict is Verdict.SAME and not _same_by_medians(c, threshold):
            verdict, reason = Verdict.INCONCLUSIVE, MEDIANS_DISAGREE
        share = tick_share(c.base, c.new) if c.contrast.from_rounds else 0.0
        if verdict is Verdict.SAME and share > threshold:
            # Rounds that all read 9 us on both sides, one tick of MXNet's 1 us profiler, may be 9.0
            # and 9.9 us: their ratios' interval says nothing of a change smaller than a tick
            # (``compare`` holds its rows to the same, ``namespaces.BELOW_RESOLUTION``). In an A/A job
            # over the MXNet registry this took 7 of 1,835 ``same`` rows: most were inconclusive already.
            verdict = Verdict.INCONCLUSIVE
        if verdict is Verdict.INCONCLUSIVE and c.doubt is None and share > threshold:
            tick = max(side.tick or 0.0 for side in (c.base, c.new))
            reason = (
                f"one tick of the timer ({tick * 1e6:g} us) is {share:.0%} of this row's time, more than "
                f"the threshold: the timer cannot resolve a change that small here"
            )
        rows.append(
            Row(
                key=c.key,
                phase=c.phase,
                verdict=verdict,
                base_status="ok",
                new_status="ok",
                base=c.base,
                new=c.new,
                ratio=math.exp(c.contrast.estimate),
                ratio_low=math.exp(test.low) if test else None,
                ratio_high=math.exp(test.high) if test else None,
                noise=math.expm1(row_noise),
                p=test.p if test else None,
                q=q,
                indicative=min(c.base.runs, c.new.runs) == 1,
                reason=reason,
                paired=c.contrast.from_rounds,
            )
        )
    return rows, model


MEDIANS_DISAGREE = (
    "the rounds' fastest passes agree within the threshold band, but their medians do not: the "
    "change may be in most passes but not the fastest"
)


def _same_by_medians(compared: Compared, threshold: float) -> bool:
    """Whether a paired row's rounds' medians also put its ratio within the threshold band (a row
    of separate sweeps has nothing more to check).

    A round's fastest pass carries the least of the load it met, so its ratio finds changes best
    (docs/diff-and-ab.md, Interleaved A/B); but where a configuration's passes fall in two modes,
    the fastest of each side can come from the fast mode while most passes moved: with 10% injected, softmax
    (10000, 100)'s backward rounds' fastest passes read 1.018 (interval 0.988-1.049, ``same``) where
    their medians read 0.96-1.15 a round. ``same`` says no change beyond the band; it must hold for
    both figures: the medians' estimate (their rounds' trimmed mean) must lie within the band too.
    (Their interval as well cost a quarter of the `same` rows of a 578-row job: medians carry the
    load that fastest passes shed.)"""
    estimate = compared.median_estimate
    return estimate is None or abs(estimate) < math.log1p(threshold)


def shift_doubt(model: NoiseModel | None, threshold: float) -> str | None:
    """Why no row of separate sweeps is called when their sides ran at different speeds: with the
    whole new side beyond the threshold of the base (the machine factor), operators respond to what
    slowed the machine unequally (memory-bound ones more), and that spread is read as their change.
    Three sweeps a side, the new side at 1.10x the base's time and no operator changed: 52 of 502
    rows called (14 without trimming each side's slowest run, ``trimmed_slow``); in ten diffs at
    0.98-1.04x, 0-7. Interleaved rounds pair the sides within each round: judged relative to it."""
    if model is None or abs(model.centre) <= math.log1p(threshold):
        return None
    return (
        f"the whole new side ran at {math.exp(model.centre):.2f}x the base's time (the machine factor, "
        "beyond the threshold): separate sweeps cannot tell an operator's change from the machine's "
        "or the stretch's; measure both interleaved with opperf ab"
    )


def _summary(
    rows: Sequence[Row],
    base_runs: Sequence[Run],
    new_runs: Sequence[Run],
    model: NoiseModel | None,
    threshold: float,
    alpha: float,
    paired: bool,
) -> Summary:
    counts = Counter(r.verdict for r in rows)
    logs = [math.log(r.ratio) for r in rows if r.ratio is not None]
    geomean = low = high = factor = None
    if logs:
        mean = statistics.fmean(logs)
        geomean, factor = math.exp(mean), math.exp(statistics.median(logs))
        if len(logs) > 1:
            half = t_ppf(0.975, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
            low, high = math.exp(mean - half), math.exp(mean + half)
    return Summary(
        counts=tuple((v, counts.get(v, 0)) for v in Verdict),
        base_files=tuple(r.path for r in base_runs),
        new_files=tuple(r.path for r in new_runs),
        indicative=min(len(base_runs), len(new_runs)) == 1,
        compared=len(logs),
        geomean=geomean,
        geomean_low=low,
        geomean_high=high,
        machine_factor=factor,
        model=model,
        threshold=threshold,
        alpha=alpha,
        paired=paired,
    )


def _ordered(rows: Sequence[Row]) -> list[Row]:
    rank: Mapping[Verdict, int] = {v: i for i, v in enumerate(Verdict)}
    return sorted(
        rows,
        key=lambda r: (rank[r.verdict], r.key.framework, r.key.namespace, r.key.op, r.key.inputs, r.phase),
    )
