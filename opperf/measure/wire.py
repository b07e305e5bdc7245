"""Messages between a sweep and its worker processes as plain values: JSON of built-in types.

A pickle names the classes and modules of what it holds, so it loads only where they are the same:
a numpy-2 pickle of an ``np.float64`` does not load under numpy 1.23 (``No module named
'numpy._core'``), and a worker could not run in an interpreter with another numpy major (a JAX venv,
``ab --base-python`` of an older build). Here a message is a tree of JSON values: opperf's frozen
dataclasses and enums as tagged objects (``{"$type": ..., "fields": {...}}``), tuples, frozensets and
dicts tagged too, so they come back as they went; numpy scalars go as the Python numbers they hold,
and arrays never cross (``WireError``). A decoded message makes only the classes in ``TYPES``: what
arrives chooses no other code.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
from collections.abc import Iterator
from types import ModuleType
from typing import Any


class WireError(ValueError):
    """A value that has no plain form (an array, a function), or a message that names no known type."""


def _classes(module: ModuleType) -> Iterator[type]:
    for value in vars(module).values():
        own = isinstance(value, type) and value.__module__ == module.__name__
        if own and (dataclasses.is_dataclass(value) or issubclass(value, enum.Enum)):
            yield value


def _known() -> dict[str, type]:
    from opperf.measure import harness, messages, sampling, stages
    from opperf.operators import info
    from opperf.results import measurement, options
    from opperf.utils import devices, gpu_state

    modules = (measurement, options, sampling, stages, harness, messages, gpu_state, devices, info)
    return {f"{cls.__module__}.{cls.__qualname__}": cls for module in modules for cls in _classes(module)}


@functools.cache
def types() -> dict[str, type]:
    """The classes a message may hold, by qualified name: the dataclasses and enums of the modules
    whose values cross between a sweep and its workers (read once a process)."""
    return _known()


def encode(message: object) -> bytes:
    """``message`` as UTF-8 JSON; ``WireError`` where part of it has no plain form."""
    return json.dumps(_plain(message), separators=(",", ":")).encode()


def decode(data: bytes) -> object:
    """The message ``encode`` wrote; ``WireError`` where it names a type opperf does not send."""
    try:
        tree = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise WireError(f"not a message: {error}") from None
    return _typed(tree)


def _plain(value: object) -> Any:
    if isinstance(value, enum.Enum):  # before str: Status is a str too
        return {"$enum": _name(type(value)), "value": _plain(value.value)}
    if value is None or isinstance(value, bool | str):
        return value if type(value) in (bool, str, type(None)) else str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return {"$type": _name(type(value)), "fields": fields}
    if isinstance(value, tuple):
        return {"$tuple": [_plain(item) for item in value]}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, frozenset | set):
        return {"$frozenset": [_plain(item) for item in value]}
    if isinstance(value, dict):
        return {"$dict": [[_plain(key), _plain(item)] for key, item in value.items()]}
    if type(value).__module__ == "numpy" and getattr(value, "shape", None) == ():
        return _plain(value.item())  # type: ignore[attr-defined]  # a numpy scalar: its Python number
    raise WireError(f"a {type(value).__name__} cannot cross to or from a worker; only plain values do")


def _name(cls: type) -> str:
    name = f"{cls.__module__}.{cls.__qualname__}"
    if name not in types():
        raise WireError(f"{name} is not a type a worker message may hold")
    return name


def _typed(node: Any) -> object:
    if isinstance(node, list):
        return [_typed(item) for item in node]
    if not isinstance(node, dict):
        return node
    if "$tuple" in node:
        return tuple(_typed(item) for item in node["$tuple"])
    if "$frozenset" in node:
        return frozenset(_typed(item) for item in node["$frozenset"])
    if "$dict" in node:
        return {_typed(key): _typed(item) for key, item in node["$dict"]}
    cls = types().get(str(node.get("$type") or node.get("$enum")))
    if cls is None:
        raise WireError(f"a message names no known type: {str(node)[:80]}")
    if "$enum" in node:
        return cls(_typed(node["value"]))
    return cls(**{name: _typed(item) for name, item in node["fields"].items()})
