"""``opperf sweep``: benchmark a framework's registry (or a selection of it) and write a report.

Bare flags mean this subcommand: ``python opperf.py --ctx cpu --output-format md`` is a sweep.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Sequence

from opperf.cli import compare
from opperf.cli.common import (
    JOURNAL_SUFFIX,
    add_affinity,
    add_isolation,
    add_quiet,
    add_selection,
    add_sharding,
    add_tag_selection,
    add_timeout,
    check_apart_from_journal,
    check_outputs,
    names,
    on_off,
    report_format,
    selected_tags,
    sharding,
    whole,
)
from opperf.cli.progress import SweepBar, wanted
from opperf.frameworks import FRAMEWORKS, FrameworkFlag, capability_part, framework_module, get_backend
from opperf.operators import fused
from opperf.operators.rules import foreign_tensor
from opperf.operators.rules.profiles import INT64, STANDARD
from opperf.report.csv_report import render_csv
from opperf.report.hud import render_hud
from opperf.report.json_report import render_json
from opperf.report.markdown import render_markdown
from opperf.report.xlsx import require_openpyxl, write_workbook
from opperf.report.xlsx_tables import results_tables
from opperf.results import configs, replay
from opperf.results.coverage import Coverage, render_coverage
from opperf.results.measurement import Status
from opperf.results.options import RunOptions, SweepFactors, was_given
from opperf.sweep.devices import parse_devices
from opperf.sweep.document import build_document
from opperf.sweep.engines import engine_task
from opperf.sweep.run import DEFAULT_TIMEOUT_S, SweepConfig, SweepResult, canonical_names, run_sweep
from opperf.utils.errors import OpperfError
from opperf.utils.files import write_atomically
from opperf.utils.signals import exit_status, stop_on_signals
from opperf.verdicts.history import is_postgres, open_history

HELP = "benchmark a framework's operators and write a report (the default subcommand)"
RENDERERS = {"json": render_json, "md": render_markdown, "csv": render_csv, "hud": render_hud}
WORKBOOKS = {"xlsx": results_tables}
"""Formats written as a workbook (opperf[xlsx]) rather than text."""


def _devices(text: str) -> tuple[int, ...]:
    try:
        return parse_devices(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _statuses(text: str) -> tuple[Status, ...]:
    chosen = names(text)
    known = [s.value for s in Status if s is not Status.OK]
    unknown = [name for name in chosen if name not in known]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown status {unknown[0]!r}; choose from {', '.join(known)}")
    return tuple(Status(name) for name in chosen)


def framework_flags() -> dict[str, tuple[FrameworkFlag, ...]]:
    """Each framework's own flags (``frameworks/<name>/flags.py``), by framework."""
    return {name: framework_module(name, "flags").FLAGS for name in FRAMEWORKS}


