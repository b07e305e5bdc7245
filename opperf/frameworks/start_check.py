"""Whether a framework starts with the settings it is given, found in a child process first.

Some settings a framework reads as it is imported kill the process where a value does not parse: MXNet
takes ``OMP_NUM_THREADS=banana`` or ``MXNET_CPU_WORKER_NTHREADS=2.5`` to a C++ ``terminate``, and
opperf would die at its import with exit 134 and no word of its own. Others fail only once its runtime
starts (``MXNET_ENGINE_TYPE=banana``: every configuration failed, and the sweep exited 0). Where one
of the settings a framework declares (``Framework.checked_settings``) is set, ``check_starts`` runs
a child that imports the framework and starts it (``Backend.start``), and turns a
child that dies or fails into one OpperfError naming what the framework said. The parent's own
runtime is not started by it: a sweep's thread settings still come first there.

The child is ``opperf.frameworks.starting``: it exits 0 where the framework starts, else writes the
error line opperf gives for it as its last line of output and exits ``FAILED``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Sequence

from opperf.frameworks.contract import Framework
from opperf.utils.child import opperf_command
from opperf.utils.errors import OpperfError

START_FIX = "fix or unset the environment variable it names (JAX_*, XLA_FLAGS, MXNET_*, OMP_*)"
"""What to do about a framework that fails to start: the settings it reads from the environment."""

START_TIMEOUT_S = 300.0
"""How long the child may take to import and start the framework."""

FATAL_LOG = re.compile(r"(?:\d{4}-\d\d-\d\d [\d:.]+: F|F\d{4} [\d:.]+ +\d+) \S+:\d+\] (.+)")
"""A fatal line of XLA's log, either format (``2026-11-28 04:29:49.323322: F external/xla/...cc:224]
Unknown flags in XLA_FLAGS: ...``, ``F1128 04:29:51.309327 24922 parse_flags_from_env.cc:234] ...``):
its message is the group."""


def fatal_message(lines: Sequence[str]) -> str | None:
    """The message of the last fatal log line among ``lines`` (``Unknown flags in XLA_FLAGS: ...``),
    None where there is none."""
    found = [match.group(1) for match in map(FATAL_LOG.match, (line.strip() for line in lines)) if match]
    return found[-1] if found else None


FAILED = 2
"""The child's status where the framework raised as it was imported or started."""


def check_starts(described: Framework, python: str = sys.executable) -> None:
    """OpperfError where ``described``'s framework cannot be imported and started in a child process
    of interpreter ``python`` (its workers'): one line with what it said (the ``what()`` of a C++
    terminate, a fatal log line, its own description of an error)."""
    try:
        child = subprocess.run(
            opperf_command("opperf.frameworks.starting", described.name, python=python),
            capture_output=True, text=True, timeout=START_TIMEOUT_S, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise OpperfError(
            f"{described.display_name} fails to start here (starting it took over {START_TIMEOUT_S:.0f} s); "
            f"{START_FIX}"
        ) from None
    if child.returncode == 0:
        return
    if child.returncode == FAILED and child.stdout.strip():
        raise OpperfError(child.stdout.strip().splitlines()[-1])
    died = _last_words(child.stderr, child.returncode)
    raise OpperfError(
        f"{described.display_name} fails to start here (it kills the process: {died}); {START_FIX}"
    )


def _last_words(stderr: str, status: int) -> str:
    """What a process that died said last: a C++ exception's ``what()``, else a fatal log line's
    message (``Unknown flags in XLA_FLAGS: ...``), else its last line, else the signal or status it
    ended with."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if "what():" in line:
            return line.partition("what():")[2].strip()
    fatal = fatal_message(lines)
    if fatal is not None:
        return fatal
    if lines:
        return lines[-1]
    return f"signal {-status}" if status < 0 else f"exit status {status}"
