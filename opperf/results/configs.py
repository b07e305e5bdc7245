"""Operator configurations captured from a real model, kept as a versioned JSON Lines file.

A configs file is what ``opperf capture`` writes and ``opperf sweep --configs`` replays::

    {"format": "opperf-configs", "version": 1, "framework": "torch", "framework_version": "2.13.0",
     "model": "resnet18", "input_shape": [1, 3, 224, 224], "mode": "inference",
     "captured_by": "TorchDispatchMode ...", "filtered": {"view": 13, "factory": 2}, "calls": 90}
    {"op": "convolution", "inputs": {"input": {"shape": [1, 3, 224, 224], "dtype": "float32"}, ...},
     "count": 1, "tags": ["resnet18"]}

The first line is the header (format name and version, framework and its version, the model, its
input shape, the autograd mode, how the calls were recorded and which calls were left out); each
further line is one distinct configuration: the registry operator, its ``inputs`` in exactly the
results file's ``inputs`` form (``BenchmarkSpec.describe_inputs``), how many times the model called it
(``count``) and ``tags``. A results JSON file is a configs file too: each record's operator and inputs,
counted once.

Nothing here imports a framework: the reader checks operators and argument names against a lookup
the caller passes (``ArgumentLookup``), so the framework's registry stays in the framework's package.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from opperf.results.document import SchemaError, check_document
from opperf.results.measurement import BenchmarkSpec, InputValue, TensorSpec, freeze_inputs, input_from_json
from opperf.results.schema import CONFIGS_FORMAT
from opperf.utils.errors import OpperfError, suggest
from opperf.utils.reading import read_text

FORMAT = CONFIGS_FORMAT
VERSION = 1

"""The configs format's version: a reader refuses a newer one rather than misread it."""

Inputs = tuple[tuple[str, InputValue], ...]

ArgumentLookup = Callable[[str], "frozenset[str] | None"]

"""Operator name -> the argument names it takes (None: no such operator); the framework supplies it."""


@dataclass(frozen=True)
class Call:
    """One operator call as a capture saw it: the registry operator and its inputs."""

    op: str
    inputs: Inputs


@dataclass(frozen=True)
class Captured:
    """What one capture recorded: the kept calls in order, the left-out calls counted by reason, and
    the framework's own name for each kept call (an aten or registered name, for independent checks)."""

    calls: tuple[Call, ...]
    filtered: Mapping[str, int]
    native_names: tuple[str, ...]


@dataclass(frozen=True)
class Configuration:
    """One distinct (operator, inputs) a model called, and how many times; ``source`` says where it
    was read (``FILE:LINE``), so a configuration a sweep refuses names its line."""

    op: str
    inputs: Inputs
    count: int = 1
    tags: tuple[str, ...] = ()
    source: str = field(default="", compare=False)

    def to_json(self) -> dict[str, object]:
        spec = BenchmarkSpec(namespace="", op=self.op, inputs=self.inputs)
        return {"op": self.op, "inputs": spec.describe_inputs(), "count": self.count, "tags": list(self.tags)}


def float_dtypes(configurations: Sequence[Configuration]) -> set[str]:
    """The floating-point dtypes the configurations' tensors name (those that name none take the
    run's)."""
    named: set[str] = set()
    for configuration in configurations:
        for _, value in configuration.inputs:
            for tensor in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(tensor, TensorSpec) and (tensor.dtype or "").startswith(("float", "bfloat")):
                    named.add(cast(str, tensor.dtype))
    return named


@dataclass(frozen=True)
class Header:
    """Where a configs file's configurations came from."""

    framework: str
    framework_version: str = ""
    model: str = ""
    input_shape: tuple[int, ...] = ()
    mode: str = "inference"
    captured_by: str = ""
    filtered: Mapping[str, int] = field(default_factory=dict)
    calls: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "framework": self.framework,
            "framework_version": self.framework_version,
            "model": self.model,
            "input_shape": list(self.input_shape),
            "mode": self.mode,
            "captured_by": self.captured_by,
            "filtered": dict(self.filtered),
            "calls": self.calls,
        }


