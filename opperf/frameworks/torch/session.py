"""How the shared harness runs a PyTorch operator: inputs on the device, forward and backward passes.

Whether a backward pass runs is found by running the operator: float inputs require grad, the first
forward pass is recorded, and a backward pass is tried (``gradients``). Grad mode is set once around
all passes, not inside each, so the timed region is the call alone.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, cast

from opperf.frameworks.torch import devices, gradients, in_place, profiling, shapes
from opperf.frameworks.torch import fused as fused_patterns
from opperf.frameworks.torch.calls import Call, arrange, takes_keywords
from opperf.frameworks.torch.errors import describe_error
from opperf.frameworks.torch.namespaces import identify, resolve
from opperf.frameworks.torch.registry import load_registry
from opperf.frameworks.torch.stages import Staged, claim_compile_cache, stage_calls
from opperf.frameworks.torch.tensors import (
    host_draws,
    is_float_tensor,
    materialize,
    resolve_alias,
    torch_constant,
)
from opperf.measure.harness import Passes, PerCallSampler, Sampler, SkipError
from opperf.measure.memory import HeapTrimmer, available_host_bytes, input_bytes
from opperf.measure.stages import EAGER, IN_PLACE
from opperf.measure.timing import PythonTimer
from opperf.operators import fused, longtail
from opperf.operators.info import OpInfo
from opperf.results.measurement import Alias, BenchmarkSpec, InputValue, TensorSpec
from opperf.utils.cache import input_sets, last_level_cache_bytes
from opperf.utils.devices import Device

# The largest tensor an operator may allocate in one configuration (unless its inputs together are
# larger): 64 times the largest standard input, 4 MiB. Operators whose outputs grow faster than their
# inputs (``vander``, ``diag_embed``, ``corrcoef`` of 10,000 variables) asked for up to 4 GiB, and a
# worker running them peaked at 9 GB.
LARGEST_TENSOR_BYTES = 256 * 2**20

# How much a worker may grow between configurations before its heap is trimmed (its freed pages given
# back: ``opperf.measure.memory.HeapTrimmer``).
TRIM_AFTER_GROWTH_BYTES = 64 * 2**20

# Argument types whose values rules give as text: ``"quint8"`` for a ScalarType.
_CONSTANT_TYPES = ("ScalarType", "Layout", "MemoryFormat")


@dataclass(frozen=True)
class _Prepared:
    """A call with its inputs materialised, and the leaf tensors a backward pass differentiates."""

    call: Call
    leaves: Mapping[str, tuple]
    in_place: bool
    restore: Callable[[], None] | None = None
    """For an in-place form (``--in-place``): copy the tensor it overwrites back to its first values."""


class TorchSession:
    """The harness's view of PyTorch (see ``opperf.measure.harness.Session``)."""

    def __init__(self) -> None:
        self._profiler_warm = False
        self._device_used = float("-inf")  # never: the first GPU timing warms the clocks
        self._flush_buffers: dict[Device, Any] = {}  # device -> its L2 flush buffer
        # Input values drawn before (most configurations' first tensor is the same draw).
        self._draws = host_draws()
        self._trim = HeapTrimmer(TRIM_AFTER_GROWTH_BYTES)
        self.compile_cache = claim_compile_cache()
        # (namespace, operator) -> why it is not differentiable, learnt from its first measurement: its
        # later input configurations then run without recording for autograd from the start.
        self._no_backward: dict[tuple[str, str], str] = {}
        # The last spec whose size limit the fit check settled on the meta device, and its refusal
        # (None: it fits): prepare, which follows for the same spec, then needs no probe pass of its own.
        self._sized: tuple[BenchmarkSpec, str | None] | None = None

    def prepare(self, spec: BenchmarkSpec, seed: int, function: Callable[..., object] | None) -> Passes:
        self._trim()  # what earlier configurations freed: each starts from a trimmed heap, or a small one
        if _on_gpu(spec.options.device):
            _empty_device_cache()  # and from what the caching allocator kept of theirs
        pattern = fused_patterns.build(spec) if spec.namespace == fused.NAMESPACE and not function else None
        info = _registry_info(spec, function)
        if spec.variant == IN_PLACE and info is not None:
            function = in_place.method(in_place.form(info) or f"{info.name}_")
        function = function or (pattern.run if pattern else _function(spec))
        generator = _generator(seed)
        device = devices.torch_device(spec.options.device)
        make = functools.partial(
            materialize, dtype=spec.options.dtype, device=device, generator=generator, draws=self._draws
        )
        # On a GPU, cold means its L2 flushed before each timed call (``Passes.flush``): one input set.
        cache = "hot" if _on_gpu(spec.options.device) else spec.options.cache
        sets = input_sets(cache, input_bytes(spec), last_level_cache_bytes())
        if spec.variant == IN_PLACE:
            _check_in_place(spec, function, info)
        prepared = [_prepare(spec, function, info, make) for _ in range(sets)]
        if spec.variant == IN_PLACE:
            prepared = [replace(p, restore=_restorer(p.call)) for p in prepared]
        return self._passes(spec, prepared, pattern)

    def output_bytes(self, spec: BenchmarkSpec, function: Callable[..., object] | None) -> int | None:
        """Bytes of a forward pass's outputs, from one call on the meta device (nothing allocated).

        Where the call runs through on the meta device, it runs there again under the size limit
        (``_size_refusal``): every tensor its operators allocate is known, and so whether the
        configuration must not run, without the real pass ``_size_refusal`` would otherwise take."""
        self._sized = None
        try:
            info = _registry_info(spec, function)
            function = function or _function(spec)
            make = functools.partial(shapes.meta_input, dtype=spec.options.dtype)
            prepared = _prepare(spec, function, info, make)
        except Exception:  # nothing inferred; prepare meets the same error and reports it
            return None
        inferred = shapes.output_bytes(prepared.call)
        if inferred is not None:
            with _size_limit(spec) as limit:
                ran_through = shapes.output_bytes(prepared.call) is not None
            if ran_through or limit.refusal is not None:
                self._sized = (spec, limit.refusal)
        return inferred

    def _passes(
        self, spec: BenchmarkSpec, prepared: list[_Prepared], pattern: fused_patterns.Pattern | None = None
    ) -> Passes:
        """The passes over the ``prepared`` input sets, taken in turn: one when measuring hot, several
        when cold; recorded for autograd when a backward pass runs. A fused ``pattern`` runs in its
        stage's variant (``opperf.frameworks.torch.fused``)."""
        import torch

        sized, self._sized = self._sized, None
        refusal = sized[1] if sized is not None and sized[0] is spec else _size_refusal(spec, prepared[0])
        if refusal is not None:
            raise SkipError(refusal)
        recording, warmed = self._recording(spec, prepared[0])
        record = recording.differentiable
        for other in prepared[1:] if record else ():
            gradients.require_grad(recording.leaves(other.leaves))
        scope = (
            (lambda: torch.inference_mode())
            if spec.options.mode == "inference"
            else (lambda: torch.set_grad_enabled(record))
        )
        staged: fused_patterns.Staged | Staged | None = None
        if pattern is not None:
            synchronize = devices.synchronizer(spec.options.device)
            staged = fused_patterns.stage_calls(pattern, [p.call for p in prepared], scope, synchronize)
            prepared = [replace(p, call=call) for p, call in zip(prepared, staged.calls, strict=True)]
        elif spec.stage != EAGER:
            script = _longtail_function(spec) if spec.namespace == longtail.NAMESPACE else None
            synchronize = devices.synchronizer(spec.options.device)
            staged = stage_calls(spec.stage, spec.op, [p.call for p in prepared], script, scope, synchronize)
            prepared = [replace(p, call=call) for p, call in zip(prepared, staged.calls, strict=True)]
        upcoming = [0]  # the input set the next forward call takes
        for restorable in prepared if prepared[0].restore is not None else ():
            cast("Callable[[], None]", restorable.restore)()  # what preparing them ran overwrote

        def forward() -> _Outputs:
            inputs = prepared[upcoming[0]]
            upcoming[0] = (upcoming[0] + 1) % len(prepared)
            return _Outputs(inputs.call(), recording.leaves(inputs.leaves) if record else ())

        def restore() -> None:  # the input set the last forward call took
            cast("Callable[[], None]", prepared[upcoming[0] - 1].restore)()

        def backward_of(outputs: _Outputs) -> Callable[[], object]:
            return gradients.backward_pass(outputs.value, outputs.leaves, recording.seeds)

        return Passes(
            forward=forward,
            backward=backward_of if record else None,
            backward_reason=recording.reason,
            synchronize=devices.synchronizer(spec.options.device),
            scope=scope,
            compile_s=staged.compile_s if staged else None,
            stage_check=staged.check if staged else None,
            warmed=warmed,
            flush=self._l2_flush(spec.options.device) if _cold_gpu(spec) else None,
            calls_per_pass=staged.calls_per_call if staged else 1,
            restore=restore if prepared[0].restore is not None else None,
        )

    def _l2_flush(self, device: Device) -> Callable[[], None]:
        """The call that evicts ``device``'s L2 cache: it writes a buffer of ``L2_FLUSH_FACTOR`` times
        the L2's size (made once a worker and device) and waits for the write to finish."""
        if device not in self._flush_buffers:
            import torch

            index = device.index
            l2_bytes = torch.cuda.get_device_properties(index).L2_cache_size
            self._flush_buffers[device] = torch.empty(
                L2_FLUSH_FACTOR * l2_bytes, dtype=torch.uint8, device=devices.torch_device(device)
            )
        buffer = self._flush_buffers[device]
        synchronize = devices.synchronizer(device)

        def flush() -> None:
            buffer.fill_(1)
            synchronize()

        return flush

    def _recording(
        self, spec: BenchmarkSpec, prepared: _Prepared
    ) -> tuple[gradients.Recording, tuple[float, ...]]:
        """Whether and how a backward pass runs: found by a first, recorded forward pass and its
        backward pass unless it is ruled out already (not requested, no float input, or the operator
        was found not differentiable before); and the seconds of that first pass when it ran (the
        first warm-up pass, ``Passes.warmed``)."""
        key = (spec.namespace, spec.op)
        reason = self._no_backward.get(key) or _backward_precondition(spec, prepared)
        if reason is not None:
            return gradients.Recording(reason=reason), ()
        started = time.perf_counter()
        recording = gradients.first_pass(prepared.call, prepared.leaves)
        warmed = (time.perf_counter() - started,)
        if recording.reason == gradients.NOT_DIFFERENTIABLE:
            self._no_backward[key] = recording.reason
        return recording, warmed

    def trivial(self, device: Device) -> Passes:
        import torch

        source = torch.ones(1, device=devices.torch_device(device))
        return Passes(
            forward=source.clone,
            backward=None,
            backward_reason=None,
            synchronize=devices.synchronizer(device),
        )

    def sampler(self, profiler: str, device: Device) -> Sampler:
        """The timing strategy ``profiler`` (``native`` or ``python``) for ``device``."""
        synchronize = devices.synchronizer(device)
        if _on_gpu(device):
            self._warm_clocks(device)
        if profiler == "native":
            if not self._profiler_warm:
                profiling.warm_up_profiler()
                self._profiler_warm = True
            return profiling.NativeSampler(synchronize=synchronize, on_gpu=_on_gpu(device))
        peak_memory = functools.partial(self.peak_memory, device=device)
        return PerCallSampler(PythonTimer(synchronize=synchronize), peak_memory=peak_memory)

    def _warm_clocks(self, device: Device) -> None:
        """Raise an idle GPU's clocks before a configuration is timed: ``CLOCK_WARM_S`` of matrix
        products when the worker has not used the device for ``IDLE_S`` (a fresh worker, as an A/B
        job's every round has). The clocks are read by the driver's own policy, never set."""
        now = time.monotonic()
        if now - self._device_used < IDLE_S:
            self._device_used = now
            return
        import torch

        matrix = torch.ones(2048, 2048, device=devices.torch_device(device))
        while time.monotonic() - now < CLOCK_WARM_S:
            torch.mm(matrix, matrix)
            torch.cuda.synchronize()
        self._device_used = time.monotonic()

    def peak_memory(self, full_pass: Callable[[], object], device: Device) -> int:
        return profiling.peak_memory_bytes(full_pass, _on_gpu(device))

    def available_memory(self, device: Device) -> int | None:
        """Bytes free on the device: MemAvailable for cpu; for gpu, the device's free memory plus
        what this worker's caching allocator holds unused (it reuses that before asking the device)."""
        kind, index = device.kind, device.index
        if kind == "cpu":
            return available_host_bytes()
        import torch

        free, _ = torch.cuda.mem_get_info(index)
        return free + torch.cuda.memory_reserved(index) - torch.cuda.memory_allocated(index)

    def describe_error(self, error: BaseException) -> str:
        return describe_error(error)

    def settle(self) -> None:
        """On a GPU, wait for queued work (a late kernel error belongs to the configuration that
        caused it) and hand the caching allocator's unused blocks back to the device, so a sweep
        sharing the GPU can have them (four shards on one H100 kept PyTorch's cache and failed each
        other's configurations for memory); ``prepare`` hands back the rest, once the configuration's
        tensors are gone."""
        import torch

        if torch.cuda.is_initialized():
            _empty_device_cache()

    def device_fault(self, reason: str | None, device: Device) -> bool:
        """Whether a configuration that failed with ``reason`` on ``device`` may have left the
        worker's GPU unusable: a CUDA or CUDA library error, or a device that no longer runs a
        one-element kernel. Such a worker is replaced before the next configuration, and the
        configuration is tried once more in the fresh one."""
        if not _on_gpu(device):
            return False
        if any(marker in (reason or "") for marker in DEVICE_FAULTS):
            return True
        return not _device_works(device)


