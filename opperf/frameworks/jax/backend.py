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
from opperf.frameworks.jax.namespaces import identify, namespace_object, public_function
from opperf.frameworks.jax.registry import load_registry
from opperf.frameworks.jax.session import JaxSession
from opperf.operators.info import Identity, OpInfo
from opperf.results.measurement import InputValue
from opperf.utils.affinity import available_cpus
from opperf.utils.errors import OpperfError

SINGLE_THREAD_FLAG = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
"""XLA's flags for one CPU thread: Eigen's thread pool off."""

_X64 = (
    "JAX runs without 64-bit types unless jax_enable_x64 is set (which changes every default dtype); "
    "use --dtype float32"
)


class JaxBackend(BackendBase):
    """Benchmarks JAX's public array functions (``jax.numpy``, ``jax.nn``, ``jax.scipy.special``,
    ``jax.lax``)."""

    framework = "jax"

    devices: ClassVar[ModuleType] = devices
    session_type = JaxSession
    registry = staticmethod(load_registry)
    missing_dtypes: ClassVar[Mapping[str, str]] = {"float64": _X64, "int64": _X64}

    def set_threads(self, count: int | None) -> int:
        """XLA's CPU backend runs one thread (Eigen's pool off) or one per CPU this process may use;
        the choice is made once, before JAX first runs (``XLA_FLAGS``), so a worker sets it at start.
        Other counts are refused with the two that work."""
        cpus = len(available_cpus())
        if count is None:
            return 1 if SINGLE_THREAD_FLAG in os.environ.get("XLA_FLAGS", "") else cpus
        if count not in (1, cpus):
            raise OpperfError(
                f"--threads {count}: JAX's XLA CPU backend runs 1 thread or one per usable CPU ({cpus}); "
                f"use --threads 1 or --threads {cpus} (or --affinity to choose the CPUs)"
            )
        single = count == 1
        flags = os.environ.get("XLA_FLAGS", "").replace(SINGLE_THREAD_FLAG, "").strip()
        wanted = f"{flags} {SINGLE_THREAD_FLAG}".strip() if single else flags
        if wanted != os.environ.get("XLA_FLAGS", "") and _backend_started():
            raise OpperfError(
                f"--threads {count}: JAX's CPU backend already runs in this process; the thread count is "
                "set before it starts (sweeps set it in each worker)"
            )
        os.environ["XLA_FLAGS"] = wanted
        return count

    def default_device(self) -> str:
        """gpu(0) where JAX sees a GPU, else cpu(0)."""
        return "gpu(0)" if devices.on_gpu_available() else "cpu(0)"

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
            },
            "jax_version": jax.__version__,
            "jaxlib_version": jaxlib.__version__,
            "jax_backend": jax.default_backend(),
            "jax_devices": [str(d) for d in jax.devices()],
            "xla_flags": os.environ.get("XLA_FLAGS"),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "cpu_affinity": list(available_cpus()),
            "machine": platform.machine(),
        }


def _backend_started() -> bool:
    """Whether JAX has started a backend in this process (after which XLA's flags are read)."""
    bridge = sys.modules.get("jax._src.xla_bridge")
    return bool(bridge is not None and getattr(bridge, "_backends", None))
