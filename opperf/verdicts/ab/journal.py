"""An A/B job's journal: one JSON line per measured pair, so a job stopped part way (a killed CI
step, a SIGTERM, a full disk) continues with ``opperf ab --resume`` instead of starting over.

The journal lives beside the A/B file (``AB.json.journal.jsonl``, as a sweep's does) and is the
sweep journal's format (``opperf.sweep.checkpoint``) with kind ``ab``: the header holds what must match to
resume (the run options, the selection, both builds, the rounds), each later line a pair of
records in the results-file format with its round. A resumed job replays its rounds: a pair the
journal holds is taken from it, in the same order and with the same decisions between rounds (the
diff of the rounds so far, ``opperf.verdicts.ab.sequential``), and only what it lacks is measured.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from opperf.results.document import measurement_from_record, record
from opperf.results.key import Key, record_key
from opperf.results.load import SIDES
from opperf.results.measurement import BenchmarkSpec, Measurement, Status
from opperf.results.schema import record_problem
from opperf.sweep.checkpoint import check_settings, read_lines
from opperf.utils.errors import OpperfError

KIND = "ab"


@dataclass(frozen=True)
class JournaledPair:
    """A pair the journal holds: its round, each side's measurement and the round each side's
    preparation came from."""

    round: int
    base: Measurement
    new: Measurement
    prepared_in: Mapping[str, int]


def spec_key(spec: BenchmarkSpec) -> Key:
    """The row key of a configuration, as its records have it: how the journal's pairs are matched
    to the configurations the resumed job plans."""
    return record_key(record(Measurement(spec, Status.SKIPPED)))


def pair_entry(round_index: int, base: Measurement, new: Measurement, prepared_in: Mapping[str, int]) -> dict:
    """A pair as a journal line."""
    return {"round": round_index, "base": record(base), "new": record(new), "prepared_in": dict(prepared_in)}


def pair_problem(entry: object, rounds: object) -> str | None:
    """Why a journal line is no pair of this job, or None: a round within the job's ``rounds``, both
    sides' records readable as a results file's (the file a job writes is checked alike), one
    configuration on both sides (a side's options may differ, its operator and inputs may not), and
    each side's preparation from a round at most this one."""
    if not isinstance(entry, dict) or not all(
        name in entry for name in ("round", "base", "new", "prepared_in")
    ):
        return "not a pair"
    round_index, prepared = entry["round"], entry["prepared_in"]
    if not _whole(round_index) or not (isinstance(rounds, int) and round_index < rounds):
        return f"round {round_index!r}"
    problem = record_problem(entry["base"]) or record_problem(entry["new"])
    if problem is not None:
        return problem
    if record_key(entry["base"]).identity != record_key(entry["new"]).identity:
        return "the sides' records are of two configurations"
    if not isinstance(prepared, dict) or not all(
        side in SIDES and _whole(index) and index <= round_index for side, index in prepared.items()
    ):
        return f"prepared_in {prepared!r}"
    return None


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def load_pairs(
    path: str, settings: dict[str, Any], *, resume: bool, fresh: bool
) -> dict[tuple[Key, int], JournaledPair]:
    """The pairs an interrupted job journaled at ``path``, by configuration and round, when resuming;
    none otherwise. An existing journal is never overwritten by accident (without --resume or --fresh
    it is refused), and one made with other settings is refused by name."""
    if not resume:
        if os.path.exists(path) and not fresh:
            raise OpperfError(
                f"{path} holds an interrupted A/B job: continue it with --resume, or discard it with --fresh"
            )
        return {}
    lines = read_lines(path, KIND)
    if lines is None:
        print(f"note: --resume: no journal at {path}; the job starts from the beginning", file=sys.stderr)
        return {}
    check_settings(path, lines, settings)
    pairs: dict[tuple[Key, int], JournaledPair] = {}
    damaged = 0
    for entry in lines.entries:
        problem = pair_problem(entry, settings.get("rounds"))
        key = (record_key(entry["base"]), entry["round"]) if problem is None else None
        if key is None or key in pairs:  # damaged, or a second line for one pair: measured again
            damaged += 1
            continue
        prepared = {side: int(index) for side, index in entry["prepared_in"].items()}
        pairs[key] = JournaledPair(
            entry["round"],
            measurement_from_record(entry["base"]),
            measurement_from_record(entry["new"]),
            prepared,
        )
    said = [f"{damaged} damaged lines skipped (those pairs run again)"] if damaged else []
    said += ["its torn last line is cut off"] if lines.torn else []
    if said:
        print(f"note: {path}: {'; '.join(said)}", file=sys.stderr)
    return pairs
