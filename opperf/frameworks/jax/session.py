"""How the shared harness runs a JAX operator: arrays on the device, every call blocked until its
results are ready, backward through ``jax.vjp``, and ``jax.jit`` as the compile stage.

A forward pass is the operator's call (eager: JAX dispatches each primitive, compiled once per shape;
``compile``: one executable of the whole call, compiled before timing, its seconds kept apart as
``compile_s``). A backward pass applies the pullback ``jax.vjp`` returns to a cotangent of ones: the
residuals are computed once, while preparing, so it times the backward computation alone, as
PyTorch's backward pass times autograd's. What a pass allocates comes from XLA's memory analysis of
the call compiled on abstract arrays, before any input exists: a configuration too large to run is
refused before it allocates, and the same figure is its peak memory.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from opperf.frameworks.jax import FRAMEWORK, arrays, devices, profiling
from opperf.frameworks.jax.calls import Call, arrange
from opperf.frameworks.jax.compiled import user_folder
from opperf.frameworks.jax.entry_points import resolve
from opperf.frameworks.jax.errors import describe_error
from opperf.frameworks.jax.gradients import (
    Differentiable,
    cotangent,
    differentiable_arrays,
    has_float_output,
    of_differentiable,
)
from opperf.frameworks.jax.registry import load_registry
from opperf.frameworks.jax.rules.derived import fit_to_signature
from opperf.measure.harness import Passes, PerCallSampler, Sampler, SkipError
from opperf.measure.memory import HeapTrimmer, available_host_bytes, describe_bytes, input_bytes
from opperf.measure.stages import StageCheck, compare
from opperf.measure.timing import PythonTimer
from opperf.results.measurement import BenchmarkSpec
from opperf.utils.cache import input_sets, last_level_cache_bytes
from opperf.utils.devices import Device
from opperf.utils.errors import OpperfError

COMPILE = "compile"
STAGES = FRAMEWORK.stages
"""The stages JAX runs: eager dispatch, and ``compile`` as one ``jax.jit`` executable."""

LARGEST_PASS_BYTES = 256 * 2**20
"""The most a pass may allocate, outputs and temporaries (unless its inputs together are larger):
``isin`` of two (1024, 1024) arrays compares every pair, and asked XLA for 1 TB."""

TRIM_AFTER_GROWTH_BYTES = 64 * 2**20
"""How much a worker may grow between configurations before its heap is trimmed."""

DEVICE_FAULTS = ("RESOURCE_EXHAUSTED", "CUDA_ERROR", "cuDNN", "cuBLAS", "CUBLAS_STATUS_")
"""Words of the errors after which a worker's GPU may be unusable."""


def block(outputs: object) -> object:
    """``outputs`` once every array among them is computed (JAX dispatches asynchronously)."""
    import jax

    return jax.block_until_ready(outputs)


def _nothing() -> None:
    """Nothing to wait for: every forward and backward call blocks until its results are ready."""


@dataclass(frozen=True)
class _Prepared:
    """One input set's forward call, and its backward pass when there is one."""

    forward: Callable[[], object]
    backward: Callable[[], object] | None
    backward_reason: str | None = None


def _name_users_folder() -> None:
    """Point JAX at its build's part of the user's folder for compiled programs, where one is named,
    before this process compiles anything (``--no-isolation``; a worker's runner names it at start,
    ``JaxBackend.keep_compiled``): JAX itself would use the folder's root, which any build of the
    same jaxlib reads. A folder opperf cannot write in is refused where a run needs it (the sweep's
    checks, ``JaxBackend.environment``), not here: listing or explaining operators compiles nothing."""
    try:
        folder = user_folder()
    except OpperfError:
        return
    if folder is not None:
        import jax

        jax.config.update("jax_compilation_cache_dir", folder)


