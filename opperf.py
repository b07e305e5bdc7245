#!/usr/bin/env python3
"""Sweep MXNet's operator registry and write a report: ``python opperf.py --help``."""

import os
import signal
import sys


def _stopped_while_starting(signal_number: int, _frame: object) -> None:
    """A stop while opperf is still being imported: nothing ran, so leave at once, with the shell's
    status and a line saying so, rather than a traceback (Ctrl-C) or a silent death (SIGTERM)."""
    sys.stderr.write(f"error: interrupted ({signal.Signals(signal_number).name}) while starting\n")
    os._exit(128 + signal_number)


def _missing(error: ModuleNotFoundError) -> str:
    """One line for an interpreter without opperf's dependencies: which one, and the two ways in."""
    venv = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".venv", "bin")
    return (
        f"error: {sys.executable} has no module {error.name!r}, which opperf needs: run it in the "
        f"environment `make venv` builds ({venv}/opperf, or `. {venv}/activate` first), or "
        "`pip install '.[mxnet,torch,plot,xlsx]'` into this one\n"
    )


if __name__ == "__main__":
    for stopping in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(stopping, _stopped_while_starting)
    try:
        from opperf.cli import main, subcommand_modules

        subcommand_modules()  # what the subcommands need: a missing dependency shows here, in one line
    except ModuleNotFoundError as missing:
        if (missing.name or "").split(".")[0] == "opperf":  # opperf's own: a broken checkout, not a setup
            raise
        sys.stderr.write(_missing(missing))
        sys.exit(2)

    sys.exit(main())
