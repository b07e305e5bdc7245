"""The one exception type users see: a bad request, named with its fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import TypeVar

T = TypeVar("T")


class OpperfError(ValueError):
    """A request opperf cannot serve: unknown operator, malformed input, unavailable device, ...

    The message names the offending value and how to fix it; the CLI prints it as ``error: ...``.
    """


class FixedThreadsError(OpperfError):
    """A framework already runs in this process with another intra-op thread count, which it fixed as
    it started (JAX's CPU pool): refused where this process measures, of no matter where workers do."""


def suggest(name: str, candidates: Iterable[str]) -> str:
    """'; did you mean a, b?' for the names closest to ``name``, or ''."""
    close = difflib.get_close_matches(name, list(candidates), n=5, cutoff=0.6)
    return f"; did you mean {', '.join(close)}?" if close else ""


def lookup(known: Mapping[str, T], name: str, kind: str) -> T:
    """``known[name]``; an OpperfError naming the unknown ``kind`` and the closest names otherwise."""
    if name not in known:
        raise OpperfError(f"unknown {kind} {name!r}{suggest(name, known)}")
    return known[name]
