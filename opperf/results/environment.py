"""The environment a results file records: machine, Python, framework build, and run settings."""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from opperf.utils import gpu_state
from opperf.utils.devices import Device
from opperf.utils.errors import OpperfError
from opperf.utils.words import clipped

if TYPE_CHECKING:
    from opperf.measure.roofline.peaks import MachinePeaks
    from opperf.results.options import RunOptions, SweepFactors


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo, or the platform's processor string."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def gpu_names() -> list[str]:
    """The machine's NVIDIA GPUs, each its name and driver (``NVIDIA H100 80GB HBM3, driver
    570.86.15``), from nvidia-smi where it is installed."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        listing = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    gpus = [line.strip().rsplit(",", 1) for line in listing.splitlines() if line.strip()]
    return [
        f"{fields[0].strip()}, driver {fields[1].strip()}" if len(fields) == 2 else fields[0].strip()
        for fields in gpus
    ]


@dataclass(frozen=True)
class Machine:
    """The machine a sweep ran on."""

    python: str
    platform: str
    cpu_model: str
    cpu_count: int | None
    gpus: tuple[str, ...]

    @classmethod
    def this_one(cls) -> Machine:
        return cls(
            platform.python_version(), platform.platform(), cpu_model(), os.cpu_count(), tuple(gpu_names())
        )


def _gpu_state_note(device: Device) -> dict[str, object]:
    """On a GPU whose state cannot be read, why (``gpu_state_unavailable``); nothing otherwise."""
    why = gpu_state.unavailable(device)
    return {"gpu_state_unavailable": why} if why else {}


@dataclass(frozen=True)
class Environment:
    """What a results file records of how its figures came about: the machine, the framework build
    (``framework``: the backend's own description), the run options and the sweep's factors, and how
    the sweep went.

    It is flat in the JSON file (other tools read its keys there); ``to_json`` flattens it.
    """

    machine: Machine
    framework: Mapping[str, Any]
    options: RunOptions
    factors: SweepFactors
    size_profile: str
    command_line: tuple[str, ...]
    started: _dt.datetime
    finished: _dt.datetime
    wall_seconds: float
    isolated: bool
    timeout_s: float
    interrupted: bool
    threads: int | None
    worker_cpus: tuple[int, ...] | None
    harness_overhead_s: float | None
    harness_efficiency: float | None
    machine_peaks: MachinePeaks | None
    worker_peak_rss_bytes: int | None = None
    shard: str | None = None
    batch_job: Mapping[str, object] | None = None
    """The batch engine's job and task the sweep ran as (``opperf.sweep.engines``), under one."""
    shapes_checksum: str | None = None
    usable_cpus: int | None = None
    thread_workers: Mapping[str, list[int] | None] | None = None
    device_workers: Mapping[str, list[str]] | None = None
    """The operators each GPU's worker measured, by the GPU's index (``sweep --devices``)."""
    selection: Mapping[str, object] | None = None
    """What the sweep was asked to measure (``--ops``, ``--categories``, ``--tags``, the replayed
    configurations' digest), None for the whole registry: shards merge only from one selection."""

    def to_json(self) -> dict[str, object]:
        return {
            "fingerprint": fingerprint(
                {
                    "cpu_model": self.machine.cpu_model,
                    "cpu_count": self.machine.cpu_count,
                    "gpus": list(self.machine.gpus),
                    **self.framework,
                }
            ),  # fmt: skip
            "python": self.machine.python,
            "platform": self.machine.platform,
            "cpu_model": self.machine.cpu_model,
            "cpu_count": self.machine.cpu_count,
            "gpus": list(self.machine.gpus),
            **self.framework,
            **self.options.settings(),
            **self.factors.settings(),
            "sampling": "fixed" if self.options.runs is not None else "adaptive",
            "size_profile": self.size_profile,
            "command_line": list(self.command_line),
            "started": self.started.isoformat(),
            "finished": self.finished.isoformat(),
            "wall_seconds": round(self.wall_seconds, 3),
            "isolated": self.isolated,
            "timeout_s": self.timeout_s if math.isfinite(self.timeout_s) else None,  # None: no limit
            "interrupted": self.interrupted,
            "threads": self.threads,
            "worker_cpus": list(self.worker_cpus) if self.worker_cpus else None,
            "harness_overhead_s": self.harness_overhead_s,
            "harness_efficiency": self.harness_efficiency,
            "worker_peak_rss_bytes": self.worker_peak_rss_bytes,
            "shard": self.shard,
            "batch_job": dict(self.batch_job) if self.batch_job else None,
            "shapes_checksum": self.shapes_checksum,
            "usable_cpus": self.usable_cpus,
            "thread_workers": dict(self.thread_workers) if self.thread_workers else None,
            "device_workers": dict(self.device_workers) if self.device_workers else None,
            "selection": dict(self.selection) if self.selection else None,
            **_gpu_state_note(self.options.device),
            "machine_peaks": self.machine_peaks.to_json() if self.machine_peaks else None,
        }


MACHINE_FIELDS = ("cpu_model", "cpu_count", "gpus")
"""What a machine is known by: results of two machines measure different hardware."""
BUILD_FIELDS = ("framework", "framework_version", "framework_build")
"""What a framework build is known by: its version, and the build's features where a file records
them (a file that records no build differs from none in it: ``load.differences``)."""


def fingerprint(environment: Mapping[str, Any]) -> dict[str, object]:
    """A results file's machine and framework build, from its environment: CPU model and count, GPUs
    with their drivers, the framework, its version and its build (version and build features; null
    in files written before builds were recorded, whose version alone then says which build)."""
    return {name: environment.get(name) for name in (*MACHINE_FIELDS, *BUILD_FIELDS)}


def read_fingerprint(environment: Mapping[str, Any], path: str) -> dict[str, object]:
    """The machine and build a results file records (``environment.fingerprint``, or its flat fields
    in files written before it), checked: a fingerprint that is no object, or that contradicts the
    flat fields it was written beside, is OpperfError naming the field (an edited file must not pass
    one machine off as another in either place)."""
    flat = fingerprint(environment)
    found = environment.get("fingerprint")
    if found is None:
        return flat
    if not isinstance(found, dict):
        raise OpperfError(
            f"{path}: environment.fingerprint is {type(found).__name__}, not an object of the machine "
            "and build; pass the file as opperf wrote it"
        )
    for name, value in flat.items():
        recorded = found.get(name)
        if name in environment and name in found and recorded != value:
            raise OpperfError(
                f"{path}: environment.fingerprint.{name} {_shown(recorded)} contradicts environment.{name} "
                f"{_shown(value)}; pass the file as opperf wrote it"
            )
    return {name: found.get(name, flat[name]) for name in flat}


def _shown(value: object) -> str:
    return clipped(json.dumps(value, sort_keys=True, default=str))
