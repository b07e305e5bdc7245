"""The JAX backend: its registry, devices, threads and environment, and its session for the harness."""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import ClassVar

from opperf.frameworks.base import BackendBase
from opperf.frameworks.jax import devices
from opperf.frameworks.jax.compiled import USER_FOLDER_LIMIT, user_folder
from opperf.frameworks.jax.namespaces import identify, namespace_object, public_function
from opperf.frameworks.jax.registry import load_registry
from opperf.frameworks.jax.session import JaxSession
from opperf.operators.info import Identity, OpInfo
from opperf.results.measurement import InputValue
from opperf.utils.affinity import available_cpus
from opperf.utils.devices import CPU, Device
from opperf.utils.errors import FixedThreadsError, OpperfError
from opperf.utils.words import counted

_X64 = (
    "JAX runs without 64-bit types unless jax_enable_x64 is set (which changes every default dtype); "
    "use --dtype float32, or set JAX_ENABLE_X64=1"
)


class JaxBackend(BackendBase):
    """Benchmarks JAX's public array functions (``jax.numpy``, ``jax.nn``, ``jax.scipy.special``,
    ``jax.lax``)."""

    framework = "jax"

    devices: ClassVar[ModuleType] = devices
    session_type = JaxSession
    registry = staticmethod(load_registry)

    @property
    def missing_dtypes(self) -> Mapping[str, str]:  # type: ignore[override]
        """float64 and int64 unless ``jax_enable_x64`` is set (``JAX_ENABLE_X64=1``), which JAX reads
        as it is imported: without it, its arrays are 32-bit whatever dtype they are asked for."""
        import jax

        return {} if jax.config.read("jax_enable_x64") else {"float64": _X64, "int64": _X64}

    def __init__(self) -> None:
        devices.share_gpus()  # before anything starts JAX's backends
        super().__init__()

    def set_threads(self, count: int | None) -> int:
        """XLA's CPU backend sizes its thread pool by the CPUs the process may use when it starts, and
        has no setting of its own (``--xla_cpu_multi_thread_eigen=false`` changed nothing here: a
        (2048, 2048) matrix product still used 2 cores). So JAX's CPU backend is started here while
        the process may use ``count`` of its CPUs, and its CPUs are given back after (the pool keeps
        ``count`` threads); a sweep's workers are pinned to that many besides."""
        cpus = available_cpus()
        if count is None:
            return _POOL.get("threads") or len(cpus)
        if count < 1 or count > len(cpus):
            raise OpperfError(
                f"--threads {count}: JAX runs one thread per CPU it may use; this process may use "
                f"{len(cpus)} (use --threads 1..{len(cpus)}, or --affinity to choose the CPUs)"
            )
        started_with = _POOL.get("threads") or (len(cpus) if _backend_started() else None)
        if started_with is not None and count != started_with:
            raise FixedThreadsError(
                f"--threads {count}: JAX's CPU backend already runs in this process with "
                f"{counted(started_with, 'thread')}, fixed as it started; measure in workers (leave "
                "--no-isolation out) or in a fresh process"
            )
        if started_with is None and count != len(cpus):
            _start_cpu_backend_on(cpus[:count], cpus)
            _POOL["threads"] = count
        return count

    def start(self) -> None:
        """Start XLA's backends, which read ``XLA_FLAGS``: a flag XLA does not know ends the process
        with a fatal log line (exit 134), here in the start check's child (``checked_settings``)
        rather than in opperf itself or in every worker."""
        import jax

        jax.devices()

    def keep_compiled(self, folder: str) -> None:
        """XLA's persistent compilation cache in ``folder``, for every program whatever its size or
        compile time; in the running build's part of JAX's own folder instead where the user names
        one (``compiled.user_folder``), which outlives the run: a later sweep, comparison or A/B job
        of the same build reads what this one compiled. A sweep of 60 operators (every ninth of the
        registry) took 80 s with an empty folder and 57 s with the folder it left.

        Each configuration compiles its analysis, its primitives and its backward pass again in every
        fresh worker (each round of an A/B job or a comparison): an A/A ``ab`` over ten operators
        took 744 s without a folder and 231 s with one, none called either way; ``insert`` of a (1024,
        1024) array spent 9-13 s a compile constant-folding XLA's index arithmetic, 0.1 s from the
        folder.

        The folder has no size limit unless the user set one (``JAX_COMPILATION_CACHE_MAX_SIZE``; the
        runner removes its own folder when it closes). With one, JAX lists and reads the size of every
        file in it before each write, to evict the oldest: late in a full registry sweep, which writes
        thousands of programs, an ``associative_scan`` record compiling some 1,200 of them took 13-17 s
        against 3-5 s in a sweep of eight operators, and the sweep 843 s against 607 s without the
        limit. That sweep's folder held 42 MB in 7,250 files 20 s before it ended."""
        import jax

        jax.config.update("jax_compilation_cache_dir", user_folder() or folder)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
        if not os.environ.get(USER_FOLDER_LIMIT):
            jax.config.update("jax_compilation_cache_max_size", -1)  # no limit, so no eviction scan

    def default_device(self) -> Device:
        """gpu(0) where JAX sees a GPU, else cpu(0)."""
        return Device("gpu") if devices.on_gpu_available() else CPU

    def require_large_tensors(self) -> None:
        """XLA indexes arrays with 64-bit integers: nothing to check."""

    def applicable_inputs(self, op: OpInfo, inputs: dict[str, InputValue]) -> dict[str, InputValue]:
        """``inputs`` unchanged: a signature names exactly the arguments a function takes."""
        return inputs

    def identify(self, function: Callable[..., object]) -> Identity:
        return identify(function)

    def lookup(self, namespace: str, name: str) -> Callable[..., object] | None:
        return public_function(namespace, name)

    def namespace_names(self, namespace: str) -> tuple[str, ...]:
        owner = namespace_object(namespace)
        return tuple(n for n in dir(owner) if not n.startswith("_")) if owner is not None else ()

    def environment(self) -> dict[str, object]:
        import jax
        import jaxlib

        return {
            "framework": "jax",
            "framework_version": jax.__version__,
            "framework_build": f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, {jax.default_backend()}",
            "framework_settings": {
                "x64": bool(jax.config.read("jax_enable_x64")),
                "xla_flags": os.environ.get("XLA_FLAGS", ""),
                # how a GPU's memory is taken, as this process sets it (None: not set)
                "xla_python_client_preallocate": os.environ.get(devices.AS_NEEDED[0]),
            },
            # where compiled programs are kept changes no measurement, and shards may keep theirs apart
            "jax_compilation_cache_dir": user_folder(),  # None: each runner's own, removed with it
            "jax_compilation_cache_max_size": os.environ.get(USER_FOLDER_LIMIT),
            "jax_version": jax.__version__,
            "jaxlib_version": jaxlib.__version__,
            "jax_backend": jax.default_backend(),
            "jax_devices": [str(d) for d in jax.devices()],
            "xla_flags": os.environ.get("XLA_FLAGS"),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "cpu_affinity": list(available_cpus()),
            "machine": platform.machine(),
        }


_POOL: dict[str, int] = {}
"""The thread count this process started JAX's CPU backend with, once it has."""


def _start_cpu_backend_on(narrowed: tuple[int, ...], every: tuple[int, ...]) -> None:
    """Start JAX's CPU backend while this process may use only ``narrowed`` CPUs, so XLA sizes its
    thread pool by them; then give the process ``every`` CPU back."""
    if not hasattr(os, "sched_setaffinity"):
        raise OpperfError(f"--threads {len(narrowed)}: this system cannot narrow a process's CPUs")
    os.sched_setaffinity(0, narrowed)
    try:
        import jax

        jax.devices("cpu")
    finally:
        os.sched_setaffinity(0, every)


def _backend_started() -> bool:
    """Whether JAX has started a backend in this process (after which XLA's flags are read)."""
    bridge = sys.modules.get("jax._src.xla_bridge")
    return bool(bridge is not None and getattr(bridge, "_backends", None))