def _size_refusal(spec: BenchmarkSpec, prepared: _Prepared) -> str | None:
    """Why the configuration must not run, if one forward pass would allocate a tensor above
    ``LARGEST_TENSOR_BYTES`` (or the inputs' size, if larger); found before that tensor is allocated.

    The pass is a probe of its own, its result and any error dropped (the measured passes meet them
    again): the size limit is a Python dispatch mode, under which PyTorch skips some value checks
    (``linalg_eig``'s backward check on its eigenvectors' phase), so nothing measured runs under it.
    """
    limit = _size_limit(spec)
    with limit, contextlib.suppress(Exception):
        gradients.forward(prepared.call, record=False)
    return limit.refusal


@dataclass(frozen=True)
class _Outputs:
    """A forward pass's outputs, and the tensors of its input set that a backward pass differentiates."""

    value: object
    leaves: tuple


def _size_limit(spec: BenchmarkSpec) -> profiling.SizeLimit:
    """The limit on any one tensor a pass of ``spec`` allocates: ``LARGEST_TENSOR_BYTES``, or its
    inputs' size where larger."""
    return profiling.SizeLimit(max(LARGEST_TENSOR_BYTES, input_bytes(spec)))


def _function(spec: BenchmarkSpec) -> Callable[..., object]:
    """What ``spec`` calls: a long-tail operator's implementation, else the public entry point."""
    if spec.namespace == longtail.NAMESPACE:
        return _longtail_function(spec)
    return resolve(spec.namespace, spec.function or spec.op)


