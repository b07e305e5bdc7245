"""A sweep's results document: its measurements assessed against the sweep's calibrations (flags and
roofline, ``opperf.measure.roofline.assessment``), then written as records with the environment and
the coverage (``opperf.results.document``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from opperf.measure.roofline.assessment import Calibration, assess
from opperf.results.coverage import Coverage
from opperf.results.document import SCHEMA_VERSION, record
from opperf.results.measurement import Measurement


def build_document(
    measurements: Iterable[Measurement],
    environment: dict[str, Any],
    registered: int,
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, object]:
    """The results document of ``measurements``: each assessed, then recorded; the coverage of the
    ``registered`` operators (``aliases`` folded)."""
    measurements = list(measurements)
    calibration = Calibration.from_environment(environment)
    return {
        "schema_version": SCHEMA_VERSION,
        "environment": environment,
        "coverage": Coverage.of(measurements, registered, aliases).to_json(),
        "results": [record(m, assess(m, calibration)) for m in measurements],
    }
