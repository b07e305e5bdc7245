"""The PyTorch backend: resolves operators, builds inputs, runs forward/backward under a timer."""

from __future__ import annotations

import contextlib
import itertools
import os
import platform
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from opperf.backends.torch import devices, gradients, profiling
from opperf.backends.torch.calls import Call, arrange, takes_keywords
from opperf.backends.torch.errors import describe_error
from opperf.backends.torch.namespaces import (
    NAMESPACES,
    function_index,
    namespace_object,
    public_function,
)
from opperf.backends.torch.registry import load_registry
from opperf.backends.torch.tensors import is_float_tensor, materialize, resolve_alias, torch_constant
from opperf.benchmark import suggest
from opperf.errors import OpperfError
from opperf.sampling import OVERHEAD_PLAN, SamplingPlan
from opperf.utils import load
from opperf.utils.affinity import available_cpus
from opperf.utils.cache import input_sets, last_level_cache_bytes
from opperf.utils.memory import (
    DTYPES,
    available_host_bytes,
    fit_problem,
    input_bytes,
    release_free_memory,
)
from opperf.utils.op_info import OpInfo
from opperf.utils.results import Alias, BenchmarkSpec, InputValue, Measurement, Status, TensorSpec
from opperf.utils.timing import PythonTimer

# Argument types whose values rules give as text: ``"quint8"`` for a ScalarType.
_CONSTANT_TYPES = ("ScalarType", "Layout", "MemoryFormat")

# The largest tensor an operator may allocate in one configuration (unless its inputs together are
# larger): 64 times the largest standard input, 4 MiB. Operators whose outputs grow faster than their
# inputs (``vander``, ``diag_embed``, ``corrcoef`` of 10,000 variables) asked for up to 4 GiB, and a
# worker running them peaked at 9 GB.
LARGEST_TENSOR_BYTES = 256 * 2**20


@dataclass(frozen=True)
class _Outputs:
    """A forward pass's outputs, and the tensors of its input set that a backward pass differentiates."""

    value: object
    leaves: tuple


@dataclass(frozen=True)
class _Prepared:
    """A call with its inputs materialised, and the leaf tensors a backward pass differentiates."""

    call: Call
    leaves: Mapping[str, tuple]
    in_place: bool


