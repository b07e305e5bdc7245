"""What a sweep and its worker processes say to each other: the requests beside a spec (probes, an
A/B job's rounds) and the replies beside a measurement. Each is a frozen dataclass of plain values,
sent as ``wire`` encodes it."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from opperf.measure.sampling import SamplingPlan
from opperf.operators.info import OpInfo
from opperf.results.measurement import BenchmarkSpec, Measurement
from opperf.utils.devices import Device

if TYPE_CHECKING:
    from opperf.frameworks import Backend


@dataclass(frozen=True)
class OverheadProbe:
    """Measure what the harness itself costs per call with ``profiler`` on ``device``, in the worker,
    where (pinned and threaded like the benchmarks) the operators run."""

    profiler: str
    device: Device


@dataclass(frozen=True)
class DescribeProbe:
    """Ask the worker which framework build it runs."""


@dataclass(frozen=True)
class Round:
    """Measure round ``index`` of ``spec`` (an A/B job's rounds of one configuration). The worker
    prepares the spec's inputs and passes in round 0 or when it holds another spec's (an A/B job's
    rounds each pass over every configuration, in fresh workers), and measures a later round of the
    spec it holds on that preparation; only round 0 checks that the tensors fit (an A/B job gives a
    configuration that did not measure on a side no further round). No round probes peak
    memory: an A/B job compares times, and the probe (a pass of its own after sampling, a round's
    warm-up being too short to read the peak from) cost about 9 ms a configuration and side and left
    round 0 noisier than the rounds after it; without it, A/A jobs over 578 rows took 17% less. The
    peak is a sweep's figure.
    ``plan`` is the round's sampling plan (its share of the spec's, ``opperf.verdicts.ab.job.round_plan``);
    None
    measures with the spec's own. ``public``: the spec's function is the one users call by its
    namespace and name (``Backend.lookup``; ``mx.np.add``, a Python wrapper, as a comparison runs
    it), not the registry's operator of that name."""

    spec: BenchmarkSpec
    index: int
    plan: SamplingPlan | None = None
    public: bool = False


@dataclass(frozen=True)
class RoundMeasured:
    """A round's measurement, and the round whose preparation it used (``prepared_in``)."""

    measurement: Measurement
    prepared_in: int


@dataclass(frozen=True)
class DeviceFault:
    """A worker's reply to a configuration that failed in a way that may have left its device
    unusable (``Session.device_fault``); the worker exits after sending it, and the runner tries the
    configuration once more in a fresh worker."""

    reply: Measurement | RoundMeasured


@dataclass(frozen=True)
class BuildDescription:
    """A worker's framework build: its interpreter, the framework's version and registered names, and
    what a sweep whose workers run in that interpreter asks of the framework before they measure
    (``opperf.frameworks.remote``): its operators, environment, devices and missing dtypes."""

    python: str
    framework_version: str
    registered: tuple[str, ...]
    operators: tuple[OpInfo, ...] = ()
    environment: Mapping[str, object] = field(default_factory=dict)
    devices: tuple[str, ...] = ()
    default_device: str = "cpu(0)"
    missing_dtypes: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, backend: Backend) -> BuildDescription:
        environment = backend.environment()
        return cls(
            python=sys.executable,
            framework_version=str(environment.get("framework_version")),
            registered=tuple(sorted(backend.registered_names())),
            operators=backend.operators(),
            environment=environment,
            devices=_devices(backend),
            default_device=str(backend.default_device()),
            missing_dtypes=dict(backend.missing_dtypes),
        )


MAX_DEVICES = 16
"""The GPUs a description looks for (``gpu(0)`` .. ``gpu(15)``)."""


def _devices(backend: Backend) -> tuple[str, ...]:
    """The devices the backend has, in canonical names: the CPU, then each GPU it accepts."""
    from opperf.utils.errors import OpperfError

    found = ["cpu(0)"]
    for index in range(MAX_DEVICES):
        try:
            found.append(str(backend.normalize_device(Device("gpu", index))))
        except OpperfError:
            break
    return tuple(found)
