"""``opperf merge FILES... --output-file F``: the shards of one sweep (``sweep --shard K/N``) back in
one results file; files measured with other settings are refused."""

from __future__ import annotations

import argparse
import sys

from opperf.cli.common import check_writable
from opperf.report.json_report import render_json
from opperf.results.document import read_document
from opperf.sweep.merge import FIX, merge, missing_shards
from opperf.utils.files import write_atomically

HELP = "put the shards of one sweep (sweep --shard K/N) back in one results file"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="JSON results files of one sweep's shards")
    parser.add_argument("--output-file", required=True, help="the merged JSON results file")


def run(arguments: argparse.Namespace) -> int:
    check_writable(arguments.output_file)
    merged = merge([(path, read_document(path, FIX)) for path in arguments.files])
    write_atomically(arguments.output_file, render_json(merged))
    missing = missing_shards(merged)
    if missing:
        print(f"note: shards {', '.join(missing)} are missing from the merge", file=sys.stderr)
    stopped = [str(part["file"]) for part in merged["environment"]["merged_from"] if part.get("interrupted")]
    if stopped:
        print(
            f"note: {', '.join(stopped)} {'was' if len(stopped) == 1 else 'were'} stopped before "
            "finishing: the merged file is marked interrupted; resume them (sweep --resume) and merge again",
            file=sys.stderr,
        )
    coverage = merged["coverage"]
    print(
        f"{len(merged['results'])} records of {coverage['operators']} operators from "
        f"{len(arguments.files)} files; written to {arguments.output_file}",
        file=sys.stderr,
    )
    return 0
