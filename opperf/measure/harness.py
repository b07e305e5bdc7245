"""One measurement harness for every framework: a spec in, a ``Measurement`` out.

A framework supplies a small ``Session``: it prepares a spec's inputs and hands back the ``Passes``
(run the operator on the next input set, the backward pass of a forward pass's outputs, synchronise
the device), its timing strategies, a peak-memory probe and the text of its errors. Everything else
happens here, the same way for each framework: the check that the tensors fit (inputs, outputs as
the framework infers them from shapes, and their gradients), warm-up and sampling
as the plan says, the competing CPU load meanwhile, the peak memory, the time the operator's passes
took (``sampling_s``, from which a sweep's ``harness_efficiency`` is computed), and failures as results.

No pass runs only for the harness's sake where a pass that runs anyway can answer: the first pass a
session runs while preparing (to find whether a backward pass runs) is the first warm-up pass, and the
peak memory is read from warm-up passes (or the sampler's profiler session) rather than a pass of its
own; a pass of its own after sampling is the fallback when warm-up ends before the reading settles.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, overload

from opperf.measure.memory import fit_problem
from opperf.measure.sampling import OVERHEAD_PLAN, Sampled, SamplingPlan, sample
from opperf.measure.stages import StageCheck
from opperf.measure.timing import Timer
from opperf.operators.layouts import with_layout
from opperf.operators.values import with_distribution
from opperf.results.measurement import (
    BenchmarkSpec,
    DeviceWork,
    InputValue,
    Measurement,
    Status,
    TimerKind,
    Work,
)
from opperf.results.options import RunOptions
from opperf.utils import gpu_state, load
from opperf.utils.devices import Device

Backward = Callable[[Any], Callable[[], object]]
"""Given a forward pass's outputs, the call that runs their backward pass."""


class SkipError(RuntimeError):
    """A session's refusal to run a benchmark (a tensor it would allocate is too large, say): the
    benchmark is skipped with this reason before the operator runs."""


class UnmeasurableError(RuntimeError):
    """The operator runs but the native profiler cannot see it (a call it records no operator for):
    the Python timer, which sees any call, times it instead, and the record says so."""


TimeCall = Callable[[str, Callable[[], object]], tuple[object, float]]
"""How a sampler times one call of a phase (``forward`` or ``backward``): its outputs and seconds."""


