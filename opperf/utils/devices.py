"""Device names as users type them, read once for every framework: ``cpu``, ``cpu(0)``, ``gpu(1)``,
``gpu1``, ``gpu:1``, ``cuda:1``, ``cuda(1)``. The canonical form is ``cpu(N)`` or ``gpu(N)``; each
framework checks that the device exists (``frameworks/<name>/devices.py``)."""

from __future__ import annotations

import re

from opperf.utils.errors import OpperfError

_DEVICE = re.compile(r"^(cpu|gpu|cuda)(?:\((\d+)\)|:(\d+)|(\d+))?$")


def parse_device(device: str) -> tuple[str, int]:
    """``"gpu(1)"``, ``"gpu1"``, ``"gpu:1"``, ``"cuda:1"`` -> ``("gpu", 1)``; ``"cpu"`` -> ``("cpu", 0)``."""
    match = _DEVICE.match(str(device).strip().lower().replace(" ", ""))
    if not match:
        raise OpperfError(
            f"malformed device {device!r}; use cpu, gpu(N), gpuN, gpu:N or cuda:N "
            "(quote gpu(N) in a shell: --ctx 'gpu(0)')"
        )
    kind = "gpu" if match.group(1) == "cuda" else match.group(1)
    index = next((int(group) for group in match.groups()[1:] if group is not None), 0)
    return kind, index


def device_kind(device: str) -> str:
    """``cpu`` or ``gpu``: what device-specific skips and rules key on."""
    return parse_device(device)[0]


def requested_device(device: str) -> tuple[str, int]:
    """A device a user asked for, parsed; ``cpu(N)`` beyond ``cpu(0)`` is refused before a framework
    sees it (MXNet aborts the process on one): the CPU is one device, its cores are ``--affinity``'s."""
    kind, index = parse_device(device)
    if kind == "cpu" and index != 0:
        raise OpperfError(
            f"device {device!r}: the CPU is one device, cpu(0); choose CPU cores with --affinity instead"
        )
    return kind, index
