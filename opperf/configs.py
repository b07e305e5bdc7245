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

from opperf.errors import OpperfError, suggest
from opperf.report.document import spec_input as input_value
from opperf.results import BenchmarkSpec, InputValue, freeze_inputs

FORMAT = "opperf-configs"
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
    """One distinct (operator, inputs) a model called, and how many times."""

    op: str
    inputs: Inputs
    count: int = 1
    tags: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        spec = BenchmarkSpec(namespace="", op=self.op, inputs=self.inputs)
        return {"op": self.op, "inputs": spec.describe_inputs(), "count": self.count, "tags": list(self.tags)}


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


def parse(text: str, path: str, arguments: ArgumentLookup | None = None) -> ConfigsFile:
    """A configs file's text (or a results JSON file's) as a ``ConfigsFile``.

    Raises OpperfError naming the file and line for a bad header, a newer version, a malformed line,
    an operator ``arguments`` does not know, or an argument name the operator does not take.
    """
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and "schema_version" in whole:
        return _from_results(whole, path, arguments)
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise _error(
            path, 1, f'empty; a configs file starts with a header line {{"format": "{FORMAT}", ...}}'
        )
    header = _header(_json_line(lines[0], path, 1), path)
    configurations = []
    for number, line in enumerate(lines[1:], start=2):
        if line.strip():
            configurations.append(_configuration(_json_line(line, path, number), path, number, arguments))
    return ConfigsFile(header, tuple(configurations))


def _json_line(line: str, path: str, number: int) -> dict[str, object]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        raise _error(path, number, f"not a JSON object ({error.msg})") from None
    if not isinstance(value, dict):
        raise _error(path, number, "not a JSON object")
    return value


def _header(value: dict[str, object], path: str) -> Header:
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
    if version > VERSION:
        raise _error(
            path,
            1,
            f"configs format version {version} is newer than this opperf reads ({VERSION}); "
            "upgrade opperf",
        )
    framework = value.get("framework")
    if not isinstance(framework, str) or not framework:
        raise _error(path, 1, "the header names no framework")
    shape = value.get("input_shape") or ()
    return Header(
        framework=framework,
        framework_version=str(value.get("framework_version", "")),
        model=str(value.get("model", "")),
        input_shape=tuple(shape) if isinstance(shape, list) else (),
        mode=str(value.get("mode", "inference")),
        captured_by=str(value.get("captured_by", "")),
        filtered=dict(value.get("filtered") or {}),
        calls=int(value.get("calls") or 0),
    )


def _configuration(
    value: dict[str, object], path: str, number: int, arguments: ArgumentLookup | None
) -> Configuration:
    op, inputs, count = value.get("op"), value.get("inputs"), value.get("count", 1)
    if not isinstance(op, str) or not isinstance(inputs, dict):
        raise _error(path, number, 'a configuration needs "op" (a name) and "inputs" (an object)')
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise _error(path, number, f"count {count!r} is not a positive integer")
    check_arguments(op, inputs, arguments, lambda message: _error(path, number, message))
    tags = value.get("tags") or []
    return Configuration(
        op=op,
        inputs=freeze_inputs({name: input_value(v) for name, v in inputs.items()}),
        count=count,
        tags=tuple(str(t) for t in tags),
    )


def check_arguments(
    op: str,
    inputs: Mapping[str, object],
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


def _from_results(document: dict[str, object], path: str, arguments: ArgumentLookup | None) -> ConfigsFile:
    """A results JSON document read as configs: each record's operator and inputs, counted once."""
    from opperf.report.document import SchemaError, check_document

    try:
        document = check_document(document)
    except SchemaError as error:
        raise OpperfError(f"{path}: not a results file: {error}") from None
    environment = document.get("environment") or {}
    configurations = []
    for index, record in enumerate(document.get("results") or [], start=1):
        where = f"{path}: record {index}"
        if not record.get("inputs"):
            continue
        check_arguments(
            record["op"], record["inputs"], arguments, lambda m, w=where: OpperfError(f"{w}: {m}")
        )
        inputs = freeze_inputs({name: input_value(v) for name, v in record["inputs"].items()})
        configurations.append(Configuration(record["op"], inputs, 1, ("results",)))
    records = document.get("results") or []
    header = Header(
        framework=str(environment.get("framework") or (records[0]["framework"] if records else "")),
        framework_version=str(environment.get("framework_version", "")),
        model=path,
        captured_by="a results file",
    )
    return ConfigsFile(header, tuple(dict.fromkeys(configurations)))


def read(path: str, arguments: ArgumentLookup | None = None) -> ConfigsFile:
    """The configs file at ``path``; OpperfError if it is missing or malformed (see ``parse``)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        raise OpperfError(f"cannot read configs file {path}: {error.strerror}") from None
    return parse(text, path, arguments)


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


def by_operator(configurations: Iterable[Configuration]) -> dict[str, tuple[Inputs, ...]]:
    """Operator -> its configurations' inputs, in order: what a sweep measures each operator with."""
    grouped: dict[str, list[Inputs]] = {}
    for c in configurations:
        grouped.setdefault(c.op, []).append(c.inputs)
    return {op: tuple(inputs) for op, inputs in grouped.items()}


def load_replay(
    paths: Sequence[str], framework: str, arguments: ArgumentLookup, canonical: Mapping[str, str]
) -> tuple[Configuration, ...]:
    """The merged configurations of the configs files at ``paths`` (``dlop:PATH`` for a DLOP-Bench
    file) for a ``framework`` sweep, each operator under its canonical name (``canonical`` maps every
    registered name to it)."""
    from opperf.dlop import is_dlop, read_dlop

    files = [read_dlop(path, arguments) if is_dlop(path) else read(path, arguments) for path in paths]
    for path, configs in zip(paths, files, strict=True):
        if configs.header.framework != framework:
            raise OpperfError(
                f"{path} holds {configs.header.framework} configurations; replay them with "
                f"--framework {configs.header.framework}"
            )
    return tuple(replace(c, op=canonical.get(c.op, c.op)) for c in merge(files))
