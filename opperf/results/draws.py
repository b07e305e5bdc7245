"""How a run draws its inputs, as its records say: the vocabulary of ``--values`` (how the values of
floating-point inputs are distributed) and ``--layout`` (how dense inputs are laid out in memory).
Drawing them is ``opperf.operators.values`` and ``opperf.operators.layouts``; the names live here,
below the options that take them.
"""

from __future__ import annotations

import math

UNIFORM_POSITIVE = "uniform-positive"
NORMAL = "normal"
UNIFORM = "uniform"
WITH_ZEROS = "with-zeros"
WITH_NAN_INF = "with-nan-inf"
SUBNORMAL = "subnormal"
DISTRIBUTIONS: dict[str, str] = {
    UNIFORM_POSITIVE: "uniform in the rule's range, [0.1, 1) unless it chose one",
    NORMAL: "standard normal: half negative, a few beyond +-3 (indices: concentrated about the middle "
    "of their range)",
    UNIFORM: "uniform in [-1, 1), or in [LOW, HIGH) as uniform:LOW,HIGH",
    WITH_ZEROS: f"as {UNIFORM_POSITIVE}, with a quarter of the elements exactly zero",
    WITH_NAN_INF: f"as {UNIFORM_POSITIVE}, with 5% NaN, 5% +inf and 5% -inf",
    SUBNORMAL: "subnormal numbers of the dtype: uniform in [0, its smallest normal number)",
}
"""``--values``: each distribution and what it draws."""

DEFAULT_UNIFORM_RANGE = (-1.0, 1.0)
ZERO_FRACTION = 0.25
NON_FINITE_FRACTION = 0.05
"""Of each of NaN, +inf and -inf, with ``with-nan-inf``."""
INDEX_SPREAD = 1 / 16
"""With ``normal``, indices are normal about the middle of their range, this fraction of it wide."""


def parse_distribution(text: str) -> str:
    """A ``--values`` setting in its one spelling (the row key compares it as text): a name of
    ``DISTRIBUTIONS``, or ``uniform:LOW,HIGH`` with LOW < HIGH, both finite; raises ValueError."""
    name, _, bounds = text.strip().partition(":")
    if name not in DISTRIBUTIONS:
        raise ValueError(f"unknown value distribution {name!r}; choose one of: {', '.join(DISTRIBUTIONS)}")
    if not bounds:
        return name
    if name != UNIFORM:
        raise ValueError(f"only uniform takes a range (uniform:LOW,HIGH), not {name}")
    low, high = uniform_range(f"{name}:{bounds}")
    return f"{UNIFORM}:{low:g},{high:g}"


def check_distribution(value: object) -> None:
    """Raise ValueError unless ``value`` is a ``--values`` setting in its one spelling."""
    if not isinstance(value, str) or parse_distribution(value) != value:
        raise ValueError(f"must be one of {', '.join(DISTRIBUTIONS)} (or uniform:LOW,HIGH), got {value!r}")


def uniform_range(distribution: str) -> tuple[float, float]:
    """The bounds of ``uniform`` or ``uniform:LOW,HIGH``; raises ValueError for bounds it cannot take."""
    _, _, bounds = distribution.partition(":")
    if not bounds:
        return DEFAULT_UNIFORM_RANGE
    parts = bounds.split(",")
    try:
        low, high = (float(part) for part in parts)
    except ValueError:
        raise ValueError(f"uniform takes two numbers, uniform:LOW,HIGH, not {bounds!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"uniform:LOW,HIGH needs finite bounds with LOW < HIGH, not {bounds!r}")
    return low, high


CONTIGUOUS = "contiguous"
LAYOUTS: dict[str, str] = {
    CONTIGUOUS: "row-major, densely packed (every framework)",
    "transposed": "the transpose of a contiguous tensor: column-major over the last two axes (rank 2 and up)",
    "strided": "a non-contiguous view: every second element along the last axis of a tensor twice as wide",
    "channels-last": "channels-last memory: NHWC for rank 4, NDHWC for rank 5",
}
"""``--layout``: each layout and what it makes of a tensor."""
