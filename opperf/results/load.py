"""Result files in, typed runs out: what ``opperf diff`` compares, read and checked at the edge.

A side of a diff is one or more result files, repeated sweeps of the same settings; each file is
one run, its records read once (``opperf.results.record``) and held by their ``Key`` (everything that
changes a figure, ``opperf.results.key``). Every problem with a file is an OpperfError naming the
file and the fix, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from opperf.results.document import is_ab, read_document
from opperf.results.environment import read_fingerprint
from opperf.results.key import SETTINGS, Key
from opperf.results.measurement import SEVERITY
from opperf.results.record import FIX, Record, read_record
from opperf.utils.errors import OpperfError

FAILING = frozenset({"failed", "crashed", "timeout"})


@dataclass(frozen=True)
class Run:
    """One result file: where it came from, its records by key, and its machine and framework build
    (``environment.fingerprint``)."""

    path: str
    records: Mapping[Key, Record]
    fingerprint: Mapping[str, Any] = field(default_factory=dict)
    started: str | None = None
    """When the run started (``environment.started``): no two runs share it, every copy of one does."""
    sampling: Mapping[str, Any] = field(default_factory=dict)
    """How it sampled (``SAMPLING_FIELDS`` of its environment): repeats of one sweep sample alike."""


SAMPLING_FIELDS = ("seed", "budget_s", "target_precision", "runs", "warmup")
"""The environment's settings that change how a sweep samples and what data it draws, not which rows
it has: repeats on one side of a diff that differ in them are named in a note."""


def read_run(path: str) -> Run:
    """One result file as a Run; OpperfError naming the file when it cannot be read as one (an A/B
    file holds two sides' rounds, not one run)."""
    document = _document(path)
    if is_ab(document):
        raise OpperfError(
            f"{path}: an A/B file (opperf ab) holds both sides; diff it alone: opperf diff {path}"
        )
    environment = document["environment"]
    run = _run(path, path, _results(path, document), read_fingerprint(environment, path))
    started = environment.get("started")
    sampling = {name: environment.get(name) for name in SAMPLING_FIELDS}
    return replace(run, started=started if isinstance(started, str) else None, sampling=sampling)


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
                repeats=AB_REPEATS,
            )
            for index in rounds
        )
        for side in SIDES
    )
    for side, runs in (("base", base), ("new", new)):
        if not any(run.records for run in runs):
            raise OpperfError(f"{path}: the A/B file holds no record of the {side} side; {AB_FIX}")
    job = _object(document.get("ab"), f"{path}: ab")
    schedule = _object(job.get("schedule"), f"{path}: ab.schedule")
    minimum = schedule.get("min_rounds")
    if minimum is not None and (not isinstance(minimum, int) or isinstance(minimum, bool) or minimum < 0):
        raise OpperfError(f"{path}: ab.schedule.min_rounds {minimum!r:.40} is no count of rounds; {AB_FIX}")
    if job.get("interrupted") is not None and not isinstance(job["interrupted"], bool):
        raise OpperfError(
            f"{path}: ab.interrupted {job['interrupted']!r:.40} is neither true nor false; {AB_FIX}"
        )
    names = _side_options(path, job)
    varied: dict[str, tuple[object, object]] = {}
    if names:
        base, base_values = across(base, names, f"{path} [base]")
        new, new_values = across(new, names, f"{path} [new]")
        varied = {  # a setting both sides name with one value varies nothing
            name: (base_values[name], new_values[name])
            for name in names
            if base_values[name] != new_values[name]
        }
    return AbJob(
        base=base,
        new=new,
        min_rounds=minimum or 0,
        interrupted=job.get("interrupted") is True,
        varied=varied,
    )


