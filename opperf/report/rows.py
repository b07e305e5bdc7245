"""Results records as typed rows for the presentation writers (HTML, xlsx): one frozen value per
record with what a table or a plot shows, read once at the file edge.

Settings other helpers add to records (``threads``, ``stage``, ``compile_s``, ``tags``) are read
when present, so the sections that draw them appear as soon as files carry them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from opperf.report.markdown import _inputs as describe_inputs

MS = 1e3


@dataclass(frozen=True)
class Timing:
    """One phase's figures: median and its 95% interval (seconds), IQR over median, and the samples."""

    median: float
    low: float
    high: float
    iqr_ratio: float | None
    samples: tuple[float, ...]

    @classmethod
    def of(cls, block: Mapping[str, object] | None) -> Timing | None:
        if not block:
            return None
        low, high = block.get("median_ci95_s") or (block["median_s"], block["median_s"])
        return cls(block["median_s"], low, high, block.get("iqr_ratio"), tuple(block.get("samples_s") or ()))


@dataclass(frozen=True)
class ResultRow:
    """One record of a results file, as reports show it."""

    source: str
    framework: str
    namespace: str
    op: str
    function: str
    category: str
    inputs: str
    tensor_shapes: tuple[tuple[int, ...], ...]
    dtype: str | None
    status: str
    reason: str | None
    forward: Timing | None
    backward: Timing | None
    memory_bytes: int | None
    flags: tuple[str, ...]
    flops: float | None
    bytes_moved: float | None
    gflop_per_s: float | None
    gb_per_s: float | None
    of_roof: float | None
    bound: str | None
    threads: int | None
    stage: str
    compile_s: float | None
    tags: tuple[str, ...]

    @property
    def intensity(self) -> float | None:
        """Arithmetic intensity, FLOP per byte moved (None when either is not counted)."""
        if not self.flops or not self.bytes_moved:
            return None
        return self.flops / self.bytes_moved

    @property
    def short_function(self) -> str:
        """The function's name without its namespace: ``add`` for ``mx.np.add``."""
        prefix = f"{self.namespace}."
        return self.function[len(prefix) :] if self.function.startswith(prefix) else self.function

    @property
    def label(self) -> str:
        return f"{self.function}({self.inputs})"

    def setting_free_key(self, setting: str) -> tuple[object, ...]:
        """What identifies this configuration apart from ``setting`` (threads, stage): rows equal on
        it differ only in that setting."""
        others = {"threads": self.threads, "stage": self.stage}
        others.pop(setting)
        return (self.framework, self.namespace, self.op, self.inputs, self.dtype, *others.values())


def _shapes(inputs: Mapping[str, object]) -> tuple[tuple[int, ...], ...]:
    """The tensor inputs' shapes in argument order (what a comparison across namespaces matches on,
    since argument names differ: ``lhs`` in mx.nd is ``x1`` in mx.np and ``input`` in torch)."""
    shapes = []
    for value in inputs.values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and "shape" in item:
                shapes.append(tuple(item["shape"]))
    return tuple(shapes)


def result_row(record: Mapping[str, object], source: str) -> ResultRow:
    roofline = record.get("roofline") or {}
    fractions = roofline.get("fraction_of_peak") or {}
    tags = record.get("tags") or ()
    return ResultRow(
        source=source,
        framework=str(record.get("framework", "")),
        namespace=str(record["namespace"]),
        op=str(record["op"]),
        function=str(record.get("function") or f"{record['namespace']}.{record['op']}"),
        category=str(record.get("category", "misc")),
        inputs=describe_inputs(record.get("inputs") or {}),
        tensor_shapes=_shapes(record.get("inputs") or {}),
        dtype=record.get("dtype"),
        status=str(record["status"]),
        reason=record.get("reason"),
        forward=Timing.of(record.get("forward")),
        backward=Timing.of(record.get("backward")),
        memory_bytes=record.get("memory_peak_bytes"),
        flags=tuple(record.get("flags") or ()),
        flops=roofline.get("flops"),
        bytes_moved=roofline.get("bytes"),
        gflop_per_s=roofline.get("gflop_per_s"),
        gb_per_s=roofline.get("gb_per_s"),
        of_roof=fractions.get("of_roof"),
        bound=fractions.get("bound"),
        threads=record.get("threads"),
        stage=str(record.get("stage") or "eager"),
        compile_s=record.get("compile_s"),
        tags=tuple(tags) if isinstance(tags, (list, tuple)) else (str(tags),),
    )


@dataclass(frozen=True)
class ResultsFile:
    """One results file: its path, environment, coverage block and rows."""

    path: str
    environment: Mapping[str, object]
    coverage: Mapping[str, object]
    rows: tuple[ResultRow, ...]


def results_file(document: Mapping[str, object], path: str) -> ResultsFile:
    return ResultsFile(
        path=path,
        environment=document.get("environment") or {},
        coverage=document.get("coverage") or {},
        rows=tuple(result_row(record, path) for record in document.get("results") or ()),
    )


def environment_items(environment: Mapping[str, object]) -> list[tuple[str, str]]:
    """The environment as (name, text) pairs, nested values as compact JSON."""
    return [
        (name, value if isinstance(value, str) else json.dumps(value, separators=(", ", ": ")))
        for name, value in environment.items()
    ]


@dataclass(frozen=True)
class Pair:
    """One configuration measured in two namespaces: ``ratio`` is other's forward median over base's."""

    base: ResultRow
    other: ResultRow

    @property
    def ratio(self) -> float:
        return self.other.forward.median / self.base.forward.median


def comparison_pairs(rows: Sequence[ResultRow]) -> list[Pair]:
    """Configurations measured in more than one namespace, matched on the function's short name, the
    tensor shapes in order and the dtype; each namespace paired with the alphabetically first (mx.nd
    before mx.np before torch)."""
    groups: dict[tuple[object, ...], dict[str, ResultRow]] = {}
    for row in rows:
        if row.status != "ok" or row.forward is None or not row.tensor_shapes:
            continue
        key = (row.short_function.lower(), row.tensor_shapes, row.dtype, row.stage, row.threads)
        groups.setdefault(key, {}).setdefault(row.namespace, row)
    pairs = []
    for by_namespace in groups.values():
        first, *others = (by_namespace[name] for name in sorted(by_namespace))
        pairs += [Pair(first, other) for other in others if first.forward.median > 0]
    return pairs
