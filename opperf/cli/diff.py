"""``opperf diff BASE NEW``: verdicts per row between two sides, each one or more result files, or
between the sides of one A/B file (``opperf diff AB.json``, from ``opperf ab``).

Exit status: 0 when no row matches ``--fail-on``, 1 when one does, 2 for bad input (a one-line
``error: ...`` naming the file and the fix).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from opperf.cli.common import check_outputs, fraction, report_format, write_or_print
from opperf.report.xlsx import require_openpyxl, write_workbook
from opperf.report.xlsx_tables import diff_tables
from opperf.results.environment import BUILD_FIELDS, MACHINE_FIELDS
from opperf.results.key import SETTINGS
from opperf.results.load import (
    SAMPLING_FIELDS,
    Run,
    across,
    check_copies,
    differences,
    read_ab,
    read_side,
    settings,
)
from opperf.utils.errors import OpperfError
from opperf.utils.files import write_atomically
from opperf.verdicts.decide import DEFAULT_ALPHA, DEFAULT_THRESHOLD, FailOn
from opperf.verdicts.diff import Diff, across_note, diff, diff_ab
from opperf.verdicts.document import diff_document, render_json
from opperf.verdicts.markdown import render_markdown
from opperf.verdicts.table import render_csv

HELP = "verdicts per row between two sets of result files: slower, faster, same, inconclusive, ..."
RENDERERS = {"md": render_markdown, "json": render_json, "csv": render_csv}
WORKBOOKS = {"xlsx": lambda result: diff_tables(diff_document(result))}
"""Formats written as a workbook (opperf[xlsx]) rather than text."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "base", metavar="BASE", help="result file(s) of the base side: FILE or FILE1,FILE2,..."
    )
    parser.add_argument(
        "new",
        metavar="NEW",
        nargs="?",
        help="result file(s) of the new side: FILE or FILE1,FILE2,...; none when BASE is an A/B file",
    )
    parser.add_argument(
        "--threshold",
        type=fraction,
        default=DEFAULT_THRESHOLD,
        help=f"smallest relative change worth a verdict ({DEFAULT_THRESHOLD})",
    )
    parser.add_argument(
        "--alpha", type=fraction, default=DEFAULT_ALPHA, help=f"false discovery rate level ({DEFAULT_ALPHA})"
    )
    parser.add_argument(
        "--fail-on",
        choices=[f.value for f in FailOn],
        default=FailOn.REGRESSION.value,
        help="exit 1 when a row is slower or newly failing (regression), any verdict but same and "
        "inconclusive (any-change), or never",
    )
    parser.add_argument(
        "--output-format",
        choices=sorted([*RENDERERS, *WORKBOOKS]),
        help="md, json, csv or xlsx (default: from --output-file, else md)",
    )
    parser.add_argument("--output-file", help="where to write the report (default: standard output)")
    parser.add_argument(
        "--allow-different-machines",
        action="store_true",
        help="diff result files measured on different machines (CPU, GPU or driver differ), noting it",
    )
    parser.add_argument(
        "--across",
        type=_settings,
        default=(),
        metavar="SETTING[,SETTING]",
        help="pair rows that differ only in these settings of the row key (e.g. values, layout, threads, "
        "dtype): each side holds one value of each, and a verdict is the effect of changing them",
    )
    parser.add_argument("--json-file", help="also write the JSON document here")


def _settings(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(","))
    unknown = [name for name in names if name not in SETTINGS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"{unknown[0]!r} is no setting of a row key; choose from: {', '.join(SETTINGS)}"
        )
    return names


def split_files(text: str, side: str) -> list[str]:
    paths = [part.strip() for part in text.split(",")]
    if not all(paths):
        raise OpperfError(f"{side} {text!r} has an empty file name; pass FILE or FILE1,FILE2,...")
    return paths


def _machines(base: Sequence[Run], new: Sequence[Run], allowed: bool) -> list[str]:
    """The notes a diff of separate sweeps carries about where they ran: a different framework build
    is often the point, and is named; a different machine (CPU, GPU, driver) measures different
    hardware, and is refused unless ``allowed``."""
    machines = differences([*base, *new], MACHINE_FIELDS)
    if machines and not allowed:
        raise OpperfError(
            f"the files were measured on different machines ({'; '.join(machines)}); their figures "
            "compare the machines as much as the builds: pass --allow-different-machines to diff them anyway"
        )
    notes = [f"Measured on different machines: {'; '.join(machines)}."] if machines else []
    builds = differences([*base, *new], BUILD_FIELDS)
    return [*notes, *([f"Framework builds differ: {'; '.join(builds)}."] if builds else [])]