@dataclass(frozen=True)
class Passes:
    """A prepared benchmark, as a framework's session hands it to the harness.

    ``forward`` runs the operator on the next input set (several rotate when measuring cold) and
    returns its outputs; ``backward`` (None when there is no backward pass, ``backward_reason`` says
    why) turns those outputs into the call of their backward pass; ``synchronize`` waits for the
    device's queued work; every pass runs inside ``scope`` (a framework's grad or array mode). A graph
    or compile stage's passes carry the seconds capturing or compiling took (``compile_s``) and how
    their outputs compared with eager ones (``stage_check``). ``warmed`` holds the seconds of the full
    passes the session ran while preparing (the first, recorded pass that finds whether a backward
    pass runs): the sampling counts them as its first warm-up passes. ``flush``, when given, runs
    before every timed call and outside its timing (``before_timed_call``): on a GPU measured cold, it
    writes a buffer twice the size of the L2 cache and waits for it. ``calls_per_pass`` is how many
    of the operator's calls one pass runs (a CUDA graph's replay): samples are divided by it.
    ``work`` is the forward pass's work where the framework counts it (``Measurement.counted_work``).
    ``restore``, when given, runs after every pass, timed or not, and outside any timing: the input
    an in-place form overwrote copied back from its first values, so that the next call on that
    input set computes on the same values (``--in-place``). After the pass, not before the next: a
    copy just before a timed call leaves its input in cache, which ``--cache cold`` must not (an
    in-place ``add_`` read 217% of the memory roof so, 25-35% faster than from memory). A session
    hands its passes over with every input set restored (what preparing them ran overwrote).
    """

    forward: Callable[[], object]
    backward: Backward | None
    backward_reason: str | None
    synchronize: Callable[[], None]
    scope: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext
    compile_s: float | None = None
    stage_check: StageCheck | None = None
    warmed: tuple[float, ...] = ()
    flush: Callable[[], None] | None = None
    calls_per_pass: int = 1
    work: Work | None = None
    restore: Callable[[], None] | None = None

    def before_timed_call(self) -> None:
        """What must happen before each timed call, outside its timing: a GPU's L2 cache flushed
        (``flush``) when measuring cold; nothing otherwise."""
        if self.flush is not None:
            self.flush()

    def timed_pass(self, time_call: TimeCall) -> tuple[float, float | None]:
        """One measured pass, each call timed by ``time_call(phase, call)`` (which returns the call's
        outputs and its seconds): the forward call, then the backward call of its outputs where there
        is one, each after ``before_timed_call``; then ``restore``. Every sampler times its passes
        through here, so what must happen around each timed call is written once."""
        self.before_timed_call()
        outputs, forward_s = time_call("forward", self.forward)
        backward_s = None
        if self.backward is not None:
            backward = self.backward(outputs)
            self.before_timed_call()
            backward_s = time_call("backward", backward)[1]
        self._restore()
        return forward_s, backward_s

    def full_pass(self) -> object:
        """A forward pass and, when there is one, its backward pass (then ``restore``); the forward
        outputs."""
        outputs = self._forward_and_backward()
        self._restore()
        return outputs

    def _restore(self) -> None:
        if self.restore is not None:
            self.restore()
            self.synchronize()

    def _forward_and_backward(self) -> object:
        outputs = self.forward()
        if self.backward is not None:
            self.backward(outputs)()
        return outputs

    def timed_full_pass(self) -> float:
        """Seconds of one synchronised full pass (warm-up uses these to see when times settle); an
        in-place form's input is restored after the clock stops."""
        start = time.perf_counter()
        self._forward_and_backward()
        self.synchronize()
        elapsed = time.perf_counter() - start
        self._restore()
        return elapsed


@dataclass(frozen=True)
class Samples:
    """A benchmark's measured passes as the plan sampled them, and the operators the times cover
    (empty when the timing strategy cannot see them). ``memory_peak_bytes`` is the peak memory of a
    full pass where the strategy read it from a pass it ran anyway (a warm-up pass, or PyTorch's
    profiler session), so no probe pass of its own is needed; None otherwise. ``timer`` says what made
    the samples; a strategy that reads device time adds the calls' host latency (``host``) and what
    they ran on the device (``device_work``), and says why a backward pass it ran has no samples
    (``backward_reason``: it ran nothing on the device)."""

    sampled: Sampled
    operators: tuple[str, ...] = ()
    memory_peak_bytes: int | None = None
    timer: TimerKind = "host"
    backward_reason: str | None = None
    host: HostLatency | None = None
    device_work: tuple[DeviceWork, ...] = ()

    def per_call(self, calls: int) -> Samples:
        """These samples with each pass's figures divided among the ``calls`` calls it ran."""
        if calls == 1:
            return self

        @overload
        def divided(times: tuple[float, ...]) -> tuple[float, ...]: ...
        @overload
        def divided(times: tuple[float, ...] | None) -> tuple[float, ...] | None: ...
        def divided(times: tuple[float, ...] | None) -> tuple[float, ...] | None:
            return tuple(t / calls for t in times) if times is not None else None

        return replace(
            self,
            sampled=replace(
                self.sampled, forward=divided(self.sampled.forward), backward=divided(self.sampled.backward)
            ),
            host=HostLatency(divided(self.host.forward), divided(self.host.backward)) if self.host else None,
            device_work=tuple(
                replace(w, per_call=w.per_call / calls, seconds=w.seconds / calls) for w in self.device_work
            ),
        )


@dataclass(frozen=True)
class HostLatency:
    """Synchronised wall-clock seconds of forward (and backward) calls, each timed on its own."""

    forward: tuple[float, ...]
    backward: tuple[float, ...] | None = None