def _longtail_function(spec: BenchmarkSpec) -> Callable[..., object]:
    from opperf.frameworks.torch.longtail import IMPLEMENTATIONS

    return IMPLEMENTATIONS[spec.op]


def _on_gpu(device: Device) -> bool:
    return device.on_gpu


def _cold_gpu(spec: BenchmarkSpec) -> bool:
    return spec.options.cache == "cold" and _on_gpu(spec.options.device)


L2_FLUSH_FACTOR = 2
"""The L2 flush writes this many times the L2 cache's size (nvbench and Triton's do_bench write
at least the cache's size; twice leaves no line of the inputs behind whatever the replacement
policy)."""


IDLE_S = 1.0
CLOCK_WARM_S = 0.1
"""A GPU the worker left idle ``IDLE_S`` seconds gets ``CLOCK_WARM_S`` of work before the next timing."""

DEVICE_FAULTS = (
    "CUDA error",
    "CUDA out of memory",
    "illegal memory access",
    "CUBLAS_STATUS_",
    "CUDNN_STATUS_",
    "cuDNN error",
    "cuFFT error",
    "CUFFT_",
    "CUSOLVER_STATUS_",
    "cusolver error",
)
"""Words of the errors after which a worker's GPU may be unusable (the CUDA context, or a library's
handle on it): an out-of-memory error, a sticky kernel fault, or one of cuBLAS, cuDNN, cuFFT and
cuSOLVER failing on an exhausted device."""