class TorchBackend:
    """Benchmarks PyTorch operators through their public entry points (``torch``, ``torch.nn.functional``,
    ``torch.linalg``, ``torch.special``, ``torch.fft``, ``torch.Tensor`` methods)."""

    framework = "torch"

    def __init__(self) -> None:
        self._profiler_warm = False
        # (namespace, operator) -> why it is not differentiable, learnt from its first measurement: its
        # later input configurations then run without recording for autograd from the start.
        self._no_backward: dict[tuple[str, str], str] = {}

    def operators(self) -> tuple[OpInfo, ...]:
        return load_registry().operators

    def registered_names(self) -> tuple[str, ...]:
        return load_registry().registered_names

    def normalize_device(self, device: str) -> str:
        return devices.normalize_device(device)

    def check_dtype(self, dtype: str) -> str:
        if dtype not in DTYPES:
            raise OpperfError(f"unknown dtype {dtype!r}; choose one of: {', '.join(DTYPES)}")
        return dtype

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

    def sampler(self, name: str, device: str) -> profiling.Sampler:
        """The timing strategy ``name`` (``native`` or ``python``) for ``device``."""
        on_gpu = devices.parse_device(device)[0] == "gpu"
        synchronize = devices.synchronizer(device)
        if name == "native":
            if not self._profiler_warm:
                profiling.warm_up_profiler()
                self._profiler_warm = True
            return profiling.NativeSampler(synchronize=synchronize, on_gpu=on_gpu)
        if name == "python":
            return profiling.PythonSampler(PythonTimer(synchronize=synchronize))
        raise OpperfError(f"unknown profiler {name!r}; choose native or python")

    def measure(
        self,
        spec: BenchmarkSpec,
        plan: SamplingPlan,
        seed: int,
        function: Callable[..., object] | None = None,
    ) -> Measurement:
        release_free_memory()  # what earlier configurations freed: each starts from a trimmed heap
        try:
            problem = fit_problem(spec, self.available_memory(spec.device))
            if problem is not None:
                return Measurement(spec=spec, status=Status.SKIPPED, reason=problem)
            info = identify(function)[2] if function else load_registry().by_name.get(spec.op)
            function = function or resolve(spec.namespace, spec.function or spec.op)
            generator = _generator(seed)
            sets = input_sets(spec.cache, input_bytes(spec), last_level_cache_bytes())
            prepared = [_prepare(spec, function, info, generator) for _ in range(sets)]
            return self._run(spec, prepared, plan)
        except Exception as error:
            return Measurement(spec=spec, status=Status.FAILED, reason=describe_error(error))

    def _run(self, spec: BenchmarkSpec, prepared: list[_Prepared], plan: SamplingPlan) -> Measurement:
        """Find whether a backward pass runs, then warm up and time forward (and backward) passes as
        ``plan`` says, then probe peak memory. Passes take the ``prepared`` input sets in turn: one
        when measuring hot, several when cold."""
        import torch

        refusal = _size_refusal(spec, prepared[0])
        if refusal is not None:
            return Measurement(spec=spec, status=Status.SKIPPED, reason=refusal)
        recording = self._recording(spec, prepared[0])
        record = recording.differentiable
        for other in prepared[1:] if record else ():
            gradients.require_grad(recording.leaves(other.leaves))
        rotation = itertools.cycle(prepared)

        def forward() -> _Outputs:
            inputs = next(rotation)
            return _Outputs(inputs.call(), recording.leaves(inputs.leaves) if record else ())

        def backward_of(outputs: _Outputs) -> Callable[[], object]:
            return gradients.backward_pass(outputs.value, outputs.leaves, recording.seeds)

        def full_pass() -> object:
            outputs = forward()
            if record:
                backward_of(outputs)()
            return outputs

        synchronize = devices.synchronizer(spec.device)

        def warm_pass() -> float:
            start = time.perf_counter()
            full_pass()
            synchronize()
            return time.perf_counter() - start

        sampler = self.sampler(spec.profiler, spec.device)
        before = load.snapshot()
        # Grad mode is set once for all passes, not around each call: the timed region is the call alone.
        with torch.set_grad_enabled(record):
            try:
                samples = sampler.sample(warm_pass, forward, backward_of if record else None, plan)
            except profiling.NoOperatorRecordedError as error:
                return Measurement(spec=spec, status=Status.SKIPPED, reason=str(error))
            competing = load.competing_load(before, load.snapshot())
            memory, memory_problem = _peak_memory(full_pass, spec.device)
        sampled = samples.sampled
        return Measurement(
            spec=spec,
            status=Status.OK,
            reason=memory_problem,
            forward=sampled.forward,
            backward=sampled.backward,
            backward_reason=recording.reason,
            memory_peak_bytes=memory,
            profiled_ops=samples.operators,
            warmup_runs=sampled.warmup_runs,
            stop_reason=sampled.stop_reason.value,
            met_target=sampled.met_target,
            competing_load=competing,
        )

    def harness_overhead(self, profiler: str, device: str) -> float:
        """The median time ``profiler`` reports for the most trivial operator, a one-element copy: the
        floor under any measurement (dispatch and synchronisation for the Python timer)."""
        import torch

        source = torch.ones(1, device=devices.torch_device(device))
        trivial = source.clone

        def warm_pass() -> float:
            start = time.perf_counter()
            trivial()
            return time.perf_counter() - start

        samples = self.sampler(profiler, device).sample(warm_pass, trivial, None, OVERHEAD_PLAN)
        return statistics.median(samples.sampled.forward)

    def _recording(self, spec: BenchmarkSpec, prepared: _Prepared) -> gradients.Recording:
        """Whether and how a backward pass runs: found by a first, recorded forward pass unless it is
        ruled out already (not requested, no float input, or the operator was found not
        differentiable before)."""
        key = (spec.namespace, spec.op)
        reason = self._no_backward.get(key) or _backward_precondition(spec, prepared)
        if reason is not None:
            return gradients.Recording(reason=reason)
        recording = gradients.first_pass(prepared.call, prepared.leaves)
        if recording.reason == gradients.NOT_DIFFERENTIABLE:
            self._no_backward[key] = recording.reason
        return recording

    def default_device(self) -> str:
        """gpu(0) where this build and machine have a CUDA GPU, else cpu(0)."""
        import torch

        return "gpu(0)" if torch.cuda.is_available() else "cpu(0)"

    def require_large_tensors(self) -> None:
        """PyTorch indexes every tensor with 64-bit integers: nothing to check."""

    def available_memory(self, device: str) -> int | None:
        """Bytes free on the device: MemAvailable for cpu, the GPU's free memory for gpu."""
        kind, index = devices.parse_device(device)
        if kind == "cpu":
            return available_host_bytes()
        import torch

        free, _ = torch.cuda.mem_get_info(index)
        return free

    def applicable_inputs(self, op: OpInfo, inputs: dict[str, InputValue]) -> dict[str, InputValue]:
        """``inputs`` unchanged: a schema names exactly the tensors an operator takes."""
        return inputs

    def identify(self, function: Callable[..., object]) -> tuple[str, str, OpInfo | None]:
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


