"""Results files of earlier versions, read as the current one: each migration is a pure function from
one schema version's document to the next's, and ``migrate`` applies them in order.

Version 1 grew by fields over many releases (``cache``, ``threads``, ``mode``, ``stage``, ``variant``,
``compile_s``, ``stage_check``, ``timer``, ``host_latency``, ``device_work``, ``gpu_state``), and a
record of an early release carries only some of its options (``run_backward`` sat in the environment).
Readers guessed the missing ones each in its own way. Version 2 states them in every record; a
version-1 file is migrated once, where it is read, to what its writer implied: an option a record
lacks is the one its file's environment names, else the value that release always used, which is the
option's default (a file from before ``--cache`` was measured hot); ``mode`` follows ``run_backward``;
``stage`` is ``eager``; fields that a release did not measure (a timer kind, host latency, device
work, GPU state) are null: not known, rather than guessed.

Version 3 keys two more options, ``values`` (how input values are distributed) and ``layout`` (how
dense inputs are laid out in memory): every record states them, and every earlier release drew
uniform-positive values into contiguous tensors, their defaults, which a version-2 record gets.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from opperf.results.options import KEYED, RunOptions

CURRENT = 3
"""The schema version this opperf writes."""

_DEFAULTS: Mapping[str, Any] = {**RunOptions().settings(), "profiler": "native"}
"""What a version-1 record left out was measured with: the options' defaults then (every version-1
release timed by the framework's profiler unless told otherwise; only MXNet and PyTorch wrote one)."""

_NOT_MEASURED: tuple[str, ...] = (
    "variant",
    "compile_s",
    "stage_check",
    "timer",
    "host_latency",
    "gpu_state",
    "backward_reason",
)
"""Record fields a version-1 release may not have written because it did not measure them: null."""


def _record_v1_to_v2(record: object, environment: Mapping[str, Any]) -> object:
    """One version-1 record with every keyed option, its mode and stage stated (others left as
    they are; a record that is not an object is left for the schema check to name)."""
    if not isinstance(record, dict):
        return record
    for name in KEYED:
        if name not in record:
            record[name] = environment.get(name, _DEFAULTS[name])
    if record.get("mode") is None:
        record["mode"] = "training" if record.get("run_backward", True) else "inference"
    record.setdefault("stage", "eager")
    for name in _NOT_MEASURED:
        record.setdefault(name, None)
    return record


def _v1_to_v2(document: dict[str, Any]) -> dict[str, object]:
    environment = document.get("environment")
    environment = environment if isinstance(environment, dict) else {}
    for section in ("results", "skipped"):
        records = document.get(section)
        if isinstance(records, list):
            document[section] = [_record_v1_to_v2(record, environment) for record in records]
    document["schema_version"] = 2
    return document


def _v2_to_v3(document: dict[str, Any]) -> dict[str, object]:
    for section in ("results", "skipped"):
        records = document.get(section)
        if isinstance(records, list):
            for record in records:
                if isinstance(record, dict):
                    for name in ("values", "layout"):
                        record.setdefault(name, _DEFAULTS[name])
    document["schema_version"] = 3
    return document


MIGRATIONS: Mapping[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2, 2: _v2_to_v3}
"""Each version's migration to the next."""


def migrate(document: dict[str, Any]) -> dict[str, object]:
    """``document`` (a results, A/B or comparison document of any version this opperf knows) as a
    document of ``CURRENT``, copied where a migration changes it, with ``migrated_from`` naming the
    version it was written in and ``written_digest`` identifying it as written (``digest``). A
    document already current is returned as it is; an unknown version too (the caller names it)."""
    version = document.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int) or version not in MIGRATIONS:
        return document
    migrated = copy.deepcopy(document)
    while migrated.get("schema_version") in MIGRATIONS:
        migrated = MIGRATIONS[migrated["schema_version"]](migrated)
    migrated["migrated_from"] = version
    migrated["written_digest"] = digest(document)
    return migrated


def digest(document: Mapping[str, object]) -> str:
    """What identifies a document as it was written: the SHA-256 of its canonical JSON. A migrated
    document keeps its written form's (``written_digest``), so a history store that holds the file
    from before this opperf read it migrated finds it there, and adds it once."""
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()
