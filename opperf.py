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


if __name__ == "__main__":
    for stopping in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(stopping, _stopped_while_starting)
    from opperf.cli import main

    sys.exit(main())
