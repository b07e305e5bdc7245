"""``opperf ab``: two builds or settings measured in one job, interleaved, for ``opperf diff AB.json``.

``--base-python``/``--new-python`` run each side's workers in that interpreter (another build of the
framework: it runs this opperf's code, and needs the framework and numpy installed),
``--base-env``/``--new-env`` add to each side's environment (``MXNET_MKLDNN_ENABLED=0``), and
``--base-option``/``--new-option`` set a run option of one side otherwise (``values=normal``). The
sweep's selection and run flags choose what runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys

from opperf.cli.common import (
    JOURNAL_SUFFIX,
    add_affinity,
    add_quiet,
    add_selection,
    add_timeout,
    check_writable,
    whole,
)
from opperf.cli.progress import RoundsBar, wanted
from opperf.frameworks import get_backend
from opperf.operators.rules.profiles import STANDARD
from opperf.report.json_report import render_json
from opperf.results.options import RunOptions, SweepFactors, parse_option
from opperf.sweep.run import DEFAULT_TIMEOUT_S, SweepConfig
from opperf.utils.errors import OpperfError
from opperf.utils.files import UnwritableError, claimed, write_atomically
from opperf.utils.signals import exit_status, stop_on_signals
from opperf.utils.words import counted
from opperf.verdicts.ab.job import (
    DEFAULT_MIN_ROUNDS,
    DEFAULT_ROUNDS,
    ROUND_SHARE,
    SIDE_OPTIONS,
    SIDES,
    Build,
    ab_document,
    ab_environment,
    mismatches,
    run_ab,
)
from opperf.verdicts.ab.sequential import EXTRA_SHARE

HELP = "measure two builds or settings interleaved in one job (then: opperf diff AB.json)"


def _assignment(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value


def _side_option(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` of a run option a side may set otherwise, the value parsed as its flag's."""
    name, value = _assignment(text)
    if name not in SIDE_OPTIONS:
        raise argparse.ArgumentTypeError(f"a side may set only {', '.join(SIDE_OPTIONS)}, not {name!r}")
    try:
        return name, parse_option(name, value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{name}: {error}") from None


def _interpreter(text: str) -> str:
    found = shutil.which(text) if os.sep not in text else text
    if not found or not os.access(found, os.X_OK):
        raise argparse.ArgumentTypeError(f"{text!r} is not an executable Python interpreter")
    return found


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for side in SIDES:
        parser.add_argument(
            f"--{side}-python",
            default=sys.executable,
            type=_interpreter,
            metavar="PATH",
            help=f"the interpreter the {side} side's workers run (default: this one)",
        )
        parser.add_argument(
            f"--{side}-env",
            default=[],
            action="append",
            type=_assignment,
            metavar="NAME=VALUE",
            help=f"an environment variable of the {side} side's workers (repeatable)",
        )
        parser.add_argument(
            f"--{side}-option",
            default=[],
            action="append",
            type=_side_option,
            metavar="NAME=VALUE",
            help=f"a run option the {side} side sets otherwise: {', '.join(SIDE_OPTIONS)} (repeatable); "
            "the job then measures that change, interleaved, and diff pairs its rows across it "
            "(--new-option values=normal: what normal inputs cost)",
        )
    parser.add_argument(
        "--rounds",
        default=DEFAULT_ROUNDS,
        type=whole(1, "rounds"),
        help="the most rounds a configuration gets; a round is a pass over the undecided "
        "configurations in fresh workers, the sides taking turns per configuration (each round gets "
        f"1/{ROUND_SHARE} of --budget, 1/rounds when fewer, and a --target-precision the square "
        f"root of that many times looser) (default: {DEFAULT_ROUNDS})",
    )
    parser.add_argument(
        "--min-rounds",
        default=None,
        type=whole(1, "min-rounds"),
        help="the rounds every configuration gets; after them, one gets another round only while "
        "the diff of its rounds so far leaves it undecided (those whose ratio lies beyond the "
        "threshold first, then the cheapest first), while the further "
        f"rounds have spent under {EXTRA_SHARE:g} of what these spent (same as --rounds: a fixed "
        f"number) (default: {DEFAULT_MIN_ROUNDS}, or --rounds where fewer)",
    )
    add_affinity(parser, "both sides' workers", "; each side's next worker starts on the others meanwhile")
    parser.add_argument("--output-file", required=True, help="the A/B file to write (JSON)")
    add_timeout(parser, "one measurement", DEFAULT_TIMEOUT_S)
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted job from its journal (OUTPUT_FILE.journal.jsonl), without "
        "measuring again the pairs it holds",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="discard the journal an interrupted job left at OUTPUT_FILE.journal.jsonl and start over "
        "(without it, or --resume, an existing journal is refused)",
    )
    add_quiet(parser)
    add_selection(parser)
    RunOptions.add_arguments(parser)
    SweepFactors.add_arguments(parser, leaving_out=("thread_counts",))


