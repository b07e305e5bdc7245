"""The shape of ``opperf/``: its import graph against the declared layers, its circles, and its
top-level entries.

    .venv/bin/python -m benchmarks.import_graph [--edges]

Every ``import opperf...`` in every file, at module level or inside a function (a function-local
import is still a dependency, only a later one), is an arrow from one file to the module it names
(importing a package runs its ``__init__``); imports under ``if TYPE_CHECKING:`` are left out: they
run only for the type checker, and are how a lower layer names a type of a higher one without
depending on it when the program runs (PEP 484). Each file sits on the floor of the layer its package
is declared in (``LAYERS``, lowest first); an arrow to a higher floor runs back up. A circle is a
set of files that import each other (a strongly connected component of more than one file).
Targets (issue 29): at most 10 imports running back up, no circle, at most 12 entries at the top of
``opperf/``. It prints each figure and, with ``--edges``, every arrow that runs back up and every
circle.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from benchmarks.sweeps import ROOT
from opperf.frameworks import FRAMEWORKS

PACKAGE = ROOT / "opperf"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("opperf.utils",),
    ("opperf.frameworks",),
    ("opperf.results", "opperf.measure.sampling", "opperf.measure.stages"),
    ("opperf.operators",),
    (
        "opperf.measure.harness",
        "opperf.measure.sampling",
        "opperf.measure.stages",
        "opperf.measure.timing",
        "opperf.measure.memory",
        "opperf.measure.memory_guard",
        "opperf.measure.roofline",
    ),
    ("opperf.frameworks.base",),
    tuple(f"opperf.frameworks.{name}" for name in FRAMEWORKS),
    ("opperf.measure",),
    ("opperf.sweep", "opperf.verdicts"),
    ("opperf.report",),
    ("opperf.compat", "opperf.nd_operations", "opperf.utils.benchmark_utils"),
    ("opperf.cli", "opperf"),
)
"""The layers, lowest first: a file may import its own layer and those below it. Leaf helpers;
the framework registry, which names the framework packages and finds them by name; the results
file's types, with the two pure modules whose values a record holds (the sampling plan and its stop
reasons, the stage names and checks); operators as data (rules, patterns, long-tail operators); the
measuring core (harness, timers, memory, roofline) that a framework implements against; the
framework packages; the drivers that run measurements in worker processes (benchmark, isolation,
workers, threads); the verbs (sweep, diff, ab, compare, history); the renderers of what they write;
the upstream API and the command line."""


def module_of(path: Path) -> str:
    """The dotted module a file under the repository root defines."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_of(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(path: Path, module: str, known: Mapping[str, Path]) -> Iterator[str]:
    """The package's modules one file imports (a name imported from a module: that module)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
            ]
        else:
            continue
        for name in names:
            found = name
            while found and found not in known:
                found = found.rpartition(".")[0]
            if found and found != module:
                yield found


def graph() -> dict[str, set[str]]:
    """Each module's imports of other modules of the package."""
    known = modules()
    return {module: set(imported(path, module, known)) for module, path in known.items()}


def floor(module: str) -> int:
    """The layer a module belongs to: that of the longest declared package containing it."""
    best, found = -1, None
    for index, layer in enumerate(LAYERS):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), index
    if found is None:
        raise SystemExit(f"error: {module} is in no declared layer; add its package to LAYERS")
    return found


def circles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def top_entries() -> list[str]:
    """The files and packages at the top of ``opperf/`` (caches left out)."""
    return sorted(p.name for p in PACKAGE.iterdir() if p.name != "__pycache__" and not p.name.startswith("."))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--edges", action="store_true", help="print every arrow back up and every circle")
    arguments = parser.parse_args()
    edges = graph()
    upward = sorted(
        (source, target)
        for source, targets in edges.items()
        for target in targets
        if floor(target) > floor(source)
    )
    found = circles(edges)
    entries = top_entries()
    if arguments.edges:
        for source, target in upward:
            print(f"up: {source} (floor {floor(source)}) -> {target} (floor {floor(target)})")
        for circle in found:
            print("circle: " + " <-> ".join(circle))
    print(f"modules: {len(edges)}; imports: {sum(map(len, edges.values()))}")
    print(f"imports running back up: {len(upward)} (target at most 10)")
    print(f"circles: {len(found)} (target none)")
    print(f"entries at the top of opperf/: {len(entries)} (target at most 12): {', '.join(entries)}")


if __name__ == "__main__":
    main()
