"""Result files in, typed runs out: what ``opperf diff`` compares, read and checked at the edge.

A side of a diff is one or more result files, repeated sweeps of the same settings; each file is
one run. A record becomes a ``RunRecord``: its ``Key`` (everything that changes a figure, see
DESIGN.md "What a row is"), its status, and per phase the run's median with its 95% interval,
computed from the raw samples. Every problem with a file is an OpperfError naming the file and
the fix, never a traceback.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from opperf.results.document import is_ab, read_document
from opperf.results.draws import CONTIGUOUS, UNIFORM_POSITIVE
from opperf.results.environment import fingerprint
from opperf.results.options import KEYED
from opperf.utils.errors import OpperfError
from opperf.utils.load import BUSY_THRESHOLD
from opperf.utils.stats import summarize

PHASES = ("forward", "backward")
FAILING = frozenset({"failed", "crashed", "timeout"})
_SEVERITY = {"ok": 0, "skipped": 1, "timeout": 2, "failed": 3, "crashed": 4}
_REQUIRED = ("framework", "namespace", "op", "inputs", "status")
_FIX = "pass JSON result files written by `opperf --output-format json` or `--json-file`"


SETTINGS: tuple[str, ...] = (*(name for name in KEYED if name != "framework"), "stage", "variant")
"""The settings a row key holds beside its identity: every option marked keyed in ``RunOptions``
(the framework is part of the identity), then the stage and the fused variant. Derived, never
listed: an option marked keyed is in every key, in ``diff`` and in ``history``, with nothing else
to change."""
_ABSENT: Mapping[str, object] = {
    "stage": "eager",
    "variant": "",
    "values": UNIFORM_POSITIVE,
    "layout": CONTIGUOUS,
}
"""What a key holds for a setting a record, or a key a history store kept, leaves out: a null
variant is no variant; a key stored before ``values`` and ``layout`` were recorded was measured at
their defaults."""


@dataclass(frozen=True)
class Key:
    """What a row is: a record's identity (framework, namespace, operator, inputs in canonical JSON)
    and the settings that change its figures (``SETTINGS``, in that order). Rows are compared only
    when all of them agree; a setting reads as an attribute (``key.cache``)."""

    framework: str
    namespace: str
    op: str
    inputs: str
    settings: tuple[object, ...]

    @property
    def identity(self) -> tuple[str, str, str, str]:
        return (self.framework, self.namespace, self.op, self.inputs)

    @property
    def stage(self) -> str:
        return str(self.settings[SETTINGS.index("stage")])

    @property
    def variant(self) -> str:
        return str(self.settings[SETTINGS.index("variant")])

    def __getattr__(self, name: str) -> object:
        if name in SETTINGS:
            return self.settings[SETTINGS.index(name)]
        raise AttributeError(name)

    def drawn_otherwise(self) -> list[str]:
        """How its inputs were drawn where not as by default (``values normal``, ``layout strided``),
        as a row's label shows it; nothing for a setting left out (``diff --across``)."""
        return [
            f"{name} {getattr(self, name)}"
            for name in ("values", "layout")
            if getattr(self, name) not in (None, _ABSENT[name])
        ]

    def differing(self, other: Key) -> tuple[str, ...]:
        """The names of the settings in which two keys of one identity differ."""
        return tuple(
            name for name, a, b in zip(SETTINGS, self.settings, other.settings, strict=True) if a != b
        )

    def replacing(self, **settings: object) -> Key:
        """This key with the named settings changed (``threads=None``: every thread count as one)."""
        values = dict(zip(SETTINGS, self.settings, strict=True))
        unknown = set(settings) - set(values)
        if unknown:
            raise TypeError(f"a key has no setting {sorted(unknown)[0]!r}")
        values.update(settings)
        return replace(self, settings=tuple(values[name] for name in SETTINGS))

    def as_mapping(self) -> dict[str, object]:
        """The key as one flat object (identity and settings by name): how a history store keeps it."""
        return {
            "framework": self.framework,
            "namespace": self.namespace,
            "op": self.op,
            "inputs": self.inputs,
            **dict(zip(SETTINGS, self.settings, strict=True)),
        }

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, object]) -> Key:
        """A key from its flat object (``as_mapping``; a setting it lacks as a record lacking it)."""
        return cls(
            str(mapping["framework"]),
            str(mapping["namespace"]),
            str(mapping["op"]),
            str(mapping["inputs"]),
            tuple(_setting(mapping, name) for name in SETTINGS),
        )