def categories_epilog() -> str:
    """Each framework's categories, for ``--help``."""
    lines = []
    for name in FRAMEWORKS:
        listed = ", ".join(c.name for c in framework_module(name, "categories").CATEGORIES)
        lines.append(f"{name} categories: {listed}")
    lines.append("both: longtail (opperf's long-tail operators; `opperf list --tags` shows their tags)")
    lines.append("both: fused (fused patterns: conv+bn+relu, ...; `--stages eager,graph,compile,fused`)")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    RunOptions.add_arguments(parser, leaving_out=("threads",))
    SweepFactors.add_arguments(parser)
    add_selection(parser)
    add_tag_selection(parser)
    parser.add_argument(
        "--compare",
        default=(),
        type=names,
        metavar="NAMESPACES",
        help="compare namespaces instead of sweeping (as `opperf compare`), e.g. mx.nd,mx.np,torch",
    )
    add_affinity(parser)
    parser.add_argument(
        "--output-format",
        default=None,
        choices=sorted([*RENDERERS, *WORKBOOKS]),
        help="report format: json (the results document), md, csv, xlsx (a workbook of results and "
        "coverage; needs opperf[xlsx]), or hud (PyTorch's OSS benchmark database records) (default: from "
        "--output-file's extension, else json)",
    )
    parser.add_argument(
        "--output-file", default=None, help="report path (default: <framework>_operator_benchmarks.<format>)"
    )
    parser.add_argument("--json-file", default=None, help="also write the JSON results document here")
    parser.add_argument(
        "--int64-tensor",
        default=False,
        type=on_off,
        metavar="{on,off}",
        help="on: large-tensor profile, tensors of more than 2**32 elements "
        "(needs an MXNet built with INT64_TENSOR_SIZE)",
    )
    parser.add_argument(
        "--recalibrate-peaks",
        action="store_true",
        help="measure this machine's peak memory bandwidth and GEMM rate again instead of using the "
        "cached figures (~/.cache/opperf/peaks.json) that roofline fractions are relative to",
    )
    add_timeout(parser, "an operator, all its input configurations together,", DEFAULT_TIMEOUT_S)
    add_isolation(parser, "operators")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted sweep from its journal (OUTPUT_FILE.journal.jsonl), without "
        "re-running finished operators",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="discard the journal an interrupted sweep left at OUTPUT_FILE.journal.jsonl and start over "
        "(without it, or --resume, an existing journal is refused)",
    )
    parser.add_argument(
        "--coverage",
        action="store_true",
        help="print, per category, how many operators were benchmarked, skipped (why) and failed (why); "
        "exit 1 if any selected operator is unaccounted for",
    )
    add_sharding(parser)
    parser.add_argument(
        "--devices",
        default=(),
        type=_devices,
        metavar="N,M,...",
        help="measure on these GPUs at once, one worker each, the most expensive operators first: each "
        "worker sees its GPU alone, as gpu(0), so records pair with a one-GPU sweep's, and the "
        "environment says which GPU measured what; with --shard, one Slurm task or pod owns a node's "
        "GPUs (needs --ctx gpu)",
    )
    parser.add_argument(
        "--fail-on",
        default=(),
        type=_statuses,
        metavar="STATUSES",
        help="exit 1 when an operator ends in one of these statuses, e.g. failed,crashed,timeout "
        "(default: exit 0 whatever the operators did)",
    )
    parser.add_argument(
        "--history",
        default=None,
        metavar="DB",
        help="also add the results to this history database (see `opperf history`)",
    )
    add_quiet(parser)
    parser.add_argument(
        "--configs",
        default=(),
        type=names,
        metavar="FILE[,FILE]",
        help="benchmark exactly the operator configurations in these configs files (`opperf capture`'s "
        "JSON Lines, results JSON files, or dlop:PATH for a DLOP-Bench file) instead of the rules' "
        "inputs; several files merge",
    )
    parser.add_argument(
        "--configs-sample",
        default=None,
        type=whole(1, "configurations"),
        metavar="N",
        help="replay a sample of N of the --configs configurations, drawn with --seed",
    )
    for framework, flags in framework_flags().items():
        for flag in flags:
            parser.add_argument(
                flag.flag,
                dest=flag.dest,
                default=None,
                choices=flag.choices,
                help=f"({framework}) {flag.help}",
            )


def given_framework_flags(arguments: argparse.Namespace) -> dict[str, str]:
    """The framework flags given, by name: a journal must be resumed with the same ones."""
    return {
        flag.flag: getattr(arguments, flag.dest)
        for flags in framework_flags().values()
        for flag in flags
        if getattr(arguments, flag.dest, None) is not None
    }


def apply_framework_flags(arguments: argparse.Namespace, frameworks: tuple[str, ...]) -> None:
    """Act on each framework flag given; one of a framework the run does not use is refused."""
    for framework, flags in framework_flags().items():
        for flag in flags:
            value = getattr(arguments, flag.dest, None)
            if value is None:
                continue
            if framework not in frameworks:
                raise OpperfError(f"{flag.flag} is a {framework} flag; this run uses {', '.join(frameworks)}")
            flag.apply(value)


def replay_configurations(arguments: argparse.Namespace) -> tuple[configs.Configuration, ...]:
    """The --configs files' configurations (sampled with --configs-sample), checked against the
    framework's registry; none without --configs."""
    if not arguments.configs:
        if arguments.configs_sample is not None:
            raise OpperfError("--configs-sample samples --configs; name the configs files with --configs")
        return ()
    if was_given(arguments, "shapes") and arguments.shapes != "standard":
        drawing: str | None = "--shapes"
    else:
        drawing = "--fuzz-count" if was_given(arguments, "fuzz_count") else None
    if drawing is not None:
        raise OpperfError(
            f"{drawing} draws shapes, and --configs replays the shapes its files hold; leave {drawing} out, "
            "or sweep without --configs"
        )
    canonical = canonical_names(get_backend(arguments.framework).operators())
    capture = capability_part(arguments.framework, "capture", "capture")
    chosen = replay.load_replay(arguments.configs, arguments.framework, capture.accepted_arguments, canonical)
    if not chosen:  # an empty replay would select nothing, which is the whole registry elsewhere
        raise OpperfError(
            f"{', '.join(arguments.configs)} {'holds' if len(arguments.configs) == 1 else 'hold'} no "
            "configuration; capture some with `opperf capture`, or pass a results file that has records"
        )
    for configuration in chosen:  # a tensor the framework has none of makes the file malformed
        problem = foreign_tensor(arguments.framework, configuration.inputs)
        if problem is not None:
            where = configuration.source or ", ".join(arguments.configs)
            raise OpperfError(
                f"{where}: {configuration.op}'s {problem} ({arguments.framework} has no such tensor); mend "
                "that line, or capture the model again with `opperf capture`"
            )
    chosen = configs.sample(chosen, arguments.configs_sample, arguments.seed)
    _replayed_dtype(arguments, chosen)
    return chosen


