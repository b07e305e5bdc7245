"""PyTorch device names: opperf's ``cpu(0)``/``gpu(N)`` against torch's ``cpu``/``cuda:N``."""

from __future__ import annotations

import functools
from collections.abc import Callable

from opperf.utils.devices import Device
from opperf.utils.errors import OpperfError


def normalize_device(device: Device) -> Device:
    """``device``, once this PyTorch build and machine are found to have it; OpperfError saying the fix."""
    kind, index = device.requested().kind, device.index
    if kind == "gpu":
        import torch

        if torch.version.cuda is None or not torch.cuda.is_available():
            build = "has no CUDA support" if torch.version.cuda is None else "sees no CUDA device"
            raise OpperfError(
                f"device {device}: this PyTorch build ({torch.__version__}) {build}; "
                "install a CUDA build of PyTorch on a machine with an NVIDIA GPU, or use --ctx cpu"
            )
        available = torch.cuda.device_count()
        if index >= available:
            raise OpperfError(
                f"device {device}: this machine has {available} GPU(s) visible to PyTorch; "
                f"use gpu(0)..gpu({available - 1})"
            )
    return device


def torch_device(device: Device):
    """The ``torch.device`` of an opperf ``Device``."""
    import torch

    kind, index = device.kind, device.index
    return torch.device("cuda", index) if kind == "gpu" else torch.device("cpu")


def synchronizer(device: Device) -> Callable[[], None]:
    """The call that waits for the device's queued work: ``torch.cuda.synchronize`` on a GPU, and on
    the CPU, where every call is synchronous, one that does nothing (it sits inside timed regions)."""
    kind, index = device.kind, device.index
    if kind == "cpu":
        return _nothing
    import torch

    return functools.partial(torch.cuda.synchronize, index)


def _nothing() -> None:
    """Nothing to wait for."""