class Sampler(Protocol):
    """A timing strategy over a benchmark's passes: warm up (counting ``passes.warmed``, the passes
    already run), then time forward (and backward) passes as ``plan`` says. ``name`` is what reports
    show (``native`` or ``python``)."""

    @property
    def name(self) -> str: ...

    def sample(self, passes: Passes, plan: SamplingPlan) -> Samples: ...


@dataclass(frozen=True)
class PerCallSampler:
    """Each measured call timed on its own by ``timer`` (the Python timer, or a native profiler that
    opens one session per call, as MXNet's does). ``peak_memory``, when given, is the session's
    memory probe (``Session.peak_memory`` on the device): warm-up passes run under it until two agree
    (``_ProbingWarmUp``), and that reading is the benchmark's peak memory."""

    timer: Timer
    clock: Callable[[], float] = field(default=time.perf_counter)
    peak_memory: Callable[[Callable[[], object]], int] | None = None

    @property
    def name(self) -> str:
        return self.timer.name

    def sample(self, passes: Passes, plan: SamplingPlan) -> Samples:
        operators: set[str] = set()

        def time_call(phase: str, call: Callable[[], object]) -> tuple[object, float]:
            timed = self.timer.time(call)
            if phase == "forward":  # the operators a record names are those its forward call ran
                operators.update(timed.operators)
            return timed.outputs, timed.seconds

        def measured_pass() -> tuple[float, float | None]:
            return passes.timed_pass(time_call)

        memory = _ProbingWarmUp(passes, self.peak_memory)
        sampled = sample(memory.warm_pass, measured_pass, plan, self.clock, passes.warmed, load.snapshot)
        return Samples(sampled, tuple(sorted(operators)), memory.peak_bytes, timer=self.timer.kind)


class _ProbingWarmUp:
    """Warm-up passes, each under the memory probe (when there is one) until two in a row read the
    same peak, which is then the benchmark's (``peak_bytes``): a pass's allocations settle like its
    times (the second and third passes of an MXNet convolution read up to 7x the peak of later ones;
    the probe after sampling that this replaces read the settled peak). Where warm-up ends before two
    readings agree, or a probe fails, ``peak_bytes`` stays None and the harness probes with a pass of
    its own after sampling, as it did before (and reports a failure)."""

    def __init__(self, passes: Passes, probe: Callable[[Callable[[], object]], int] | None) -> None:
        self._passes = passes
        self._probe = probe
        self._last: int | None = None
        self.peak_bytes: int | None = None

    def warm_pass(self) -> float:
        if self._probe is None or self.peak_bytes is not None:
            return self._passes.timed_full_pass()
        start = time.perf_counter()
        try:
            reading = self._probe(self._passes.full_pass)
        except Exception:  # the probe after sampling meets it again and reports it
            self._probe = reading = None
        self._passes.synchronize()
        if reading is not None and reading == self._last:
            self.peak_bytes = reading
        self._last = reading
        return time.perf_counter() - start


class Session(Protocol):
    """What a framework supplies to the harness (``opperf.frameworks.<name>.session``)."""

    def prepare(self, spec: BenchmarkSpec, seed: int, function: Callable[..., object] | None) -> Passes:
        """Materialise ``spec``'s inputs from ``seed`` (through ``function`` when given, else the
        registry's) and find whether a backward pass runs; raises whatever the framework raises."""

    def trivial(self, device: Device) -> Passes:
        """A one-element copy on ``device``: what the harness itself costs per call is what timing it
        reads."""

    def sampler(self, profiler: str, device: Device) -> Sampler:
        """The timing strategy named ``profiler`` for ``device``."""

    def peak_memory(self, full_pass: Callable[[], object], device: Device) -> int:
        """Peak bytes the framework allocates on ``device`` while ``full_pass`` runs, its outputs
        freed before the probe ends."""

    def available_memory(self, device: Device) -> int | None:
        """Bytes free on ``device``, or None if unknown."""

    def output_bytes(self, spec: BenchmarkSpec, function: Callable[..., object] | None) -> int | None:
        """Bytes a forward pass's outputs take, inferred from the inputs' shapes without running the
        operator; None where the framework cannot infer them."""

    def describe_error(self, error: BaseException) -> str:
        """One line naming what went wrong."""

    def settle(self) -> None:
        """Wait for work still queued, so a late error belongs to the benchmark that caused it."""

    def device_fault(self, reason: str | None, device: Device) -> bool:
        """Whether a configuration that failed with ``reason`` may have left the worker's device
        unusable (it is replaced, and the configuration tried once more in a fresh one)."""


