"""``opperf capture``: run a model once and write the operator configurations it called (JSON Lines).

The file replays with ``opperf sweep --configs FILE``; its format is described in ``opperf.results.configs``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from opperf.cli.common import add_quiet, check_writable
from opperf.cli.progress import Stages, wanted
from opperf.frameworks import FRAMEWORKS
from opperf.results.configs import render
from opperf.results.options import MODES
from opperf.sweep.models import built_in_names, capture_model, load_model
from opperf.utils.files import write_atomically

HELP = "record the operator configurations a model calls, for `sweep --configs`"


def input_shape(text: str) -> tuple[int, ...]:
    """An argparse type: a shape such as 1,3,224,224."""
    try:
        shape = tuple(int(part) for part in text.replace("x", ",").split(","))
    except ValueError:
        shape = ()
    if not shape or any(d < 1 for d in shape):
        raise argparse.ArgumentTypeError(f"{text!r} is no input shape; write one such as 1,3,224,224")
    return shape


def add_model_arguments(parser: argparse.ArgumentParser, modes: Sequence[str] = MODES) -> None:
    """The flags naming a model, shared with ``opperf model``, which runs it in fewer ``modes``."""
    parser.add_argument(
        "--framework", required=True, choices=sorted(FRAMEWORKS), help="the model's framework"
    )
    parser.add_argument(
        "--model",
        required=True,
        help=f"a built-in model ({built_in_names()}) or module:callable returning (model, example_inputs)",
    )
    parser.add_argument(
        "--input-shape",
        default=None,
        type=input_shape,
        metavar="SHAPE",
        help="a built-in model's input shape, e.g. 1,3,224,224 (default: the model's own)",
    )
    parser.add_argument(
        "--mode",
        default="inference",
        choices=modes,
        help="inference: a forward pass; training: a forward pass in training mode and its backward "
        "(default: inference)"
        if "training" in modes
        else "inference, a forward pass (capture training with opperf capture --mode training)",
    )
    add_quiet(parser)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_arguments(parser)
    parser.add_argument(
        "--output-file",
        "--output",
        dest="output_file",
        required=True,
        metavar="FILE.jsonl",
        help="where to write the configs file (--output is the same flag)",
    )


def run(arguments: argparse.Namespace) -> int:
    check_writable(arguments.output_file, "--output-file", "configs.jsonl")
    stages = Stages("capture", wanted(arguments))
    try:
        stages(f"loading {arguments.model}")
        loaded = load_model(arguments.framework, arguments.model, arguments.input_shape)
        stages(f"running {loaded.name} once ({arguments.mode}), recording its operators")
        captured = capture_model(arguments.framework, loaded, arguments.mode)
    finally:
        stages.close()
    write_atomically(arguments.output_file, render(captured))
    print(
        f"{captured.header.calls} calls, {len(captured.configurations)} distinct configurations of "
        f"{len({c.op for c in captured.configurations})} operators; written to {arguments.output_file}",
        file=sys.stderr,
    )
    return 0