class JaxSession:
    """The harness's view of JAX (see ``opperf.measure.harness.Session``)."""

    def __init__(self) -> None:
        self._memory: int | None = None
        self._trim = HeapTrimmer(TRIM_AFTER_GROWTH_BYTES)
        _name_users_folder()

    def prepare(self, spec: BenchmarkSpec, seed: int, function: Callable[..., object] | None) -> Passes:
        if spec.stage not in STAGES:
            raise SkipError(f"JAX has no {spec.stage} stage; it runs {', '.join(STAGES)} (jax.jit)")
        self._trim()  # what earlier configurations freed: each starts from a trimmed heap
        function = function or _function(spec)
        planned = _abstract_call(spec, function)
        differentiable, reason = _backward_plan(spec, planned)
        analysis = profiling.analyse(planned, differentiable)
        memory = analysis.pass_bytes
        limit = max(LARGEST_PASS_BYTES, input_bytes(spec))
        if memory is not None and memory > limit:
            raise SkipError(
                f"a pass would allocate {describe_bytes(memory)} (XLA's memory analysis), above the "
                f"{describe_bytes(limit)} limit"
            )
        self._memory = memory
        generator = np.random.default_rng(seed)
        device = devices.jax_device(spec.options.device)

        def make(value: object) -> object:
            return arrays.materialize(value, spec.options.dtype, device, generator)

        sets = input_sets(spec.options.cache, input_bytes(spec), last_level_cache_bytes())
        calls = [_call(spec, function, make) for _ in range(sets)]
        executable, compile_s = None, None
        with _compiling_afresh() if spec.stage == COMPILE else contextlib.nullcontext():
            if spec.stage == COMPILE:
                started = time.perf_counter()
                executable = _compiled(calls[0])
                compile_s = time.perf_counter() - started
            prepared = [_prepare_stage(call, differentiable, executable) for call in calls]
        reason = reason or next((p.backward_reason for p in prepared if p.backward_reason), None)
        check = _stage_check(calls[0], prepared[0]) if spec.stage == COMPILE else None
        rotation = itertools.cycle(prepared)
        current = [prepared[0]]

        def forward() -> object:
            current[0] = next(rotation)
            return current[0].forward()

        def backward_of(_: object) -> Callable[[], object]:
            return current[0].backward or _nothing

        return Passes(
            forward=forward,
            backward=backward_of if reason is None else None,
            backward_reason=reason,
            synchronize=_nothing,
            compile_s=compile_s,
            stage_check=check,
            work=analysis.work,
        )

    def output_bytes(self, spec: BenchmarkSpec, function: Callable[..., object] | None) -> int | None:
        """Bytes of a forward pass's outputs, from ``jax.eval_shape`` (nothing runs); None where the
        output's shape depends on values (``nonzero``) or the call is invalid (``prepare`` says why)."""
        try:
            return _abstract_output_bytes(spec, function or _function(spec))
        except Exception:
            return None

    def trivial(self, device: Device) -> Passes:
        import jax
        import jax.numpy as jnp

        source = jax.device_put(jnp.ones(1), devices.jax_device(device))
        return Passes(
            forward=lambda: block(source + 0), backward=None, backward_reason=None, synchronize=_nothing
        )

    def sampler(self, profiler: str, device: Device) -> Sampler:
        """The Python timer around each call (which blocks until its results are ready); ``native`` is
        refused at sampling, and the harness records the Python timer's reading with the reason."""
        if profiler == "native":
            return profiling.NoNativeTimer()
        return PerCallSampler(PythonTimer(synchronize=_nothing))

    def peak_memory(self, full_pass: Callable[[], object], device: Device) -> int:
        """XLA's memory analysis of the prepared configuration compiled as one executable (forward and,
        where there is one, backward): the bytes of its outputs and temporaries, read while preparing."""
        if self._memory is None:
            raise RuntimeError(
                "XLA's memory analysis compiles the call whole on abstract arrays, and this call cannot "
                "be compiled so (an output's shape or a Python branch depends on its values)"
            )
        return self._memory

    def available_memory(self, device: Device) -> int | None:
        """Bytes free on the device: MemAvailable for the CPU; the GPU's limit less what is in use."""
        if not devices.on_gpu(device):
            return available_host_bytes()
        stats = devices.jax_device(device).memory_stats() or {}
        limit, used = stats.get("bytes_limit"), stats.get("bytes_in_use", 0)
        return int(limit - used) if limit is not None else None

    def describe_error(self, error: BaseException) -> str:
        return describe_error(error)

    def settle(self) -> None:
        """Drop what JAX keeps of the configuration: the executables it compiled for it (each shape's
        primitives, the whole call under jit, its memory analysis). JAX caches them for the life of
        the process, and a worker grew by about 3 MiB a configuration (600 MiB after 60 unary and
        binary operators) without this. Dropping them only once a worker had grown 256 MiB took the
        full sweep as long (708 s both ways) with a worker of 954 MiB instead of 685 MiB."""
        import jax

        self._memory = None
        jax.clear_caches()

    def device_fault(self, reason: str | None, device: Device) -> bool:
        """Whether a failure on a GPU may have left the worker's device unusable."""
        return devices.on_gpu(device) and any(marker in (reason or "") for marker in DEVICE_FAULTS)


@contextlib.contextmanager
def _compiling_afresh() -> Iterator[None]:
    """XLA compiling without its persistent cache (``JaxBackend.keep_compiled``): the ``compile``
    stage's seconds are a compile's, not a read of what an earlier worker compiled."""
    import jax

    before = cast(Any, jax.config).jax_enable_compilation_cache  # a flag JAX's types do not list
    jax.config.update("jax_enable_compilation_cache", False)
    try:
        yield
    finally:
        jax.config.update("jax_enable_compilation_cache", before)


