"""What every framework backend does alike, so each package states only what is its own."""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import ClassVar, Protocol

from opperf.frameworks import describe
from opperf.measure.harness import Session
from opperf.operators import fused, longtail
from opperf.operators.info import OpInfo
from opperf.utils.devices import Device
from opperf.utils.errors import OpperfError


def foreign_model_error(what: str, found: object, expected: str) -> OpperfError:
    """The refusal of a model a capture cannot run, named before it runs: ``what`` (the model, an
    example input) is ``found``, not ``expected`` (a ``torch.nn.Module``), likely another framework's."""
    kind = f"{type(found).__module__}.{type(found).__qualname__}"
    return OpperfError(
        f"{what} is a {kind}, not {expected}: if it is another framework's, name that one with --framework"
    )


class Registry(Protocol):
    """The part of a framework's registry the backend reads."""

    @property
    def registered_names(self) -> tuple[str, ...]: ...

    @property
    def operators(self) -> tuple[OpInfo, ...]: ...


class BackendBase:
    """A framework's registry followed by opperf's own long-tail operators and fused patterns, and its
    device names; a subclass names its framework, registry loader, devices module and session class."""

    framework: ClassVar[str]
    devices: ClassVar[ModuleType]
    session_type: ClassVar[type[Session]]
    registry: ClassVar[staticmethod[[], Registry]]
    missing_dtypes: ClassVar[Mapping[str, str]] = {}
    """opperf's dtypes the framework has no tensors of, each with what to do instead."""

    def __init__(self) -> None:
        self.session = self.session_type()

    def operators(self) -> tuple[OpInfo, ...]:
        """The registry's operators, then opperf's long-tail operators (``opperf.operators.longtail``)
        and fused patterns (``opperf.operators.fused``) where the framework declares them."""
        declared = describe(self.framework)
        return (
            self.registry().operators
            + (longtail.operators(self.framework) if declared.can("longtail") else ())
            + (fused.operators(self.framework) if declared.can("fused") else ())
        )

    def registered_names(self) -> tuple[str, ...]:
        declared = describe(self.framework)
        return (
            self.registry().registered_names
            + (tuple(op.name for op in longtail.catalogue()) if declared.can("longtail") else ())
            + (tuple(p.name for p in fused.catalogue()) if declared.can("fused") else ())
        )

    def normalize_device(self, device: Device) -> Device:
        return self.devices.normalize_device(device)

    def start(self) -> None:
        """Nothing beyond importing it: a framework whose runtime starts apart from its import (an
        engine, a backend) overrides this."""

    def keep_compiled(self, folder: str) -> None:
        """Nothing: only a framework that declares ``keeps_compiled`` is asked, and overrides this."""
