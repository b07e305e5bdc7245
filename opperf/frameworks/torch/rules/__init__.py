"""PyTorch's input rules: which inputs each operator is benchmarked with, for a size profile.

Operators that cannot run standalone are skipped with a stated reason (``SKIP_REASONS``); hand-written
layer rules keyed by operator name win over inputs derived from the aten schema (``derived``).
"""

from opperf.frameworks.torch.rules.derived import DEVICE_SKIP_REASONS, SKIP_REASONS, inputs_for

__all__ = ["DEVICE_SKIP_REASONS", "SKIP_REASONS", "inputs_for"]
