"""The MXNet backend: resolves operators, builds inputs, runs forward/backward under a timer."""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import itertools
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from opperf.errors import OpperfError
from opperf.frameworks.mxnet import devices, profiling
from opperf.frameworks.mxnet.arrays import (
    ND_FRONTEND,
    NUMPY_FRONTEND,
    flatten_outputs,
    is_float_array,
    materialize,
)
from opperf.frameworks.mxnet.invoke import DIRECT_INVOCATION, direct_call
from opperf.frameworks.mxnet.registry import (
    GENERATED_MODULE_PREFIXES,
    NUMPY_NAMESPACES,
    accepted_inputs,
    exposure,
    load_registry,
)
from opperf.op_info import OpInfo
from opperf.results import (
    Alias,
    BenchmarkSpec,
    InputValue,
    Measurement,
    Status,
    TensorSpec,
    is_given_array,
    is_tensor_list,
)
from opperf.sampling import OVERHEAD_PLAN, SamplingPlan, sample
from opperf.utils import load
from opperf.utils.affinity import available_cpus
from opperf.utils.cache import input_sets, last_level_cache_bytes
from opperf.utils.memory import DTYPES, available_host_bytes, fit_problem, input_bytes
from opperf.utils.timing import PythonTimer, Timer

# Namespace -> module whose attributes are that namespace's functions.
NAMESPACE_MODULES = {
    "mx.nd": "mxnet.ndarray",
    "mx.nd._internal": "mxnet.ndarray._internal",
    "mx.nd.contrib": "mxnet.ndarray.contrib",
    "mx.nd.linalg": "mxnet.ndarray.linalg",
    "mx.nd.random": "mxnet.ndarray.random",
    "mx.nd.sparse": "mxnet.ndarray.sparse",
    "mx.nd.image": "mxnet.ndarray.image",
    "mx.np": "mxnet.numpy",
    "mx.npx": "mxnet.numpy_extension",
}

# Operators MXNet cannot record for autograd, and why; they are measured without recording.
NOT_RECORDABLE: dict[str, str] = {
    "reset_arrays": "has no outputs (it zeroes its inputs in place); recording it crashes MXNet",
}

# Messages MXNet gives for an operator without a registered gradient.
_NO_GRADIENT_MARKERS = ("FGradient", "non-differentiable", "is not differentiable")


def namespace_of(function: Callable[..., object]) -> str:
    """The user-facing namespace of an MXNet function, from its module."""
    module = getattr(function, "__module__", "") or ""
    for prefix, namespace in (
        ("mxnet.ndarray.numpy_extension", "mx.npx"),
        ("mxnet.numpy_extension", "mx.npx"),
        ("mxnet.ndarray.numpy", "mx.np"),
        ("mxnet.numpy", "mx.np"),
        ("mxnet.ndarray.contrib", "mx.nd.contrib"),
        ("mxnet.ndarray.linalg", "mx.nd.linalg"),
        ("mxnet.ndarray.random", "mx.nd.random"),
        ("mxnet.ndarray.sparse", "mx.nd.sparse"),
        ("mxnet.ndarray.image", "mx.nd.image"),
        ("mxnet.ndarray._internal", "mx.nd._internal"),
        ("mxnet.ndarray.gen__internal", "mx.nd._internal"),
    ):
        if module.startswith(prefix):
            return namespace
    return "mx.nd._internal" if getattr(function, "__name__", "").startswith("_") else "mx.nd"


def resolve(namespace: str, op: str) -> Callable[..., object]:
    """The Python callable for ``op`` in ``namespace``; registry names resolve through their prefix."""
    module_name = NAMESPACE_MODULES.get(namespace)
    if module_name is not None:
        function = getattr(importlib.import_module(module_name), op, None)
        if callable(function):
            return function
    if op in load_registry().by_name:
        namespace, module_name, function_name = exposure(op)
        candidates = [(module_name, function_name)]
        prefix = op[: len(op) - len(function_name)] if function_name != op else ""
        if namespace in NAMESPACE_MODULES and not prefix:
            candidates.append((NAMESPACE_MODULES[namespace], op.split("_", 2)[-1]))
        for module_name, function_name in candidates:
            function = getattr(importlib.import_module(module_name), function_name, None)
            if callable(function) and getattr(function, "__code__", None) is not None:
                return function
    raise LookupError(f"no operator {op!r} in namespace {namespace!r}")


