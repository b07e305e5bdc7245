"""``torch.profiler`` as a timing strategy, and its memory events as a peak-memory probe.

Timing: all of a benchmark's passes share one profiler session, each measured forward and backward
pass inside a marker (``record_function``); a sample is the time of the events directly under its
marker: the aten operators a forward call ran, the autograd nodes a backward pass evaluated
(``AddBackward0``). CPU time on the CPU, the kernels' device time on a GPU. One session rather than one
per call (MXNet's way) because starting a session costs about 0.4 ms and disturbs what runs next: at 1
thread here, per-call sessions read a (1024, 1024) float32 ``add`` at 220 us against 129 us from
``torch.utils.benchmark`` and a one-element ``add`` at 2.9 us against a 0.6 us kernel; one session
reads 145 us and 0.6 us. Every sample is still kept.

Memory: a session with ``profile_memory=True`` runs one full pass and frees its outputs before it ends;
the peak is the maximum of the running sum of the allocations and frees the profiler recorded for the
device (bytes allocated since the session started, at their highest).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from opperf.harness import Passes, Samples, UnmeasurableError
from opperf.sampling import SamplingPlan, is_precise, sample

FORWARD_MARK = "opperf::forward"
BACKWARD_MARK = "opperf::backward"
# The autograd engine wraps each node it evaluates in an event named with this prefix.
ENGINE_PREFIX = "autograd::engine::evaluate_function: "
MEMORY_EVENT = "[memory]"


class NoOperatorRecordedError(UnmeasurableError):
    """A call during which the profiler recorded no aten operator: PyTorch answered it from tensor
    metadata in Python (``Tensor.dim``, ``Tensor.size``) without dispatching a kernel."""


@dataclass(frozen=True)
class NativeSampler:
    """Operator time as ``torch.profiler`` records it, all passes in one session (see the module doc).

    The session's events can only be read once it stops, so an adaptive plan decides when to stop on
    each marked pass's wall-clock time (the operator time plus dispatch, which tracks it); the samples
    reported are the profiler's, and whether they met the target is judged on them. ``on_gpu`` reads
    the kernels' device time instead of the host time of the operators that launched them.
    """

    synchronize: Callable[[], None]
    on_gpu: bool = False
    name: str = "native"

    def sample(self, passes: Passes, plan: SamplingPlan) -> Samples:
        from torch.profiler import record_function

        def marked(mark: str, call: Callable[[], object]) -> tuple[object, float]:
            start = time.perf_counter()
            with record_function(mark):
                outputs = call()
            self.synchronize()
            return outputs, time.perf_counter() - start

        backward = passes.backward

        def measured_pass() -> tuple[float, float | None]:
            outputs, forward_s = marked(FORWARD_MARK, passes.forward)
            if backward is None:
                return forward_s, None
            return forward_s, marked(BACKWARD_MARK, backward(outputs))[1]

        with _session(self.on_gpu, memory=False) as session:
            passes.timed_full_pass()  # the first call in a new session runs several times slower
            sampled = sample(passes.timed_full_pass, measured_pass, plan)
        events = session.events()
        forward_work = _marked_work(events, FORWARD_MARK)
        backward_work = _marked_work(events, BACKWARD_MARK) if backward else []
        forward_s = tuple(self._seconds(work) for work in forward_work)
        backward_s = tuple(self._seconds(work) for work in backward_work) or None
        operators = {e.name.removeprefix(ENGINE_PREFIX) for w in (*forward_work, *backward_work) for e in w}
        met = None if sampled.met_target is None else _precise(forward_s, backward_s, plan.target)
        sampled = replace(sampled, forward=forward_s, backward=backward_s, met_target=met)
        return Samples(sampled, tuple(sorted(operators)))

    def _seconds(self, work: Sequence) -> float:
        """Total time of the events, which the profiler gives in microseconds."""
        if not work:
            raise NoOperatorRecordedError(
                "the native profiler records no aten operator for this call (PyTorch answers it from "
                "tensor metadata without dispatching a kernel)"
            )
        return sum(e.device_time_total if self.on_gpu else e.cpu_time_total for e in work) * 1e-6


def _precise(forward: Sequence[float], backward: Sequence[float] | None, target: float) -> bool:
    return is_precise(forward, target) and (not backward or is_precise(backward, target))


def _session(on_gpu: bool, memory: bool):
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if on_gpu else [ProfilerActivity.CPU]
    return profile(activities=activities, profile_memory=memory)


def _marked_work(events: Sequence, mark: str) -> list[list]:
    """Per marker named ``mark``, in order, the events that are its work: its direct children, and the
    top-level events of other threads that start inside its span (a GPU's autograd engine thread)."""
    markers = [e for e in events if e.name == mark]
    foreign = [e for e in events if e.cpu_parent is None and e.name not in (FORWARD_MARK, BACKWARD_MARK)]
    return [[*m.cpu_children, *(e for e in foreign if _inside(e, m))] for m in markers]


def _inside(event, marker) -> bool:
    span = marker.time_range
    return event.thread != marker.thread and span.start <= event.time_range.start <= span.end


def peak_memory_bytes(full_pass: Callable[[], object], on_gpu: bool) -> int:
    """Peak bytes allocated on the device (the GPU if ``on_gpu``, else the host) while ``full_pass``
    runs, its outputs freed before the session ends."""
    from torch.autograd import DeviceType

    with _session(on_gpu, memory=True) as session:
        full_pass()  # its outputs are freed as it returns: tensors are reference counted
    device = DeviceType.CUDA if on_gpu else DeviceType.CPU
    records = sorted(
        (e.start_ns(), e.nbytes())
        for e in session.profiler.kineto_results.events()
        if e.name() == MEMORY_EVENT and e.device_type() == device
    )
    peak = allocated = 0
    for _, nbytes in records:
        allocated += nbytes
        peak = max(peak, allocated)
    return peak


def warm_up_profiler() -> None:
    """The first profiler session of a process pays start-up costs; pay them outside measurement."""
    import torch

    for memory in (False, True):
        with _session(on_gpu=False, memory=memory):
            torch.ones(4, 4).add(1)
