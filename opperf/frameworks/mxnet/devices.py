"""MXNet device names: parsing ``cpu``/``gpu(N)`` and checking the device exists in this build."""

from __future__ import annotations

from opperf.utils.devices import Device
from opperf.utils.errors import OpperfError


def normalize_device(device: Device) -> Device:
    """``device``, once this MXNet build and machine are found to have it; OpperfError saying the fix."""
    kind, index = device.requested().kind, device.index
    if kind == "gpu":
        import mxnet as mx

        if not mx.runtime.Features().is_enabled("CUDA"):
            raise OpperfError(
                f"device {device}: this MXNet build ({mx.__version__}) has no CUDA support "
                "(runtime feature CUDA is off); install a CUDA build of MXNet or use --ctx cpu"
            )
        available = mx.context.num_gpus()
        if index >= available:
            raise OpperfError(
                f"device {device}: this machine has {available} GPU(s) visible to MXNet; "
                f"use gpu(0)..gpu({available - 1})"
                if available
                else f"device {device}: no GPU is visible"
            )
    return device


def context(device: Device):
    import mxnet as mx

    kind, index = device.kind, device.index
    return mx.gpu(index) if kind == "gpu" else mx.cpu(index)


def profiler_device_key(device: Device) -> str:
    """The name MXNet's profiler gives the device's storage counter: ``cpu/0``, ``gpu/0``."""
    kind, index = device.kind, device.index
    return f"{kind}/{index}"
