"""Result files put back together: the shards of one sweep (``sweep --shard K/N``) into one file.

Files are merged only when they are one sweep's parts: the same framework build, device, dtype,
profiler, sampling and size settings (``MATCHING``). Records are kept as each shard wrote them
(their flags and roofline were judged against that shard's machine); a configuration that two files
both measured is refused, and so are shards of different splits. Coverage is counted again over the
whole. Imports no framework.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from typing import Any

from opperf.results.coverage import Coverage
from opperf.results.document import SCHEMA_VERSION, is_ab, measurement_from_record
from opperf.results.environment import MACHINE_FIELDS, fingerprint
from opperf.results.key import Key, record_key
from opperf.results.options import RunOptions, SweepFactors
from opperf.sweep.checkpoint import RECORDED_AS_SWEPT
from opperf.sweep.shards import Shard
from opperf.utils.errors import OpperfError

MATCHING: tuple[str, ...] = (
    *(option.name for option in (*fields(RunOptions), *fields(SweepFactors))),
    "framework_version",
    "framework_settings",
    "size_profile",
    "selection",
    "isolated",
)
"""Environment settings every merged file must share: every run option and sweep factor (the
environment records them all), the framework's version and settings, the size profile, the
selection the split was made of (shards of another ``--ops`` read as a whole split that was not),
and whether workers measured (in-process medians differ)."""


PART_FIELDS = (
    "shard", "batch_job", "device_workers", "started", "finished", "wall_seconds", "interrupted",
    "cpu_model", "fingerprint", "timeout_s", "worker_cpus",
)  # fmt: skip
"""What the merged file keeps of each part's environment (``merged_from``): where and when it ran,
whether it was stopped, its time limit and the CPUs its workers were pinned to (settings that decide
what completes and where, not what a measurement means, so parts may differ in them)."""

FIX = "pass the JSON results files of one sweep's shards (`opperf sweep --shard K/N`)"
"""Which files merge takes, for a message about one it cannot read."""


def merge(documents: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """One results document from ``(path, document)`` pairs of one sweep's parts."""
    if len(documents) < 2:
        raise OpperfError("merge needs two or more result files, e.g. the shards of one sweep")
    for path, document in documents:
        if is_ab(document):
            raise OpperfError(f"{path}: an A/B file (opperf ab), not a sweep's shard; {FIX}")
    first_path, first = documents[0]
    reference = first["environment"]
    for path, document in documents[1:]:
        environment = document["environment"]
        differing = [name for name in MATCHING if environment.get(name) != reference.get(name)]
        if differing:
            shown = ", ".join(f"{n} {reference.get(n)!r} vs {environment.get(n)!r}" for n in differing)
            raise OpperfError(
                f"{path} was not measured like {first_path} ({shown}); merge only parts of one sweep"
            )
    _check_machines(documents)
    parts = [part for path, document in documents for part in _parts(path, document)]
    _check_shards([str(part["file"]) for part in parts], [part.get("shard") for part in parts])
    results: list[Mapping[str, Any]] = []
    seen: dict[Key, str] = {}
    for path, document in documents:
        environment = document["environment"]
        for record in document["results"]:
            said = [
                name
                for name in RECORDED_AS_SWEPT
                if record.get(name) is not None and name in environment and record[name] != environment[name]
            ]
            if said:
                name = said[0]
                raise OpperfError(
                    f"{path}: its {record.get('op')} record says {name} {record[name]!r} where the file was "
                    f"measured with {environment[name]!r}; {FIX}"
                )
            key = record_key(record)
            if key in seen:
                raise OpperfError(
                    f"{path} and {seen[key]} both measured {record.get('op')} {record.get('inputs')}; "
                    "merge the parts of one sweep, not repeats (diff takes repeats as one side)"
                )
            seen[key] = path
            results.append(record)
    counted = [_coverage(path, document) for path, document in documents]
    known = {found: path for (path, _), (found, _) in zip(documents, counted, strict=True) if found}
    if len(known) > 1:  # one framework build registers one set of names (0: a file that does not say)
        shown = " vs ".join(f"{found} ({path})" for found, path in known.items())
        raise OpperfError(f"the files count different registered names ({shown}); {FIX}")
    registered = max(known, default=0)
    aliases = {op: names for _, each in counted for op, names in each.items()}
    coverage = Coverage.of([measurement_from_record(dict(r)) for r in results], registered, aliases)
    times = [(d["environment"].get("started"), d["environment"].get("finished")) for _, d in documents]
    environment = {
        **reference,
        "shard": None,
        "batch_job": None,
        "device_workers": None,
        "started": min((s for s, _ in times if isinstance(s, str)), default=reference.get("started")),
        "finished": max((f for _, f in times if isinstance(f, str)), default=reference.get("finished")),
        "wall_seconds": sum(float(d["environment"].get("wall_seconds") or 0) for _, d in documents),
        "interrupted": any(part.get("interrupted") is True for part in parts),
        "timeout_s": _longest_limit(part.get("timeout_s") for part in parts),
        "worker_cpus": _same_or_none(part.get("worker_cpus") for part in parts),
        "merged_from": parts,
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "environment": environment,
        "coverage": coverage.to_json(),
        "results": results,
    }