def resolve(namespace: str, name: str) -> Callable[..., object]:
    """The public function ``name`` of ``namespace``; OpperfError with the closest names otherwise."""
    function = public_function(namespace, name)
    if function is not None:
        return function
    known = [n for space, _ in NAMESPACES if space == namespace for n in dir(namespace_object(space))]
    if not known:
        namespaces = ", ".join(space for space, _ in NAMESPACES)
        raise OpperfError(f"unknown PyTorch namespace {namespace!r}; choose one of: {namespaces}")
    raise OpperfError(f"unknown PyTorch operator {namespace}.{name}{suggest(name, known)}")


def identify(function: Callable[..., object]) -> tuple[str, str, OpInfo | None]:
    """(namespace, name, registry record or None) of a PyTorch function or Tensor method.

    ``torch.add``, ``torch.Tensor.add`` and ``torch.nn.functional.relu`` are all found with their
    operator; a function opperf does not know keeps its module and name and has no record.
    """
    found = function_index().get(id(function))
    if found is None:
        module = getattr(function, "__module__", None) or "custom"
        return module, getattr(function, "__name__", repr(function)), None
    return (*found, load_registry().by_entry_point.get(found))


def _generator(seed: int):
    import torch

    return torch.Generator().manual_seed(seed)


def _prepare(
    spec: BenchmarkSpec, function: Callable[..., object], info: OpInfo | None, generator
) -> _Prepared:
    """Materialise one set of the spec's inputs, drawn from ``generator``, and arrange the call."""
    device = devices.torch_device(spec.device)
    values: dict[str, object] = {}
    leaves: dict[str, tuple] = {}
    for name, value in spec.inputs:
        if isinstance(value, Alias):
            values[name] = resolve_alias(value, values[value.source])
            continue
        values[name] = _typed(info, name, materialize(value, spec.dtype, device, generator))
        tensors = _differentiable_tensors(value, values[name])
        if tensors:
            leaves[name] = tensors
    if takes_keywords(function, list(values)):
        args, kwargs = (), values
    else:
        args, kwargs = arrange(info.arguments if info is not None else (), values)
    in_place = getattr(function, "__name__", "").endswith("_")
    return _Prepared(call=Call.of(function, args, kwargs), leaves=leaves, in_place=in_place)


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
    if not spec.run_backward:
        return "backward not requested"
    if prepared.in_place:
        return "an in-place operator: autograd cannot differentiate a leaf tensor it overwrites"
    if not prepared.leaves:
        return "no floating-point tensor input to differentiate"
    return None


def _size_refusal(spec: BenchmarkSpec, prepared: _Prepared) -> str | None:
    """Why the configuration must not run, if one forward pass would allocate a tensor above
    ``LARGEST_TENSOR_BYTES`` (or the inputs' size, if larger); found before that tensor is allocated.

    The pass is a probe of its own, its result and any error dropped (the measured passes meet them
    again): the size limit is a Python dispatch mode, under which PyTorch skips some value checks
    (``linalg_eig``'s backward check on its eigenvectors' phase), so nothing measured runs under it.
    """
    limit = profiling.SizeLimit(max(LARGEST_TENSOR_BYTES, input_bytes(spec)))
    with limit, contextlib.suppress(Exception):
        gradients.forward(prepared.call, record=False)
    return limit.refusal


def _peak_memory(full_pass: Callable[[], object], device: str) -> tuple[int | None, str | None]:
    """(peak bytes, None), or (None, why) when the memory probe itself failed."""
    try:
        on_gpu = devices.parse_device(device)[0] == "gpu"
        return profiling.peak_memory_bytes(full_pass, on_gpu), None
    except Exception as error:
        return None, f"memory probe failed: {describe_error(error)}"
