"""The configurations a sweep replays (``--configs``): opperf's configs files and DLOP-Bench files
(``dlop:PATH``) read alike, merged, and checked to be of one framework."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from opperf.results.configs import ArgumentLookup, Configuration, header_of, merge, read
from opperf.results.dlop import FRAMEWORK, is_dlop, read_dlop
from opperf.utils.errors import OpperfError


def load_replay(
    paths: Sequence[str], framework: str, arguments: ArgumentLookup, canonical: Mapping[str, str]
) -> tuple[Configuration, ...]:
    """The merged configurations of the configs files at ``paths`` (``dlop:PATH`` for a DLOP-Bench
    file) for a ``framework`` sweep, each operator under its canonical name (``canonical`` maps every
    registered name to it); a file of another framework is refused before its lines are read."""
    files = [
        read_dlop(path, arguments, framework) if is_dlop(path) else read(path, arguments, framework)
        for path in paths
    ]
    # Canonical names first: a configuration named by an alias in one line and by its operator in
    # another is one configuration, measured once with its counts added.
    named = [
        replace(f, configurations=tuple(replace(c, op=canonical.get(c.op, c.op)) for c in f.configurations))
        for f in files
    ]
    return merge(named)


def replay_framework(paths: Sequence[str]) -> str:
    """The framework the configs files at ``paths`` were captured with (from their headers), for a
    replay that names none; OpperfError when they disagree."""
    frameworks = {path: FRAMEWORK if is_dlop(path) else header_of(path).framework for path in paths}
    if len(set(frameworks.values())) > 1:
        listed = ", ".join(f"{path} ({framework})" for path, framework in frameworks.items())
        raise OpperfError(f"configs files of different frameworks: {listed}; replay one framework at a time")
    return next(iter(frameworks.values()))
