"""How the shared harness runs an MXNet operator: inputs on the device, forward and backward passes.

Forward passes run in the options' mode: training (Dropout drops, BatchNorm computes batch statistics,
MKL-DNN writes its backward workspace) or inference; a backward pass is timed when the operator
records for autograd and its gradient runs.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from opperf.frameworks.mxnet import devices, profiling, shapes
from opperf.frameworks.mxnet import fused as fused_patterns
from opperf.frameworks.mxnet.arrays import (
    ND_FRONTEND,
    NUMPY_FRONTEND,
    flatten_outputs,
    host_draws,
    is_float_array,
    materialize,
)
from opperf.frameworks.mxnet.errors import describe_error
from opperf.frameworks.mxnet.invoke import DIRECT_INVOCATION, GRAPH_BUILDERS, direct_call
from opperf.frameworks.mxnet.namespaces import identify, is_generated, resolve
from opperf.frameworks.mxnet.registry import NUMPY_NAMESPACES, load_registry
from opperf.frameworks.mxnet.stages import Call, operator_body, stage_calls
from opperf.measure.harness import Passes, PerCallSampler, Sampler, SkipError
from opperf.measure.memory import available_host_bytes, input_bytes
from opperf.measure.stages import EAGER, IN_PLACE
from opperf.measure.timing import PythonTimer
from opperf.operators import fused, longtail
from opperf.operators.info import OpInfo
from opperf.results.measurement import Alias, BenchmarkSpec, TensorSpec, is_given_array
from opperf.utils.cache import input_sets, last_level_cache_bytes
from opperf.utils.devices import Device
from opperf.utils.draws import DrawCache

# Operators MXNet cannot record for autograd, and why; they are measured without recording.
NOT_RECORDABLE: dict[str, str] = {
    "reset_arrays": "has no outputs (it zeroes its inputs in place); recording it crashes MXNet",
}

# Operators whose outputs are not inferred: composing a symbol of one directly crashes MXNet (it has
# no outputs, or exists only inside the graph that builds it).
NOT_INFERRED = frozenset(NOT_RECORDABLE) | frozenset(GRAPH_BUILDERS)

# Messages MXNet gives for an operator without a registered gradient.
_NO_GRADIENT_MARKERS = ("FGradient", "non-differentiable", "is not differentiable")


class MXNetSession:
    """The harness's view of MXNet (see ``opperf.measure.harness.Session``)."""

    def __init__(self) -> None:
        self._profiler_warm = False
        # Input values drawn before (most configurations' first tensor is the same draw).
        self._draws = host_draws()

    def prepare(self, spec: BenchmarkSpec, seed: int, function: Callable[..., object] | None) -> Passes:
        info = _registry_info(spec, function)
        if function is None and spec.namespace == fused.NAMESPACE:
            return self._pattern(spec, seed)
        if function is None and spec.namespace == longtail.NAMESPACE:
            import mxnet as mx

            function = functools.partial(_longtail_body(spec.op), mx.nd)
        elif function is None:
            direct = spec.op in DIRECT_INVOCATION
            function = direct_call(spec.op) if direct else resolve(spec.namespace, spec.op)
        frontend = NUMPY_FRONTEND if spec.namespace in NUMPY_NAMESPACES else ND_FRONTEND
        with _frontend_scope(frontend):
            rng = np.random.default_rng(seed)
            sets = input_sets(spec.options.cache, input_bytes(spec), last_level_cache_bytes())
            calls = [_prepare(spec, function, info, frontend, rng, self._draws) for _ in range(sets)]
            if spec.variant == IN_PLACE:
                calls = [_writing_to_out(call) for call in calls]
            if spec.stage == EAGER:
                return _passes(spec, calls, frontend)
            staged = stage_calls(spec.stage, spec.op, _stage_body(spec, frontend), calls, _keywords_call)
            passes = _passes(spec, list(staged.calls), frontend)
            return replace(passes, compile_s=staged.compile_s, stage_check=staged.check)

    def _pattern(self, spec: BenchmarkSpec, seed: int) -> Passes:
        """A fused pattern's passes in its stage and variant (``opperf.frameworks.mxnet.fused``)."""
        built = fused_patterns.build(spec)
        rng = np.random.default_rng(seed)
        sets = input_sets(spec.options.cache, input_bytes(spec), last_level_cache_bytes())
        calls = [_prepare(spec, built.run, None, ND_FRONTEND, rng, self._draws) for _ in range(sets)]
        staged = fused_patterns.stage_calls(built, calls, _keywords_call)
        passes = _passes(spec, list(staged.calls), ND_FRONTEND, staged.backward_refusal)
        return replace(passes, compile_s=staged.compile_s, stage_check=staged.check)

    def output_bytes(self, spec: BenchmarkSpec, function: Callable[..., object] | None) -> int | None:
        """Bytes of a forward pass's outputs, from MXNet's shape and type inference (registered
        operators and their generated front ends; a Python wrapper such as ``mx.nd.add`` may call
        several, and is not inferred)."""
        info = _registry_info(spec, function)
        if info is None or info.name in NOT_INFERRED:
            return None
        return shapes.output_bytes(spec, info)

    def trivial(self, device: Device) -> Passes:
        import mxnet as mx

        with devices.context(device):
            source = mx.nd.ones((1,))
        return Passes(forward=source.copy, backward=None, backward_reason=None, synchronize=mx.nd.waitall)

    def sampler(self, profiler: str, device: Device) -> Sampler:
        import mxnet as mx

        peak_memory = functools.partial(self.peak_memory, device=device)
        if profiler == "native":
            if not self._profiler_warm:
                profiling.warm_up_profiler()
                self._profiler_warm = True
            return PerCallSampler(profiling.NativeTimer(), peak_memory=peak_memory)
        return PerCallSampler(PythonTimer(synchronize=mx.nd.waitall), peak_memory=peak_memory)

    def peak_memory(self, full_pass: Callable[[], object], device: Device) -> int:
        return profiling.peak_memory_bytes(full_pass, devices.profiler_device_key(device))

    def available_memory(self, device: Device) -> int | None:
        """Bytes free on the device: MemAvailable for cpu, the GPU's free memory for gpu."""
        kind, index = device.kind, device.index
        if kind == "cpu":
            return available_host_bytes()
        import mxnet as mx

        free, _ = mx.context.gpu_memory_info(index)
        return free

    def describe_error(self, error: BaseException) -> str:
        return describe_error(error)

    def device_fault(self, reason: str | None, device: Device) -> bool:
        """Never: MXNet's worker keeps its device after a failed configuration."""
        return False

    def settle(self) -> None:
        """Wait for pending work; an error raised late by the engine belongs to the failed run, not
        the next."""
        import mxnet as mx

        with contextlib.suppress(Exception):  # already reported by the run that caused it
            mx.nd.waitall()


