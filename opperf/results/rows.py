"""Results records as typed rows for the presentation writers (HTML, xlsx): one frozen value per
record with what a table or a plot shows, read once at the file edge.

Settings other helpers add to records (``threads``, ``stage``, ``compile_s``, ``stage_check``,
``tags``) are read when present, so the sections that draw them appear as soon as files carry them.
A long-tail record's tags come from the catalogue (``opperf.operators.longtail``, framework-free) when the
record does not carry them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from opperf.operators import longtail
from opperf.results.inputs import describe_inputs

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
    def of(cls, block: Mapping[str, Any] | None) -> Timing | None:
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
    variant: str
    compile_s: float | None
    stage_agrees: bool | None
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
        """``function(inputs)``, then the framework where the name does not say it (long-tail
        operators are ``opperf.operators.longtail.*`` in both), a stage other than eager and a fused
        variant."""
        notes = [self.framework] if not self.namespace.startswith(("mx", self.framework)) else []
        notes += [self.stage] if self.stage != "eager" else []
        notes += [self.variant] if self.variant else []
        return f"{self.function}({self.inputs})" + (f" [{', '.join(notes)}]" if notes else "")

    def setting_free_key(self, setting: str) -> tuple[object, ...]:
        """What identifies this configuration apart from ``setting`` (threads, stage): rows equal on
        it differ only in that setting (a fused pattern's variant goes with its stage)."""
        others = {"threads": self.threads, "stage": (self.stage, self.variant)}
        others.pop(setting)
        return (self.framework, self.namespace, self.op, self.inputs, self.dtype, *others.values())


def _shapes(inputs: Mapping[str, Any]) -> tuple[tuple[int, ...], ...]:
    """The tensor inputs' shapes in argument order (what a comparison across namespaces matches on,
    since argument names differ: ``lhs`` in mx.nd is ``x1`` in mx.np and ``input`` in torch)."""
    shapes = []
    for value in inputs.values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and "shape" in item:
                shapes.append(tuple(item["shape"]))
    return tuple(shapes)


def result_row(
    record: Mapping[str, Any], source: str, catalogue_tags: Mapping[str, tuple[str, ...]] | None = None
) -> ResultRow:
    """A record as a row; ``catalogue_tags`` (operator name to tags) supplies the tags of a
    long-tail record that carries none."""
    roofline = record.get("roofline") or {}
    fractions = roofline.get("fraction_of_peak") or {}
    tags = record.get("tags") or ()
    if not tags and record.get("category") == longtail.CATEGORY:
        tags = (catalogue_tags or {}).get(str(record["op"]), ())
    check = record.get("stage_check")
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
        variant=str(record.get("variant") or ""),
        compile_s=record.get("compile_s"),
        stage_agrees=check.get("agrees") if isinstance(check, dict) else None,
        tags=tuple(tags) if isinstance(tags, (list, tuple)) else (str(tags),),
    )


@dataclass(frozen=True)
class ResultsFile:
    """One results file: its path, environment, coverage block and rows; ``records`` keeps the
    records as read, for the views that are pure functions of them (``report.scaling``,
    ``report.sensitivity``, ``report.stages``, which the Markdown report shares); ``paired``, the
    records a comparison file pairs, as (namespace asked for, record index) in its order."""

    path: str
    environment: Mapping[str, Any]
    coverage: Mapping[str, Any]
    rows: tuple[ResultRow, ...]
    records: tuple[Mapping[str, Any], ...] = ()
    paired: tuple[tuple[tuple[str, int], ...], ...] = ()


def results_file(document: Mapping[str, Any], path: str) -> ResultsFile:
    records = tuple(document.get("results") or ())
    catalogue_tags = {name: op.tags for name, op in longtail.by_name().items()}
    return ResultsFile(
        path=path,
        environment=document.get("environment") or {},
        coverage=document.get("coverage") or {},
        rows=tuple(result_row(record, path, catalogue_tags) for record in records),
        records=records,
        paired=_paired(document.get("comparison"), len(records)),
    )