def _setting(mapping: Mapping[str, object], name: str) -> object:
    value = mapping.get(name)
    return _ABSENT.get(name) if value is None and name in _ABSENT else value


@dataclass(frozen=True)
class PhaseRun:
    """One phase of one record in one run: the median of its samples and their median's 95%
    interval (seconds), whether the samples were noisy (IQR over 10% of the median), the fastest
    sample (``fastest``; None: the median stands in), which a paired round of an A/B job compares,
    and the timer's tick where the samples show one (``timer_tick``: 1 us for MXNet's profiler;
    None when all samples are equal or they are not whole numbers of their smallest gap)."""

    median: float
    low: float
    high: float
    noisy: bool
    fastest: float | None = None
    tick: float | None = None

    @property
    def paired_figure(self) -> float:
        """What a paired round compares: its fastest pass, or the median where there is none (or
        it is 0). Other processes only ever add time to a pass, so a round's fastest pass carries
        the least of the load it met; measured here, ratios of rounds' fastest passes found more of
        a 10% slowdown than ratios of their medians (32 against 25 of 43 rows, and 50 against 40
        of 58) with no more false calls (docs/diff-and-ab.md, Interleaved A/B)."""
        return self.fastest if self.fastest is not None and self.fastest > 0 else self.median

    @property
    def relative_precision(self) -> float:
        return (self.high - self.low) / (2 * self.median) if self.median > 0 else float("inf")


@dataclass(frozen=True)
class RunRecord:
    """One record of one run: status, reason, phases measured, and the run's doubt flags:
    ``imprecise`` (sampling stopped short of its precision target) and ``busy`` (other processes
    used more than a quarter of a core meanwhile)."""

    key: Key
    status: str
    reason: str | None
    phases: Mapping[str, PhaseRun]
    imprecise: bool
    busy: bool


@dataclass(frozen=True)
class Run:
    """One result file: where it came from, its records by key, and its machine and framework build
    (``environment.fingerprint``)."""

    path: str
    records: Mapping[Key, RunRecord]
    fingerprint: Mapping[str, Any] = field(default_factory=dict)


def canonical_inputs(inputs: object) -> str:
    """Inputs as canonical JSON (sorted keys, no spaces), so equal configurations compare equal."""
    return json.dumps(inputs, sort_keys=True, separators=(",", ":"))


def record_key(record: Mapping[str, Any]) -> Key:
    """A record's key: its identity, and each of ``SETTINGS`` as the record carries it (every one,
    in a file of schema version 2; an older file is migrated where it is read)."""
    return Key.from_mapping({**record, "inputs": canonical_inputs(record["inputs"])})


def phase_run(block: object, where: str) -> PhaseRun | None:
    if block is None:
        return None
    samples = block.get("samples_s") if isinstance(block, dict) else None
    if not isinstance(samples, list) or not samples or not all(isinstance(s, (int, float)) for s in samples):
        raise OpperfError(f"{where} has no list of samples_s; {_FIX}")
    summary = summarize(samples)
    return PhaseRun(
        median=summary.median,
        low=summary.median_low,
        high=summary.median_high,
        noisy=summary.noisy,
        fastest=min(samples),
        tick=timer_tick(samples),
    )


def smallest_gap(samples: Sequence[float]) -> float | None:
    """The smallest difference between two distinct samples; None when all are equal."""
    distinct = sorted(set(samples))
    return min((b - a for a, b in itertools.pairwise(distinct)), default=None)


def timer_tick(samples: Sequence[float]) -> float | None:
    """The timer's tick where the samples show one: their smallest gap, if there are at least
    ``TICK_SAMPLES`` samples and every one is a whole number of it (MXNet's profiler counts whole
    microseconds); None when all are equal or the gap is just the distance between a few passes
    (two passes of a 12 ms convolution 1.2 ms apart are no 1.2 ms timer, nor are two of 546 and
    585 us a 39 us one, which an A/B round of a 550 us operator read here)."""
    gap = smallest_gap(samples)
    if gap is None or len(samples) < TICK_SAMPLES:
        return None
    whole = all(abs(s / gap - round(s / gap)) <= TICK_TOLERANCE * max(1.0, s / gap) for s in samples)
    return gap if whole else None