def _replayed_dtype(arguments: argparse.Namespace, chosen: Sequence[configs.Configuration]) -> None:
    """The run's dtype for a replay, which records say and which only tensors that name no dtype of
    their own take: the floating-point dtype the files' tensors name where they all name one (a model
    captured in float16 is recorded float16, not the default float32); an explicit ``--dtype`` other
    than one they name is refused (its records would say it, and the tensors run in theirs)."""
    named = configs.float_dtypes(chosen)
    if was_given(arguments, "dtype"):
        if named - {arguments.dtype}:
            raise OpperfError(
                f"--dtype {arguments.dtype}: the --configs files' tensors name their own "
                f"({', '.join(sorted(named))}), which a replay keeps; leave --dtype out (it applies only to "
                "tensors that name none)"
            )
    elif len(named) == 1:
        arguments.dtype = next(iter(named))


def _fusion_stage(arguments: argparse.Namespace) -> None:
    """Selecting the fused patterns' category runs their fusion backends too, unless --stages says
    which stages to run."""
    if fused.CATEGORY in arguments.categories and not was_given(arguments, "stages"):
        arguments.stages = (*arguments.stages, fused.STAGE)
        stages = ",".join(arguments.stages)
        print(
            f"note: category {fused.CATEGORY} runs its fusion backends too (--stages {stages})",
            file=sys.stderr,
        )


def _compared_alone(arguments: argparse.Namespace) -> None:
    """Refuse a sweep's factors with ``--compare``: a comparison measures each namespace's function
    once per configuration, eager, at one thread count."""
    given = [
        SweepFactors.declared(name).flag
        for name, value in SweepFactors.from_arguments(arguments).settings().items()
        if value != SweepFactors().settings()[name]
    ]
    if given:
        raise OpperfError(
            f"--compare measures each function once per configuration, eager, at one thread count; "
            f"{', '.join(given)} {'vary' if len(given) > 1 else 'varies'} a sweep's rows: leave "
            f"{'them' if len(given) > 1 else 'it'} out"
        )
    ignored = [flag for dest, (flag, default) in _sweep_only().items() if getattr(arguments, dest) != default]
    if ignored:
        raise OpperfError(
            f"--compare writes a comparison, not a sweep's results, and takes `opperf compare`'s options; "
            f"{', '.join(ignored)} {'are' if len(ignored) > 1 else 'is'} a sweep's: leave "
            f"{'them' if len(ignored) > 1 else 'it'} out, or sweep on its own"
        )


def _sweep_only() -> dict[str, tuple[str, object]]:
    """The options ``sweep`` has and ``compare`` has not, by destination, each with its flag and
    default (the sweep's factors, which ``_compared_alone`` names apart, left out): what a comparison
    would ignore."""
    own, theirs = argparse.ArgumentParser(), argparse.ArgumentParser()
    add_arguments(own)
    compare.add_arguments(theirs)
    known = {action.dest for action in theirs._actions}
    factors = {SweepFactors.declared(name).flag for name in SweepFactors().settings()}
    return {
        action.dest: (action.option_strings[0], action.default)
        for action in own._actions
        if action.option_strings
        and action.dest not in known | {"compare", "help"}
        and not factors & set(action.option_strings)
    }


def _replayed_framework(arguments: argparse.Namespace) -> None:
    """A replay without --framework runs the framework its configs files were captured with."""
    if not arguments.configs or was_given(arguments, "framework"):
        return
    framework = replay.replay_framework(arguments.configs)
    if framework not in FRAMEWORKS:
        raise OpperfError(
            f"{arguments.configs[0]} holds {framework} configurations; opperf replays "
            f"{', '.join(FRAMEWORKS)}"
        )
    if framework != arguments.framework:
        print(f"note: replaying {framework} configurations (the configs files' framework)", file=sys.stderr)
        arguments.framework = framework


def _report_writer(chosen: str) -> Callable[[str, dict], None]:
    """How to write the report in format ``chosen``; a workbook format's extra is checked now, before
    the sweep rather than after it."""
    if chosen in WORKBOOKS:
        require_openpyxl()
        return lambda path, document: write_workbook(path, WORKBOOKS[chosen](document))
    return lambda path, document: write_atomically(path, RENDERERS[chosen](document))


