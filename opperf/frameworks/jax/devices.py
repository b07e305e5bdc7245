"""JAX device names: opperf's ``cpu(0)`` and ``gpu(N)`` against ``jax.devices("cpu")[0]`` and
``jax.devices("gpu")[N]``."""

from __future__ import annotations

import importlib.util
from typing import Any

from opperf.utils.devices import Device
from opperf.utils.errors import OpperfError


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