def _longtail_body(name: str) -> Callable[..., object]:
    from opperf.frameworks.mxnet.longtail import IMPLEMENTATIONS

    return IMPLEMENTATIONS[name]


def _stage_body(spec: BenchmarkSpec, frontend: str) -> Callable[..., object]:
    """What a graph stage's block runs, ``F`` first: a long-tail operator's implementation, or the
    registered operator through ``F``'s namespace."""
    if spec.namespace == longtail.NAMESPACE:
        return _longtail_body(spec.op)
    if frontend == NUMPY_FRONTEND:
        raise SkipError(f"graph stage: opperf hybridizes mx.nd operators only, not {spec.namespace} ones")
    return operator_body(spec.namespace, spec.function or spec.op)


def _keywords_call(function: Callable[..., object], kwargs: dict) -> _Call:
    return _Call(function=function, args=(), kwargs=kwargs)


def _passes(spec: BenchmarkSpec, calls: Sequence[Call], frontend: str, refusal: str | None = None) -> Passes:
    """Find whether a backward pass runs (a first, recorded forward pass and its backward pass, timed:
    the first warm-up pass), then the passes that take the ``calls`` (input sets) in turn: one when
    measuring hot, several when cold. ``refusal`` is why no backward pass may run although one would
    (a fused block's zero gradients)."""
    import mxnet as mx
    from mxnet import autograd

    # Index tensors and out= arrays take no gradient (MXNet refuses one for an Embedding's indices).
    indices = {name for name, value in spec.inputs if isinstance(value, TensorSpec) and value.integral}
    differentiable = [array for call in calls for array in _differentiable(call, indices)]
    writes_to_out = "out" in calls[0].kwargs
    backward_reason = refusal or _backward_precondition(spec, differentiable, writes_to_out=writes_to_out)
    for array in differentiable if backward_reason is None else ():
        array.attach_grad()
    rotation = itertools.cycle(calls)

    training = spec.options.mode != "inference"
    mode_scope = autograd.train_mode if training else autograd.predict_mode

    def forward() -> object:
        call = next(rotation)
        if backward_reason is None:
            with autograd.record(train_mode=training):
                return call()
        with mode_scope():
            return call()

    started = time.perf_counter()
    try:
        outputs = forward()
        mx.nd.waitall()
    except Exception as error:
        _drain_engine()
        if backward_reason is not None:
            raise
        backward_reason = f"recording for backward failed: {describe_error(error)}"
        started = time.perf_counter()
        outputs = forward()
        mx.nd.waitall()
    heads = [o for o in flatten_outputs(outputs) if is_float_array(o)]
    head_grads = [_ones_like(h) for h in heads]
    if backward_reason is None:
        backward_reason = _probe_backward(heads, head_grads)
    first_pass_s = time.perf_counter() - started
    del outputs, heads

    def backward_of(outputs: object) -> Callable[[], object]:
        float_outputs = [o for o in flatten_outputs(outputs) if is_float_array(o)]
        return lambda: autograd.backward(float_outputs, head_grads=head_grads)

    return Passes(
        forward=forward,
        backward=backward_of if backward_reason is None else None,
        backward_reason=backward_reason,
        synchronize=mx.nd.waitall,
        scope=lambda: _frontend_scope(frontend),
        warmed=(first_pass_s,),
    )


