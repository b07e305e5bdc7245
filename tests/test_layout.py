"""The package's shape: every framework a package of the same sub-tree, and no framework imported
outside its own package (reports, comparison, diff and the command line work without one)."""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys

import pytest

from opperf.frameworks import FRAMEWORKS, describe
from opperf.frameworks.contract import CAPABILITIES, PARTS

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "opperf"
FRAMEWORK_MODULES = {describe(name).imports for name in FRAMEWORKS}
SHARED_SHAPE = {"__init__.py", *(f"{part}.py" for part in PARTS if part != "rules"), "rules"}
"""What every framework package holds (framework-private helpers may sit beside them)."""
FRAMEWORK_FREE = ("categories", "rules", "work", "flags", "counterparts", "compare")
"""Parts of a framework package that must import without the framework (help, list, explain)."""


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_every_framework_package_has_the_same_shape(framework):
    """Every part of the contract, and the modules of each capability the framework declares."""
    entries = {path.name for path in (PACKAGE / "frameworks" / framework).iterdir()}
    assert entries >= SHARED_SHAPE, f"{framework} lacks {sorted(SHARED_SHAPE - entries)}"
    declared = describe(framework)
    assert declared.name == framework
    for capability in declared.capabilities:
        wanted = {f"{part}.py" for part in CAPABILITIES[capability]}
        assert entries >= wanted, f"{framework} declares {capability} but lacks {sorted(wanted - entries)}"


def _imported_modules(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_module_outside_a_framework_package_imports_a_framework():
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(_imported_modules(path) & FRAMEWORK_MODULES)
        for path in PACKAGE.rglob("*.py")
        if "frameworks" not in path.relative_to(PACKAGE).parts
    }
    assert {path: found for path, found in offenders.items() if found} == {}


def test_reports_diff_help_and_framework_free_parts_run_without_any_framework():
    parts = [f"opperf.frameworks.{name}.{part}" for name in FRAMEWORKS for part in FRAMEWORK_FREE]
    code = (
        "import importlib, sys\n"
        "import opperf.cli, opperf.cli.sweep, opperf.cli.diff, opperf.verdicts.compare.comparison\n"
        "import opperf.measure.roofline.work\n"
        "import opperf.report.markdown, opperf.report.csv_report, opperf.verdicts.diff\n"
        f"for name in {parts!r}: importlib.import_module(name)\n"
        "opperf.cli.build_parser().format_help()\n"
        f"print(sorted(m for m in {sorted(FRAMEWORK_MODULES)!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_import_graph_keeps_its_layers_and_has_no_circle():
    """Issue 29's targets for the package's shape (``benchmarks/import_graph.py`` prints the arrows):
    no set of files importing each other, at most 10 imports running back up the declared layers,
    and at most 12 entries at the top of ``opperf/``. Every module sits in a declared layer."""
    from benchmarks.import_graph import circles, floor, graph, top_entries

    edges = graph()
    assert circles(edges) == []
    upward = [
        (source, target)
        for source, targets in edges.items()
        for target in targets
        if floor(target) > floor(source)
    ]
    assert len(upward) <= 10, upward
    assert len(top_entries()) <= 12, top_entries()


def test_the_import_graph_sees_function_local_imports_and_circles(tmp_path):
    """The graph's reader on a module it is given: a function-local import is an arrow, an import
    under TYPE_CHECKING is not, a name imported from a module is that module, and two modules
    importing each other are one circle."""
    from benchmarks.import_graph import circles, imported

    source = tmp_path / "a.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from opperf.results import measurement\n"
        "if TYPE_CHECKING:\n"
        "    from opperf.report.markdown import render\n"
        "def later():\n"
        "    from opperf.utils.stats import summarize\n"
    )
    known = dict.fromkeys(["opperf.results", "opperf.results.measurement", "opperf.report.markdown",
                           "opperf.utils.stats", "opperf.a"], source)  # fmt: skip
    assert set(imported(source, "opperf.a", known)) == {"opperf.results.measurement", "opperf.utils.stats"}
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def _names_a_framework(node: ast.AST) -> str | None:
    """The framework a table or a branch outside ``frameworks/`` names: a dict keyed by a framework's
    name, a comparison with one (``framework == "torch"``), or a flag's help listing what each
    framework has by hand (``mxnet: resnet18_v1, ...``)."""
    if isinstance(node, ast.Dict):
        keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
        return next((k for k in keys if k in FRAMEWORKS), None)
    if isinstance(node, ast.Compare):
        values = [c.value for c in (node.left, *node.comparators) if isinstance(c, ast.Constant)]
        return next((v for v in values if v in FRAMEWORKS), None)
    if isinstance(node, ast.keyword) and node.arg == "help":  # "(mxnet: resnet18_v1, ...; torch: ...)"
        texts = [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)]
        listed = (re.search(rf"\b({'|'.join(FRAMEWORKS)}): ", str(text)) for text in texts)
        return next((found.group(1) for found in listed if found), None)
    return None


def test_no_table_or_branch_outside_frameworks_is_keyed_by_a_framework_name():
    """What differs between frameworks lives in their folders (issue 30): a third framework adds a
    folder and a registration line, and touches no table elsewhere."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "frameworks" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = _names_a_framework(node)
            if named is not None:
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} names {named!r}")
    assert offenders == []