def _function(spec: BenchmarkSpec) -> Callable[..., object]:
    return resolve(spec.namespace, spec.function or spec.op.rpartition(".")[2])


def _call(spec: BenchmarkSpec, function: Callable[..., object], make: Callable[[object], object]) -> Call:
    """The spec's call, its arguments under the names this JAX's signature gives them: an A/B job's
    configurations are made once, from the base side's JAX, and the new side's may have renamed a
    positional parameter (``clip(x, /, ...)`` in 0.4.30, ``clip(arr, /, ...)`` in 0.10): every record
    of it failed, and the diff called them newly failing. The record keeps the spec's names."""
    here = load_registry().by_name.get(spec.op)
    given = dict(spec.inputs)
    fitted = fit_to_signature(here, given) if here is not None else given
    return arrange(spec.op, function, {name: make(value) for name, value in fitted.items()}, _is_array)


def _abstract_call(spec: BenchmarkSpec, function: Callable[..., object]) -> Call:
    """The call on ``jax.ShapeDtypeStruct``s: what XLA analyses and ``jax.eval_shape`` checks."""
    return _call(spec, function, lambda value: arrays.abstract(value, spec.options.dtype))


def _is_array(value: object) -> bool:
    import jax

    if isinstance(value, (list, tuple)):
        return bool(value) and all(_is_array(v) for v in value)
    return isinstance(value, (jax.Array, jax.ShapeDtypeStruct))


def _backward_plan(spec: BenchmarkSpec, call: Call) -> tuple[Differentiable, str | None]:
    """Which array arguments ``jax.vjp`` differentiates, or why there is no backward pass."""
    if not spec.options.run_backward:
        return (), "backward not requested"
    if spec.options.mode == "inference":
        return (), "inference mode: forward passes only"
    differentiable = differentiable_arrays(call)
    if not any(differentiable):
        return (), "no floating-point array input to differentiate"
    return differentiable, None


def _compiled(call: Call) -> Callable[..., object]:
    """The call as one executable of its arrays (``jax.jit``), compiled and run once: the ``compile``
    stage's build, which ``compile_s`` times with its first call (as every framework's does). Every
    input set runs it: they differ in their arrays' values alone. Timing each set's own compile,
    with its backward pass's, made ``compile_s`` 1.6 s for ``exp`` of a (256, 256) array under
    ``--cache cold`` (64 sets) against 0.02 s."""
    import jax

    executable = jax.jit(lambda *values: call.run(*values)).lower(*call.arrays).compile()
    block(executable(*call.arrays))
    return cast("Callable[..., object]", executable)


def _prepare_stage(
    call: Call, differentiable: Differentiable, executable: Callable[..., object] | None
) -> _Prepared:
    """The forward call (and backward pass) of one input set: through ``executable`` where the
    ``compile`` stage built one, its backward pass compiled as one executable too; each runs once
    here (JAX compiles a primitive, or the whole call, on its first run). A backward pass JAX cannot
    run leaves the reason, and the forward pass is measured alone."""
    if executable is not None:

        def forward() -> object:
            return block(executable(*call.arrays))

    else:

        def forward() -> object:
            return block(call())

    forward()
    if not differentiable:
        return _Prepared(forward, None)
    try:
        backward = _backward(call, differentiable, compiled=executable is not None)
    except Exception as error:
        return _Prepared(forward, None, f"jax.vjp: {describe_error(error)}")
    if backward is None:
        return _Prepared(forward, None, "no floating-point output to differentiate")
    return _Prepared(forward, backward)


def _backward(call: Call, differentiable: Differentiable, compiled: bool) -> Callable[[], object] | None:
    """One input set's pullback applied to a cotangent of ones, ``compiled`` as one executable; None
    when no output is floating point."""
    import jax

    function, chosen = of_differentiable(call, differentiable)
    outputs, pullback = jax.vjp(function, *chosen)
    if not has_float_output(outputs):
        return None
    seed = cotangent(outputs)
    if compiled:
        executable = jax.jit(lambda pull, ones: pull(ones)).lower(pullback, seed).compile()

        def backward() -> object:
            return block(executable(pullback, seed))

    else:

        def backward() -> object:
            return block(pullback(seed))

    backward()
    return backward


def _stage_check(call: Call, prepared: _Prepared) -> StageCheck:
    """The compiled call's outputs against eager ones."""
    import jax

    eager = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(call())]
    staged = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(prepared.forward())]
    return compare(eager, staged)


def _abstract_output_bytes(spec: BenchmarkSpec, function: Callable[..., object]) -> int:
    import jax

    call = _abstract_call(spec, function)
    return arrays.total_bytes(jax.eval_shape(call.run, *call.arrays))