@dataclass(frozen=True)
class _Call:
    """A ready-to-run operator call with materialised inputs."""

    function: Callable[..., object]
    args: tuple
    kwargs: dict

    def __call__(self) -> object:
        return self.function(*self.args, **self.kwargs)


class MXNetBackend:
    """Benchmarks MXNet operators (``mx.nd``, its sub-namespaces, ``mx.np`` and ``mx.npx``)."""

    framework = "mxnet"

    def __init__(self) -> None:
        self._profiler_warm = False

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

    def timer(self, name: str) -> Timer:
        import mxnet as mx

        if name == "native":
            if not self._profiler_warm:
                profiling.warm_up_profiler()
                self._profiler_warm = True
            return profiling.NativeTimer()
        if name == "python":
            return PythonTimer(synchronize=mx.nd.waitall)
        raise OpperfError(f"unknown profiler {name!r}; choose native or python")

    def measure(
        self,
        spec: BenchmarkSpec,
        plan: SamplingPlan,
        seed: int,
        function: Callable[..., object] | None = None,
    ) -> Measurement:
        try:
            problem = fit_problem(spec, self.available_memory(spec.device))
            if problem is not None:
                return Measurement(spec=spec, status=Status.SKIPPED, reason=problem)
            info = identify(function)[2] if function else load_registry().by_name.get(spec.op)
            if function is None:
                direct = spec.op in DIRECT_INVOCATION
                function = direct_call(spec.op) if direct else resolve(spec.namespace, spec.op)
            frontend = NUMPY_FRONTEND if spec.namespace in NUMPY_NAMESPACES else ND_FRONTEND
            with _frontend_scope(frontend):
                rng = np.random.default_rng(seed)
                sets = input_sets(spec.cache, input_bytes(spec), last_level_cache_bytes())
                calls = [_prepare(spec, function, info, frontend, rng) for _ in range(sets)]
                return self._run(spec, calls, plan)
        except Exception as error:
            return Measurement(spec=spec, status=Status.FAILED, reason=_describe_error(error))
        finally:
            _drain_engine()

    def _run(self, spec: BenchmarkSpec, calls: list[_Call], plan: SamplingPlan) -> Measurement:
        """Warm up, then time forward (and backward) passes as ``plan`` says, then probe peak memory.

        Passes take the ``calls`` (input sets) in turn: one when measuring hot, several when cold.
        """
        import mxnet as mx
        from mxnet import autograd

        timer = self.timer(spec.profiler)
        # Index tensors and out= arrays take no gradient (MXNet refuses one for an Embedding's indices).
        indices = {name for name, value in spec.inputs if isinstance(value, TensorSpec) and value.integral}
        differentiable = [array for call in calls for array in _differentiable(call, indices)]
        writes_to_out = "out" in calls[0].kwargs
        backward_reason = _backward_precondition(spec, differentiable, writes_to_out=writes_to_out)
        for array in differentiable if backward_reason is None else ():
            array.attach_grad()
        rotation = itertools.cycle(calls)

        def forward() -> object:
            call = next(rotation)
            # Training mode either way, so Dropout or BatchNorm do the same work with or without backward.
            if backward_reason is None:
                with autograd.record(train_mode=True):
                    return call()
            with autograd.train_mode():
                return call()

        try:
            outputs = forward()
            mx.nd.waitall()
        except Exception as error:
            _drain_engine()
            if backward_reason is not None:
                raise
            backward_reason = f"recording for backward failed: {_describe_error(error)}"
            outputs = forward()
            mx.nd.waitall()
        heads = [o for o in flatten_outputs(outputs) if is_float_array(o)]
        if backward_reason is None:
            backward_reason = _probe_backward(heads)
        head_grads = [_ones_like(h) for h in heads]
        del outputs, heads

        def backward_of(outputs: object) -> Callable[[], object]:
            float_outputs = [o for o in flatten_outputs(outputs) if is_float_array(o)]
            return lambda: autograd.backward(float_outputs, head_grads=head_grads)

        def full_pass() -> object:
            outputs = forward()
            if backward_reason is None:
                backward_of(outputs)()
            return outputs

        def warm_pass() -> float:
            start = time.perf_counter()
            full_pass()
            mx.nd.waitall()
            return time.perf_counter() - start

        operators: set[str] = set()

        def measured_pass() -> tuple[float, float | None]:
            timed = timer.time(forward)
            operators.update(timed.operators)
            if backward_reason is None:
                return timed.seconds, timer.time(backward_of(timed.outputs)).seconds
            return timed.seconds, None

        before = load.snapshot()
        sampled = sample(warm_pass, measured_pass, plan)
        competing = load.competing_load(before, load.snapshot())
        memory, memory_problem = _peak_memory(full_pass, spec.device)
        return Measurement(
            spec=spec,
            status=Status.OK,
            reason=memory_problem,
            forward=sampled.forward,
            backward=sampled.backward,
            backward_reason=backward_reason,
            memory_peak_bytes=memory,
            profiled_ops=tuple(sorted(operators)),
            warmup_runs=sampled.warmup_runs,
            stop_reason=sampled.stop_reason.value,
            met_target=sampled.met_target,
            competing_load=competing,
        )

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

    def harness_overhead(self, profiler: str, device: str) -> float:
        """The median time ``profiler`` reports for the most trivial operator, a one-element copy: the
        floor under any measurement (dispatch, the engine's hand-off and synchronisation for the
        Python timer)."""
        import mxnet as mx

        timer = self.timer(profiler)
        with devices.context(device):
            source = mx.nd.ones((1,))
            trivial = source.copy
            for _ in range(OVERHEAD_PLAN.warmup):
                timer.time(trivial)
            samples = [timer.time(trivial).seconds for _ in range(OVERHEAD_PLAN.runs)]
        return statistics.median(samples)

    def default_device(self) -> str:
        """gpu(0) where this build and machine have a GPU, else cpu(0)."""
        import mxnet as mx

        has_gpu = mx.runtime.Features().is_enabled("CUDA") and mx.context.num_gpus() > 0
        return "gpu(0)" if has_gpu else "cpu(0)"

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

    def available_memory(self, device: str) -> int | None:
        """Bytes free on the device: MemAvailable for cpu, the GPU's free memory for gpu."""
        kind, index = devices.parse_device(device)
        if kind == "cpu":
            return available_host_bytes()
        import mxnet as mx

        free, _ = mx.context.gpu_memory_info(index)
        return free

    def applicable_inputs(self, op: OpInfo, inputs: dict[str, InputValue]) -> dict[str, InputValue]:
        """``inputs`` less the tensors ``op`` does not take with these attributes (MXNet's own answer).

        Only single tensors are ever dropped, so operators without one are not asked (composing a symbol
        of ``reset_arrays`` crashes MXNet).
        """
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

    def identify(self, function: Callable[..., object]) -> tuple[str, str, OpInfo | None]:
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

    def environment(self) -> dict[str, object]:
        import mxnet as mx

        features = mx.runtime.Features()
        return {
            "framework": "mxnet",
            "mxnet_version": mx.__version__,
            "runtime_features": sorted(name for name in features if features.is_enabled(name)),
            "engine": os.environ.get("MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice"),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "cpu_affinity": list(available_cpus()),
            "num_gpus": mx.context.num_gpus() if features.is_enabled("CUDA") else 0,
            "machine": platform.machine(),
        }