def run(arguments: argparse.Namespace) -> int:
    if arguments.resume and arguments.fresh:
        raise OpperfError("--resume continues the journal and --fresh discards it; choose one")
    if arguments.min_rounds is None:
        arguments.min_rounds = min(DEFAULT_MIN_ROUNDS, arguments.rounds)
    elif arguments.min_rounds > arguments.rounds:
        raise OpperfError(
            f"--min-rounds {arguments.min_rounds} exceeds --rounds {arguments.rounds}, the most a "
            "configuration gets; raise --rounds or lower --min-rounds"
        )
    check_writable(arguments.output_file)
    journal = arguments.output_file + JOURNAL_SUFFIX
    builds = {
        side: Build(
            getattr(arguments, f"{side}_python"),
            dict(getattr(arguments, f"{side}_env")),
            dict(getattr(arguments, f"{side}_option")),
        )
        for side in SIDES
    }
    device = arguments.device or get_backend(arguments.framework).default_device()
    config = SweepConfig(
        options=RunOptions.from_arguments(arguments, device=device),
        factors=SweepFactors.from_arguments(arguments),
        profile=STANDARD,
        ops=arguments.ops,
        categories=arguments.categories,
        timeout_s=arguments.timeout,
        affinity=arguments.affinity,
    )
    bar = RoundsBar() if wanted(arguments) else None
    with claimed(arguments.output_file), stop_on_signals() as stopping:
        try:
            result = run_ab(
                config,
                builds,
                arguments.rounds,
                arguments.min_rounds,
                progress=(lambda pair: bar(pair.round, pair.base.spec.label)) if bar else None,
                done=stopping.settle,
                journal=journal,
                resume=arguments.resume,
                fresh=arguments.fresh,
            )
        finally:
            if bar is not None:
                bar.close()
        if not result.pairs and result.interrupted:
            resumable = os.path.exists(journal)
            kept = f"; the journal is kept: continue with --resume ({journal})" if resumable else ""
            print(f"interrupted before the first pair was measured: nothing written{kept}", file=sys.stderr)
            return exit_status(stopping.received[0] if stopping.received else signal.SIGINT)
        if not result.pairs:
            raise OpperfError("the selection measured nothing on both sides; choose operators with --ops")
        try:
            write_atomically(arguments.output_file, render_json(ab_document(result, ab_environment(result))))
        except UnwritableError as error:  # every pair is in the journal: nothing measured is lost
            raise OpperfError(
                f"{error}; the journal is kept: fix that, then continue with --resume ({journal})"
            ) from None
    for line in mismatches(result.descriptions):
        print(f"note: the builds differ: {line}", file=sys.stderr)
    status = "interrupted: " if result.interrupted else ""
    rounds = ", ".join(f"{count} in {rounds}" for rounds, count in result.rounds_run().items())
    resumed = f", {counted(result.resumed, 'pair')} from the journal" if result.resumed else ""
    print(
        f"{status}{result.configurations} configurations x 2 sides (rounds: {rounds}{resumed}) in "
        f"{result.wall_seconds:.0f} s; compare with: opperf diff {arguments.output_file}",
        file=sys.stderr,
    )
    if result.interrupted:
        print(
            f"the journal is kept: continue with the same command and --resume ({journal})", file=sys.stderr
        )
    else:
        os.unlink(journal)
    if stopping.received:  # stopped during the rounds (the file says interrupted), or after them
        return exit_status(stopping.received[0])
    return exit_status(signal.SIGINT) if result.interrupted else 0