def measure(
    session: Session, spec: BenchmarkSpec, function: Callable[..., object] | None = None
) -> Measurement:
    """Measure ``spec`` as its options say (through ``function`` when given, else the registry's
    operator); whatever goes wrong becomes a ``skipped`` or ``failed`` result with the reason."""
    prepared = prepare(session, spec, function)
    if isinstance(prepared, Measurement):
        return prepared
    return measure_prepared(session, spec, prepared)


def prepare(
    session: Session,
    spec: BenchmarkSpec,
    function: Callable[..., object] | None = None,
    check_fit: bool = True,
) -> Passes | Measurement:
    """``spec``'s inputs and passes, ready to be measured (once, or round after round by an A/B
    job); or the ``skipped`` or ``failed`` result when they cannot be made. ``check_fit`` False
    leaves out the check that the tensors fit (a later round of an A/B job, whose round 0 made it)."""
    try:
        if check_fit:
            problem = _fit_problem(session, spec, function)
            if problem is not None:
                return Measurement(spec=spec, status=Status.SKIPPED, reason=problem)
        passes = session.prepare(as_drawn(spec), spec.options.seed, function)
        check = passes.stage_check
        if check is not None and not check.agrees:
            return Measurement(
                spec=spec,
                status=Status.FAILED,
                reason=f"the {spec.stage} stage's outputs differ from eager: {check.detail}",
                compile_s=passes.compile_s,
                stage_check=check,
            )
        return passes
    except SkipError as error:
        session.settle()
        return Measurement(spec=spec, status=Status.SKIPPED, reason=str(error))
    except Exception as error:
        session.settle()
        return Measurement(spec=spec, status=Status.FAILED, reason=session.describe_error(error))


def as_drawn(spec: BenchmarkSpec) -> BenchmarkSpec:
    """``spec`` with the run's ``--values`` distribution and ``--layout`` set on the tensors they
    touch, as the session draws them; the measurement keeps ``spec`` itself, whose inputs (and row
    key) are those of every distribution and layout."""
    inputs = tuple((name, drawn_input(value, spec.options)) for name, value in spec.inputs)
    return replace(spec, inputs=inputs) if inputs != spec.inputs else spec


def drawn_input(value: InputValue, options: RunOptions) -> InputValue:
    """One input with the run's ``--values`` distribution and ``--layout`` set where they touch it."""
    return with_layout(with_distribution(value, options.values, options.dtype), options.layout)


def _fit_problem(session: Session, spec: BenchmarkSpec, function: Callable[..., object] | None) -> str | None:
    """Why the spec's tensors do not fit the device's free memory; on a GPU, naming the other
    processes that hold it (two sweeps sharing one GPU)."""
    available = session.available_memory(spec.options.device)
    outputs = session.output_bytes(spec, function) if available is not None else None
    problem = fit_problem(spec, available, outputs)
    holders = gpu_state.memory_holders(spec.options.device, os.getpid()) if problem else None
    return f"{problem} ({holders})" if holders else problem


def measure_prepared(
    session: Session,
    spec: BenchmarkSpec,
    passes: Passes,
    probe_memory: bool = True,
    plan: SamplingPlan | None = None,
) -> Measurement:
    """Warm up and sample ``passes`` of a prepared ``spec``, the passes run while preparing
    (``passes.warmed``) counting as warm-up; ``probe_memory`` False leaves the peak-memory probe out
    (an A/B job's rounds: they compare times); ``plan``, when given, replaces
    the spec's sampling plan (a round's share of it, ``opperf.verdicts.ab.job.round_plan``)."""
    try:
        with passes.scope():
            return _measure_passes(session, spec, passes, probe_memory, plan or spec.options.plan)
    except SkipError as error:
        return Measurement(spec=spec, status=Status.SKIPPED, reason=str(error))
    except Exception as error:
        return Measurement(spec=spec, status=Status.FAILED, reason=session.describe_error(error))
    finally:
        session.settle()