TICK_SAMPLES = 5
"""The fewest samples whose smallest gap can show a tick (a sweep's and a round's fewest judged)."""
TICK_TOLERANCE = 1e-6
"""How far (relative) from a whole number of ticks a sample may be, for floating-point rounding."""


def run_record(record: object, where: str) -> RunRecord:
    if not isinstance(record, dict) or any(name not in record for name in _REQUIRED):
        raise OpperfError(f"{where} lacks one of {', '.join(_REQUIRED)}; {_FIX}")
    status = record["status"]
    if status not in _SEVERITY:
        raise OpperfError(f"{where} has status {status!r}, not one of {', '.join(_SEVERITY)}; {_FIX}")
    phases = {}
    if status == "ok":
        for phase in PHASES:
            measured = phase_run(record.get(phase), f"{where} {phase}")
            if measured is not None:
                phases[phase] = measured
    load = record.get("competing_load")
    return RunRecord(
        key=record_key(record),
        status=status,
        reason=record.get("reason"),
        phases=phases,
        imprecise=(record.get("sampling") or {}).get("met_target") is False,
        busy=load is not None and load > BUSY_THRESHOLD,
    )


def read_run(path: str) -> Run:
    """One result file as a Run; OpperfError naming the file when it cannot be read as one (an A/B
    file holds two sides' rounds, not one run)."""
    document = _document(path)
    if is_ab(document):
        raise OpperfError(
            f"{path}: an A/B file (opperf ab) holds both sides; diff it alone: opperf diff {path}"
        )
    return _run(path, path, _results(path, document), fingerprint(document["environment"]))


@dataclass(frozen=True)
class AbJob:
    """An A/B file's rounds: each side's runs, one per round, round r of base paired with round r of
    new; the rounds every configuration was to get (``min_rounds``), and whether the job stopped
    before it finished (``interrupted``: a row may then have fewer)."""

    base: tuple[Run, ...]
    new: tuple[Run, ...]
    min_rounds: int
    interrupted: bool
    varied: Mapping[str, tuple[object, object]] = field(default_factory=dict)
    """The run options the sides set otherwise (``opperf ab --new-option``), each with its base and
    new value: the rows pair across them."""


def read_ab(path: str) -> AbJob:
    """An A/B file (``opperf ab``) as its sides' rounds; OpperfError naming the file otherwise."""
    document = _document(path)
    if not is_ab(document):
        raise OpperfError(f"{path}: not an A/B file (opperf ab); pass BASE and NEW result files instead")
    results = _results(path, document)
    rounds = sorted({r.get("round") for r in results if isinstance(r, dict)}, key=lambda r: (r is None, r))
    if not rounds or None in rounds or any(r.get("side") not in SIDES for r in results):
        raise OpperfError(f"{path}: every record of an A/B file needs a side (base or new) and a round")
    base, new = (
        tuple(
            _run(
                f"{path} [{side} round {index}]",
                path,
                [r for r in results if (r["side"], r["round"]) == (side, index)],
            )
            for index in rounds
        )
        for side in SIDES
    )
    job = cast("dict[str, Any]", document.get("ab")) if isinstance(document.get("ab"), dict) else {}
    schedule = cast("dict[str, Any]", job.get("schedule")) if isinstance(job.get("schedule"), dict) else {}
    minimum = schedule.get("min_rounds")
    names = _side_options(path, job)
    varied: dict[str, tuple[object, object]] = {}
    if names:
        base, base_values = across(base, names, f"{path} [base]")
        new, new_values = across(new, names, f"{path} [new]")
        varied = {name: (base_values[name], new_values[name]) for name in names}
    return AbJob(
        base=base,
        new=new,
        min_rounds=minimum if isinstance(minimum, int) and not isinstance(minimum, bool) else 0,
        interrupted=job.get("interrupted") is True,
        varied=varied,
    )


def _side_options(path: str, job: Mapping[str, Any]) -> tuple[str, ...]:
    """The settings an A/B job's sides set otherwise (``builds.<side>.options``); OpperfError for
    one that is no setting of a row key."""
    builds = job.get("builds")
    names: list[str] = []
    for build in builds.values() if isinstance(builds, dict) else ():
        options = build.get("options") if isinstance(build, dict) else None
        for name in options if isinstance(options, dict) else ():
            if name not in SETTINGS:
                raise OpperfError(
                    f"{path}: a side sets {str(name)[:40]!r}, no setting of a row key; pass an A/B file "
                    "written by opperf ab"
                )
            if name not in names:
                names.append(name)
    return tuple(names)