def run(arguments: argparse.Namespace) -> int:
    arguments.threads, arguments.thread_counts = SweepFactors.split_threads(arguments.thread_counts)
    if arguments.compare:
        _compared_alone(arguments)
        arguments.namespaces = arguments.compare
        return compare.run(arguments)
    _replayed_framework(arguments)
    _fusion_stage(arguments)
    apply_framework_flags(arguments, (arguments.framework,))
    if arguments.resume and arguments.fresh:
        raise OpperfError("--resume continues the journal and --fresh discards it; choose one")
    chosen = report_format(arguments.output_format, arguments.output_file, default="json")
    output_file = arguments.output_file
    if output_file is None:
        output_file = f"{arguments.framework}_operator_benchmarks.{chosen}"
    history = arguments.history
    check_outputs(
        ("--output-file", output_file, f"results.{chosen}"),
        ("--json-file", arguments.json_file, "results.json"),
        ("--history", None if history and is_postgres(history) else history, "history.sqlite"),
    )
    if history and (is_postgres(history) or os.path.exists(history)):
        with open_history(history, create=True):  # one that is no store is refused before measuring
            pass
    write_report = _report_writer(chosen)
    journal = output_file + JOURNAL_SUFFIX
    check_apart_from_journal(journal, ("--json-file", arguments.json_file), ("--history", history))
    device = arguments.device or get_backend(arguments.framework).default_device()
    shard, costs = sharding(arguments, arguments.framework)
    replayed = replay_configurations(arguments)
    config = SweepConfig(
        options=RunOptions.from_arguments(arguments, device=device),
        factors=SweepFactors.from_arguments(arguments),
        profile=INT64 if arguments.int64_tensor else STANDARD,
        ops=arguments.ops,
        categories=arguments.categories,
        tags=selected_tags(arguments),
        tags_all=arguments.tags_all,
        isolate=not arguments.no_isolation,
        timeout_s=arguments.timeout,
        journal=journal,
        resume=arguments.resume,
        recalibrate_peaks=arguments.recalibrate_peaks,
        affinity=arguments.affinity,
        shard=shard,
        costs=costs,
        batch_job=engine_task(os.environ),
        devices=arguments.devices,
        fresh=arguments.fresh,
        framework_flags=given_framework_flags(arguments),
        configs=configs.by_operator(replayed),
    )
    progress = SweepBar() if wanted(arguments) else None
    with stop_on_signals() as stopping:
        try:
            # Once no operator is left to run, a stop is noted: the report of what finished is written.
            result = run_sweep(config, progress=progress, done=stopping.settle)
        finally:
            if progress is not None:
                progress.close()
        try:
            status = _report(arguments, result, stopping.received, output_file, journal, write_report)
        except OpperfError as error:  # a full disk, a folder gone read-only: the journal has it all
            raise OpperfError(
                f"{error}; what was measured is kept in {journal}: make room, then run the same "
                "command with --resume"
            ) from None
    # A stop that came after the last operator finished: the report is whole, the status says the stop.
    return exit_status(stopping.received[0]) if stopping.received and status == 0 else status


def _report(
    arguments: argparse.Namespace,
    result: SweepResult,
    received: list[int],
    output_file: str,
    journal: str,
    write_report: Callable[[str, dict], None],
) -> int:
    """Write the report (and the JSON, the history) of a finished or interrupted sweep, print its
    summary, remove the journal of a complete one; the exit status."""
    coverage = Coverage.of(result.measurements, result.registered, result.aliases)
    environment = result.environment.to_json()
    document = build_document(result.measurements, environment, result.registered, result.aliases)
    write_report(output_file, document)
    if arguments.json_file:
        write_atomically(arguments.json_file, render_json(document))
    if arguments.history and not result.interrupted:
        with open_history(arguments.history, create=True) as history:
            history.add(document, arguments.json_file or output_file)
    if arguments.coverage:
        print(render_coverage(coverage))
    summary = (
        f"{coverage.summary()} in {result.environment.wall_seconds:.0f} s"
        + (f" ({result.resumed} from the journal)" if result.resumed else "")
        + f"; report: {output_file}"
    )
    if result.interrupted:
        cause = signal.Signals(received[0]).name if received else "SIGINT"
        print(
            f"interrupted ({cause}) after {result.measured} of {result.selected} operators; {summary}; "
            "the journal is kept: continue with the same command and --resume",
            file=sys.stderr,
        )
        return exit_status(received[0] if received else signal.SIGINT)
    os.unlink(journal)
    print(summary, file=sys.stderr)
    gated = [state for state in coverage.operators if state.status in arguments.fail_on]
    if gated:
        shown = ", ".join(f"{state.op} ({state.status.value})" for state in gated[:10])
        print(f"--fail-on: {len(gated)} operators: {shown}", file=sys.stderr)
        return 1
    if arguments.coverage and len(coverage.operators) != result.selected:
        print(
            f"--coverage: {result.selected - len(coverage.operators)} selected operators have no record",
            file=sys.stderr,
        )
        return 1
    return 0
