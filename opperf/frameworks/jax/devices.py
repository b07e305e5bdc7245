"""JAX device names: opperf's ``cpu(0)`` and ``gpu(N)`` against ``jax.devices("cpu")[0]`` and
``jax.devices("gpu")[N]``."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from opperf.utils.devices import Device
from opperf.utils.errors import OpperfError

AS_NEEDED = ("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
"""JAX's setting for a GPU's memory taken as needed, instead of three quarters of it when the
backend starts."""


def share_gpus() -> None:
    """Have JAX in this process (and the workers it starts, which inherit its environment) take a GPU's
    memory as its arrays need it, unless the user chose (``AS_NEEDED``). By default each process that
    starts JAX's GPU backend takes 75% of the GPU's memory at once, and a sweep starts it in several:
    its own process (asking which devices there are), the worker measuring, a standby worker beside
    it, and other sweeps sharing the GPU; JAX's documentation names several JAX processes as the
    first cause of its out-of-memory failures. XLA's allocator keeps the memory a configuration's
    warm-up passes took for its measured passes, so sampling allocates nothing either way."""
    os.environ.setdefault(*AS_NEEDED)


def normalize_device(device: Device) -> Device:
    """``device``, once this JAX installation and machine are found to have it; OpperfError saying the fix."""
    kind, index = device.requested().kind, device.index
    if kind == "gpu":
        available = _gpus()
        if not available:
            import jax

            raise OpperfError(
                f"device {device}: this JAX ({jax.__version__}, backend {jax.default_backend()}) sees no "
                "GPU; install JAX with CUDA (pip install 'jax[cuda12]') on a machine with an NVIDIA GPU, "
                "or use --ctx cpu"
            )
        if index >= len(available):
            raise OpperfError(
                f"device {device}: this machine has {len(available)} GPU(s) visible to JAX; "
                f"use gpu(0)..gpu({len(available) - 1})"
            )
    return device


def _gpus() -> list[Any]:
    import jax

    try:
        return list(jax.devices("gpu"))
    except RuntimeError:  # no GPU backend in this installation
        return []


def jax_device(device: Device) -> Any:
    """The ``jax.Device`` of an opperf ``Device``."""
    import jax

    kind, index = device.kind, device.index
    return _gpus()[index] if kind == "gpu" else jax.devices("cpu")[0]


def on_gpu(device: Device) -> bool:
    return device.on_gpu


CUDA_PLUGINS = ("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_cuda11_plugin")
"""The packages that give JAX its CUDA backend."""


def on_gpu_available() -> bool:
    """Whether JAX sees a GPU here. Asking JAX starts its backends, after which the CPU's thread count
    is fixed (``backend.set_threads``): so it is asked only where a CUDA plugin is installed."""
    if not any(importlib.util.find_spec(plugin) for plugin in CUDA_PLUGINS):
        return False
    return bool(_gpus())
