"""Termination signals handled like Ctrl-C: what ``timeout``, CI runners and closed terminals send
(SIGTERM, SIGHUP) stops a sweep the same way, keeping what finished."""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator

STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(KeyboardInterrupt):
    """A stopping signal arrived; ``signal_number`` says which."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(signal.Signals(signal_number).name)
        self.signal_number = signal_number


@contextlib.contextmanager
def stop_on_signals() -> Iterator[list[int]]:
    """While inside, SIGTERM and SIGHUP raise ``Stopped`` as Ctrl-C raises KeyboardInterrupt; the list
    yielded holds the stopping signals that arrived. Only the first stops anything: a second Ctrl-C
    while the sweep winds down and writes its report is noted, not allowed to lose the report. Once a
    stop has arrived, later ones stay noted after the block too, until the process exits: what follows
    it is the report being written."""
    received: list[int] = []

    def note(signal_number: int, _frame: object) -> None:
        received.append(signal_number)
        if len(received) == 2:  # said once, however many follow
            print(
                f"{signal.Signals(signal_number).name}: already stopping; writing the report of what "
                "finished",
                file=sys.stderr,
            )

    def stop(signal_number: int, frame: object) -> None:
        if received:
            note(signal_number, frame)
            return
        received.append(signal_number)
        raise Stopped(signal_number)

    previous = {number: signal.signal(number, stop) for number in STOPPING_SIGNALS}
    try:
        yield received
    finally:
        for number, handler in previous.items():
            signal.signal(number, note if received else handler)


def exit_status(signal_number: int) -> int:
    """The shell's status for a process stopped by ``signal_number``: 128 + the number (130 for Ctrl-C,
    143 for SIGTERM, 129 for SIGHUP)."""
    return 128 + signal_number
