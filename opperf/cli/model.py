"""``opperf model``: which operator dominates a model. Profile it end to end (the framework's
profiler, per operator), capture its operator configurations, replay each alone through a normal
sweep, and report in-model against standalone time per operator.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys

from opperf.cli.capture import add_model_arguments
from opperf.cli.common import check_outputs, report_format, whole, write_or_print
from opperf.cli.progress import Stages, SweepBar, wanted
from opperf.frameworks import capability_part, get_backend
from opperf.report.model_markdown import render_model_markdown
from opperf.report.xlsx import require_openpyxl, write_workbook
from opperf.report.xlsx_tables import model_tables
from opperf.results.configs import ConfigsFile, by_operator
from opperf.results.model_report import InModel, ModelReport, build
from opperf.results.options import RunOptions
from opperf.sweep.models import capture_model, load_model, running
from opperf.sweep.run import SweepConfig, run_sweep
from opperf.utils.errors import OpperfError
from opperf.utils.files import write_atomically
from opperf.utils.signals import exit_status, stop_on_signals
from opperf.utils.words import counted

HELP = "profile a model per operator, replay its captured configurations, report each operator's share"
DEFAULT_PASSES = 10
FORMATS = ("md", "xlsx")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_arguments(parser, modes=("inference",))
    parser.add_argument(
        "--passes",
        default=DEFAULT_PASSES,
        type=whole(1, "passes"),
        help=f"forward passes profiled in the model, and timed end to end (default: {DEFAULT_PASSES})",
    )
    parser.add_argument(
        "--threads",
        default=1,
        type=whole(1, "threads"),
        help="intra-op threads, in the model and in the replay alike (default: 1; with more, a machine "
        "whose cores are shared makes OpenMP regions wait a scheduler slice, about 8 ms here)",
    )
    parser.add_argument(
        "--output-format",
        choices=FORMATS,
        default=None,
        help="md, or xlsx (sheets of operators, configurations and totals; needs opperf[xlsx] and "
        "--output-file) (default: from --output-file's extension, else md)",
    )
    parser.add_argument("--output-file", default=None, help="the report (default: standard output)")
    parser.add_argument("--json-file", default=None, help="also write the report as JSON here")
    parser.add_argument("--configs-file", default=None, help="also write the captured configs file here")


def run(arguments: argparse.Namespace) -> int:
    output_format = report_format(arguments.output_format, arguments.output_file, "md")
    if output_format == "xlsx":
        if not arguments.output_file:
            raise OpperfError("--output-format xlsx writes a workbook; name it with --output-file model.xlsx")
        require_openpyxl()
    check_outputs(
        ("--output-file", arguments.output_file, f"model.{output_format}"),
        ("--json-file", arguments.json_file, "model.json"),
        ("--configs-file", arguments.configs_file, "configs.jsonl"),
    )
    framework = arguments.framework
    threads = get_backend(framework).set_threads(arguments.threads)
    stages = Stages("model", wanted(arguments))
    try:
        configs, in_model = _profiled(arguments, stages)
    finally:
        stages.close()
    if arguments.configs_file:
        from opperf.results.configs import render

        write_atomically(arguments.configs_file, render(configs))
    options = RunOptions(framework=framework, run_backward=False, mode="inference", threads=threads)
    bar = SweepBar() if wanted(arguments) else None
    with stop_on_signals() as stopping:
        config = SweepConfig(options=options, configs=by_operator(configs.configurations))
        try:
            replay = run_sweep(config, progress=bar, done=stopping.settle)  # a stop from then on is noted
        finally:
            if bar is not None:
                bar.close()
        if replay.interrupted:
            number = stopping.received[0] if stopping.received else signal.SIGINT
            print(
                f"error: interrupted ({signal.Signals(number).name}) after replaying {replay.measured} of "
                f"{replay.selected} operators; no report is written (its shares would leave operators "
                "out): run the command again",
                file=sys.stderr,
            )
            return exit_status(number)
        _write_report(arguments, output_format, build(configs, in_model, replay.measurements))
    print(
        f"{counted(replay.measured, 'operator')}, {counted(len(configs.configurations), 'configuration')} "
        "replayed in "
        f"{replay.environment.wall_seconds:.0f} s",
        file=sys.stderr,
    )
    return exit_status(stopping.received[0]) if stopping.received else 0


def _profiled(arguments: argparse.Namespace, stages: Stages) -> tuple[ConfigsFile, InModel]:
    """The model's operator configurations (one forward pass, captured) and its per-operator
    profile over ``--passes`` passes, each stage named on ``stages``."""
    framework = arguments.framework
    stages(f"loading {arguments.model}")
    loaded = load_model(framework, arguments.model, arguments.input_shape)
    stages(f"running {loaded.name} once, recording its operators")
    capture = capability_part(framework, "capture", "capture")
    captured = running(
        loaded.name, "running it", lambda: capture.capture(loaded.model, loaded.inputs, "inference")
    )
    configs = capture_model(framework, loaded, "inference", captured)
    stages(f"profiling {counted(arguments.passes, 'pass', 'passes')} of {loaded.name}")
    profiler = capability_part(framework, "capture", "model_profile")
    in_model = running(
        loaded.name,
        "profiling it",
        lambda: profiler.profile(loaded.model, loaded.inputs, arguments.passes, captured),
    )
    return configs, in_model


def _write_report(arguments: argparse.Namespace, output_format: str, report: ModelReport) -> None:
    if output_format == "xlsx":
        write_workbook(arguments.output_file, model_tables(report))
    else:
        write_or_print(render_model_markdown(report), arguments.output_file)
    if arguments.json_file:
        write_atomically(arguments.json_file, json.dumps(report.to_json(), indent=1) + "\n")
