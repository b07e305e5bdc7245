"""Will a benchmark fit? An estimate of the bytes its tensors need, against what the device has."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable

from opperf.results import BenchmarkSpec, TensorSpec

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
# Inputs, an output of the same size, and (with backward) their gradients.
COPIES_FORWARD = 2
COPIES_BACKWARD = 4


def input_bytes(spec: BenchmarkSpec) -> int:
    """Bytes of the tensors the spec generates (given arrays already exist and are not counted)."""
    total = 0
    for _, value in spec.inputs:
        tensors = value if isinstance(value, tuple) else (value,)
        for tensor in tensors:
            if isinstance(tensor, TensorSpec):
                total += tensor.size * ITEMSIZE.get(tensor.dtype or spec.options.dtype, 8)
    return total


def estimated_bytes(spec: BenchmarkSpec) -> int:
    """A rough peak: inputs, outputs of input size and, with backward, gradients of both."""
    return input_bytes(spec) * (COPIES_BACKWARD if spec.options.run_backward else COPIES_FORWARD)


def available_host_bytes() -> int | None:
    """MemAvailable from /proc/meminfo, or None where it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="utf-8") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
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


def peak_rss_bytes(pid: int | str = "self") -> int | None:
    """The most resident memory a live process (this one by default) has held: VmHWM from
    /proc/PID/status (the kernel's high-water mark, ``ru_maxrss``), or None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def fit_problem(spec: BenchmarkSpec, available: int | None) -> str | None:
    """Why the spec will not fit in ``available`` bytes, or None if it fits (or nothing is known)."""
    needed = estimated_bytes(spec)
    if available is None or needed <= available:
        return None
    return (
        f"needs about {needed / 2**30:.1f} GiB for its tensors but {spec.options.device} has "
        f"{available / 2**30:.1f} GiB available; use smaller shapes or a larger machine"
    )
