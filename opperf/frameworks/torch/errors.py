"""How a PyTorch error reads in a result: its type and first meaningful line."""

from __future__ import annotations

MAX_REASON_CHARS = 400


def describe_error(error: BaseException) -> str:
    """``Type: first non-empty line`` of an error, the line cut at ``MAX_REASON_CHARS``."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return f"{type(error).__name__}: {(lines[0] if lines else '')[:MAX_REASON_CHARS]}"
