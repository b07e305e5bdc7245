"""The PyTorch backend: its registry, devices, threads and environment, and its session for the harness."""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from types import ModuleType
from typing import ClassVar

from opperf.frameworks.base import BackendBase
from opperf.frameworks.torch import devices
from opperf.frameworks.torch.namespaces import (
    identify,
    namespace_object,
    public_function,
)
from opperf.frameworks.torch.registry import load_registry
from opperf.frameworks.torch.session import TorchSession
from opperf.operators.info import Identity, OpInfo
from opperf.results.measurement import InputValue
from opperf.utils.affinity import available_cpus
from opperf.utils.devices import CPU, Device
from opperf.utils.errors import OpperfError


class TorchBackend(BackendBase):
    """Benchmarks PyTorch operators through their public entry points (``torch``, ``torch.nn.functional``,
    ``torch.linalg``, ``torch.special``, ``torch.fft``, ``torch.Tensor`` methods)."""

    framework = "torch"

    devices: ClassVar[ModuleType] = devices
    session_type = TorchSession
    registry = staticmethod(load_registry)

    def set_threads(self, count: int | None) -> int:
        """Set PyTorch's intra-op thread count when ``count`` is given; the count in effect.

        The count is never left implicit: ``import mxnet`` sets OpenMP's maximum to 1, which changes
        PyTorch's default, and as many threads as cores collapse when another process holds a core.
        """
        import torch

        if count is not None:
            if count < 1:
                raise OpperfError(f"threads must be an integer >= 1, got {count!r}")
            torch.set_num_threads(count)
        return torch.get_num_threads()

    def default_device(self) -> Device:
        """gpu(0) where this build and machine have a CUDA GPU, else cpu(0)."""
        import torch

        return Device("gpu") if torch.cuda.is_available() else CPU

    def require_large_tensors(self) -> None:
        """PyTorch indexes every tensor with 64-bit integers: nothing to check."""

    def applicable_inputs(self, op: OpInfo, inputs: dict[str, InputValue]) -> dict[str, InputValue]:
        """``inputs`` unchanged: a schema names exactly the tensors an operator takes."""
        return inputs

    def identify(self, function: Callable[..., object]) -> Identity:
        return identify(function)

    def lookup(self, namespace: str, name: str) -> Callable[..., object] | None:
        """The public function ``name`` of a namespace (``torch.Tensor`` for methods), or None."""
        return public_function(namespace, name)

    def namespace_names(self, namespace: str) -> tuple[str, ...]:
        owner = namespace_object(namespace)
        return tuple(n for n in dir(owner) if not n.startswith("_")) if owner is not None else ()

    def environment(self) -> dict[str, object]:
        import torch

        cuda = torch.cuda.is_available()
        return {
            "framework": "torch",
            "framework_version": torch.__version__,
            "framework_build": (
                f"torch {torch.__version__} (git {torch.version.git_version[:12]}, "
                f"CUDA {torch.version.cuda}, mkldnn {torch.backends.mkldnn.is_available()})"
            ),
            "framework_settings": {"interop_threads": torch.get_num_interop_threads()},
            "torch_version": torch.__version__,
            "torch_git_version": torch.version.git_version,
            "torch_debug": torch.version.debug,
            "cuda_version": torch.version.cuda,
            "cudnn_version": torch.backends.cudnn.version() if cuda else None,
            "num_gpus": torch.cuda.device_count() if cuda else 0,
            "num_threads": torch.get_num_threads(),
            "num_interop_threads": torch.get_num_interop_threads(),
            "mkldnn": torch.backends.mkldnn.is_available(),
            "openmp": torch.backends.openmp.is_available(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "cpu_affinity": list(available_cpus()),
            "machine": platform.machine(),
        }
