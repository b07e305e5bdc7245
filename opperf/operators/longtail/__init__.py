"""Long-tail operators: composites of basic operators written in Python, as detection, segmentation
and NLP code writes them (box coders, IoU, focal losses, anchors, masks, greedy NMS).

They have no kernel of their own, which is why they are slow eagerly and why graph compilers gain on
them (LongTail-Bench's thesis). This package is the framework-free half: the catalogue (name, DLOP-Bench
tags, origin and source attribution, what it computes, its input configurations as data) and the
records that put the operators into each framework's registry as category ``longtail``. Each framework
implements every operator once, from its definition, in ``opperf/frameworks/<fw>/longtail.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from opperf.operators.info import ArgKind, Argument, OpInfo
from opperf.operators.longtail.entry import LongTailOp
from opperf.results.measurement import InputValue, TensorSpec
from opperf.utils.errors import OpperfError, lookup, suggest

CATEGORY = "longtail"
NAMESPACE = "opperf.operators.longtail"
"""Where the operators are "called from": opperf's own implementations, one per framework."""

TAGS: tuple[str, ...] = (
    "ViewAttribute",
    "Reduce",
    "IfElseBranch",
    "ForLoop",
    "AdvancedIndexing",
    "InputAware",
    "ThirdPartyCodes",
    "BuiltInDataStructure",
    "Broadcast",
    "Customized",
)
"""DLOP-Bench's syntax-feature vocabulary (its counts over 101 samples: 62, 47, 47, 19, 18, 15, 7, 6, 6,
3). ``InputAware``: the output shape depends on input values; ``ForLoop``: a Python loop;
``IfElseBranch``: Python control flow on values or shapes."""


def catalogue() -> tuple[LongTailOp, ...]:
    """Every long-tail operator, in the catalogue's order."""
    from opperf.operators.longtail.entries import OPERATORS

    return OPERATORS


def implementations(namespace: Mapping[str, Any]) -> dict[str, Callable[..., object]]:
    """Long-tail operator name -> its function in a framework module's ``namespace`` (its
    ``globals()``): each framework implements every catalogue entry under the entry's name."""
    missing = [op.name for op in catalogue() if not callable(namespace.get(op.name))]
    if missing:
        raise ImportError(f"long-tail operators without an implementation: {', '.join(missing)}")
    return {op.name: namespace[op.name] for op in catalogue()}


def backward_refusal(namespace: str, name: str) -> str | None:
    """Why long-tail operator ``name`` (in ``namespace``) gets no backward pass; None for any other."""
    if namespace == NAMESPACE and not entry(name).differentiable:
        return "piecewise constant in every input: its gradient is zero wherever it exists"
    return None


def by_name() -> dict[str, LongTailOp]:
    return {op.name: op for op in catalogue()}


def entry(name: str) -> LongTailOp:
    """The catalogue entry ``name``; OpperfError with the closest names otherwise."""
    return lookup(by_name(), name, "long-tail operator")


def check_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """``tags`` if each is in the vocabulary; OpperfError naming the vocabulary otherwise."""
    tags = tuple(tags)
    for tag in tags:
        if tag not in TAGS:
            raise OpperfError(f"unknown tag {tag!r}{suggest(tag, TAGS)} (tags: {', '.join(TAGS)})")
    return tags


def has_tags(name: str, tags: Sequence[str], every: bool) -> bool:
    """Whether operator ``name`` carries any of ``tags`` (every one of them if ``every``); operators
    outside the catalogue carry none."""
    found = by_name().get(name)
    if found is None:
        return False
    test = all if every else any
    return test(tag in found.tags for tag in tags)


def members(tag: str) -> tuple[str, ...]:
    """The operators carrying ``tag``, in catalogue order."""
    return tuple(op.name for op in catalogue() if tag in op.tags)


def _argument(name: str, value: InputValue) -> Argument:
    if isinstance(value, TensorSpec):
        kind = ArgKind.TENSOR
    elif isinstance(value, tuple) and value and all(isinstance(v, TensorSpec) for v in value):
        kind = ArgKind.TENSOR_LIST
    elif isinstance(value, bool):
        kind = ArgKind.BOOL
    elif isinstance(value, int):
        kind = ArgKind.INT
    elif isinstance(value, float):
        kind = ArgKind.FLOAT
    elif isinstance(value, str):
        kind = ArgKind.STRING
    else:
        kind = ArgKind.FLOAT_TUPLE
    return Argument(name=name, kind=kind, required=True, type_string=kind.value)


def operators(framework: str) -> tuple[OpInfo, ...]:
    """The catalogue as registry records of ``framework``: category ``longtail``, namespace
    ``opperf.operators.longtail``, the arguments its first configuration names."""
    return tuple(
        OpInfo(
            name=op.name,
            aliases=(),
            namespaces=(NAMESPACE,),
            function_name=op.name,
            arguments=tuple(_argument(n, v) for n, v in op.configure(*op.small).items()),
            has_backward=op.differentiable,
            category=CATEGORY,
            framework=framework,
        )
        for op in catalogue()
    )


def inputs_for(name: str) -> list[dict[str, InputValue]]:
    """The sweep's input configurations of long-tail operator ``name``."""
    return entry(name).configurations()


def tag_counts(names: Iterable[str]) -> Mapping[str, tuple[str, ...]]:
    """Tag -> the operators among ``names`` that carry it, tags in vocabulary order (absent ones left
    out)."""
    chosen = set(names)
    return {tag: found for tag in TAGS if (found := tuple(n for n in members(tag) if n in chosen))}
