"""Results documents as tests shape them."""

from __future__ import annotations

import copy

APART = 1e-6
"""How far another run's samples sit from the run it is made from, per hour of its start: far enough
that no sample is the same (``diff`` refuses one run's measurements counted twice), too little to
move any verdict."""


def another_run(document: dict, hour: int = 23) -> dict:
    """A copy of ``document`` that reads as a run of its own: started at ``hour`` of its day, every
    sample ``(hour + 1) * APART`` of itself apart (runs made with other hours differ from each other)."""
    document = copy.deepcopy(document)
    started = document["environment"].get("started") or "2026-01-01T00:00:00+00:00"
    document["environment"]["started"] = f"{started[:11]}{hour:02d}{started[13:]}"
    factor = 1 + (hour + 1) * APART
    for record in document["results"]:
        for phase in ("forward", "backward"):
            if isinstance(record.get(phase), dict) and record[phase].get("samples_s"):
                record[phase]["samples_s"] = [sample * factor for sample in record[phase]["samples_s"]]
    return document