@dataclass(frozen=True)
class ConfigsFile:
    """A header and the distinct configurations under it, in first-call order."""

    header: Header
    configurations: tuple[Configuration, ...]

    @property
    def calls(self) -> int:
        return sum(c.count for c in self.configurations)


def distinct(calls: Iterable[Call], tags: tuple[str, ...] = ()) -> tuple[Configuration, ...]:
    """The distinct configurations of ``calls``, counted, in the order each was first called."""
    counts = Counter((call.op, call.inputs) for call in calls)
    return tuple(Configuration(op, inputs, count, tags) for (op, inputs), count in counts.items())


def render(configs: ConfigsFile) -> str:
    """The file's text: the header line, then one line per configuration."""
    lines = [configs.header.to_json(), *(c.to_json() for c in configs.configurations)]
    return "".join(json.dumps(line, sort_keys=False) + "\n" for line in lines)


def _error(path: str, line: int, message: str) -> OpperfError:
    return OpperfError(f"{path}:{line}: {message}")


HEADER_KEYS = tuple(Header(framework="").to_json())
"""The keys a header line may have."""

CONFIGURATION_KEYS = ("op", "inputs", "count", "tags")
"""The keys a configuration line may have."""


def parse(
    text: str, path: str, arguments: ArgumentLookup | None = None, framework: str | None = None
) -> ConfigsFile:
    """A configs file's text (or a results JSON file's) as a ``ConfigsFile``.

    Raises OpperfError naming the file and line for a bad header, a newer version, configurations of
    another ``framework`` than the one asked for, a malformed line (not JSON, an unknown key, a value
    of the wrong type), an operator ``arguments`` does not know, or an argument name the operator does
    not take.
    """
    whole = _whole_document(text)
    if isinstance(whole, dict) and "schema_version" in whole:
        return _from_results(whole, path, arguments, framework)
    lines = text.split("\n")  # JSON Lines: a line ends at a newline only (not at U+2028)
    header = _header_line(lines[0] if lines else "", path)
    _check_framework(path, header, framework)
    configurations = []
    for number, line in enumerate(lines[1:], start=2):
        if line.strip():
            configurations.append(_configuration(_json_line(line, path, number), path, number, arguments))
    return ConfigsFile(header, tuple(configurations))