def _across(
    base: Sequence[Run], new: Sequence[Run], names: Sequence[str]
) -> tuple[tuple[Run, ...], tuple[Run, ...], str]:
    """``--across NAMES``: both sides with those settings left out of their keys, and the note naming
    each side's value; OpperfError where a setting is the same on both sides (no verdict could be the
    effect of changing it)."""
    varying = _varying(base, new)
    base, base_values = across(base, names, "BASE")
    new, new_values = across(new, names, "NEW")
    alike = [name for name in names if base_values[name] == new_values[name]]
    if alike:
        differing = f"; they differ in {', '.join(varying)}" if varying else ""
        raise OpperfError(
            f"--across {alike[0]}: both sides ran {alike[0]} {base_values[alike[0]]}, so no verdict could "
            f"be the effect of changing it{differing}: name a setting the sides differ in"
        )
    return base, new, across_note({name: (base_values[name], new_values[name]) for name in names})


def _varying(base: Sequence[Run], new: Sequence[Run]) -> list[str]:
    """The settings of the row key whose values on one side are not those on the other."""

    def side(runs: Sequence[Run]) -> frozenset[tuple[str, object]]:
        return frozenset().union(*map(settings, runs))

    unlike = {name for name, _ in side(base) ^ side(new)}
    return [name for name in SETTINGS if name in unlike]


def _unlike_repeats(runs: Sequence[Run], side: str) -> list[str]:
    """A note where a side's repeats sampled otherwise (another seed draws other data; another budget
    or precision target, other samples): their spread then holds that difference as noise."""
    found = differences(runs, SAMPLING_FIELDS, lambda run: run.sampling)
    if not found:
        return []
    return [
        f"The runs of {side} sampled otherwise: {'; '.join(found)}. Their spread, which the verdicts weigh "
        "as noise, holds that difference too."
    ]


def _check_distinct(base: list[str], new: list[str]) -> None:
    """Refuse a file on both sides: a run compared with itself is unchanged by construction."""
    shared = [path for path in new if any(_same_file(path, other) for other in base)]
    if shared:
        raise OpperfError(
            f"{shared[0]} is on both sides; a run compared with itself says nothing: pass the result "
            "files of separate runs as BASE and NEW (or one A/B file alone)"
        )


def _same_file(first: str, second: str) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:  # a missing file: reading it says so
        return first == second


def _check_apart_from_inputs(arguments: argparse.Namespace) -> None:
    """Refuse an output that names a file being diffed: the report would replace its measurements."""
    read = [
        *split_files(arguments.base, "BASE"),
        *(split_files(arguments.new, "NEW") if arguments.new else []),
    ]
    for flag, path in (("--output-file", arguments.output_file), ("--json-file", arguments.json_file)):
        if path and any(_same_file(path, other) for other in read):
            raise OpperfError(
                f"{flag} {path!r} is a file being diffed: the report would replace its measurements; "
                "name another file"
            )


def run(arguments: argparse.Namespace) -> int:
    """Diff, write the report(s), and return the exit status the gate asks for (0 or 1)."""
    chosen = report_format(arguments.output_format, arguments.output_file, default="md")
    check_outputs(
        ("--output-file", arguments.output_file, f"diff.{chosen}"),
        ("--json-file", arguments.json_file, "diff.json"),
    )
    _check_apart_from_inputs(arguments)
    if chosen in WORKBOOKS:
        if not arguments.output_file:
            raise OpperfError(f"--output-format {chosen} is a file format; add --output-file DIFF.{chosen}")
        require_openpyxl()
    if arguments.new is None:
        if arguments.across:
            raise OpperfError(
                "--across pairs rows of two sides that differ in a setting; the sides of an A/B file share "
                "their settings: pass BASE and NEW result files"
            )
        result = diff_ab(read_ab(arguments.base), threshold=arguments.threshold, alpha=arguments.alpha)
    else:
        base_files, new_files = split_files(arguments.base, "BASE"), split_files(arguments.new, "NEW")
        _check_distinct(base_files, new_files)
        base, new = read_side(base_files), read_side(new_files)
        notes = _machines(base, new, arguments.allow_different_machines)
        check_copies([*base, *new])
        notes += _unlike_repeats(base, "BASE") + _unlike_repeats(new, "NEW")
        if arguments.across:
            base, new, note = _across(base, new, arguments.across)
            notes.append(note)
        result = diff(base, new, threshold=arguments.threshold, alpha=arguments.alpha, notes=notes)
    if chosen in WORKBOOKS:
        write_workbook(arguments.output_file, WORKBOOKS[chosen](result))
    else:
        write_or_print(RENDERERS[chosen](result), arguments.output_file)
    if arguments.json_file:
        write_atomically(arguments.json_file, render_json(result))
    return gate(result, FailOn(arguments.fail_on))


def gate(result: Diff, fail_on: FailOn) -> int:
    return 1 if any(fail_on.matches(row.verdict) for row in result.rows) else 0
