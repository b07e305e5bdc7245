"""MXNet's errors as one line a record can carry: the exception's type and the line of its message
that says what failed (MXNet's messages run to a C++ stack trace)."""

from __future__ import annotations


def _first_line(message: str) -> str:
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    for line in lines:
        if "Check failed" in line or "Error" in line or "error" in line:
            return line[:400]
    return lines[0][:400] if lines else message[:400]


def describe_error(error: BaseException) -> str:
    line = _first_line(str(error))
    name = type(error).__name__
    return line if line.startswith(f"{name}: ") else f"{name}: {line}"  # MXNet's lines often name it
