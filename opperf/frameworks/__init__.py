"""The frameworks opperf benchmarks, each a package of the same shape, and the backend interface.

``opperf.frameworks.<name>`` holds everything that knows the framework: ``registry`` (its operators),
``categories``, ``rules`` (inputs per operator), ``work`` (FLOPs and bytes for roofline context),
``devices``, ``profiling`` (its native timer and memory probe), ``session`` (how the shared harness
runs one of its operators), ``flags`` (its own command-line flags) and ``backend``, which ties them
together behind ``Backend``. Only ``backend``, ``session``, ``profiling`` and ``devices`` import the
framework, lazily, so reports, comparison and the command line work with any framework absent.

Adding a framework is one package of that shape plus one line in ``FRAMEWORKS``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, cast

from opperf.frameworks.contract import CAPABILITY_NAMES, Framework
from opperf.frameworks.start_check import START_FIX, check_starts
from opperf.utils.devices import Device
from opperf.utils.errors import FixedThreadsError, OpperfError

if TYPE_CHECKING:
    from opperf.measure.harness import Session
    from opperf.operators.info import Identity, OpInfo
    from opperf.results.measurement import InputValue

FRAMEWORKS: tuple[str, ...] = (
    "mxnet",
    "torch",
    "jax",
)
"""Every framework opperf measures, one registration line each: the name is its package here (which
declares the framework as ``FRAMEWORK``, ``contract.Framework``) and its pip extra."""
DEFAULT_FRAMEWORK = "mxnet"
"""The framework a sweep measures when none is named (upstream opperf's)."""


class Backend(Protocol):
    """A framework's registry, devices, threads and environment, and the session the harness measures
    its operators through."""

    framework: str
    session: Session
    missing_dtypes: Mapping[str, str]
    """opperf's dtypes the framework has no tensors of, each with what to do instead (refused)."""

    def operators(self) -> tuple[OpInfo, ...]:
        """Every distinct operator of the registry (aliases folded)."""

    def registered_names(self) -> tuple[str, ...]:
        """Every registered name, aliases and backward operators included."""

    def normalize_device(self, device: Device) -> Device:
        """``device``, once the framework is found to have it; raises OpperfError if it is absent."""

    def set_threads(self, count: int | None) -> int:
        """Set the intra-op thread count when ``count`` is given; the count in effect."""

    def keep_compiled(self, folder: str) -> None:
        """Keep what the framework compiles in ``folder``, and look there before compiling: a folder
        private to one runner's workers that outlives each of them (a fresh worker each round of an
        A/B job or a comparison, one after a crash). Called only for a framework that declares
        ``keeps_compiled``."""

    def default_device(self) -> Device:
        """The device a sweep uses when none is named: the first GPU if there is one, else the CPU."""

    def require_large_tensors(self) -> None:
        """Raise OpperfError unless the framework build supports tensors beyond 2**31 elements."""

    def applicable_inputs(self, op: OpInfo, inputs: dict[str, InputValue]) -> dict[str, InputValue]:
        """``inputs`` less any tensor the operator does not take with the given attributes."""

    def identify(self, function: Callable[..., object]) -> Identity:
        """(namespace, name, registry record if it is a registered operator's front end)."""

    def lookup(self, namespace: str, name: str) -> Callable[..., object] | None:
        """The function ``name`` of a user-facing namespace, or None."""

    def namespace_names(self, namespace: str) -> tuple[str, ...]:
        """The public names of a user-facing namespace, for suggestions."""

    def start(self) -> None:
        """Start the framework's runtime as its first operation would (MXNet's engine), raising what
        that raises; run in a child process before a sweep (``opperf.frameworks.start_check``)."""

    def environment(self) -> dict[str, object]:
        """Framework versions, build features and threading, for the results file: ``framework``,
        ``framework_version`` and ``framework_settings`` (what reports show of it) in every framework's,
        the rest its own."""


def command_threads(backend: Backend, count: int | None, in_workers: bool) -> int:
    """The intra-op thread count a command measures with, set here (for what this process records of
    itself) and refused before anything runs where the framework cannot take it. Where workers measure
    (``in_workers``), a framework already running here with another count it cannot change (JAX's CPU
    pool, when one process runs two commands) is no matter: each worker sets ``count`` as it starts."""
    try:
        return backend.set_threads(count)
    except FixedThreadsError:
        if not in_workers:
            raise
        return cast(int, count)  # only a count other than the pool's is refused so


@dataclass(frozen=True)
class FrameworkFlag:
    """A command-line flag of one framework's own (``frameworks/<name>/flags.py`` lists them as
    ``FLAGS``): ``apply`` acts on the value before the framework is imported."""

    flag: str
    help: str
    choices: tuple[str, ...]
    apply: Callable[[str], None]

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


_instances: dict[str, Backend] = {}
_remote: list[Callable[[str, str, str], Backend]] = []
"""What answers for a framework that runs in another interpreter (``serve_other_interpreters_with``)."""


def serve_other_interpreters_with(remote: Callable[[str, str, str], Backend]) -> None:
    """Answer ``get_backend`` for a framework whose workers run in another interpreter
    (``worker_python``) with ``remote(framework, python, variable)``: the command line installs
    ``opperf.measure.remote.RemoteBackend``, which asks a worker there (the measuring layer sits above
    this one, so it is handed in, not imported)."""
    _remote[:] = [remote]


def describe(framework: str) -> Framework:
    """What ``framework`` declares of itself (its package's ``FRAMEWORK``), without importing it."""
    declared = importlib.import_module(f"opperf.frameworks.{check_framework(framework)}").FRAMEWORK
    return cast(Framework, declared)


def python_variable(framework: str) -> str:
    """The environment variable that names the interpreter ``framework``'s workers run in."""
    return f"OPPERF_{check_framework(framework).upper()}_PYTHON"


def worker_python(framework: str) -> str | None:
    """The interpreter ``framework``'s workers run in when it is another one (``OPPERF_<NAME>_PYTHON``:
    a JAX venv with numpy 2, say), else None; OpperfError when the variable names no executable."""
    variable = python_variable(framework)
    python = os.environ.get(variable)
    if not python:
        return None
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise OpperfError(
            f"{variable}={python} is no executable file; name a Python interpreter, or unset it"
        )
    return python


def get_backend(framework: str = DEFAULT_FRAMEWORK, *, check_start: bool = True) -> Backend:
    """The backend for ``framework``, imported on first use; where its workers run in another
    interpreter (``worker_python``), one that asks a worker there (``opperf.frameworks.remote``).
    Where a setting it declares checked is set, it is first started in a child
    (``opperf.frameworks.start_check``) unless ``check_start`` is False: a worker, whose settings its
    parent checked or set, leaves it out (a second each) and reports a death at start-up itself."""
    described = describe(framework)
    python = worker_python(framework)
    checked = described.checked_settings
    check = check_start and bool(checked) and any(name.startswith(checked) for name in os.environ)
    if python is not None and framework not in _instances:
        if not _remote:
            raise OpperfError(
                f"{python_variable(framework)} is set: {framework} runs in {python}, and only opperf's "
                "command line measures a framework in another interpreter; unset it to use it here"
            )
        if check:
            check_starts(described, python)
        _instances[framework] = _remote[0](framework, python, python_variable(framework))
    if framework not in _instances:
        if not described.installed:
            raise _not_installed(framework, f"no module named {described.imports!r}")
        if check:
            check_starts(described)
        _instances[framework] = imported_backend(framework)
    return _instances[framework]


def imported_backend(framework: str) -> Backend:
    """A new backend for ``framework``, which is imported; OpperfError where it is not installed, or
    refuses a setting as it is imported (``JAX_ENABLE_X64=banana``)."""
    module_name, class_name = describe(framework).backend.split(":")
    try:
        module = importlib.import_module(f"opperf.frameworks.{framework}.{module_name}")
        importlib.import_module(describe(framework).imports)
    except ImportError as error:
        raise _not_installed(framework, str(error)) from error
    except Exception as error:  # it reads a setting it refuses at import (JAX_ENABLE_X64=banana)
        raise not_started(framework, error) from None
    return cast(Backend, getattr(module, class_name)())


class NotInstalledError(OpperfError):
    """A framework asked for whose module this interpreter cannot import."""


def _not_installed(framework: str, why: str) -> NotInstalledError:
    return NotInstalledError(
        f"framework {framework!r} is not installed ({why}); "
        f"install it with `pip install 'opperf[{framework}]'` (or `make venv`)"
    )


def started_environment(backend: Backend) -> dict[str, object]:
    """``backend.environment()``, which starts the framework's runtime (JAX's backend, its devices);
    OpperfError where it cannot start, before anything is measured (``JAX_PLATFORMS=cuda`` on a
    machine without one): otherwise every configuration fails, and the run ends in the same error."""
    try:
        return backend.environment()
    except OpperfError:
        raise
    except Exception as error:
        raise not_started(backend.framework, error) from None


def not_started(framework: str, error: BaseException) -> OpperfError:
    """Why ``framework`` cannot start here, in one line: the error as its package's ``errors`` module
    reads one (which imports no framework), and what to do about it."""
    described = framework_module(framework, "errors").describe_error(error)
    return OpperfError(f"{describe(framework).display_name} fails to start here ({described}); {START_FIX}")


def check_framework(framework: str) -> str:
    """``framework`` if opperf knows it; OpperfError naming the known ones otherwise."""
    if framework not in FRAMEWORKS:
        raise OpperfError(f"unknown framework {framework!r}; choose one of: {', '.join(FRAMEWORKS)}")
    return framework


def capability_part(framework: str, capability: str, part: str) -> ModuleType:
    """Module ``part`` of a capability ``framework`` declares (``contract.CAPABILITIES``); OpperfError
    saying it has none where it declares none."""
    described = describe(framework)
    if not described.can(capability):
        others = [describe(name).display_name for name in FRAMEWORKS if describe(name).can(capability)]
        having = f" ({', '.join(others)} {'has' if len(others) == 1 else 'have'} it)" if others else ""
        raise OpperfError(f"{described.display_name} declares no {CAPABILITY_NAMES[capability]}{having}")
    return framework_module(framework, part)


def framework_module(framework: str, part: str) -> ModuleType:
    """A framework-free part of a framework's package (``categories``, ``rules``, ``work``, ``flags``):
    importing it never imports the framework itself."""
    return importlib.import_module(f"opperf.frameworks.{check_framework(framework)}.{part}")


def framework_of(function: Callable[..., object], default: str = DEFAULT_FRAMEWORK) -> str:
    """The framework ``function`` belongs to (each package's ``owns``); ``default`` when none claims it."""
    return next(
        (name for name in FRAMEWORKS if describe(name).owns(function)),
        default,
    )


def framework_of_namespace(namespace: str) -> str:
    """The framework of a user-facing namespace name (``mx.np``, ``torch.nn.functional``)."""
    for name in FRAMEWORKS:
        if describe(name).owns_namespace(namespace):
            return name
    described = [describe(name) for name in FRAMEWORKS]
    known = "; ".join(f"{framework.display_name}'s ({framework.namespaces})" for framework in described)
    raise OpperfError(f"unknown namespace {namespace!r}; opperf knows {known}")


GEMM_TIMEOUT_S = 120.0
"""How long one framework's matrix product probe may take (importing the framework included)."""


def gemm_rates(size: int, repeats: int) -> dict[str, tuple[float, str]]:
    """Each installed framework's float32 ``size`` x ``size`` matrix product rate (FLOP/s) and how it
    was measured, by framework, each probed in a child of its own (``frameworks/<name>/peaks.py``) on
    every CPU this process may use (the roof is the machine's, whatever thread count a sweep asks
    for), so one framework's threading never touches another's; a framework whose probe fails is left
    out."""
    import json
    import os
    import subprocess

    from opperf.utils.affinity import available_cpus
    from opperf.utils.child import opperf_command

    cpus = str(len(available_cpus()))
    environment = {**os.environ, "OMP_NUM_THREADS": cpus, "MKL_NUM_THREADS": cpus}

    rates: dict[str, tuple[float, str]] = {}
    for framework in FRAMEWORKS:
        if not describe(framework).installed:
            continue
        command = opperf_command(f"opperf.frameworks.{framework}.peaks", str(size), str(repeats))
        try:
            done = subprocess.run(
                command, env=environment, capture_output=True, text=True, timeout=GEMM_TIMEOUT_S, check=True
            )
            reading = json.loads(done.stdout.strip().splitlines()[-1])
            rates[framework] = (float(reading["gemm_flops_per_s"]), str(reading["method"]))
        except (OSError, subprocess.SubprocessError, ValueError, KeyError, IndexError):
            continue
    return rates
