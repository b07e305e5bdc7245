"""``opperf``: the command line. Each subcommand is a small module of this package with ``HELP``,
``add_arguments(parser)`` and ``run(arguments) -> exit status``; errors take one path, here.

Bare flags mean ``sweep``, so ``python opperf.py --ctx cpu --output-format md`` keeps working.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import signal
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import NoReturn, cast

from opperf.frameworks import FRAMEWORKS
from opperf.utils.errors import OpperfError
from opperf.utils.signals import exit_status, hold_late_signals, stop_like_ctrl_c
from opperf.utils.words import one_of

SUBCOMMANDS = {
    "sweep": "sweep",
    "list": "listing",
    "explain": "explain",
    "compare": "compare",
    "diff": "diff",
    "ab": "ab",
    "merge": "merge",
    "plan": "plan",
    "history": "history",
    "capture": "capture",
    "model": "model",
    "report": "report",
    "publish": "publish",
}
"""Subcommand -> its module in ``opperf.cli``."""
DEFAULT_SUBCOMMAND = "sweep"

USAGE_ERROR = 2


def opperf_version() -> str:
    try:
        return version("opperf")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error on one line like every other opperf error (argparse prints the
    whole usage block first), naming where the help is; status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"error: {message}{self._takes(message)} (see `{self.prog} --help`)\n")

    def _takes(self, message: str) -> str:
        """What the flag a message names takes (``--timeout SECONDS|none``): a value that starts with
        "-" (``-inf``) reads as a flag, and the message alone says only "expected one argument"."""
        named = re.match(r"argument ([^:]+): expected", message)
        flags = set(named.group(1).split("/")) if named else set()
        action = next((a for a in self._actions if flags & set(a.option_strings)), None)
        if action is None:
            return ""
        metavar = action.metavar or action.dest.upper()
        return f"; it takes {action.option_strings[0]} {metavar}"


def subcommand_modules() -> dict[str, ModuleType]:
    """Each subcommand's module, imported (with what it needs: a dependency missing from the
    interpreter shows here, as ``ModuleNotFoundError``)."""
    return {name: importlib.import_module(f"opperf.cli.{module}") for name, module in SUBCOMMANDS.items()}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="opperf",
        description=f"Benchmark every operator of {one_of(sorted(FRAMEWORKS))} (forward, backward, peak "
        "memory), and compare the results. Bare flags mean `opperf sweep`.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"opperf {opperf_version()}")
    subparsers = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    for name, module in subcommand_modules().items():
        epilog = module.categories_epilog() if hasattr(module, "categories_epilog") else None
        subparser = subparsers.add_parser(
            name,
            help=module.HELP,
            description=module.__doc__,
            epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(subparser)
        subparser.set_defaults(command=module.run)
    sweep = subparsers.choices[DEFAULT_SUBCOMMAND]
    parser.epilog = f"Bare flags mean `opperf {DEFAULT_SUBCOMMAND}`, which takes:\n\n{sweep.format_help()}"
    return parser


def _with_subcommand(argv: Sequence[str]) -> list[str]:
    """``argv`` with ``sweep`` in front when it names no subcommand (bare flags mean a sweep)."""
    argv = list(argv)
    if argv and (argv[0] in SUBCOMMANDS or argv[0] in ("-h", "--help", "--version")):
        return argv
    return [DEFAULT_SUBCOMMAND, *argv]


def _serve_other_interpreters() -> None:
    """Let a framework named by ``OPPERF_<NAME>_PYTHON`` run its workers in that interpreter."""
    from opperf.frameworks import Backend, serve_other_interpreters_with
    from opperf.measure.remote import RemoteBackend

    serve_other_interpreters_with(cast("Callable[[str, str, str], Backend]", RemoteBackend))


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # the process's own command: SIGTERM and SIGHUP stop it as Ctrl-C does
        stop_like_ctrl_c()
    try:
        _serve_other_interpreters()  # imports: a stop may arrive meanwhile, and is a stop like any other
        arguments = build_parser().parse_args(_with_subcommand(sys.argv[1:] if argv is None else argv))
        return arguments.command(arguments)
    except OpperfError as error:
        print(f"error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:  # the reader of the output left (``opperf list | head -1``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the final flush cannot fail
        return exit_status(signal.SIGPIPE)
    except KeyboardInterrupt as stop:
        number = getattr(stop, "signal_number", signal.SIGINT)
        name = signal.Signals(number).name
        print(f"error: interrupted ({name}) before anything was written", file=sys.stderr)
        return exit_status(number)
    finally:
        if argv is None:  # the process's own command: nothing is left to lose once it returns
            hold_late_signals()


if __name__ == "__main__":
    sys.exit(main())
