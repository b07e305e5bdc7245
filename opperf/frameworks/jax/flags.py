"""JAX's own command-line flags: none so far; its thread count is the shared ``--threads``."""

from __future__ import annotations

from opperf.frameworks import FrameworkFlag

FLAGS: tuple[FrameworkFlag, ...] = ()
