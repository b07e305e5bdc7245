"""Results files as the presentation writers (HTML, xlsx) and comparisons read them: each record
read once (``opperf.results.record``), with the file's environment, coverage and the records as
read, and configurations measured in several namespaces grouped.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from opperf.results.record import Phase, Record, read_records

MS = 1e3


@dataclass(frozen=True)
class ResultsFile:
    """One results file: its path, environment, coverage block and its records, read (``rows``);
    ``paired``, the records a comparison file pairs, as (namespace asked for, record index) in its
    order."""

    path: str
    environment: Mapping[str, Any]
    coverage: Mapping[str, Any]
    rows: tuple[Record, ...]
    paired: tuple[tuple[tuple[str, int], ...], ...] = ()


def results_file(document: Mapping[str, Any], path: str) -> ResultsFile:
    rows = read_records(document, path)
    return ResultsFile(
        path=path,
        environment=document.get("environment") or {},
        coverage=document.get("coverage") or {},
        rows=rows,
        paired=_paired(document.get("comparison"), len(rows)),
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

    rows: tuple[Record, ...]
    names: tuple[str, ...]

    @property
    def first(self) -> Record:
        return self.rows[0]

    @property
    def first_name(self) -> str:
        return self.names[0]

    def by_namespace(self, namespace: str) -> Record | None:
        return next((r for r, n in zip(self.rows, self.names, strict=True) if n == namespace), None)

    def ratio(self, row: Record) -> float:
        return cast(Phase, row.forward).median / cast(Phase, self.first.forward).median

    @property
    def widest(self) -> float:
        """The largest ratio either way (3 for both x3 and x1/3), for choosing what to plot."""
        return max(max(r, 1 / r) for r in map(self.ratio, self.rows[1:]) if r > 0)

    @property
    def label(self) -> str:
        threads = f", {self.first.threads} thr" if self.first.threads is not None else ""
        return f"{self.first.short_function}({self.first.inputs}){threads}"


def _measured(row: Record) -> bool:
    return row.status == "ok" and row.forward is not None and row.forward.median > 0


def comparison_groups(files: Sequence[ResultsFile]) -> list[Group]:
    """Configurations measured in more than one namespace: first as a comparison file pairs them
    (``opperf compare --output-format json``: its ``comparison.rows`` name each namespace's record,
    the first namespace first, so ``FullyConnected`` meets ``linear``), then the other records
    matched on the function's short name (case-insensitive), the tensor shapes in order, the dtype,
    every setting of the row key (dtype, device, values, layout, timer, mode, cache, threads, stage:
    a figure changes with any of them), the namespaces in alphabetical order; argument names differ
    between namespaces (``lhs`` in mx.nd is ``x1`` in mx.np, ``input`` in torch), so they are not
    matched on. A namespace measured in several files (two builds' sweeps) makes a group per file,
    each with that file's row of it and the rows of namespaces measured once."""
    found: list[Group] = []
    paired: set[int] = set()
    for file in files:
        for pairing in file.paired:
            measured = [(name, file.rows[i]) for name, i in pairing if _measured(file.rows[i])]
            if len(measured) > 1:
                found.append(Group(tuple(r for _, r in measured), tuple(n for n, _ in measured)))
                paired.update(id(row) for _, row in measured)
    groups: dict[tuple[object, ...], list[tuple[int, Record]]] = {}
    for index, file in enumerate(files):
        for row in file.rows:
            if id(row) in paired or not _measured(row) or not row.tensor_shapes:
                continue
            key = (row.short_function.lower(), row.tensor_shapes, row.key.settings)
            groups.setdefault(key, []).append((index, row))
    for rows in groups.values():
        times = Counter(row.namespace for _, row in rows)
        repeating = sorted({index for index, row in rows if times[row.namespace] > 1})
        for file_index in repeating or [-1]:  # -1: no namespace repeats, every row is in the one group
            by_namespace = {
                row.namespace: row for index, row in rows if times[row.namespace] == 1 or index == file_index
            }
            if len(by_namespace) > 1:
                names = tuple(sorted(by_namespace))
                found.append(Group(tuple(by_namespace[name] for name in names), names))
    return found