def _object(value: object, where: str) -> dict[str, Any]:
    """An A/B file's object at ``where`` (absent: empty); OpperfError for anything else."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise OpperfError(f"{where} is {type(value).__name__}, not an object; {AB_FIX}")
    return cast("dict[str, Any]", value)


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
"""The sides of an A/B file, base first: the build a change is judged against, then the changed one."""


def _document(path: str) -> dict[str, Any]:
    return read_document(path, FIX)


def _results(path: str, document: dict[str, Any] | None = None) -> list:
    results = (document if document is not None else _document(path)).get("results")
    if not isinstance(results, list):
        raise OpperfError(f"{path}: no `results` list; {FIX}")
    return results


MERGE_FIX = "a result file holds one record per configuration, so merge shards with `opperf merge`"
"""What to do about a results file that repeats a configuration (a sweep's shards concatenated)."""


AB_FIX = "pass an A/B file written by `opperf ab`"
"""What to do about an A/B file that cannot be read as one."""


AB_REPEATS = "an A/B file holds one record per configuration, side and round; pass one written by `opperf ab`"
"""What to do about an A/B file that repeats a configuration in one side's round."""


def _run(
    name: str,
    path: str,
    results: Sequence[object],
    found: Mapping[str, Any] | None = None,
    repeats: str = MERGE_FIX,
) -> Run:
    return Run(path=name, records=records_by_key(path, results, repeats), fingerprint=dict(found or {}))


def records_by_key(path: str, results: Sequence[object], repeats: str = MERGE_FIX) -> dict[Key, Record]:
    """The records of a results list (of the file at ``path``) by their keys; OpperfError naming the
    record that cannot be read or that repeats a configuration (``repeats`` says what to do)."""
    records: dict[Key, Record] = {}
    for index, record in enumerate(results):
        parsed = read_record(record, f"{path}: results[{index}]", path)
        if parsed.key in records:
            raise OpperfError(
                f"{path}: results[{index}] repeats {parsed.key.op} {parsed.key.inputs}; {repeats}"
            )
        records[parsed.key] = parsed
    return records


def differences(
    runs: Sequence[Run],
    fields: Sequence[str],
    of: Callable[[Run], Mapping[str, Any]] = lambda run: run.fingerprint,
) -> list[str]:
    """How the runs' fingerprints (or what ``of`` reads of them) differ in ``fields``, each as ``field
    'a' (file) vs 'b' (file)``. A field a file does not record (null: written before opperf recorded
    it) differs from nothing: unknown is not different."""
    found = []
    for name in fields:
        values: dict[str, str] = {}
        for run in runs:
            if of(run).get(name) is not None:
                values.setdefault(json.dumps(of(run)[name], sort_keys=True), run.path)
        if len(values) > 1:
            found.append(f"{name} " + " vs ".join(f"{value} ({path})" for value, path in values.items()))
    return found


def read_side(paths: Sequence[str]) -> tuple[Run, ...]:
    """The runs of one side, checked to be repeats of one sweep: every file's records carry the
    same settings (each setting of the row key, ``key.SETTINGS``)."""
    if not paths:
        raise OpperfError("a side of the diff names no result file; pass FILE or FILE1,FILE2,...")
    runs = tuple(read_run(path) for path in paths)
    first = runs[0]
    frameworks = differences(runs, ("framework",))
    if frameworks:
        raise OpperfError(
            f"a side mixes frameworks ({frameworks[0]}); the files of one side must be repeats of one "
            "sweep: pass each framework's files as a side of its own"
        )
    reference = settings(first)
    for run in runs[1:]:
        found = settings(run)
        if found != reference:
            names = sorted({name for name, _ in found ^ reference})
            raise OpperfError(
                f"{run.path}: {', '.join(names)} differ from {first.path}; the files of one side "
                "must be repeats of one sweep, so pass the other settings as the other side"
            )
    return runs


def check_copies(runs: Sequence[Run]) -> None:
    """OpperfError where two of ``runs`` share a run's measurements: a file named twice, a copy of
    one (the same start and the same records), or a part of one (a shard beside the file it was
    merged into: half or more of the smaller one's records, each with every sample alike where a
    phase holds ``SAMPLES_ALIKE`` distinct values, which separate runs never share). Counted as two
    runs it claims a replication that never happened (and drops the warning that one run a side gives
    indicative verdicts); on both sides it compares a run with itself."""
    for index, run in enumerate(runs):
        for earlier in runs[:index]:
            if _one_run(earlier, run):
                raise OpperfError(
                    f"{run.path} repeats the measurements of {earlier.path} (the same file, a copy, or a "
                    "part of it: a shard beside the merged file); one run counted twice says nothing "
                    "more: pass the result files of separate runs"
                )


SAMPLES_ALIKE = 3
"""Distinct sample values a phase must hold for two records alike in every sample to be one
measurement: separate runs of an operator a tick or two long read alike (``shape_array`` 2, 1, 1 us
under MXNet's 1 us profiler in two sweeps of ``--runs 3`` here), as a single pass can."""


def _one_run(first: Run, second: Run) -> bool:
    """Whether ``first`` and ``second`` hold one run's measurements (``check_copies``)."""
    shared = [key for key in first.records if key in second.records]
    alike = [key for key in shared if first.records[key].phases == second.records[key].phases]
    if not alike:
        return False
    if first.started == second.started and len(alike) == len(first.records) == len(second.records):
        return True
    sampled = [
        key
        for key in alike
        if any(len(set(phase.samples)) >= SAMPLES_ALIKE for phase in first.records[key].phases.values())
    ]
    return 2 * len(sampled) >= min(len(first.records), len(second.records))


def settings(run: Run) -> frozenset[tuple[str, object]]:
    """The (setting, value) pairs of the row keys of ``run``'s records (``key.SETTINGS``)."""
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
    return max(statuses, key=SEVERITY.__getitem__)
