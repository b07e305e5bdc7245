"""``torch.profiler`` as a timing strategy, and its memory events as a peak-memory probe.

Timing: all of a benchmark's passes share one profiler session, each measured forward and backward
pass inside a marker (``record_function``); a sample is the time of the events directly under its
marker: the aten operators a forward call ran, the autograd nodes a backward pass evaluated
(``AddBackward0``), their CPU time. On a GPU a sample is the call's device time instead: the sum of
the kernels, memory copies and memory sets its operators launched, from CUPTI's activity records (an
H100 ran exp on (1024, 1024) in 4.5 us of kernel, where a synchronised call reads 13.5 us and the
Python timer under a profiler 23.9 us); what each call ran is kept by name, and the synchronised host
latency of calls timed after the sessions, outside them, sits beside it. One session rather than one
per call (MXNet's way) because starting a session costs about 0.4 ms and disturbs what runs next: at 1
thread here, per-call sessions read a (1024, 1024) float32 ``add`` at 220 us against 129 us from
``torch.utils.benchmark`` and a one-element ``add`` at 2.9 us against a 0.6 us kernel; one session
reads 145 us and 0.6 us. Every sample is still kept.

Memory: a session with ``profile_memory=True`` runs one full pass and frees its outputs before it ends;
the peak is the maximum of the running sum of the allocations and frees the profiler recorded for the
device (bytes allocated since the session started, at their highest). The sampler's first session, a
full pass it runs before warming up anyway, is such a session: the sampler reports its peak, and no
pass of its own is spent on memory.

Size limit: ``SizeLimit`` stops a pass before any aten operator in it allocates a tensor above a limit,
from the operator's shape inference on the meta device, so nothing that large is ever allocated.
Operators whose outputs grow faster than their inputs (``vander``, ``diag_embed``, ``corrcoef`` of
10,000 variables) make GiB-sized tensors from standard inputs of 4 MiB; run, they held a worker at 9 GB.
"""

from __future__ import annotations

import bisect
import functools
import os
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from opperf.measure.harness import HostLatency, Passes, Samples, UnmeasurableError
from opperf.measure.sampling import SamplingPlan, met_target, sample
from opperf.measure.timing import PythonTimer
from opperf.results.measurement import DeviceWork
from opperf.utils.load import snapshot

FORWARD_MARK = "opperf::forward"
BACKWARD_MARK = "opperf::backward"
MARKS = (FORWARD_MARK, BACKWARD_MARK)
# The autograd engine wraps each node it evaluates in an event named with this prefix.
ENGINE_PREFIX = "autograd::engine::evaluate_function: "
MEMORY_EVENT = "[memory]"


class NoOperatorRecordedError(UnmeasurableError):
    """A call during which the profiler recorded no aten operator: PyTorch answered it from tensor
    metadata in Python (``Tensor.dim``, ``Tensor.size``) without dispatching a kernel."""


class NoDeviceWorkError(UnmeasurableError):
    """A call on a GPU that ran nothing on the device: no kernel, memory copy or memory set."""