def _empty_device_cache() -> None:
    """Wait for the GPU's queued work and return the caching allocator's unused blocks to it; an
    error here belongs to the configuration that queued the work, which reports it."""
    import torch

    with contextlib.suppress(Exception):
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def _device_works(device: Device) -> bool:
    """Whether ``device`` still runs a one-element kernel and synchronises."""
    import torch

    try:
        torch.ones(1, device=devices.torch_device(device)).add_(1)
        torch.cuda.synchronize()
    except Exception:
        return False
    return True


def _generator(seed: int):
    import torch

    return torch.Generator().manual_seed(seed)


def _prepare(
    spec: BenchmarkSpec,
    function: Callable[..., object],
    info: OpInfo | None,
    make: Callable[[InputValue], object],
) -> _Prepared:
    """Materialise one set of the spec's inputs with ``make`` (seeded tensors on the device, or empty
    ones on the meta device), and arrange the call."""
    values: dict[str, Any] = {}
    leaves: dict[str, tuple] = {}
    for name, value in spec.inputs:
        if isinstance(value, Alias):
            values[name] = resolve_alias(value, values[value.source])
            continue
        values[name] = _typed(info, name, make(value))
        tensors = _differentiable_tensors(value, values[name])
        if tensors:
            leaves[name] = tensors
    if takes_keywords(function, list(values)):
        args, kwargs = (), values
    else:
        args, kwargs = arrange(info.arguments if info is not None else (), values)
    in_place = getattr(function, "__name__", "").endswith("_")
    return _Prepared(call=Call.of(function, args, kwargs), leaves=leaves, in_place=in_place)