def _whole_document(text: str) -> object:
    """The text as one JSON value (a results file), or None when it is not one (JSON Lines)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, nested too deep, a number of 4,300+ digits
        return None


def _check_framework(path: str, header: Header, framework: str | None) -> None:
    if framework is not None and header.framework != framework:
        version = f" {header.framework_version}" if header.framework_version else ""
        raise OpperfError(
            f"{path} holds {header.framework} configurations (captured with {header.framework}{version}); "
            f"replay them with --framework {header.framework}, or leave --framework out"
        )


def _json_line(line: str, path: str, number: int) -> dict[str, object]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        raise _error(path, number, f"not a JSON object ({error.msg})") from None
    except RecursionError:
        raise _error(path, number, "not a JSON object (nested too deep)") from None
    except ValueError:
        raise _error(path, number, "not a JSON object (a number too long to read)") from None
    if not isinstance(value, dict):
        raise _error(path, number, "not a JSON object")
    return value


def _unknown_key(value: dict[str, Any], known: Sequence[str], where: str) -> str | None:
    unknown = sorted(set(value) - set(known))
    if not unknown:
        return None
    return f"{where} has no key {unknown[0]!r}{suggest(unknown[0], known)} (it has: {', '.join(known)})"


def _header_line(line: str, path: str) -> Header:
    if not line.strip():
        raise _error(
            path, 1, f'empty; a configs file starts with a header line {{"format": "{FORMAT}", ...}}'
        )
    return _header(_json_line(line, path, 1), path)


def _header(value: dict[str, Any], path: str) -> Header:
    if value.get("format") != FORMAT:
        raise _error(
            path,
            1,
            f"not an opperf configs file: the header's format is {value.get('format')!r}, "
            f"expected {FORMAT!r} (write one with `opperf capture`)",
        )
    version = value.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise _error(path, 1, f"the header's version is {version!r}; expected an integer")
    if version < 1:
        raise _error(path, 1, f"the header's version is {version}; configs files start at version 1")
    if version > VERSION:
        raise _error(
            path,
            1,
            f"configs format version {version} is newer than this opperf reads ({VERSION}); "
            "upgrade opperf",
        )
    unknown = _unknown_key(value, HEADER_KEYS, "the header")
    if unknown:
        raise _error(path, 1, unknown)
    framework = value.get("framework")
    if not isinstance(framework, str) or not framework:
        raise _error(path, 1, "the header names no framework")
    problem = _header_problem(value)
    if problem:
        raise _error(path, 1, problem)
    return Header(
        framework=framework,
        framework_version=value.get("framework_version", ""),
        model=value.get("model", ""),
        input_shape=tuple(value.get("input_shape") or ()),
        mode=value.get("mode", "inference"),
        captured_by=value.get("captured_by", ""),
        filtered=dict(value.get("filtered") or {}),
        calls=value.get("calls") or 0,
    )


def _header_problem(value: dict[str, Any]) -> str | None:
    """What is wrong with the header's optional fields, or None."""
    for key in ("framework_version", "model", "captured_by"):
        if not isinstance(value.get(key, ""), str):
            return f"the header's {key} is {value[key]!r}; expected text"
    if value.get("mode", "inference") not in ("inference", "training"):
        return f"the header's mode is {value['mode']!r}; expected \"inference\" or \"training\""
    shape = value.get("input_shape", [])
    if not isinstance(shape, list) or not all(_count(d, minimum=0) for d in shape):
        return f"the header's input_shape is {shape!r}; expected a list of non-negative integers"
    filtered = value.get("filtered", {})
    if not isinstance(filtered, dict) or not all(_count(n, minimum=0) for n in filtered.values()):
        return f"the header's filtered is {filtered!r}; expected {{reason: count}}"
    if not _count(value.get("calls", 0), minimum=0):
        return f"the header's calls is {value['calls']!r}; expected a non-negative integer"
    return None


