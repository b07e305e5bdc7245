"""Words for messages and reports: counted nouns ("1 category", "2 categories", never "1 categories"),
alternatives ("jax, mxnet or torch") and a value from a file cut short ("[1, 2, ...")."""

from __future__ import annotations

from collections.abc import Sequence


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, in the plural (``plural``, else ``noun`` + s, y -> ies) unless one.

    >>> counted(1, "category"), counted(2, "category"), counted(3, "thread")
    ('1 category', '2 categories', '3 threads')
    """
    if count == 1:
        return f"{count} {noun}"
    if plural is None:
        plural = f"{noun[:-1]}ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else f"{noun}s"
    return f"{count} {plural}"


def one_of(names: Sequence[str]) -> str:
    """``names`` as alternatives.

    >>> one_of(["jax", "mxnet", "torch"]), one_of(["torch"]), one_of([])
    ('jax, mxnet or torch', 'torch', 'none')
    """
    if not names:
        return "none"
    return " or ".join(filter(None, (", ".join(names[:-1]), names[-1])))


def clipped(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters, the cut marked: a value from a file, quoted in a message.

    >>> clipped("abc"), clipped("x" * 70, 10)
    ('abc', 'xxxxxxx...')
    """
    return text if len(text) <= limit else f"{text[: limit - 3]}..."