@dataclass(frozen=True)
class NativeSampler:
    """Operator time as ``torch.profiler`` records it, all passes in one session (see the module doc).

    The session's events can only be read once it stops, so an adaptive plan decides when to stop on
    each marked pass's wall-clock time (the operator time plus dispatch, which tracks it); the samples
    reported are the profiler's, and whether they met the target is judged on them. ``on_gpu`` reads
    the device time of the work the calls launched instead of the host time of the operators that
    launched it, and adds the calls' host latency and device work to the samples.
    """

    synchronize: Callable[[], None]
    on_gpu: bool = False
    name: str = "native"

    def sample(self, passes: Passes, plan: SamplingPlan) -> Samples:
        from torch.profiler import record_function

        marks = {"forward": FORWARD_MARK, "backward": BACKWARD_MARK}

        def marked(phase: str, call: Callable[[], object]) -> tuple[object, float]:
            start = time.perf_counter()
            with record_function(marks[phase]):
                outputs = call()
            self.synchronize()
            return outputs, time.perf_counter() - start

        backward = passes.backward

        def measured_pass() -> tuple[float, float | None]:
            return passes.timed_pass(marked)

        with _session(self.on_gpu, memory=True) as probe:
            passes.timed_full_pass()  # also pays the first profiled call's extra cost
        events = list(probe.profiler.kineto_results.events())
        events_per_pass = max(1, sum(1 for e in events if e.name() != MEMORY_EVENT))
        peak_bytes = _peak(events, self.on_gpu)
        del events, probe
        sessions = _RotatingSessions(self.on_gpu, passes, max(1, EVENTS_PER_SESSION // events_per_pass))

        def rotating_warm_pass() -> float:
            sessions.count_pass()
            return passes.timed_full_pass()

        def rotating_pass() -> tuple[float, float | None]:
            sessions.count_pass()
            return measured_pass()

        started = time.perf_counter()
        with sessions:
            sampled = sample(rotating_warm_pass, rotating_pass, plan, warmed=passes.warmed, meter=snapshot)
        sampling_s = time.perf_counter() - started
        by_mark = sessions.marked_work
        forward_work = _kept(by_mark.get(FORWARD_MARK, []), sampled.kept)
        backward_work = _kept(by_mark.get(BACKWARD_MARK, []), sampled.kept) if backward else []
        backward_reason = None
        if self.on_gpu and backward_work and not any(backward_work):
            backward_work, backward_reason = [], NO_BACKWARD_DEVICE_WORK
        forward_s = tuple(self._seconds(work) for work in forward_work)
        backward_s = tuple(self._seconds(work) for work in backward_work) or None
        # the operators a record names are those its forward call ran (the schema's profiled_ops)
        operators = {w.launched_by.removeprefix(ENGINE_PREFIX) for work in forward_work for w in work}
        met = None if sampled.met_target is None else met_target(forward_s, backward_s, plan.target)
        sampled = replace(sampled, forward=forward_s, backward=backward_s, met_target=met)
        if not self.on_gpu:
            return Samples(sampled, tuple(sorted(operators)), peak_bytes, timer="profiler")
        return Samples(
            sampled,
            tuple(sorted(operators)),
            peak_bytes,
            timer="device",
            backward_reason=backward_reason,
            host=host_latency(passes, len(forward_s), HOST_SHARE * sampling_s),
            device_work=(*device_work("forward", forward_work), *device_work("backward", backward_work)),
        )

    def _seconds(self, work: Sequence[Work]) -> float:
        """Total time of one marker's work."""
        if work:
            return sum(w.seconds for w in work)
        if self.on_gpu:
            raise NoDeviceWorkError(
                "the call ran no kernel, memory copy or memory set on the GPU (PyTorch answered it on "
                "the host)"
            )
        raise NoOperatorRecordedError(
            "the native profiler records no aten operator for this call (PyTorch answers it from "
            "tensor metadata without dispatching a kernel)"
        )


NO_BACKWARD_DEVICE_WORK = (
    "the backward pass ran no kernel, memory copy or memory set on the GPU (autograd passed the "
    "gradient on as it is, or as a view); its host latency is recorded"
)
"""Why a GPU record has no backward time where its backward pass launches nothing (``add``, ``sum``:
their gradients are the incoming gradient, or a view of it)."""

HOST_SHARE = 0.25
"""On a GPU, the calls timed for host latency after sampling may take this share of the sampling's
time (at least ``HOST_CALLS_LEAST`` calls, at most as many as were sampled)."""
HOST_CALLS_LEAST = 3


def _kept(marked: list, kept: tuple[int, ...] | None) -> list:
    """The marked passes' work the samples are: those ``kept`` (a retaken pass replaces one that a
    stretch of competing load inflated), all of them without retakes."""
    return marked if kept is None else [marked[i] for i in kept]


def host_latency(passes: Passes, most: int, budget_s: float) -> HostLatency:
    """Synchronised wall-clock seconds of forward (and backward) calls, each timed on its own outside
    any profiler session (CUPTI's tracing adds microseconds to every launch): at least
    ``HOST_CALLS_LEAST`` calls, then more while ``budget_s`` lasts, up to ``most``."""
    timer = PythonTimer(synchronize=passes.synchronize)

    def timed(_phase: str, call: Callable[[], object]) -> tuple[object, float]:
        found = timer.time(call)
        return found.outputs, found.seconds

    forward: list[float] = []
    backward: list[float] = []
    started = time.perf_counter()
    while len(forward) < max(most, HOST_CALLS_LEAST) and (
        len(forward) < HOST_CALLS_LEAST or time.perf_counter() - started < budget_s
    ):
        forward_s, backward_s = passes.timed_pass(timed)
        forward.append(forward_s)
        if backward_s is not None:
            backward.append(backward_s)
    return HostLatency(tuple(forward), tuple(backward) or None)


DEVICE_WORK_SHOWN = 8
"""Pieces of device work a record names per phase, the most time first; the rest are one ``other``."""


def device_work(phase: str, marked: Sequence[Sequence[Work]]) -> tuple[DeviceWork, ...]:
    """What the calls of one phase ran on the device, per call: each kernel, copy and set by name."""
    if not marked:
        return ()
    count: dict[tuple[str, str], int] = defaultdict(int)
    seconds: dict[tuple[str, str], float] = defaultdict(float)
    for work in marked:
        for w in work:
            count[w.kind, w.name] += 1
            seconds[w.kind, w.name] += w.seconds
    calls = len(marked)
    ranked = sorted(count, key=lambda key: -seconds[key])
    shown = [
        DeviceWork(phase, kind, name, count[kind, name] / calls, seconds[kind, name] / calls)
        for kind, name in ranked[:DEVICE_WORK_SHOWN]
    ]
    rest = ranked[DEVICE_WORK_SHOWN:]
    if rest:
        shown.append(
            DeviceWork(
                phase,
                "other",
                f"{len(rest)} more",
                sum(count[key] for key in rest) / calls,
                sum(seconds[key] for key in rest) / calls,
            )
        )
    return tuple(shown)


EVENTS_PER_SESSION = 100_000
"""Events one profiler session may collect before it is read and another started. The profiler holds
about 1 KB per event until its session ends, and an operator composed of tens of thousands of aten
calls (``embedding_renorm`` on 10,000 rows: 63,000 events a call) would otherwise grow a worker by a
gigabyte within one configuration."""


class _RotatingSessions:
    """The profiler sessions of one benchmark: each holds at most ``passes_per_session`` measured
    passes, then is read (its markers' work kept, its events released) and another started, with one
    unmeasured pass first (the first call in a new session runs slower)."""

    def __init__(self, on_gpu: bool, passes: Passes, passes_per_session: int) -> None:
        self._on_gpu = on_gpu
        self._passes = passes
        self._limit = passes_per_session
        self._session: Any = None  # the open torch.profiler.profile
        self._count = 0
        self.marked_work: MarkedWork = defaultdict(list)

    def __enter__(self) -> _RotatingSessions:
        self._open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._close()

    def count_pass(self) -> None:
        """Before a measured pass: start a fresh session if this one is full."""
        if self._count >= self._limit:
            self._close()
            self._open()
        self._count += 1

    def _open(self) -> None:
        self._session = _session(self._on_gpu, memory=False)
        self._session.__enter__()
        self._count = 0
        self._passes.timed_full_pass()

    def _close(self) -> None:
        session, self._session = self._session, None
        session.__exit__(None, None, None)
        events = session.profiler.kineto_results.events()
        found = _device_marked_work(events) if self._on_gpu else _cpu_marked_work(raw_events(events))
        for mark, work in found.items():
            self.marked_work[mark].extend(work)


@dataclass(frozen=True)
class Work:
    """What one marked call ran, and its time in seconds: on the host, an operator the profiler
    recorded directly under the marker, its CPU time (children included); on a GPU, one kernel,
    memory copy or memory set (``kind``) and its device time, with the aten operator that launched it
    (``operator``)."""

    name: str
    seconds: float
    kind: str = "operator"
    operator: str | None = None

    @property
    def launched_by(self) -> str:
        """The operator this work belongs to: itself on the host, the launching one on a GPU."""
        return self.operator or self.name


# kineto, the profiler's backend, writes two lines to stderr per session ("profiler_start",
# "profiler_stop") at its highest level (USDT, above ERROR): only its level 6 silences them. It reads
# the level once, when the process's first session starts; a level the user set is kept.
KINETO_LOG_LEVEL = "6"


def _session(on_gpu: bool, memory: bool):
    from torch.profiler import ProfilerActivity, profile

    os.environ.setdefault("KINETO_LOG_LEVEL", KINETO_LOG_LEVEL)

    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if on_gpu else [ProfilerActivity.CPU]
    return profile(activities=activities, profile_memory=memory)


MarkedWork = dict[str, list[list[Work]]]
"""Marker name -> per marker, in the order the passes ran, its work."""


DEVICE_KINDS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
"""Device activities (CUPTI's, as the profiler names them) that are a call's device work, and the
names records give them."""


def activity_type(event) -> str:
    """The CUPTI or profiler activity a raw event records (``cpu_op``, ``kernel``, ``gpu_memcpy``...).

    PyTorch 2.12 and later say so (``activity_type``); before, it is read from the device and the
    name: on the host, the CUDA runtime and driver calls are named ``cuda*``/``cu*`` (no aten operator
    is), markers by opperf; on the device, copies and sets are named ``Memcpy ...``/``Memset ...``,
    and the device's copies of host annotations bear the annotation's name."""
    if hasattr(event, "activity_type"):
        return event.activity_type()
    return activity_from_name(event)


def activity_from_name(event) -> str:
    """``activity_type`` as read from an event's device and name (PyTorch before 2.12)."""
    from torch.autograd import DeviceType

    name = event.name()
    if event.device_type() == DeviceType.CPU:
        if name in MARKS:
            return "user_annotation"
        return "cuda_runtime" if name.startswith("cu") else "cpu_op"
    if name in MARKS or name.startswith(ANNOTATION_PREFIXES):
        return "gpu_user_annotation"
    if name.startswith("Memcpy"):
        return "gpu_memcpy"
    return "gpu_memset" if name.startswith("Memset") else "kernel"


ANNOTATION_PREFIXES = ("autograd::", "opperf::")
"""Names of host annotations (opperf's markers, the autograd engine's nodes) that the profiler
copies onto the device's timeline."""


def _device_marked_work(events: Sequence) -> MarkedWork:
    """Each marker's device work, from the profiler's raw events: every kernel, memory copy and set
    whose launching aten operator (``linked_correlation_id``) started inside the marker's span, on any
    thread (a GPU's autograd engine runs on a thread of its own); work no operator is linked to
    belongs to the marker its own start falls in.

    The raw events, not the ``FunctionEvent`` tree: with CUDA activity on, the profiler also records
    each marker on the device's timeline (a ``gpu_user_annotation`` of the same name, without
    children), which the tree lists beside the host's; and building the tree costs 0.13 ms an event.
    """
    from torch.autograd import DeviceType

    markers: list[tuple[int, int, str]] = []
    launched: dict[int, tuple[int, str]] = {}  # an operator's correlation id -> its start, its name
    device: list = []
    for event in events:
        activity = activity_type(event)
        if event.device_type() == DeviceType.CPU:
            if activity == "cpu_op":
                launched[event.correlation_id()] = (event.start_ns(), event.name())
            elif event.name() in MARKS and not event.is_async():
                markers.append((event.start_ns(), event.end_ns(), event.name()))
                # A CUDA graph's replay launches its kernels under the marker, not an operator.
                launched[event.correlation_id()] = (event.start_ns(), event.name())
        elif activity in DEVICE_KINDS:
            device.append(event)
    markers.sort()
    starts = [start for start, _, _ in markers]
    work: list[list[Work]] = [[] for _ in markers]
    for event in device:
        start, operator = launched.get(event.linked_correlation_id(), (event.start_ns(), None))
        index = bisect.bisect_right(starts, start) - 1
        if index >= 0 and start <= markers[index][1]:
            kind = DEVICE_KINDS[activity_type(event)]
            work[index].append(Work(event.name(), event.duration_ns() * 1e-9, kind, operator))
    marked: MarkedWork = {}
    for (_, _, mark), found in zip(markers, work, strict=True):
        marked.setdefault(mark, []).append(found)
    return marked


@dataclass(frozen=True)
class _Span:
    """A synchronous CPU event, in nanoseconds."""

    name: str
    thread: int
    start: int
    end: int


def raw_events(events) -> list[_Span]:
    """The synchronous CPU events among a session's raw ``events``.

    Building ``session.events()`` (the ``FunctionEvent`` tree) costs about 0.13 ms per event here, an
    order of magnitude more than the passes it describes; reading the raw events costs about 4 us each.
    Events torch's tree leaves out are left out too: the profiler's own bookkeeping, and asynchronous
    or hidden events.
    """
    from torch.autograd import DeviceType

    spans = []
    for event in events:
        thread = event.start_thread_id()
        if (
            event.device_type() != DeviceType.CPU
            or event.name() in _BOOKKEEPING
            or event.is_async()
            or event.end_thread_id() != thread
            or event.is_hidden_event()
        ):
            continue
        spans.append(_Span(event.name(), thread, event.start_ns(), event.end_ns()))
    return spans


# What torch's event tree filters out (``torch.autograd.profiler_util._filter_name``): memory records and
# the profiler's and autograd's bookkeeping calls.
_BOOKKEEPING = frozenset(
    {
        MEMORY_EVENT,
        "[OutOfMemory]",
        "profiler::_record_function_enter",
        "profiler::_record_function_enter_new",
        "profiler::_record_function_exit",
        "aten::is_leaf",
        "aten::output_nr",
        "aten::_version",
    }
)


def _cpu_marked_work(spans: Sequence[_Span]) -> MarkedWork:
    """Each marker's work, as ``_gpu_marked_work`` finds it, from raw CPU events: an event's parent
    is the innermost event of its thread whose span contains it (the rule torch's event tree uses);
    its time is its span, children included."""
    by_thread: dict[int, list[_Span]] = defaultdict(list)
    for span in spans:
        by_thread[span.thread].append(span)
    markers: list[tuple[_Span, list[Work]]] = []
    roots: dict[int, tuple[list[int], list[_Span]]] = {}  # thread -> its top-level events, and their starts
    for thread, events in by_thread.items():
        events.sort(key=lambda s: (s.start, -s.end))
        top: list[_Span] = []
        stack: list[tuple[_Span, list[Work] | None]] = []  # open events, with their work if markers
        for span in events:
            while stack and (span.start >= stack[-1][0].end or span.end > stack[-1][0].end):
                stack.pop()
            if stack and stack[-1][1] is not None:
                stack[-1][1].append(Work(span.name, (span.end - span.start) * 1e-9))
            elif not stack and span.name not in MARKS:
                top.append(span)
            work: list[Work] | None = [] if span.name in MARKS else None
            if work is not None:
                markers.append((span, work))
            stack.append((span, work))
        roots[thread] = ([r.start for r in top], top)
    marked: MarkedWork = {}
    for marker, work in sorted(markers, key=lambda m: m[0].start):
        for thread, (starts, top) in roots.items():
            if thread != marker.thread:
                first, last = (
                    bisect.bisect_left(starts, marker.start),
                    bisect.bisect_right(starts, marker.end),
                )
                work.extend(Work(r.name, (r.end - r.start) * 1e-9) for r in top[first:last])
        marked.setdefault(marker.name, []).append(work)
    return marked


def peak_memory_bytes(full_pass: Callable[[], object], on_gpu: bool) -> int:
    """Peak bytes allocated on the device (the GPU if ``on_gpu``, else the host) while ``full_pass``
    runs, its outputs freed before the session ends."""
    with _session(on_gpu, memory=True) as session:
        full_pass()  # its outputs are freed as it returns: tensors are reference counted
    return _peak(session.profiler.kineto_results.events(), on_gpu)


def _peak(events, on_gpu: bool) -> int:
    """The highest running sum of the allocations and frees among a memory session's ``events`` on
    the device (the GPU if ``on_gpu``, else the host)."""
    from torch.autograd import DeviceType

    device = DeviceType.CUDA if on_gpu else DeviceType.CPU
    records = sorted(
        (e.start_ns(), e.nbytes()) for e in events if e.name() == MEMORY_EVENT and e.device_type() == device
    )
    peak = allocated = 0
    for _, nbytes in records:
        allocated += nbytes
        peak = max(peak, allocated)
    return peak


class TensorTooLargeError(Exception):
    """An operator was about to allocate a tensor above the limit (not a RuntimeError, which
    callers catch to learn about gradients)."""


class SizeLimit:
    """A context in which every aten operator first infers its outputs on the meta device and, when
    it would allocate a tensor larger than ``limit_bytes``, raises ``TensorTooLargeError`` instead of
    running; so does every operator after it. The context ends the pass quietly; ``refusal`` then says
    which operator would have allocated how much, whatever caught the error inside.

    Operators whose shapes depend on values (``nonzero``), or without a meta kernel, or on tensors the
    meta device cannot hold (sparse, quantized), are not inferred and run; the tensors checked are those
    an operator allocates, not inputs it returns or views of them.
    """

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        self.refusal: str | None = None
        self._mode = _size_limit_mode()(self)

    def __enter__(self) -> SizeLimit:
        self._mode.__enter__()
        return self

    def __exit__(self, error_type, error, traceback) -> bool:
        self._mode.__exit__(error_type, error, traceback)
        return error_type is not None and issubclass(error_type, TensorTooLargeError)

    def check(self, operator, args: tuple, kwargs: dict) -> None:
        """Raise TensorTooLargeError if ``operator(*args, **kwargs)`` would allocate above the limit."""
        if self.refusal is None:
            largest = _largest_allocation(operator, args, kwargs)
            if largest is not None and largest > self.limit_bytes:
                self.refusal = (
                    f"{operator.name()} would allocate a tensor of {largest / 2**20:,.0f} MiB, above the "
                    f"{self.limit_bytes / 2**20:,.0f} MiB one configuration may; give it smaller inputs"
                )
        if self.refusal is not None:
            raise TensorTooLargeError(self.refusal)


@functools.cache
def _size_limit_mode() -> type:
    """The dispatch mode behind ``SizeLimit`` (a class made once: it needs torch imported)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class SizeLimitMode(TorchDispatchMode):
        def __init__(self, limit: SizeLimit) -> None:
            super().__init__()
            self.limit = limit

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            self.limit.check(func, args, kwargs)
            return func(*args, **kwargs)

    return SizeLimitMode


def _largest_allocation(operator, args: tuple, kwargs: dict) -> int | None:
    """Bytes of the largest tensor ``operator`` would allocate for these arguments (0: none), from its
    shape inference on the meta device; None where that is not possible."""
    import torch
    from torch.utils._pytree import tree_leaves, tree_map

    def on_meta(value: object) -> object:
        if isinstance(value, torch.Tensor):
            return value.to("meta")
        return torch.device("meta") if isinstance(value, torch.device) else value

    try:
        meta_args, meta_kwargs = tree_map(on_meta, (args, kwargs))
        outputs = operator(*meta_args, **meta_kwargs)
        given = {_storage(v) for v in tree_leaves((meta_args, meta_kwargs)) if isinstance(v, torch.Tensor)}
        allocated = [
            t.untyped_storage().nbytes()
            for t in tree_leaves(outputs)
            if isinstance(t, torch.Tensor) and _storage(t) not in given
        ]
    except Exception:  # no shape inference for this call (or a sparse output, without one storage)
        return None
    return max(allocated, default=0)


def _storage(tensor) -> int:
    """Which storage a tensor's data lives in: inputs returned in place, and views of them, share
    their input's (below autograd, where the size limit looks, views are not marked as such)."""
    return tensor.untyped_storage()._cdata


def warm_up_profiler() -> None:
    """The first profiler session of a process pays start-up costs; pay them outside measurement."""
    import torch

    for memory in (False, True):
        with _session(on_gpu=False, memory=memory):
            torch.ones(4, 4).add(1)