def _prepare(
    spec: BenchmarkSpec,
    function: Callable[..., object],
    info: OpInfo | None,
    frontend: str,
    rng: np.random.Generator,
) -> _Call:
    """Materialise the spec's inputs. Generated front ends take tensor lists positionally, with their
    count in the operator's variable-length key; Python wrappers take the list as one argument. A
    generated front end with a variable-length key takes every tensor positionally (DGL's graph
    operators: the graph, then its vertex lists), so the key counts them all."""
    ctx = devices.context(spec.device)
    generated = _is_generated(function)
    var_args_key = info.var_args_key if info else ""
    args: list = []
    kwargs: dict = {}
    arrays: dict[str, object] = {}
    for name, value in spec.inputs:
        if isinstance(value, Alias):
            source = arrays[value.source]
            kwargs[name] = value.select(source) if isinstance(source, list) else source
            continue
        array = materialize(value, spec.dtype, ctx, frontend, rng)
        if is_given_array(value) and spec.run_backward and name != "out":
            array = array.copy()  # attaching a gradient must not change the caller's array
        arrays[name] = array
        if isinstance(array, list) and generated:
            args.extend(array)
        elif generated and var_args_key and isinstance(value, TensorSpec):
            args.append(array)
        else:
            kwargs[name] = array
    if args and var_args_key and var_args_key not in kwargs:
        kwargs[var_args_key] = len(args)
    return _Call(function=function, args=tuple(args), kwargs=kwargs)


