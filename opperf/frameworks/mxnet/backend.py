"""The MXNet backend: its registry, devices, threads and environment, and its session for the harness."""

from __future__ import annotations

import ctypes
import importlib
import os
import platform
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import ClassVar

from opperf.frameworks.base import BackendBase
from opperf.frameworks.mxnet import devices
from opperf.frameworks.mxnet.namespaces import NAMESPACE_MODULES, identify
from opperf.frameworks.mxnet.registry import (
    accepted_inputs,
    load_registry,
)
from opperf.frameworks.mxnet.session import MXNetSession
from opperf.operators import fused, longtail
from opperf.operators.info import Identity, OpInfo
from opperf.results.measurement import (
    InputValue,
    TensorSpec,
    is_tensor_list,
)
from opperf.utils.affinity import available_cpus
from opperf.utils.devices import CPU, Device
from opperf.utils.errors import OpperfError


class MXNetBackend(BackendBase):
    """Benchmarks MXNet operators (``mx.nd``, its sub-namespaces, ``mx.np`` and ``mx.npx``)."""

    framework = "mxnet"

    devices: ClassVar[ModuleType] = devices
    session_type = MXNetSession
    registry = staticmethod(load_registry)
    missing_dtypes: ClassVar[Mapping[str, str]] = {
        "bfloat16": "MXNet 1.9.1 has no bfloat16 NDArray (only oneDNN's internal one); use "
        "--framework torch, or float16"
    }

    def set_threads(self, count: int | None) -> int:
        """MXNet's OpenMP thread count per operator: read from OMP_NUM_THREADS when its engine starts,
        so a sweep's workers get it in their environment; here it is set for the calling thread too
        (which the naive engine runs operators in) and for processes started later. Returns the count
        in effect: ``count``, or the engine's own choice when it is None."""
        if count is None:
            return engine_threads()
        if count < 1:
            raise OpperfError(f"threads must be an integer >= 1, got {count!r}")
        import mxnet as mx

        os.environ["OMP_NUM_THREADS"] = str(count)
        mx.base._LIB.MXSetNumOMPThreads(ctypes.c_int(count))
        return count

    def default_device(self) -> Device:
        """gpu(0) where this build and machine have a GPU, else cpu(0)."""
        import mxnet as mx

        has_gpu = mx.runtime.Features().is_enabled("CUDA") and mx.context.num_gpus() > 0
        return Device("gpu") if has_gpu else CPU

    def require_large_tensors(self) -> None:
        """Raise OpperfError unless this MXNet build indexes tensors with 64-bit integers."""
        import mxnet as mx

        if not mx.runtime.Features().is_enabled("INT64_TENSOR_SIZE"):
            raise OpperfError(
                f"--int64-tensor on: this MXNet build ({mx.__version__}) has no large-tensor support "
                "(runtime feature INT64_TENSOR_SIZE is off); "
                "use an MXNet built with USE_INT64_TENSOR_SIZE=1, "
                "or --int64-tensor off"
            )

    def applicable_inputs(self, op: OpInfo, inputs: dict[str, InputValue]) -> dict[str, InputValue]:
        """``inputs`` less the tensors ``op`` does not take with these attributes (MXNet's own answer).

        Only single tensors are ever dropped, so operators without one are not asked (composing a symbol
        of ``reset_arrays`` crashes MXNet); nor are long-tail operators and fused patterns, which are no
        registered operator.
        """
        if op.category in (longtail.CATEGORY, fused.CATEGORY):
            return inputs
        if not any(isinstance(value, TensorSpec) for value in inputs.values()):
            return inputs
        attributes = tuple(
            (name, _attribute_text(value)) for name, value in inputs.items() if not _is_tensor_input(value)
        )
        if op.var_args_key and op.var_args_key not in dict(attributes):
            lists = [v for v in inputs.values() if is_tensor_list(v)]
            attributes += ((op.var_args_key, str(sum(len(v) for v in lists))),) if lists else ()
        accepted = accepted_inputs(op.name, attributes)
        tensor_names = {a.name for a in op.tensor_arguments}
        # Trim only where the symbol's input names are the registry's (the OpenCV operators disagree).
        if accepted is None or op.var_args_key or not set(accepted) <= tensor_names:
            return inputs
        # Only single tensors are dropped: a symbol names list elements one by one (weight_0, grad_0).
        return {
            name: value
            for name, value in inputs.items()
            if not isinstance(value, TensorSpec) or name in accepted or name == "out"
        }

    def identify(self, function: Callable[..., object]) -> Identity:
        return identify(function)

    def lookup(self, namespace: str, name: str) -> Callable[..., object] | None:
        """The function ``name`` of a user-facing namespace, or None."""
        module_name = NAMESPACE_MODULES.get(namespace)
        function = getattr(importlib.import_module(module_name), name, None) if module_name else None
        return function if callable(function) else None

    def namespace_names(self, namespace: str) -> tuple[str, ...]:
        module_name = NAMESPACE_MODULES.get(namespace)
        module = importlib.import_module(module_name) if module_name else None
        return tuple(n for n in dir(module) if not n.startswith("__")) if module else ()

    def start(self) -> None:
        """Start MXNet's engine with one small operation: an engine it cannot make
        (``MXNET_ENGINE_TYPE=banana``) fails here, not in every configuration."""
        import mxnet as mx

        mx.nd.zeros((1,)).wait_to_read()

    def environment(self) -> dict[str, object]:
        import mxnet as mx

        features = mx.runtime.Features()
        enabled = sorted(name for name in features if features.is_enabled(name))
        return {
            "framework": "mxnet",
            "framework_version": mx.__version__,
            "framework_build": f"mxnet {mx.__version__} ({', '.join(enabled)})",
            "framework_settings": {"engine": os.environ.get("MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice")},
            "mxnet_version": mx.__version__,
            "runtime_features": enabled,
            "engine": os.environ.get("MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice"),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "cpu_affinity": list(available_cpus()),
            "num_gpus": mx.context.num_gpus() if features.is_enabled("CUDA") else 0,
            "machine": platform.machine(),
        }


def _is_tensor_input(value: object) -> bool:
    return isinstance(value, TensorSpec) or is_tensor_list(value)


def _attribute_text(value: object) -> str:
    """An attribute as MXNet's parameter parser reads it."""
    return str(value)


def engine_threads() -> int:
    """The OpenMP threads MXNet's engine gives an operator when no count is set by opperf: the
    environment's MXNET_OMP_MAX_THREADS or OMP_NUM_THREADS, else half the CPUs on x86 (one per
    physical core) and all of them elsewhere, as src/engine/openmp.cc decides (an upper bound: the
    engine may reserve a core for its worker thread)."""
    for variable in ("MXNET_OMP_MAX_THREADS", "OMP_NUM_THREADS"):
        configured = os.environ.get(variable, "")
        if configured.isdigit() and int(configured) > 0:
            return int(configured)
    cpus = len(available_cpus())
    halved = platform.machine().lower() in {"x86_64", "amd64", "i386", "i686"}
    return max(1, cpus // 2 if halved else cpus)
