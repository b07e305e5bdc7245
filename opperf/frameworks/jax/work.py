"""JAX operators' work counters (FLOPs and bytes for roofline context), by operator name: none yet.

XLA's cost analysis (``jit(f).lower(...).compile().cost_analysis()``) reports both for any operator
and is the intended source; until it is read, JAX rows carry no roofline context. Importing this
module does not import JAX.
"""

from __future__ import annotations

from collections.abc import Mapping

from opperf.measure.roofline.work import Counter

COUNTERS: Mapping[str, Counter] = {}
"""Each counted operator's counter, by operator name."""