def _differentiable(call: _Call, indices: set[str]) -> list:
    """The call's floating-point input arrays; index tensors and out= arrays take no gradient."""
    inputs = [value for name, value in call.kwargs.items() if name != "out" and name not in indices]
    arrays = [a for a in (*call.args, *inputs) if is_float_array(a)]
    return arrays + [a for v in inputs if isinstance(v, list) for a in v if is_float_array(a)]


def _peak_memory(full_pass: Callable[[], object], device: str) -> tuple[int | None, str | None]:
    """(peak bytes, None), or (None, why) when the memory probe itself failed."""
    try:
        return profiling.peak_memory_bytes(full_pass, devices.profiler_device_key(device)), None
    except Exception as error:
        _drain_engine()
        return None, f"memory probe failed: {_describe_error(error)}"


def _drain_engine() -> None:
    """Wait for pending work; an error raised late by the engine belongs to the failed run, not the next."""
    import mxnet as mx

    with contextlib.suppress(Exception):  # already reported by the run that caused it
        mx.nd.waitall()


def _ones_like(array):
    import mxnet as mx

    return mx.np.ones_like(array) if isinstance(array, mx.np.ndarray) else mx.nd.ones_like(array)


def _backward_precondition(spec: BenchmarkSpec, differentiable: list, writes_to_out: bool) -> str | None:
    if not spec.run_backward:
        return "backward not requested"
    if writes_to_out:
        return "an explicit out= array cannot be recorded for autograd"
    if spec.op in NOT_RECORDABLE:
        return NOT_RECORDABLE[spec.op]
    if not differentiable:
        return "no floating-point tensor input to differentiate"
    return None


def _probe_backward(heads: list) -> str | None:
    """Run one backward pass; None if it works, else why the operator has no usable gradient."""
    import mxnet as mx
    from mxnet import autograd

    if not heads:
        return "no floating-point output to differentiate"
    try:
        autograd.backward(heads, head_grads=[_ones_like(h) for h in heads])
        mx.nd.waitall()
    except Exception as error:
        mx.nd.waitall()
        message = str(error)
        if any(marker in message for marker in _NO_GRADIENT_MARKERS):
            return "operator has no gradient (no FGradient registered)"
        return f"backward failed: {_describe_error(error)}"
    return None


@contextlib.contextmanager
def _frontend_scope(frontend: str) -> Iterator[None]:
    """Numpy-semantics shapes and arrays for mx.np/mx.npx operators, legacy semantics otherwise."""
    if frontend != NUMPY_FRONTEND:
        yield
        return
    import mxnet as mx

    with mx.util.np_shape(True), mx.util.np_array(True):
        yield


def _is_tensor_input(value: object) -> bool:
    return isinstance(value, TensorSpec) or is_tensor_list(value)


def _attribute_text(value: object) -> str:
    """An attribute as MXNet's parameter parser reads it."""
    return str(value)


def _first_line(message: str) -> str:
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    for line in lines:
        if "Check failed" in line or "Error" in line or "error" in line:
            return line[:400]
    return lines[0][:400] if lines else message[:400]


def _describe_error(error: Exception) -> str:
    return f"{type(error).__name__}: {_first_line(str(error))}"


def identify(function: Callable[..., object]) -> tuple[str, str, OpInfo | None]:
    """(namespace, name, registry record or None) of a user-supplied MXNet function.

    The registry record is found when the function is the generated front end of a registered
    operator (``mx.nd.Convolution``, ``mx.nd.contrib.box_nms``); Python wrappers such as ``mx.nd.add``
    dispatch to several operators and have none.
    """
    namespace = namespace_of(function)
    name = getattr(function, "__name__", repr(function))
    if not _is_generated(function):
        return namespace, name, None
    by_name = load_registry().by_name
    prefixes = GENERATED_MODULE_PREFIXES.get(getattr(function, "__module__", ""), ("",))
    registered = next((p + name for p in prefixes if p + name in by_name), name)
    return namespace, name, by_name.get(registered)


def _is_generated(function: Callable[..., object]) -> bool:
    """MXNet generates each registered operator's front end from source text at import time."""
    code = getattr(function, "__code__", None)
    return code is not None and code.co_filename == "<string>"


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
