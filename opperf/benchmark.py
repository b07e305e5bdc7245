"""The typed benchmarking API: operators and input descriptions in, ``Measurement``s out."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from opperf.backends import Backend, get_backend
from opperf.errors import OpperfError
from opperf.utils.op_info import OpInfo
from opperf.utils.results import BenchmarkSpec, InputValue, Measurement, TensorSpec, freeze_inputs

PROFILERS = ("native", "python")


@dataclass(frozen=True)
class RunOptions:
    """How each benchmark runs. Defaults are stated here once."""

    run_backward: bool = True
    dtype: str = "float32"
    device: str = "cpu(0)"
    warmup: int = 10
    runs: int = 50
    profiler: str = "native"
    seed: int = 0
    framework: str = "mxnet"

    def validated(self, backend: Backend) -> RunOptions:
        """These options with the device normalised; raises OpperfError naming any bad value."""
        if self.profiler not in PROFILERS:
            raise OpperfError(f"unknown profiler {self.profiler!r}; choose one of: {', '.join(PROFILERS)}")
        for name in ("warmup", "runs"):
            value = getattr(self, name)
            minimum = 1 if name == "runs" else 0
            if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
                raise OpperfError(f"{name} must be an integer >= {minimum}, got {value!r}")
        backend.check_dtype(self.dtype)
        return RunOptions(**{**self.__dict__, "device": backend.normalize_device(self.device)})


def device_name(ctx: object) -> str:
    """A device as text: accepts ``"cpu"``, ``"gpu(0)"`` or a framework context object."""
    if ctx is None:
        return "cpu(0)"
    if isinstance(ctx, str):
        return ctx
    kind = getattr(ctx, "device_type", None)
    index = getattr(ctx, "device_id", 0)
    if kind is None:
        raise OpperfError(f"unrecognised device {ctx!r}; pass 'cpu', 'gpu(0)' or an mx.Context")
    return f"{kind}({index})"


def benchmark(
    ops: Callable[..., object] | Sequence[Callable[..., object]],
    inputs: Sequence[dict[str, object]],
    options: RunOptions | None = None,
) -> list[Measurement]:
    """Benchmark each operator with each input configuration; one Measurement per pair."""
    options = options or RunOptions()
    backend = get_backend(options.framework)
    options = options.validated(backend)
    functions = list(ops) if isinstance(ops, (list, tuple)) else [ops]
    if not inputs:
        raise OpperfError("inputs is empty; pass at least one input configuration, e.g. [{'data': (32, 32)}]")
    measurements = []
    for function in functions:
        namespace, name, info = backend.identify(function)
        for configuration in inputs:
            spec = BenchmarkSpec(
                framework=options.framework,
                namespace=namespace,
                op=name,
                inputs=freeze_inputs(describe_inputs(function, name, info, configuration)),
                dtype=options.dtype,
                device=options.device,
                run_backward=options.run_backward,
                profiler=options.profiler,
                category=info.category if info else "custom",
            )
            measurements.append(
                backend.measure(spec, options.warmup, options.runs, options.seed, function=function)
            )
    return measurements


def describe_inputs(
    function: Callable[..., object], name: str, info: OpInfo | None, configuration: dict[str, object]
) -> dict[str, InputValue]:
    """User inputs as input descriptions: shapes of tensor arguments become TensorSpecs.

    Raises OpperfError for an argument the operator does not take or a malformed shape.
    """
    if not isinstance(configuration, dict):
        raise OpperfError(
            f"each input configuration must be a dict of argument -> value, got {configuration!r}"
        )
    accepted, tensor_names = _signature(function, info)
    described: dict[str, InputValue] = {}
    for argument, value in configuration.items():
        if accepted is not None and argument not in accepted:
            close = difflib.get_close_matches(argument, accepted, n=3)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            raise OpperfError(
                f"{name} takes no argument {argument!r}; {hint}it takes: {', '.join(sorted(accepted))}"
            )
        described[argument] = _describe_value(name, argument, value, argument in tensor_names)
    return described


def _signature(function: Callable[..., object], info: OpInfo | None) -> tuple[set[str] | None, set[str]]:
    """(argument names accepted, or None if any are; names that take tensors)."""
    if info is not None:
        names = {a.name for a in info.arguments} | {"out", "name", "ctx", "dtype"}
        return names, {a.name for a in info.arguments if a.is_tensor}
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None, set()
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in parameters)
    required = {p.name for p in parameters if p.default is p.empty and p.kind is not p.VAR_KEYWORD}
    named = {p.name for p in parameters if p.kind is not p.VAR_KEYWORD and p.kind is not p.VAR_POSITIONAL}
    return (None if accepts_any else named), required


def _describe_value(op: str, argument: str, value: object, is_tensor: bool) -> InputValue:
    if isinstance(value, TensorSpec) or _is_given_array(value):
        return value
    if is_tensor:
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, (list, tuple)) for v in value):
            return tuple(TensorSpec(check_shape(op, argument, v)) for v in value)
        return TensorSpec(check_shape(op, argument, value))
    return tuple(value) if isinstance(value, list) else value


def _is_given_array(value: object) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, (tuple, list))


def check_shape(op: str, argument: str, shape: object) -> tuple[int, ...]:
    """A shape as a tuple of non-negative ints; raises OpperfError naming the argument otherwise."""
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
    ):
        raise OpperfError(
            f"{op}: input {argument!r} has malformed shape {shape!r}; "
            "a shape is a tuple of non-negative integers such as (1024, 1024)"
        )
    return tuple(shape)


def suggest(name: str, candidates: Iterable[str]) -> str:
    """'; did you mean a, b?' for the names closest to ``name``, or ''."""
    close = difflib.get_close_matches(name, list(candidates), n=5, cutoff=0.6)
    return f"; did you mean {', '.join(close)}?" if close else ""
