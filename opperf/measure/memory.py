"""Will a benchmark fit? An estimate of the bytes its tensors need, against what the device has.

What the host has is the least of ``/proc/meminfo``'s MemAvailable, what this process's memory cgroups
still allow, and the allowance ``OPPERF_MEMORY_LIMIT`` sets (the most a benchmark process may hold
resident: ``4GiB``, ``512MiB`` or bytes), less what this process holds already.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import re
from collections.abc import Callable

from opperf.results.measurement import BenchmarkSpec, TensorSpec
from opperf.utils.cgroups import memory_headroom_bytes
from opperf.utils.errors import OpperfError

ITEMSIZE = {
    "float16": 2,
    "bfloat16": 2,
    "float32": 4,
    "float64": 8,
    "int8": 1,
    "uint8": 1,
    "int32": 4,
    "int64": 8,
    "bool": 1,
}
# With backward, the inputs' and outputs' gradients double what a forward pass holds.
COPIES_BACKWARD = 2

LIMIT_VARIABLE = "OPPERF_MEMORY_LIMIT"
# What must stay available on the host and in the memory cgroups: a worker that leaves less is stopped
# (``memory_guard``), so the fit check counts it as taken.
RESERVE_BYTES = 256 * 2**20
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def input_bytes(spec: BenchmarkSpec) -> int:
    """Bytes of the tensors the spec generates (given arrays already exist and are not counted)."""
    total = 0
    for _, value in spec.inputs:
        tensors = value if isinstance(value, tuple) else (value,)
        for tensor in tensors:
            if isinstance(tensor, TensorSpec):
                total += tensor.size * ITEMSIZE.get(tensor.dtype or spec.options.dtype, 8)
    return total


def estimated_bytes(spec: BenchmarkSpec, output_bytes: int | None = None) -> int:
    """A rough peak: inputs, outputs (``output_bytes`` as the framework inferred them from shapes;
    of the inputs' size where it could not) and, with backward, gradients of both."""
    inputs = input_bytes(spec)
    forward = inputs + (inputs if output_bytes is None else output_bytes)
    return forward * (COPIES_BACKWARD if spec.options.run_backward else 1)


def memory_limit_bytes() -> int | None:
    """The allowance ``OPPERF_MEMORY_LIMIT`` sets for a benchmark process, or None when unset;
    raises OpperfError naming the variable for a value that is no size."""
    text = os.environ.get(LIMIT_VARIABLE, "").strip()
    if not text:
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?", text.lower())
    if match is None or float(match.group(1)) <= 0:
        raise OpperfError(
            f"{LIMIT_VARIABLE}={text!r} is not a memory size: give bytes or a size such as 512MiB or 4GiB"
        )
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def system_available_bytes() -> int | None:
    """What the host and this process's memory cgroups still allow: the least of MemAvailable from
    /proc/meminfo and the cgroups' headroom; None where neither can be read."""
    known = [b for b in (_meminfo_available(), memory_headroom_bytes()) if b is not None]
    return min(known) if known else None


def available_host_bytes() -> int | None:
    """Bytes this process may still allocate: ``system_available_bytes`` less the reserve, and no
    more than the ``OPPERF_MEMORY_LIMIT`` allowance less what this process holds resident."""
    system = system_available_bytes()
    available = None if system is None else max(0, system - RESERVE_BYTES)
    limit = memory_limit_bytes()
    if limit is None:
        return available
    left = max(0, limit - (resident_bytes() or 0))
    return left if available is None else min(available, left)


def _meminfo_available() -> int | None:
    """MemAvailable from /proc/meminfo (the host's, even inside a container), or None."""
    return _proc_field("/proc/meminfo", "MemAvailable:")


def _proc_field(path: str, key: str) -> int | None:
    """A ``KEY: N kB`` line of a /proc file, in bytes; None where it cannot be read."""
    try:
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def release_free_memory() -> None:
    """Give the heap's free pages back to the operating system (glibc's ``malloc_trim(0)``).

    glibc serves blocks below its mmap threshold (which rises to 32 MiB once a larger block is freed)
    from its heaps and keeps what is freed there; while a profiler session records, its small
    allocations land in the holes freed tensors leave, so each pass's tensors take fresh memory: 1,000
    passes of a (1024, 1024) ``arcsin`` under ``torch.profiler`` left 2.5 GiB resident (80 MiB without
    the profiler), and a PyTorch worker reached 2.2 GiB over a unary and reduction sweep. A fixed mmap
    threshold would stop that, but makes every pass page-fault its outputs: 2 to 10 times slower.
    Trimming between configurations leaves the allocator's behaviour within one alone.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


class HeapTrimmer:
    """``release_free_memory`` once this process's resident memory has grown by more than
    ``allowed_growth`` bytes since the last trim (or cannot be read).

    A trim costs time in proportion to what it gives back (about 10 ms for 30 MiB), and whatever runs
    next page-faults those pages back in; trimming before every PyTorch configuration cost 7.5 ms each
    over a reduction sweep. Memory freed but kept then serves the next configurations, and the
    process stays within ``allowed_growth`` of its size after the last trim (reading it costs
    microseconds).
    """

    def __init__(self, allowed_growth: int) -> None:
        self._allowed_growth = allowed_growth
        self._after_trim: int | None = None

    def __call__(self) -> bool:
        """Trim if the process grew too much; whether it did."""
        resident = resident_bytes()
        if (
            resident is not None
            and self._after_trim is not None
            and resident - self._after_trim <= self._allowed_growth
        ):
            return False
        release_free_memory()
        self._after_trim = resident_bytes()
        return True


def peak_rss_bytes(pid: int | str = "self") -> int | None:
    """The most resident memory a live process (this one by default) has held: VmHWM from
    /proc/PID/status (the kernel's high-water mark, ``ru_maxrss``), or None where it cannot be read."""
    return _proc_field(f"/proc/{pid}/status", "VmHWM:")


def resident_bytes(pid: int | str = "self") -> int | None:
    """The resident memory a live process (this one by default) holds now (VmRSS), or None."""
    return _proc_field(f"/proc/{pid}/status", "VmRSS:")


def fit_problem(spec: BenchmarkSpec, available: int | None, output_bytes: int | None = None) -> str | None:
    """Why the spec will not fit in ``available`` bytes, or None if it fits (or nothing is known);
    ``output_bytes`` are the forward pass's outputs as inferred from shapes, when they could be."""
    needed = estimated_bytes(spec, output_bytes)
    if available is None or needed <= available:
        return None
    outputs = "" if output_bytes is None else f", {describe_bytes(output_bytes)} of them outputs"
    return (
        f"out of memory (not run): needs about {describe_bytes(needed)} for its tensors{outputs}, but "
        f"{spec.options.device} has {describe_bytes(available)} available; use smaller shapes or a "
        "larger machine"
    )


def describe_bytes(count: int) -> str:
    """``3.35 GiB`` or ``512.0 MiB``: a memory size as messages give it."""
    return f"{count / 2**30:.2f} GiB" if count >= 2**30 else f"{count / 2**20:.1f} MiB"
