"""Results documents as tests shape them."""

from __future__ import annotations

import copy


def another_run(document: dict, hour: int = 23) -> dict:
    """A copy of ``document`` that reads as a run of its own: started at another time (``diff``
    refuses a run and its copy as two runs: the same start and the same measurements)."""
    document = copy.deepcopy(document)
    started = document["environment"].get("started") or "2026-01-01T00:00:00+00:00"
    document["environment"]["started"] = f"{started[:11]}{hour:02d}{started[13:]}"
    return document