SIDES = ("base", "new")


def _document(path: str) -> dict[str, Any]:
    return read_document(path, _FIX)


def _results(path: str, document: dict[str, Any] | None = None) -> list:
    results = (document if document is not None else _document(path)).get("results")
    if not isinstance(results, list):
        raise OpperfError(f"{path}: no `results` list; {_FIX}")
    return results


def _run(name: str, path: str, results: Sequence[object], found: Mapping[str, Any] | None = None) -> Run:
    records: dict[Key, RunRecord] = {}
    for index, record in enumerate(results):
        parsed = run_record(record, f"{path}: results[{index}]")
        if parsed.key in records:
            raise OpperfError(
                f"{path}: results[{index}] repeats {parsed.key.op} {parsed.key.inputs}; "
                "a result file holds one record per configuration, so merge shards with `opperf merge`"
            )
        records[parsed.key] = parsed
    return Run(path=name, records=records, fingerprint=dict(found or {}))


def differences(runs: Sequence[Run], fields: Sequence[str]) -> list[str]:
    """How the runs' fingerprints differ in ``fields``, each as ``field 'a' (file) vs 'b' (file)``. A
    field a file does not record (null: written before opperf recorded it) differs from nothing:
    unknown is not different."""
    found = []
    for name in fields:
        values: dict[str, str] = {}
        for run in runs:
            if run.fingerprint.get(name) is not None:
                values.setdefault(json.dumps(run.fingerprint[name], sort_keys=True), run.path)
        if len(values) > 1:
            found.append(f"{name} " + " vs ".join(f"{value} ({path})" for value, path in values.items()))
    return found


def read_side(paths: Sequence[str]) -> tuple[Run, ...]:
    """The runs of one side, checked to be repeats of one sweep: every file's records carry the
    same settings (dtype, device, profiler, mode, threads, cache, run_backward, stage)."""
    if not paths:
        raise OpperfError("a side of the diff names no result file; pass FILE or FILE1,FILE2,...")
    runs = tuple(read_run(path) for path in paths)
    first = runs[0]
    reference = _settings(first)
    for run in runs[1:]:
        found = _settings(run)
        if found != reference:
            names = sorted({name for name, _ in found ^ reference})
            raise OpperfError(
                f"{run.path}: {', '.join(names)} differ from {first.path}; the files of one side "
                "must be repeats of one sweep, so pass the other settings as the other side"
            )
    return runs


def _settings(run: Run) -> frozenset[tuple[str, object]]:
    return frozenset(
        (name, value) for key in run.records for name, value in zip(SETTINGS, key.settings, strict=True)
    )


def across(runs: Sequence[Run], names: Sequence[str], side: str) -> tuple[tuple[Run, ...], dict[str, object]]:
    """``runs`` with the settings ``names`` left out of every key (``diff --across``: rows that differ
    only in them pair up, and their verdict is that setting's effect), and the value of each on this
    side; OpperfError where the side holds more than one value of a setting (its rows would merge)."""
    found: dict[str, set[object]] = {name: set() for name in names}
    for run in runs:
        for key in run.records:
            for name in names:
                found[name].add(getattr(key, name))
    several = {name: values for name, values in found.items() if len(values) > 1}
    if several:
        name, values = next(iter(several.items()))
        listed = ", ".join(sorted(map(str, values)))
        raise OpperfError(
            f"{side} holds more than one {name} ({listed}); --across {name} compares one {name} on each "
            f"side: pass the files of each {name} as one side"
        )
    left_out = {name: None for name in names}
    projected = tuple(
        replace(
            run,
            records={
                key.replacing(**left_out): replace(record, key=key.replacing(**left_out))
                for key, record in run.records.items()
            },
        )
        for run in runs
    )
    return projected, {name: next(iter(values), None) for name, values in found.items()}


def worst_status(statuses: Sequence[str]) -> str:
    """A side's status for a record: the most severe of its runs' (one crash in three runs counts)."""
    return max(statuses, key=_SEVERITY.__getitem__)
