"""An NVIDIA GPU's state around a measurement, read through NVML (``nvidia-ml-py``, the ``gpu`` extra).

A kernel's time follows the SM clock, and the clock follows the driver's power and thermal policy: a
GPU that idled, or throttles for power or heat, runs the first kernels after it slower. Each GPU
measurement records the SM and memory clocks, power draw, temperature and the throttle reasons in
force before and after its sampling; a measurement with a reading below ``LOW_CLOCK_SHARE`` of the
device's default SM clock is flagged ``low_clock``, never dropped. Clocks are only read, never set
(setting them needs root and changes what users would see).

Where NVML or the device is missing (no ``nvidia-ml-py``, no driver, a CPU run) nothing is read and
``unavailable`` says why.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from opperf.utils.devices import Device

LOW_CLOCK_SHARE = 0.75
"""A reading below this share of the default SM clock marks a measurement ``low_clock``."""

THROTTLE_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
    0x200: "board_limit",
    0x400: "reliability",
}
"""NVML's clock event (throttle) reason bits, by name (``nvmlClocksEventReason*``)."""


@dataclass(frozen=True)
class GpuReading:
    """One reading of a GPU: clocks in MHz, power in watts, temperature in degrees Celsius, and the
    reasons the driver holds the clocks down (empty when none)."""

    sm_clock_mhz: int
    memory_clock_mhz: int
    power_w: float | None
    temperature_c: int | None
    throttle_reasons: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "throttle_reasons": list(self.throttle_reasons)}

    @classmethod
    def from_json(cls, block: dict[str, Any]) -> GpuReading:
        return cls(
            sm_clock_mhz=int(block["sm_clock_mhz"]),
            memory_clock_mhz=int(block["memory_clock_mhz"]),
            power_w=block.get("power_w"),
            temperature_c=block.get("temperature_c"),
            throttle_reasons=tuple(block.get("throttle_reasons") or ()),
        )


@dataclass(frozen=True)
class GpuState:
    """A GPU's readings before and after a measurement, and its default SM clock (what the driver
    runs it at without boost or throttling), against which ``low_clock`` is judged."""

    before: GpuReading
    after: GpuReading
    default_sm_clock_mhz: int | None

    @property
    def low_clock(self) -> bool:
        """Whether a reading fell below ``LOW_CLOCK_SHARE`` of the default SM clock."""
        if not self.default_sm_clock_mhz:
            return False
        floor = LOW_CLOCK_SHARE * self.default_sm_clock_mhz
        return min(self.before.sm_clock_mhz, self.after.sm_clock_mhz) < floor

    def to_json(self) -> dict[str, object]:
        return {
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "default_sm_clock_mhz": self.default_sm_clock_mhz,
        }

    @classmethod
    def from_json(cls, block: dict[str, Any] | None) -> GpuState | None:
        if not block:
            return None
        return cls(
            GpuReading.from_json(block["before"]),
            GpuReading.from_json(block["after"]),
            block.get("default_sm_clock_mhz"),
        )


def read(device: Device) -> GpuReading | None:
    """The GPU ``device``'s state now; None on a CPU, or where NVML or the GPU cannot be read."""
    handle = _handle(device)
    if handle is None:
        return None
    import pynvml

    try:
        reasons = pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle)
        return GpuReading(
            sm_clock_mhz=pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
            memory_clock_mhz=pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM),
            power_w=_optional(lambda: pynvml.nvmlDeviceGetPowerUsage(handle) / 1000),
            temperature_c=_optional(
                lambda: pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)
            ),
            throttle_reasons=tuple(name for bit, name in THROTTLE_REASONS.items() if reasons & bit),
        )
    except pynvml.NVMLError:
        return None


def state(device: Device, before: GpuReading | None, after: GpuReading | None) -> GpuState | None:
    """The state of a measurement from its readings before and after (None if either is missing)."""
    if before is None or after is None:
        return None
    return GpuState(before, after, default_sm_clock(device))


def default_sm_clock(device: Device) -> int | None:
    """The device's default SM clock in MHz (its default applications clock), where NVML says."""
    handle = _handle(device)
    if handle is None:
        return None
    import pynvml

    return _optional(lambda: pynvml.nvmlDeviceGetDefaultApplicationsClock(handle, pynvml.NVML_CLOCK_SM))


def memory_holders(device: Device, own_pid: int) -> str | None:
    """Which other processes hold the GPU ``device``'s memory, the most first (``pid 123 holds
    35.1 GiB``), for a configuration refused for want of it; None where none do, or NVML cannot say
    (inside a container, NVML often sees no processes)."""
    handle = _handle(device)
    if handle is None:
        return None
    import pynvml

    try:
        processes = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
    except pynvml.NVMLError:
        return None
    held = sorted(
        ((p.pid, p.usedGpuMemory) for p in processes if p.pid != own_pid and p.usedGpuMemory),
        key=lambda item: -item[1],
    )
    if not held:
        return None
    shown = ", ".join(f"pid {pid} holds {used / 2**30:.1f} GiB" for pid, used in held[:MEMORY_HOLDERS_SHOWN])
    more = f" and {len(held) - MEMORY_HOLDERS_SHOWN} more" if len(held) > MEMORY_HOLDERS_SHOWN else ""
    return f"{shown}{more}"


MEMORY_HOLDERS_SHOWN = 3


def unavailable(device: Device) -> str | None:
    """Why GPU state is not read on ``device`` (None where it is, and on a CPU, where there is none)."""
    if not device.on_gpu:
        return None
    return _nvml()[1]


def _handle(device: Device):
    kind, index = device.kind, device.index
    if kind != "gpu" or _nvml()[0] is None:
        return None
    import pynvml

    physical = nvml_gpu(index, os.environ)
    try:
        if isinstance(physical, str):
            return pynvml.nvmlDeviceGetHandleByUUID(physical)
        return None if physical is None else pynvml.nvmlDeviceGetHandleByIndex(physical)
    except pynvml.NVMLError:
        return None


def nvml_gpu(index: int, environ: Mapping[str, str]) -> int | str | None:
    """The GPU that CUDA's device ``index`` is, as NVML names it: NVML counts every GPU in PCI order,
    CUDA only those ``CUDA_VISIBLE_DEVICES`` lists, in their order (a worker of ``sweep --devices``
    sees one, as device 0). An index as given, a listed index, a listed UUID, or None where the list
    has no such device."""
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return index
    listed = [entry.strip() for entry in visible.split(",") if entry.strip()]
    if index >= len(listed):
        return None
    entry = listed[index]
    return int(entry) if entry.isdigit() else entry


@functools.cache
def _nvml() -> tuple[object | None, str | None]:
    """(the initialised NVML module, None), or (None, why it is not there); once a process."""
    try:
        import pynvml
    except ImportError:
        return None, "nvidia-ml-py is not installed (pip install 'opperf[gpu]')"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as error:
        return None, f"NVML cannot start: {error}"
    return pynvml, None


def _optional(read_value):
    """A reading some GPUs do not support (power on some boards): None where NVML refuses it."""
    import pynvml

    try:
        return read_value()
    except pynvml.NVMLError:
        return None