def _measure_passes(
    session: Session, spec: BenchmarkSpec, passes: Passes, probe_memory: bool, plan: SamplingPlan
) -> Measurement:
    sampler = _probing(session.sampler(spec.options.profiler_in_effect, spec.options.device), probe_memory)
    before = load.snapshot()
    gpu_before = gpu_state.read(spec.options.device)
    started = time.perf_counter()
    note = None
    try:
        samples = sampler.sample(passes, plan)
    except UnmeasurableError as error:
        if spec.options.profiler == "python":
            raise
        spec = replace(spec, options=replace(spec.options, profiler="python"))
        samples = _probing(session.sampler("python", spec.options.device), probe_memory).sample(passes, plan)
        note = f"{error}: timed by the python timer instead"
    sampling_s = time.perf_counter() - started + sum(passes.warmed)
    samples = samples.per_call(passes.calls_per_pass)
    sampled = samples.sampled
    competing = load.competing_load(before, load.snapshot())
    gpu = gpu_state.state(spec.options.device, gpu_before, gpu_state.read(spec.options.device))
    memory, memory_problem = (
        _peak_memory(session, passes, spec.options.device, samples) if probe_memory else (None, None)
    )
    return Measurement(
        spec=spec,
        status=Status.OK,
        reason="; ".join(filter(None, (note, memory_problem))) or None,
        forward=sampled.forward,
        backward=sampled.backward,
        backward_reason=samples.backward_reason or passes.backward_reason,
        memory_peak_bytes=memory,
        profiled_ops=samples.operators,
        warmup_runs=sampled.warmup_runs,
        stop_reason=sampled.stop_reason,
        met_target=sampled.met_target,
        retaken=sampled.retaken,
        load_dominated=sampled.load_dominated,
        competing_load=competing,
        sampling_s=sampling_s,
        compile_s=passes.compile_s,
        stage_check=passes.stage_check,
        timer=samples.timer,
        host_forward=samples.host.forward if samples.host else None,
        host_backward=samples.host.backward if samples.host else None,
        device_work=samples.device_work,
        gpu_state=gpu,
        counted_work=passes.work,
    )


def _probing(sampler: Sampler, probe_memory: bool) -> Sampler:
    """``sampler``, its warm-up passes no longer under the memory probe where none is wanted (an A/B
    job's rounds)."""
    if probe_memory or not isinstance(sampler, PerCallSampler):
        return sampler
    return replace(sampler, peak_memory=None)


def _peak_memory(
    session: Session, passes: Passes, device: Device, samples: Samples
) -> tuple[int | None, str | None]:
    """(peak bytes, None), or (None, why) when the memory probe itself failed; read from the sampling
    where the sampler recorded it (a warm-up pass, or its profiler session), else probed with a pass of
    its own."""
    if samples.memory_peak_bytes is not None:
        return samples.memory_peak_bytes, None
    try:
        return session.peak_memory(passes.full_pass, device), None
    except Exception as error:
        session.settle()
        return None, f"memory probe failed: {session.describe_error(error)}"


def harness_overhead(session: Session, profiler: str, device: Device) -> float:
    """Median seconds ``profiler`` reads for a one-element copy: the floor under any measurement
    (dispatch, a threaded engine's hand-off and synchronisation for the Python timer)."""
    passes = session.trivial(device)
    with passes.scope():
        try:
            samples = session.sampler(profiler, device).sample(passes, OVERHEAD_PLAN)
        except UnmeasurableError:  # the measurements fall back to the Python timer: so does their floor
            samples = session.sampler("python", device).sample(passes, OVERHEAD_PLAN)
    return statistics.median(samples.sampled.forward)
