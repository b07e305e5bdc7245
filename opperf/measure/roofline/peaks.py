"""This machine's roofs: peak memory bandwidth and peak GEMM rate, measured once and cached.

Operators' achieved rates (``opperf.measure.roofline.work``) mean little in absolute terms; as fractions of
what this machine can do they compare across operators and machines:

- bandwidth: ``numpy.copyto`` between two arrays far larger than the last-level cache, counting the
  bytes read and the bytes written;
- compute rate (``gemm_flops_per_s``): the best float32 rate of NumPy's matrix product of square
  matrices (2 * n**3 FLOPs) and of each installed framework's own matrix product and convolutions
  (``gemm_elsewhere``, which the sweep gives: oneDNN's AVX-512 convolutions reach twice what an
  OpenBLAS NumPy multiplies at, and a roof below what kernels reach puts operators above it), each on
  every CPU this process may use; every candidate is recorded.

Each is the best of several repeats: interference (other processes, frequency changes) only ever
slows a run down, so the fastest is the closest to what the hardware can do. Calibration takes 2 to 3
seconds on a 2-core machine, most of it the first touch of the copy's 512 MiB; the result is
cached as JSON keyed by machine identity (host name, CPU model, core count), so a sweep pays it once
per machine, and ``redo=True`` measures again.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import functools
import json
import math
import os
import socket
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from opperf.results.environment import cpu_model
from opperf.utils.files import UnwritableError, write_atomically

Clock = Callable[[], float]
"""Seconds from an arbitrary origin; ``time.perf_counter`` unless a test injects another."""

CACHE_SCHEMA_VERSION = 2
"""2: the GEMM rate is the best of NumPy's and the frameworks' own (1 measured NumPy's alone)."""
CACHE_FILE_NAME = "peaks.json"
FLOAT32_ITEMSIZE = 4


@dataclass(frozen=True)
class PeakProbes:
    """How the peaks are measured.

    The copy (256 MiB a side) is eight times the largest last-level cache of the machines opperf runs
    on (32 MiB per AMD EPYC core complex), so it streams from memory; 1024 x 1024 float32 matrices
    are large enough to keep a BLAS at its peak on a few cores and small enough to multiply in tens of
    milliseconds. A product is repeated 30 times (about half a second on two cores): on a busy machine
    the best of 10 read 65.8 and 127.7 GFLOP/s where a quiet one reads 249.6, and a roof measured low
    is cached for good; the copy's 10 repeats cost little next to its first touch.
    """

    copy_bytes: int = 256 * 2**20
    gemm_size: int = 1024
    repeats: int = 10
    gemm_repeats: int = 30


DEFAULT_PROBES = PeakProbes()


@dataclass(frozen=True)
class MachinePeaks:
    """Peak memory bandwidth (bytes per second, reads plus writes) and float32 GEMM rate (FLOP/s).

    ``measured_at`` is an ISO 8601 UTC time; ``method`` says how, in words, with the NumPy version and
    BLAS build; ``blas_threads`` is the BLAS library's thread count, None where it could not be read.
    """

    bandwidth_bytes_per_s: float
    gemm_flops_per_s: float
    measured_at: str
    method: str
    blas_threads: int | None = None

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> MachinePeaks:
        """Peaks from their JSON object; raises ValueError for anything else (a stale or damaged cache)."""
        if not isinstance(data, dict):
            raise ValueError(f"peaks must be a JSON object, got {data!r}")
        try:
            peaks = cls(**data)
        except TypeError as error:
            raise ValueError(f"malformed peaks {data!r}: {error}") from error
        rates = (peaks.bandwidth_bytes_per_s, peaks.gemm_flops_per_s)
        if not all(isinstance(r, (int, float)) and math.isfinite(r) and r > 0 for r in rates):
            raise ValueError(f"peaks must be positive and finite, got {rates}")
        return peaks


def best_time(run: Callable[[], object], repeats: int, clock: Clock) -> float:
    """The shortest of ``repeats`` timed calls of ``run``, after one untimed call (first touch of the
    memory, BLAS thread start-up)."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    run()
    times = []
    for _ in range(repeats):
        start = clock()
        run()
        times.append(clock() - start)
    return min(times)


def measure_bandwidth(copy_bytes: int, repeats: int, clock: Clock = time.perf_counter) -> float:
    """Bytes per second copied between two ``copy_bytes`` float32 arrays, reads and writes counted.

    The destination's cache lines are also read before they are written on most CPUs (write-allocate);
    that traffic is not counted, as the operators' counts do not count it either.
    """
    source = np.ones(copy_bytes // FLOAT32_ITEMSIZE, dtype=np.float32)
    destination = np.empty_like(source)
    seconds = best_time(lambda: np.copyto(destination, source), repeats, clock)
    return 2 * source.nbytes / seconds


def measure_gemm(size: int, repeats: int, clock: Clock = time.perf_counter) -> float:
    """FLOP/s of a float32 ``size`` x ``size`` matrix product: 2 * size**3 FLOPs a call."""
    generator = np.random.default_rng(0)
    a = generator.random((size, size), dtype=np.float32)
    b = generator.random((size, size), dtype=np.float32)
    product = np.empty_like(a)
    seconds = best_time(lambda: np.matmul(a, b, out=product), repeats, clock)
    return 2 * size**3 / seconds


def blas_configuration() -> tuple[str | None, int | None]:
    """The build string and thread count of the OpenBLAS NumPy loaded, (None, None) where NumPy uses
    another BLAS or the platform has no ``/proc/self/maps`` to find it in."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            loaded = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return None, None
    numpy_first = sorted(loaded, key=lambda path: ("numpy" not in path, path))
    for path in numpy_first:
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for suffix in ("64_", ""):  # the ILP64 build NumPy wheels ship suffixes its symbols
            get_config = getattr(library, f"openblas_get_config{suffix}", None)
            get_threads = getattr(library, f"openblas_get_num_threads{suffix}", None)
            if get_config is not None and get_threads is not None:
                get_config.restype = ctypes.c_char_p
                return get_config().decode().strip(), int(get_threads())
    return None, None


PROBE_CONVOLUTIONS: tuple[tuple[tuple[int, ...], int, tuple[int, ...]], ...] = (
    ((32, 64, 32, 32), 64, (3, 3)),
    ((32, 16, 8, 8, 8), 32, (3, 3, 3)),
)
"""(data shape, filters, kernel) of the convolutions a framework's probe times beside its matrix product
(padded to keep their spatial size): on an AVX-512 machine OpenBLAS's Haswell kernels multiply at 241
GFLOP/s on two cores, MXNet's ``dot`` at 239, and its oneDNN convolutions at 415-525."""


def convolution_flops(shape: tuple[int, ...], filters: int, kernel: tuple[int, ...]) -> int:
    """FLOPs of a convolution that keeps its input's spatial size: a multiply and an add per weight per
    output element."""
    return 2 * shape[0] * filters * shape[1] * math.prod(kernel) * math.prod(shape[2:])


def best_rate(kernels: Mapping[str, tuple[Callable[[], object], int]], repeats: int) -> tuple[str, float]:
    """The kernel with the highest FLOP/s among ``kernels`` (name -> call and its FLOPs), and that rate;
    each call timed as ``best_time`` does."""
    rates = {
        name: flops / best_time(call, repeats, time.perf_counter) for name, (call, flops) in kernels.items()
    }
    best = max(rates, key=rates.__getitem__)
    return best, rates[best]


GemmElsewhere = Callable[[int, int], Mapping[str, tuple[float, str]]]
"""(matrix size, repeats) -> other libraries' float32 GEMM rates and how each was measured, by name."""


def calibrate_peaks(
    calibration: PeakProbes = DEFAULT_PROBES,
    clock: Clock = time.perf_counter,
    gemm_elsewhere: GemmElsewhere | None = None,
) -> MachinePeaks:
    """Measure this machine's peak bandwidth and GEMM rate now: the GEMM rate is the best of NumPy's
    and ``gemm_elsewhere``'s (the frameworks' own, where the caller knows them)."""
    bandwidth = measure_bandwidth(calibration.copy_bytes, calibration.repeats, clock)
    n = calibration.gemm_size
    blas, threads = blas_configuration()
    numpy_method = (
        f"numpy {np.__version__} matmul, BLAS {blas or 'unknown'}, "
        f"{threads if threads is not None else 'unknown'} threads"
    )
    rates = {"numpy": (measure_gemm(n, calibration.gemm_repeats, clock), numpy_method)}
    if gemm_elsewhere is not None:
        rates.update(gemm_elsewhere(n, calibration.gemm_repeats))
    best = max(rates, key=lambda name: rates[name][0])
    candidates = "; ".join(f"{how}: {rate / 1e9:.1f} GFLOP/s" for rate, how in rates.values())
    method = (
        f"copyto of {calibration.copy_bytes / 2**20:g} MiB float32 with numpy {np.__version__} (read + "
        f"write bytes); float32 compute: matrix products {n}x{n} (2n^3 FLOPs) and convolutions, the best of "
        f"{best} among: "
        f"{candidates}; the best of {calibration.repeats} copies and {calibration.gemm_repeats} calls each"
    )
    gemm = rates[best][0]
    return MachinePeaks(
        bandwidth_bytes_per_s=bandwidth,
        gemm_flops_per_s=gemm,
        measured_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        method=method,
        blas_threads=threads,
    )


def machine_identity() -> str:
    """What the cache is keyed by: host name, CPU model and core count."""
    return f"{socket.gethostname()} | {cpu_model()} | {os.cpu_count()} cores"


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/opperf``, else ``~/.cache/opperf``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "opperf"


def load_peaks(
    cache_dir: str | os.PathLike[str] | None = None,
    redo: bool = False,
    calibrate: Callable[[], MachinePeaks] = calibrate_peaks,
) -> MachinePeaks:
    """This machine's peaks from ``cache_dir/peaks.json`` (``default_cache_dir()`` if None), measured
    with ``calibrate`` and stored there when absent, unreadable, or when ``redo`` asks for it.

    The file holds one entry per machine identity, so a home directory shared between machines keeps
    each one's figures; it is replaced atomically, so a concurrent reader sees the old file or the new
    one. A cache that cannot be written (a read-only home, ``XDG_CACHE_HOME`` on a file, a full disk:
    common in CI) does not stop anything: the peaks just measured are used, and a note on stderr, once
    per process, says why they will be measured again next time.
    """
    path = Path(cache_dir if cache_dir is not None else default_cache_dir()) / CACHE_FILE_NAME
    machines = _read_cache(path)
    key = machine_identity()
    if not redo and key in machines:
        try:
            return MachinePeaks.from_json(machines[key])
        except ValueError:
            pass  # a damaged entry is measured again, like a missing one
    peaks = calibrate()
    machines[key] = peaks.to_json()
    document = {"schema_version": CACHE_SCHEMA_VERSION, "machines": machines}
    try:
        write_atomically(path, json.dumps(document, indent=2, sort_keys=True) + "\n")
    except UnwritableError as error:
        _note_unwritable(path, error.reason)
    return peaks


@functools.cache
def _note_unwritable(path: Path, reason: str) -> None:
    """Say once per process that the peaks cache cannot be written, and what to do about it."""
    print(
        f"note: cannot write the machine-peaks cache {path} ({reason}); this run uses the "
        "peaks it just measured, and the next one measures them again (point XDG_CACHE_HOME at a "
        "writable folder to keep them)",
        file=sys.stderr,
    )


def _read_cache(path: Path) -> dict[str, object]:
    """The cached entries by machine identity; none for a missing, damaged or other-version file (a
    cache is rebuilt, never trusted when in doubt)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(document, dict) or document.get("schema_version") != CACHE_SCHEMA_VERSION:
        return {}
    machines = document.get("machines")
    return dict(machines) if isinstance(machines, dict) else {}
