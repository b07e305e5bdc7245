"""The environment a results file records: machine, Python, framework build, and run settings."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shutil
import subprocess
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opperf.benchmark import RunOptions
    from opperf.frameworks import Backend


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
    """The machine's NVIDIA GPU names, from nvidia-smi where it is installed."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        listing = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in listing.splitlines() if line.strip()]


def describe_environment(
    backend: Backend,
    options: RunOptions,
    *,
    profile: str,
    started: _dt.datetime,
    finished: _dt.datetime,
    wall_seconds: float,
    command_line: Sequence[str],
) -> dict[str, object]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "gpus": gpu_names(),
        **backend.environment(),
        **options.settings(),
        "sampling": "fixed" if options.plan.runs is not None else "adaptive",
        "size_profile": profile,
        "command_line": list(command_line),
        "started": started.isoformat(),
        "finished": finished.isoformat(),
        "wall_seconds": round(wall_seconds, 3),
    }
