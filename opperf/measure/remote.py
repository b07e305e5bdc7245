"""A framework whose workers run in another interpreter, named by ``OPPERF_<NAME>_PYTHON`` (a JAX
venv with numpy 2 beside a main environment pinned to numpy 1.23 for MXNet, say).

The sweep's process never imports the framework: what it asks of a backend before measuring (the
operators, registered names, environment, devices, missing dtypes) one worker in that interpreter
answers once (``messages.BuildDescription``), and its workers measure every configuration. What
needs the framework in this process (``compare``, the Python API, ``--no-isolation``) is refused with
the reason. The command line hands this class to ``frameworks.serve_other_interpreters_with``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from opperf.measure.isolation import IsolatedRunner, WorkerStartError
from opperf.utils.affinity import available_cpus
from opperf.utils.devices import Device
from opperf.utils.errors import OpperfError

if TYPE_CHECKING:
    from opperf.measure.harness import Session
    from opperf.measure.messages import BuildDescription
    from opperf.operators.info import Identity, OpInfo
    from opperf.results.measurement import InputValue

DESCRIBE_TIMEOUT_S = 300.0
"""How long the other interpreter's worker may take to import the framework and read its registry."""


class RemoteBackend:
    """The backend of ``framework`` as its interpreter ``python`` describes it (see the module)."""

    def __init__(self, framework: str, python: str, variable: str) -> None:
        self.framework = framework
        self.python = python
        self._variable = variable

    @functools.cached_property
    def _description(self) -> BuildDescription:
        try:
            with IsolatedRunner(self.framework, DESCRIBE_TIMEOUT_S, python=self.python) as runner:
                return runner.describe()
        except OSError as error:
            why, lacks = (
                (error.why, error.lacks_module)
                if isinstance(error, WorkerStartError)
                else (str(error), False)
            )
            fix = (
                f"install numpy and {self.framework} in that interpreter"
                if lacks
                else "correct it as that says"
            )
            raise OpperfError(
                f"{self._variable}={self.python} cannot run opperf's {self.framework} worker ({why}); "
                f"{fix}, or unset {self._variable}"
            ) from None

    def _refused(self, what: str) -> OpperfError:
        return OpperfError(
            f"{what} needs {self.framework} in this interpreter, and it runs in {self.python} "
            f"({self._variable}); run a sweep, or unset {self._variable} where {self.framework} is installed"
        )

    @property
    def session(self) -> Session:
        raise self._refused("measuring in this process (--no-isolation, compare, the Python API)")

    @property
    def missing_dtypes(self) -> Mapping[str, str]:
        return self._description.missing_dtypes

    def operators(self) -> tuple[OpInfo, ...]:
        return self._description.operators

    def registered_names(self) -> tuple[str, ...]:
        return self._description.registered

    def normalize_device(self, device: Device) -> Device:
        if str(device.requested()) not in self._description.devices:
            raise OpperfError(
                f"device {device}: {self.framework} in {self.python} has "
                f"{', '.join(self._description.devices)}"
            )
        return device

    def set_threads(self, count: int | None) -> int:
        """The count each worker sets in its own interpreter (checked there); here, the CPUs' bound."""
        cpus = len(available_cpus())
        if count is not None and not 1 <= count <= cpus:
            raise OpperfError(f"threads must be 1..{cpus} (the CPUs this process may use), got {count}")
        return cpus if count is None else count

    def default_device(self) -> Device:
        return Device.parse(self._description.default_device)

    def require_large_tensors(self) -> None:
        raise self._refused("checking for tensors beyond 2**31 elements")

    def applicable_inputs(self, op: OpInfo, inputs: dict[str, InputValue]) -> dict[str, InputValue]:
        return inputs

    def identify(self, function: Callable[..., object]) -> Identity:
        raise self._refused("identifying a function")

    def lookup(self, namespace: str, name: str) -> Callable[..., object] | None:
        raise self._refused(f"calling {namespace}.{name}")

    def namespace_names(self, namespace: str) -> tuple[str, ...]:
        raise self._refused(f"reading {namespace}")

    def start(self) -> None:
        """Nothing here: the interpreter that describes the build has started the framework, and each
        worker starts it again in its own."""

    def environment(self) -> dict[str, object]:
        return {**self._description.environment, "worker_python": self.python}