def _paired(comparison: object, count: int) -> tuple[tuple[tuple[str, int], ...], ...]:
    """The (namespace, record index) pairs of each row of a comparison block (``{"namespaces": [...],
    "rows": [{"records": {namespace: index or null}}]}``) in the namespaces' order; () for anything
    else."""
    if not isinstance(comparison, dict) or not isinstance(comparison.get("rows"), list):
        return ()
    namespaces = comparison.get("namespaces") or []
    groups = []
    for row in comparison["rows"]:
        records = row.get("records") if isinstance(row, dict) else None
        if not isinstance(records, dict):
            continue
        order = [*(n for n in namespaces if n in records), *(n for n in records if n not in namespaces)]
        found = [(str(n), records[n]) for n in order]
        groups.append(tuple((n, i) for n, i in found if isinstance(i, int) and 0 <= i < count))
    return tuple(groups)


def environment_items(environment: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The environment as (name, text) pairs, nested values as compact JSON."""
    return [
        (name, value if isinstance(value, str) else json.dumps(value, separators=(", ", ": ")))
        for name, value in environment.items()
    ]


@dataclass(frozen=True)
class Group:
    """One configuration measured in several namespaces (mx.nd, mx.np, torch, ...), the first one
    first: each other's ratio is its forward median over the first's. ``names`` are the namespaces
    the rows stand for: their own, or those a comparison asked for (``mx.np`` for a row of
    ``mx.npx.fully_connected``, ``torch`` for ``torch.nn.functional.linear``)."""

    rows: tuple[ResultRow, ...]
    names: tuple[str, ...]

    @property
    def first(self) -> ResultRow:
        return self.rows[0]

    @property
    def first_name(self) -> str:
        return self.names[0]

    def by_namespace(self, namespace: str) -> ResultRow | None:
        return next((r for r, n in zip(self.rows, self.names, strict=True) if n == namespace), None)

    def ratio(self, row: ResultRow) -> float:
        return cast(Timing, row.forward).median / cast(Timing, self.first.forward).median

    @property
    def widest(self) -> float:
        """The largest ratio either way (3 for both x3 and x1/3), for choosing what to plot."""
        return max(max(r, 1 / r) for r in map(self.ratio, self.rows[1:]) if r > 0)

    @property
    def label(self) -> str:
        threads = f", {self.first.threads} thr" if self.first.threads is not None else ""
        return f"{self.first.short_function}({self.first.inputs}){threads}"


def _measured(row: ResultRow) -> bool:
    return row.status == "ok" and row.forward is not None and row.forward.median > 0


def comparison_groups(files: Sequence[ResultsFile]) -> list[Group]:
    """Configurations measured in more than one namespace: first as a comparison file pairs them
    (``opperf compare --output-format json``: its ``comparison.rows`` name each namespace's record,
    the first namespace first, so ``FullyConnected`` meets ``linear``), then the other records
    matched on the function's short name (case-insensitive), the tensor shapes in order, the dtype,
    the stage and the thread count, the namespaces in alphabetical order; argument names differ
    between namespaces (``lhs`` in mx.nd is ``x1`` in mx.np, ``input`` in torch), so they are not
    matched on."""
    found: list[Group] = []
    paired: set[int] = set()
    for file in files:
        for pairing in file.paired:
            measured = [(name, file.rows[i]) for name, i in pairing if _measured(file.rows[i])]
            if len(measured) > 1:
                found.append(Group(tuple(r for _, r in measured), tuple(n for n, _ in measured)))
                paired.update(id(row) for _, row in measured)
    groups: dict[tuple[object, ...], dict[str, ResultRow]] = {}
    for row in (r for file in files for r in file.rows):
        if id(row) in paired or not _measured(row) or not row.tensor_shapes:
            continue
        key = (row.short_function.lower(), row.tensor_shapes, row.dtype, row.stage, row.threads)
        groups.setdefault(key, {}).setdefault(row.namespace, row)
    return found + [
        Group(tuple(by_namespace[name] for name in sorted(by_namespace)), tuple(sorted(by_namespace)))
        for by_namespace in groups.values()
        if len(by_namespace) > 1
    ]
