"""How a JAX error reads in a result: its type and first meaningful line (JAX's own tracebacks and
the "--------------------" filter notes left out)."""

from __future__ import annotations

MAX_REASON_CHARS = 400
_NOISE = ("-----", "For simplicity, JAX has removed", "The stack trace below excludes")


def describe_error(error: BaseException) -> str:
    """``Type: first meaningful line`` of an error, the line cut at ``MAX_REASON_CHARS``."""
    lines = [
        line.strip()
        for line in str(error).strip().splitlines()
        if line.strip() and not line.strip().startswith(_NOISE)
    ]
    return f"{type(error).__name__}: {(lines[0] if lines else '')[:MAX_REASON_CHARS]}"
