"""Termination signals handled like Ctrl-C: what ``timeout``, CI runners and closed terminals send
(SIGTERM, SIGHUP) stops a sweep the same way, keeping what finished."""

from __future__ import annotations

import _thread
import atexit
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import cast

STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _handled() -> tuple[int, ...]:
    """The stopping signals this process does not ignore. One the process started with ignored stays
    ignored, as the command that started it meant: ``nohup`` ignores SIGHUP so that a sweep outlives
    its terminal, and a shell ignores SIGINT in the jobs it starts in the background."""
    return tuple(number for number in STOPPING_SIGNALS if signal.getsignal(number) is not signal.SIG_IGN)


class Stopped(KeyboardInterrupt):
    """A stopping signal arrived; ``signal_number`` says which."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(signal.Signals(signal_number).name)
        self.signal_number = signal_number


class Stopping:
    """The stopping signals that arrived (``received``, in order). Only the first stops anything, and
    only before ``settle()``: once a stop is under way, or the work is done, later signals are noted
    (said once), never allowed to lose the report being written."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self.settled = False
        self._said = False

    def settle(self) -> None:
        """The work is done: from now on a stopping signal is noted, and the report still written."""
        self.settled = True

    def handle(self, signal_number: int, _frame: object) -> None:
        if _resent(signal_number):  # the stop again, a finalizer having swallowed it: not a new signal
            if not self.settled:
                raise Stopped(signal_number)
            return
        stops = not self.received and not self.settled
        self.received.append(signal_number)
        if stops:
            raise Stopped(signal_number)
        if not self._said:
            self._said = True
            state = "already stopping" if not self.settled or len(self.received) > 1 else "the work is done"
            print(
                f"{signal.Signals(signal_number).name}: {state}; writing the report of what finished",
                file=sys.stderr,
            )


@contextlib.contextmanager
def stop_on_signals() -> Iterator[Stopping]:
    """While inside, SIGTERM and SIGHUP raise ``Stopped`` as Ctrl-C raises KeyboardInterrupt, until
    ``settle()`` (see ``Stopping``); the handlers before it are back afterwards."""
    stopping = Stopping()
    previous = {number: signal.signal(number, stopping.handle) for number in _handled()}
    previous_hook = _resend_swallowed_stops()
    try:
        yield stopping
    finally:
        sys.unraisablehook = previous_hook
        for number, handler in previous.items():
            # In opperf's own process, once a stop came or the work is done, later stops stay noted to
            # the end: what is left is returning the status (then ``hold_late_signals`` takes over).
            done = stopping.received or stopping.settled
            signal.signal(number, stopping.handle if done and handler is _stop else handler)


def stop_like_ctrl_c() -> None:
    """From here on SIGTERM and SIGHUP raise ``Stopped`` as Ctrl-C raises KeyboardInterrupt (and
    Ctrl-C raises ``Stopped`` too, naming it): a command stopped before its own handling starts still
    ends through its ``except KeyboardInterrupt``, with a message and the signal's shell status."""

    for number in _handled():
        signal.signal(number, _stop)
    _resend_swallowed_stops()
    atexit.register(_exit_for_late_stop)  # first registered: runs after every other exit hook


def _stop(signal_number: int, _frame: object) -> None:
    """The process-wide handler ``stop_like_ctrl_c`` installs."""
    _resent(signal_number)
    raise Stopped(signal_number)


_RESENT: set[int] = set()
"""Stops sent again because a finalizer swallowed them (``_resend_swallowed_stops``)."""


def _resent(signal_number: int) -> bool:
    """Whether this arrival of ``signal_number`` is a swallowed stop sent again (and no longer pending)."""
    resent = signal_number in _RESENT
    _RESENT.discard(signal_number)
    return resent


def _resend_swallowed_stops() -> Callable[[sys.UnraisableHookArgs], object]:
    """Make a stop that lands inside a finalizer stop the command anyway; returns the hook it replaces.

    Python runs a signal's handler wherever the main thread is, and an exception raised inside a
    finalizer (a framework object's ``__del__`` run as it is collected: MXNet's ``Symbol`` frees its
    handle there) cannot propagate: Python prints it as "Exception ignored", with its traceback, and
    goes on, so the stop would be lost. The hook installed here takes such a ``Stopped`` quietly and
    sends the signal to the main thread again, from a thread of its own, which cannot run before the
    main thread lets go of the interpreter, past the finalizer; should it land in a finalizer again, it
    is sent again. The handler knows it for the same stop (``_resent``), not a second one."""
    previous = sys.unraisablehook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        stop = unraisable.exc_value
        if not isinstance(stop, Stopped):
            previous(unraisable)
            return
        _RESENT.add(stop.signal_number)
        # Not ``threading.Thread.start``: it waits for the thread to run, so the signal would land in here.
        _thread.start_new_thread(
            signal.pthread_kill, (cast(int, threading.main_thread().ident), stop.signal_number)
        )

    sys.unraisablehook = hook
    return previous


_LATE: list[int] = []
"""Stopping signals that arrived after the command returned (``hold_late_signals``)."""


def hold_late_signals() -> None:
    """From here to the process's end the command's work and report are done: a stopping signal is
    only noted, and the last exit hook (``_exit_for_late_stop``, registered by ``stop_like_ctrl_c``)
    makes a noted one the exit status. Python would otherwise raise it while shutting down, or, once
    it has put the default handlers back, die by it (status -2, not 130)."""
    for number in _handled():
        signal.signal(number, lambda signal_number, _frame: _LATE.append(signal_number))


def _exit_for_late_stop() -> None:
    """At exit, after every other exit hook: end with a noted stop's status; with none, ignore stops
    from here (Python's teardown would reset them to the default, killing the process by the signal)."""
    if _LATE:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(exit_status(_LATE[0]))
    for number in STOPPING_SIGNALS:
        signal.signal(number, signal.SIG_IGN)


def exit_status(signal_number: int) -> int:
    """The shell's status for a process stopped by ``signal_number``: 128 + the number (130 for Ctrl-C,
    143 for SIGTERM, 129 for SIGHUP)."""
    return 128 + signal_number
