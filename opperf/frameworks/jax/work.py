"""JAX operators' work counters (FLOPs and bytes for roofline context), by operator name: none.

A JAX configuration's work comes from XLA's cost analysis of the lowered call, read while the
session prepares it (``profiling.analyse``) and carried as ``Measurement.counted_work``; a counter
here would replace it for its operator. Importing this module does not import JAX.
"""

from __future__ import annotations

from collections.abc import Mapping

from opperf.measure.roofline.work import Counter

COUNTERS: Mapping[str, Counter] = {}
"""Each counted operator's counter, by operator name."""