def _count(value: object, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _configuration(
    value: dict[str, Any], path: str, number: int, arguments: ArgumentLookup | None
) -> Configuration:
    unknown = _unknown_key(value, CONFIGURATION_KEYS, "a configuration")
    if unknown:
        raise _error(path, number, unknown)
    op, inputs, count = value.get("op"), value.get("inputs"), value.get("count", 1)
    if not isinstance(op, str) or not isinstance(inputs, dict):
        raise _error(path, number, 'a configuration needs "op" (a name) and "inputs" (an object)')
    if not _count(count, minimum=1):
        raise _error(path, number, f"count {count!r} is not a positive integer")
    tags = value.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise _error(path, number, f"tags {tags!r} are not a list of text")
    check_arguments(op, inputs, arguments, lambda message: _error(path, number, message))
    return Configuration(
        op=op,
        inputs=_inputs(inputs, lambda message: _error(path, number, message)),
        count=count,
        tags=tuple(tags),
        source=f"{path}:{number}",
    )


def _inputs(inputs: dict[str, Any], error: Callable[[str], OpperfError]) -> Inputs:
    """A configuration's described inputs as input values; ``error(...)`` naming the argument whose
    value is malformed."""
    values = {}
    for name, value in inputs.items():
        try:
            values[name] = input_from_json(value)
        except ValueError as problem:
            raise error(f"argument {name!r}: {problem}") from None
    return freeze_inputs(values)


def check_arguments(
    op: str,
    inputs: Mapping[str, Any],
    arguments: ArgumentLookup | None,
    error: Callable[[str], OpperfError],
) -> None:
    """Raise ``error(...)`` for an unknown operator or an argument name ``op`` does not take."""
    if arguments is None:
        return
    accepted = arguments(op)
    if accepted is None:
        raise error(f"unknown operator {op!r}")
    unknown = sorted(set(inputs) - accepted)
    if unknown:
        raise error(
            f"{op} takes no argument {unknown[0]!r}{suggest(unknown[0], accepted)} "
            f"(it takes: {', '.join(sorted(accepted))})"
        )


def _from_results(
    document: dict[str, Any], path: str, arguments: ArgumentLookup | None, framework: str | None
) -> ConfigsFile:
    """A results JSON document read as configs: each record's operator and inputs, counted once."""
    try:
        document = check_document(document)
    except SchemaError as problem:
        raise OpperfError(f"{path}: not a results file: {problem}") from None
    environment = document.get("environment") or {}
    records = document.get("results") or []
    header = Header(
        framework=str(environment.get("framework") or (records[0].get("framework") if records else "")),
        framework_version=str(environment.get("framework_version", "")),
        model=path,
        captured_by="a results file",
    )
    _check_framework(path, header, framework)
    configurations = []
    for index, record in enumerate(records, start=1):
        where = f"{path}: record {index}"

        def error(message: str, where: str = where) -> OpperfError:
            return OpperfError(f"{where}: {message}")

        op, inputs = record.get("op"), record.get("inputs")
        if not isinstance(op, str) or not isinstance(inputs, dict):
            raise error('a record needs "op" (a name) and "inputs" (an object)')
        if not inputs:
            continue
        check_arguments(op, inputs, arguments, error)
        configurations.append(Configuration(op, _inputs(inputs, error), 1, ("results",), where))
    return ConfigsFile(header, tuple(dict.fromkeys(configurations)))


def read(path: str, arguments: ArgumentLookup | None = None, framework: str | None = None) -> ConfigsFile:
    """The configs file at ``path``; OpperfError if it is missing or malformed (see ``parse``)."""
    return parse(_text(path), path, arguments, framework)


def header_of(path: str) -> Header:
    """The header of the configs (or results) file at ``path``, its configurations unread: which
    framework they were captured with."""
    text = _text(path)
    whole = _whole_document(text)
    if isinstance(whole, dict) and "schema_version" in whole:
        return _from_results(whole, path, None, None).header
    return _header_line(text.split("\n", 1)[0], path)


def _text(path: str) -> str:
    try:
        return read_text(path)
    except OSError as error:
        raise OpperfError(f"cannot read configs file {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise OpperfError(f"{path}: not a configs file (not UTF-8 text: {error.reason})") from None


def merge(files: Sequence[ConfigsFile]) -> tuple[Configuration, ...]:
    """The configurations of several files as one list: a configuration in several files appears once,
    its counts added and its tags joined; every file must be of one framework."""
    frameworks = sorted({f.header.framework for f in files})
    if len(frameworks) > 1:
        raise OpperfError(
            f"configs files of different frameworks ({', '.join(frameworks)}); replay one at a time"
        )
    merged: dict[tuple[str, Inputs], Configuration] = {}
    for configs in files:
        for c in configs.configurations:
            key = (c.op, c.inputs)
            if key in merged:
                old = merged[key]
                merged[key] = replace(
                    old, count=old.count + c.count, tags=tuple(dict.fromkeys(old.tags + c.tags))
                )
            else:
                merged[key] = c
    return tuple(merged.values())


def sample(
    configurations: Sequence[Configuration], count: int | None, seed: int
) -> tuple[Configuration, ...]:
    """``count`` configurations drawn without replacement with ``seed`` (all of them if ``count`` is None
    or at least their number), kept in their original order so a sample repeats exactly."""
    if count is None or count >= len(configurations):
        return tuple(configurations)
    chosen = set(random.Random(seed).sample(range(len(configurations)), count))
    return tuple(c for index, c in enumerate(configurations) if index in chosen)


def by_operator(configurations: Iterable[Configuration]) -> dict[str, tuple[Configuration, ...]]:
    """Operator -> its configurations, in order: what a sweep measures each operator with."""
    grouped: dict[str, list[Configuration]] = {}
    for c in configurations:
        grouped.setdefault(c.op, []).append(c)
    return {op: tuple(group) for op, group in grouped.items()}
