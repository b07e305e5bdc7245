"""Results documents as tests shape them."""

from __future__ import annotations

import copy

APART = 1 + 1e-6
"""How far another run's samples sit from the run it is made from: far enough that no sample is the
same (``diff`` refuses one run's measurements counted twice), too little to move any verdict."""


def another_run(document: dict, hour: int = 23) -> dict:
    """A copy of ``document`` that reads as a run of its own: started at another time, every sample
    a millionth apart."""
    document = copy.deepcopy(document)
    started = document["environment"].get("started") or "2026-01-01T00:00:00+00:00"
    document["environment"]["started"] = f"{started[:11]}{hour:02d}{started[13:]}"
    for record in document["results"]:
        for phase in ("forward", "backward"):
            if isinstance(record.get(phase), dict) and record[phase].get("samples_s"):
                record[phase]["samples_s"] = [sample * APART for sample in record[phase]["samples_s"]]
    return document