def _longest_limit(limits: Iterable[object]) -> float | None:
    """The merged file's time limit: the longest of its parts' (None, no limit, where one had none);
    each part's own stays in ``merged_from``."""
    found = list(limits)
    if any(limit is None for limit in found):
        return None
    return max(float(limit) for limit in found if isinstance(limit, int | float))


def _same_or_none(values: Iterable[object]) -> object:
    """The parts' one value, or None where they differ (each part's own stays in ``merged_from``)."""
    found = list(values)
    return found[0] if all(value == found[0] for value in found) else None


def _parts(path: str, document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sweeps a file holds, as ``merged_from`` keeps them: a merged file's own parts (so a split
    merged in part can be completed, its missing shards still known), else the file itself."""
    environment = document["environment"]
    merged = environment.get("merged_from")
    if merged:
        return [{**part, "file": part.get("file") or path} for part in merged]
    return [{key: environment.get(key) for key in PART_FIELDS} | {"file": path}]


def _check_machines(documents: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
    """Refuse parts measured on different machines (CPU, GPUs: ``MACHINE_FIELDS``; a field a file does
    not record differs from nothing): a merged file names one machine, and ``diff`` would compare it
    with another file of that machine without a word."""
    for name in MACHINE_FIELDS:
        seen: dict[str, str] = {}
        for path, document in documents:
            value = fingerprint(document["environment"]).get(name)
            if value is not None:
                seen.setdefault(json.dumps(value, sort_keys=True), path)
        if len(seen) > 1:
            shown = " vs ".join(f"{value} ({path})" for value, path in seen.items())
            raise OpperfError(
                f"the files were measured on different machines ({name} {shown}); a merged file names one "
                "machine: merge each machine's shards apart, and compare them with diff "
                "--allow-different-machines"
            )


def _check_shards(paths: Sequence[str], shards: Sequence[object]) -> None:
    """Shards of one split, each once; files without a shard (whole sweeps of disjoint selections)
    merge as they are."""
    named = [(path, _shard(path, shard)) for path, shard in zip(paths, shards, strict=True) if shard]
    if not named:
        return
    counts = {shard.count for _, shard in named}
    if len(counts) > 1 or len(named) != len(paths):
        raise OpperfError(
            "the files are shards of different splits ("
            + ", ".join(f"{p}: {s or 'none'}" for p, s in zip(paths, shards, strict=True))
            + "); merge the K/N shards of one sweep"
        )
    indices = [shard.index for _, shard in named]
    repeated = sorted({index for index in indices if indices.count(index) > 1})
    if repeated:
        raise OpperfError(f"shard {', '.join(map(str, repeated))} is given twice; pass each shard once")


def _shard(path: str, text: object) -> Shard:
    """The shard a file's environment names; OpperfError naming the file for anything but K/N with
    1 <= K <= N."""
    try:
        return Shard.parse(str(text))
    except OpperfError:
        raise OpperfError(f"{path}: its shard is {text!r}, not K/N with 1 <= K <= N; {FIX}") from None


def missing_shards(document: Mapping[str, Any]) -> list[str]:
    """The shards a merged split lacks (``K/N`` strings); empty when it is whole or was not sharded."""
    parts = [
        Shard.parse(str(entry["shard"]))
        for entry in document["environment"].get("merged_from", ())
        if entry.get("shard")
    ]
    if not parts:
        return []
    count = parts[0].count
    present = {part.index for part in parts}
    return [f"{index}/{count}" for index in range(1, count + 1) if index not in present]


def _coverage(path: str, document: Mapping[str, Any]) -> tuple[int, dict[str, tuple[str, ...]]]:
    """What a part's coverage block gives the merged one: how many operators are registered, and
    each operator's aliases; OpperfError naming the file where the block does not hold them."""
    coverage = document.get("coverage") or {}
    registered = coverage.get("registered", 0)
    if not isinstance(registered, int) or isinstance(registered, bool) or registered < 0:
        raise OpperfError(f"{path}: coverage.registered is {registered!r:.40}, not a count; {FIX}")
    aliases: dict[str, tuple[str, ...]] = {}
    for entry in coverage.get("by_operator") or ():
        op = entry.get("op") if isinstance(entry, dict) else None
        names = entry.get("aliases", []) if isinstance(entry, dict) else None
        if not (isinstance(op, str) and isinstance(names, list) and all(isinstance(n, str) for n in names)):
            raise OpperfError(f"{path}: coverage.by_operator holds {entry!r:.60}, not an operator; {FIX}")
        aliases[op] = tuple(names)
    return registered, aliases