def _writing_to_out(call: _Call) -> _Call:
    """``call`` writing into its own first result, given back as ``out=``: the in-place form of a
    generated front end (``opperf.frameworks.mxnet.in_place``)."""
    import mxnet as mx

    result = call()
    mx.nd.waitall()
    return replace(call, kwargs={**call.kwargs, "out": result})


@dataclass(frozen=True)
class _Call:
    """A ready-to-run operator call with materialised inputs."""

    function: Callable[..., object]
    args: tuple
    kwargs: dict

    def __call__(self) -> object:
        return self.function(*self.args, **self.kwargs)


def _prepare(
    spec: BenchmarkSpec,
    function: Callable[..., object],
    info: OpInfo | None,
    frontend: str,
    rng: np.random.Generator,
    draws: DrawCache | None = None,
) -> _Call:
    """Materialise the spec's inputs. Generated front ends take tensor lists positionally, with their
    count in the operator's variable-length key; Python wrappers take the list as one argument. A
    generated front end with a variable-length key takes every tensor positionally (DGL's graph
    operators: the graph, then its vertex lists), so the key counts them all."""
    ctx = devices.context(spec.options.device)
    generated = is_generated(function)
    var_args_key = info.var_args_key if info else ""
    args: list = []
    kwargs: dict = {}
    arrays: dict[str, Any] = {}
    for name, value in spec.inputs:
        if isinstance(value, Alias):
            source = arrays[value.source]
            kwargs[name] = value.select(source) if isinstance(source, list) else source
            continue
        array = materialize(value, spec.options.dtype, ctx, frontend, rng, draws)
        if is_given_array(value) and spec.options.run_backward and name != "out":
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
    if not generated and not args and spec.stage == EAGER:  # the graph stage binds arrays by name
        args = _leading_positionally(function, kwargs)
    return _Call(function=function, args=tuple(args), kwargs=kwargs)