def _check_in_place(spec: BenchmarkSpec, function: Callable[..., object], info: OpInfo | None) -> None:
    """Raise SkipError, before anything runs, where the in-place form cannot write its result into
    its first input: the out-of-place call's result, on the meta device, is of another shape (a
    broadcast makes it larger: ``add_`` of a (10000, 1) and a (10000, 100) tensor). Meta kernels of
    some in-place forms (``atan2_``, ``eq_``) resize their input instead of refusing, so the
    out-of-place result is what is compared, its shape and its precision."""
    import torch

    meta = functools.partial(shapes.meta_input, dtype=spec.options.dtype)
    try:
        target = _prepare(spec, function, info, meta).call.args[0]
        with torch.no_grad():
            result = _prepare(spec, _function(spec), info, meta).call()
    except Exception:  # no meta kernel, or inputs the meta device cannot make: the call itself will tell
        return
    if not isinstance(result, torch.Tensor) or not isinstance(target, torch.Tensor):
        return
    if result.shape != target.shape:
        raise SkipError(
            f"the in-place form cannot write its {tuple(result.shape)} result into its first input, "
            f"of shape {tuple(target.shape)}"
        )
    wider = (
        result.is_floating_point()
        and target.is_floating_point()
        and result.dtype.itemsize > target.dtype.itemsize
    )
    if wider:  # float_power computes in float64 and refuses to write it into float32
        raise SkipError(
            f"the in-place form cannot write its {str(result.dtype).removeprefix('torch.')} result into its "
            f"{str(target.dtype).removeprefix('torch.')} first input"
        )


def _restorer(call: Call) -> Callable[[], None]:
    """What copies the tensor an in-place form overwrites (its first argument) back to its values."""
    target = call.args[0]
    pristine = target.detach().clone()

    def restore() -> None:
        import torch

        with torch.no_grad():
            target.copy_(pristine)

    return restore


def _typed(info: OpInfo | None, name: str, value: object) -> object:
    """A torch constant given as text (``"quint8"``, ``"sparse_csr"``) as the object a ScalarType,
    Layout or MemoryFormat argument takes."""
    argument = info.argument(name) if info is not None else None
    if argument is None or not isinstance(value, str):
        return value
    return torch_constant(value) if argument.type_string.startswith(_CONSTANT_TYPES) else value


def _differentiable_tensors(value: InputValue, materialised: object) -> tuple:
    """The floating-point tensors of an input, unless it holds indices (``integral`` specs)."""
    specs = value if isinstance(value, tuple) else (value,)
    if any(isinstance(v, TensorSpec) and v.integral for v in specs):
        return ()
    tensors = materialised if isinstance(materialised, list) else [materialised]
    return tuple(t for t in tensors if is_float_tensor(t))


def _backward_precondition(spec: BenchmarkSpec, prepared: _Prepared) -> str | None:
    if not spec.options.run_backward:
        return "backward not requested"
    if prepared.in_place:
        return "an in-place operator: autograd cannot differentiate a leaf tensor it overwrites"
    if spec.stage == "cudagraph":
        return "the cudagraph stage replays forward calls (captured without autograd)"
    refusal = longtail.backward_refusal(spec.namespace, spec.op)
    if refusal is not None:
        return refusal
    refusal = fused.backward_refusal(spec.namespace, spec.framework, spec.stage, spec.variant)
    if refusal is not None:
        return refusal
    if not prepared.leaves:
        return "no floating-point tensor input to differentiate"
    return None


def _registry_info(spec: BenchmarkSpec, function: Callable[..., object] | None) -> OpInfo | None:
    """The registry record of what ``spec`` calls: ``function``'s when given, else its operator's."""
    return identify(function).info if function else load_registry().by_name.get(spec.op)
