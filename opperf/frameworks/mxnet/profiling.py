"""MXNet's native profiler as a timing strategy, and its storage counter as a peak-memory probe.

Each timed call is its own profiler session, read back as structured aggregate statistics
(``profiler.dumps(format='json', reset=True)``), so every sample is kept. The memory probe runs its own
session with memory profiling on and frees the outputs inside it: MXNet's counter is bytes allocated
minus freed while profiling, so a session that returns to its baseline cannot drift, and its peak is
Max - Min, reported exactly as 2 x ``Avg`` (Max and Min themselves are rounded to 4 digits).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

from opperf.measure.harness import UnmeasurableError
from opperf.measure.timing import Timed
from opperf.results.measurement import TimerKind


@functools.lru_cache(maxsize=1)
def trace_file() -> str:
    """Where MXNet writes its trace when the process exits (opperf reads the profiler's aggregate
    statistics, never the trace): out of the user's working directory, in a folder of this user's
    own in the temporary folder, which no other user can write in, one file a user, rewritten. A
    fixed file in the shared folder was rewritten by every user's sweeps at once, and MXNet replaces
    whatever is at the name: ``os.devnull`` is no way out, as root it replaced the device itself."""
    folder = os.path.join(tempfile.gettempdir(), f"opperf-{os.getuid()}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    found = os.lstat(folder)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        folder = tempfile.mkdtemp(prefix="opperf-")  # the name is taken by another: one of its own
    return os.path.join(folder, "mxnet-trace.json")


# Engine bookkeeping the profiler lists beside operators; none of it is the operator's work.
ENGINE_BOOKKEEPING = frozenset({"DeleteVariable", "WaitForVar", "WaitAll"})

# Profiler domains whose entries are operators' work: MXNet's operators, and custom operators, which
# it records as ``<op_type>::pure_python`` (their Python) and ``<op_type>::<operator>`` (the operators
# that Python ran).
OPERATOR_DOMAINS = ("operator", "Custom Operator")


def _session(call: Callable[[], object], memory: bool) -> tuple[object, dict]:
    """``call``'s outputs and the session's statistics: operator times, or with ``memory`` the
    storage counter alone (recording operators too made the memory probe about 15% slower, and it
    reads the same peaks)."""
    import mxnet as mx
    from mxnet import profiler

    _configure(memory)
    profiler.set_state("run")
    try:
        outputs = call()
        mx.nd.waitall()
    finally:
        profiler.set_state("stop")
    return outputs, json.loads(profiler.dumps(reset=True, format="json"))


@functools.lru_cache(maxsize=1)
def _configure(memory: bool) -> None:
    """Set the profiler up for timing sessions or for memory probes. Remembered (the cache holds the
    last setting), because ``set_config`` cost 21 us of the 69 us a session took around a 13 us
    call here, and the setting changes only when the memory probe starts or ends."""
    from mxnet import profiler

    profiler.set_config(
        profile_imperative=not memory,
        profile_memory=memory,
        profile_api=False,
        aggregate_stats=True,
        filename=trace_file(),
    )


@dataclass(frozen=True)
class NativeTimer:
    """Operator time as MXNet's profiler records it: the sum of the operators the call ran."""

    name: str = "native"
    kind: TimerKind = "profiler"

    def time(self, call: Callable[[], object]) -> Timed:
        outputs, stats = _session(call, memory=False)
        operators = {
            op: entry["Total"]
            for domain in OPERATOR_DOMAINS
            for op, entry in stats.get("Time", {}).get(domain, {}).items()
            if op.rsplit("::", 1)[-1] not in ENGINE_BOOKKEEPING
        }
        if not operators:
            raise UnmeasurableError("the native profiler records no operator for this call")
        return Timed(
            outputs=outputs, seconds=sum(operators.values()) * 1e-3, operators=tuple(sorted(operators))
        )


def peak_memory_bytes(call: Callable[[], object], device_key: str) -> int:
    """Peak bytes allocated on ``device_key`` while ``call`` runs, its outputs freed before the end."""
    import mxnet as mx

    def call_and_release() -> None:
        outputs = call()
        mx.nd.waitall()
        del outputs
        gc.collect()
        mx.nd.waitall()

    _, stats = _session(call_and_release, memory=True)
    counters = stats.get("Memory", {}).get("Device Storage", {})
    counter = counters.get(f"Memory: {device_key}")
    if counter is None:
        return 0
    unit = 1000 if stats.get("Unit", {}).get("Memory", "kB") == "kB" else 1
    return round(2 * counter["Avg"] * unit)


def warm_up_profiler() -> None:
    """The first profiler session of a process pays first-touch costs; pay them outside measurement."""
    import mxnet as mx

    for memory in (False, True):
        _session(lambda: mx.nd.ones((4, 4)) + 1, memory=memory)