def _leading_positionally(function: Callable[..., object], kwargs: dict[str, Any]) -> list[Any]:
    """The leading arguments of a Python wrapper's signature taken out of ``kwargs``, in order, to
    pass by position, as users call it. Two kinds of ``mx.np`` function take them no other way: NumPy's
    own functions and ufuncs, which ``mx.np`` exposes where it has none (``allclose``, ``cov``,
    ``float_power``), hand the call to MXNet through ``__array_function__``, which finds the arrays'
    context among the positional arguments only (passed by keyword, every call failed with "Unknown
    context for the input ndarrays"); and binary functions whose decorator's signature names them
    otherwise than the one ``inspect`` reads (``matmul(a, b)`` takes ``x1, x2``). A list given for
    ``*args`` is spread (``meshgrid(*xi)``)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a ufunc, which takes its ``nin`` inputs by position only
        return _ufunc_inputs(getattr(function, "nin", 0), kwargs)
    leading: list[Any] = []
    for parameter in parameters:
        if parameter.kind is parameter.VAR_POSITIONAL and isinstance(kwargs.get(parameter.name), list):
            leading.extend(kwargs.pop(parameter.name))
            break
        if parameter.kind not in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            break
        if parameter.name not in kwargs:
            break
        leading.append(kwargs.pop(parameter.name))
    return leading


def _ufunc_inputs(count: int, kwargs: dict[str, Any]) -> list[Any]:
    """A ufunc's inputs by NumPy's names (``x``, or ``x1``, ``x2``), in that order; none where the
    configuration names them otherwise (the call then says what it misses)."""
    names = ["x"] if count == 1 and "x" in kwargs else [f"x{index}" for index in range(1, count + 1)]
    return [kwargs.pop(name) for name in names] if all(name in kwargs for name in names) else []


def _differentiable(call: Call, indices: set[str]) -> list:
    """The call's floating-point input arrays; index tensors and out= arrays take no gradient."""
    inputs = [value for name, value in call.kwargs.items() if name != "out" and name not in indices]
    arrays = [a for a in (*call.args, *inputs) if is_float_array(a)]
    return arrays + [a for v in inputs if isinstance(v, list) for a in v if is_float_array(a)]


def _drain_engine() -> None:
    """Wait for pending work; an error raised late by the engine belongs to the failed run, not the next."""
    import mxnet as mx

    with contextlib.suppress(Exception):  # already reported by the run that caused it
        mx.nd.waitall()


def _ones_like(array):
    import mxnet as mx

    return mx.np.ones_like(array) if isinstance(array, mx.np.ndarray) else mx.nd.ones_like(array)


def _backward_precondition(spec: BenchmarkSpec, differentiable: list, writes_to_out: bool) -> str | None:
    if not spec.options.run_backward:
        return "backward not requested"
    if writes_to_out:
        return "an explicit out= array cannot be recorded for autograd"
    if spec.op in NOT_RECORDABLE:
        return NOT_RECORDABLE[spec.op]
    refusal = longtail.backward_refusal(spec.namespace, spec.op)
    if refusal is not None:
        return refusal
    if not differentiable:
        return "no floating-point tensor input to differentiate"
    return None


def _probe_backward(heads: list, head_grads: list) -> str | None:
    """Run one backward pass of ``heads`` from ``head_grads``; None if it works, else why the
    operator has no usable gradient."""
    import mxnet as mx
    from mxnet import autograd

    if not heads:
        return "no floating-point output to differentiate"
    try:
        autograd.backward(heads, head_grads=head_grads)
        mx.nd.waitall()
    except Exception as error:
        mx.nd.waitall()
        message = str(error)
        if any(marker in message for marker in _NO_GRADIENT_MARKERS):
            return "operator has no gradient (no FGradient registered)"
        return f"backward failed: {describe_error(error)}"
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


def _registry_info(spec: BenchmarkSpec, function: Callable[..., object] | None) -> OpInfo | None:
    """The registry record of what ``spec`` calls: ``function``'s when given, else its operator's."""
    return identify(function).info if function else load_registry().by_name.get(spec.op)
