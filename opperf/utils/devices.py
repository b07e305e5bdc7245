"""Devices as users type them, read once for every framework: ``cpu``, ``cpu(0)``, ``gpu(1)``,
``gpu1``, ``gpu:1``, ``cuda:1``, ``cuda(1)``. ``Device.parse`` reads one into a ``Device`` where it
enters (a flag, the Python API, a record), and everything after passes that value; its text,
``cpu(N)`` or ``gpu(N)``, is how files and messages write it. Each framework checks that the device
exists (``frameworks/<name>/devices.py``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from opperf.utils.errors import OpperfError

_DEVICE = re.compile(r"^(cpu|gpu|cuda)(?:\((\d+)\)|:(\d+)|(\d+))?$")


@dataclass(frozen=True)
class Device:
    """A device: ``cpu`` or ``gpu``, and its index (CUDA's, for a GPU)."""

    kind: str
    index: int = 0

    @classmethod
    def parse(cls, text: str | Device) -> Device:
        """``"gpu(1)"``, ``"gpu1"``, ``"gpu:1"``, ``"cuda:1"`` -> gpu 1; ``"cpu"`` -> cpu 0 (a Device as
        it is); OpperfError naming the forms it takes otherwise."""
        if isinstance(text, Device):
            return text
        match = _DEVICE.match(str(text).strip().lower().replace(" ", ""))
        if not match:
            raise OpperfError(
                f"malformed device {text!r}; use cpu, gpu(N), gpuN, gpu:N or cuda:N "
                "(quote gpu(N) in a shell: --ctx 'gpu(0)')"
            )
        kind = "gpu" if match.group(1) == "cuda" else match.group(1)
        index = next((int(group) for group in match.groups()[1:] if group is not None), 0)
        return cls(kind, index)

    @property
    def on_gpu(self) -> bool:
        return self.kind == "gpu"

    def requested(self) -> Device:
        """This device as a user may ask for it: ``cpu(N)`` beyond ``cpu(0)`` is refused before a
        framework sees it (MXNet aborts the process on one): the CPU is one device, its cores are
        ``--affinity``'s."""
        if self.kind == "cpu" and self.index != 0:
            raise OpperfError(
                f"device {self}: the CPU is one device, cpu(0); choose CPU cores with --affinity instead"
            )
        return self

    def __str__(self) -> str:
        return f"{self.kind}({self.index})"


CPU = Device("cpu")
"""The CPU, the one device every framework has."""
