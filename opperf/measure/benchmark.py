"""The typed benchmarking API: operators and input descriptions in, ``Measurement``s out."""

from __future__ import annotations

import difflib
import inspect
import numbers
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from opperf.frameworks import describe, framework_of, get_backend
from opperf.measure import harness
from opperf.measure.stages import EAGER, check_stages
from opperf.operators.info import ArgKind, OpInfo
from opperf.results.measurement import (
    BenchmarkSpec,
    InputValue,
    Measurement,
    TensorSpec,
    freeze_inputs,
    is_given_array,
)
from opperf.results.options import RunOptions
from opperf.utils.devices import Device
from opperf.utils.errors import OpperfError


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


def upstream_options(
    *,
    ctx: object,
    run_backward: bool,
    dtype: str,
    profiler: str,
    warmup: int | None,
    runs: int | None,
    seed: int = 0,
    threads: int | None = None,
) -> RunOptions:
    """The run options of upstream opperf's keyword arguments (``ctx`` as a context or its text)."""
    return RunOptions(
        run_backward=run_backward,
        dtype=dtype,
        device=Device.parse(device_name(ctx)),
        warmup=warmup,
        runs=runs,
        profiler=profiler,
        seed=seed,
        threads=threads,
    )


def benchmark(
    ops: Callable[..., object] | Sequence[Callable[..., object]],
    inputs: Sequence[dict[str, Any]],
    options: RunOptions | None = None,
    stages: Sequence[str] = (EAGER,),
) -> list[Measurement]:
    """Benchmark each operator with each input configuration in each of ``stages``; one Measurement
    per operator, configuration and stage.

    Each operator runs on its own framework's backend (``torch.add`` on PyTorch's, whatever
    ``options.framework`` says); the options' thread count, when given, is set first.
    """
    functions = cast("list[Callable[..., object]]", list(ops) if isinstance(ops, (list, tuple)) else [ops])
    not_callable = [f for f in functions if not callable(f)]
    if not_callable or not functions:
        raise OpperfError(
            f"ops must be operators (callables) such as mx.nd.add or torch.add, got {not_callable or ops!r}"
        )
    if not inputs:
        raise OpperfError("inputs is empty; pass at least one input configuration, e.g. [{'data': (32, 32)}]")
    if isinstance(inputs, dict) or not all(isinstance(c, dict) for c in inputs):
        raise OpperfError(
            "inputs must be a list of input configurations (dicts), e.g. [{'data': (32, 32)}]; "
            f"got {inputs!r}"
        )
    if options is not None and not isinstance(options, RunOptions):
        shown = ", ".join(f"{k}={v!r}" for k, v in options.items()) if isinstance(options, dict) else "..."
        raise OpperfError(
            f"options must be a RunOptions, e.g. RunOptions({shown}), not a {type(options).__name__} "
            "(from opperf import RunOptions)"
        )
    try:
        check_stages(tuple(stages))
    except ValueError as error:
        raise OpperfError(f"stages: {error}") from None
    measurements = []
    for function in functions:
        default = options.framework if options is not None else RunOptions().framework
        run_options = replace(options or RunOptions(), framework=framework_of(function, default))
        measurements += _benchmark_one(function, inputs, run_options, tuple(stages))
    return measurements


def foreign_name(function: Callable[..., object]) -> tuple[str, str] | None:
    """(module, name) of a callable no framework owns and opperf did not write (NumPy's ``np.exp``, a
    caller's wrapper around ``torch.exp``), which runs in the framework the options name and is named
    as itself: ``np.exp`` was named ``mx.nd.exp`` and described by MXNet's ``exp``, whose registry
    entry MXNet found by its name. None for a framework's own function or opperf's."""
    module = getattr(function, "__module__", None) or getattr(type(function), "__module__", "") or ""
    if framework_of(function, "") or module.split(".")[0] == "opperf":
        return None
    name = getattr(function, "__qualname__", None) or getattr(function, "__name__", None)
    return module or "python", name or type(function).__name__


def _benchmark_one(
    function: Callable[..., object],
    inputs: Sequence[dict[str, Any]],
    options: RunOptions,
    stages: tuple[str, ...],
) -> list[Measurement]:
    backend = get_backend(options.framework)
    options = options.validated(backend)
    backend.set_threads(options.threads)
    return [
        harness.measure(backend.session, spec, function)
        for configuration in inputs
        for spec in specs_of(function, configuration, options, stages)
    ]


def specs_of(
    function: Callable[..., object],
    configuration: dict[str, Any],
    options: RunOptions,
    stages: Sequence[str] = (EAGER,),
) -> list[BenchmarkSpec]:
    """``function`` with ``configuration`` as one spec per stage in ``stages`` (``options`` the caller has
    validated for the function's framework): named as the framework identifies it; OpperfError for
    an argument it does not take or a malformed shape."""
    namespace, name, info = get_backend(options.framework).identify(function)
    foreign = foreign_name(function)
    if foreign is not None:
        (namespace, name), info = foreign, None
    inputs = freeze_inputs(describe_inputs(function, name, info, configuration))
    category = info.category if info else "custom"
    return [
        BenchmarkSpec(
            namespace=namespace, op=name, inputs=inputs, options=options, category=category, stage=stage
        )
        for stage in stages
    ]


@dataclass(frozen=True)
class Signature:
    """What a function takes: which arguments, which of them are tensors or lists of tensors."""

    accepted: frozenset[str] | None  # None: any keyword is accepted
    required: frozenset[str]
    tensors: frozenset[str]
    tensor_lists: frozenset[str] = frozenset()


_DOCUMENTED_PARAMETER = re.compile(r"^\s*([\w, ]+?)\s*:\s*(.+)$")
_LIST_TYPE = re.compile(r"^(sequence|list|tuple) of")


def signature_of(function: Callable[..., object], info: OpInfo | None) -> Signature:
    """A registered operator's signature from the registry; a Python wrapper's from ``inspect`` and
    its numpydoc ``Parameters`` section (``a : ndarray``), which is where wrappers say what is a tensor
    (in the words of the function's framework, its ``documented_tensor``).
    """
    if info is not None:
        return Signature(
            accepted=frozenset(a.name for a in info.arguments) | {"out", "name", "ctx", "dtype"},
            required=frozenset(a.name for a in info.arguments if a.required),
            tensors=frozenset(a.name for a in info.arguments if a.is_tensor),
            tensor_lists=frozenset(a.name for a in info.arguments if a.kind is ArgKind.TENSOR_LIST),
        )
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return Signature(accepted=None, required=frozenset(), tensors=frozenset())
    named = [p for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    required = frozenset(p.name for p in named if p.default is p.empty)
    documented = _documented_types(inspect.getdoc(function) or "")
    tensor_type = describe(framework_of(function)).documented_tensor
    tensors = {name for name, kind in documented.items() if tensor_type.search(kind)} & {
        p.name for p in named
    }
    return Signature(
        accepted=None
        if any(p.kind is p.VAR_KEYWORD for p in parameters)
        else frozenset(p.name for p in named),
        required=required,
        tensors=frozenset(tensors) if documented else required,
        tensor_lists=frozenset(n for n in tensors if _LIST_TYPE.match(documented[n])),
    )


def _documented_types(docstring: str) -> dict[str, str]:
    """Parameter name -> documented type, from a numpydoc ``Parameters`` section."""
    section = docstring.split("Parameters", 1)[1] if "Parameters" in docstring else ""
    section = re.split(r"\n\s*(Returns|Examples|See Also|Notes)\s*\n", section)[0]
    types: dict[str, str] = {}
    for line in section.splitlines():
        match = _DOCUMENTED_PARAMETER.match(line)
        if match and not line.startswith((" " * 5, "\t")):
            for name in match.group(1).split(","):
                types.setdefault(name.strip(), match.group(2).strip())
    return types


def describe_inputs(
    function: Callable[..., object], name: str, info: OpInfo | None, configuration: dict[str, Any]
) -> dict[str, InputValue]:
    """User inputs as input descriptions: shapes of tensor arguments become TensorSpecs.

    Raises OpperfError for an argument the operator does not take or a malformed shape.
    """
    if not isinstance(configuration, dict):
        raise OpperfError(
            f"each input configuration must be a dict of argument -> value, got {configuration!r}"
        )
    signature = signature_of(function, info)
    # A configuration that holds described tensors came from rules or a file: an int in it is a number
    # (``split``'s sections), not the 1-D shape a user's configuration of shapes would mean by it.
    of_shapes = not any(holds_tensors(v) for v in configuration.values())
    described: dict[str, InputValue] = {}
    for argument, value in configuration.items():
        if signature.accepted is not None and argument not in signature.accepted:
            close = difflib.get_close_matches(argument, signature.accepted, n=3)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            accepted = ", ".join(sorted(signature.accepted))
            raise OpperfError(f"{name} takes no argument {argument!r}; {hint}it takes: {accepted}")
        is_tensor = argument in signature.tensors and (of_shapes or not isinstance(value, int))
        described[argument] = _describe_value(name, argument, value, is_tensor)
    return described


def _describe_value(op: str, argument: str, value: object, is_tensor: bool) -> InputValue:
    if isinstance(value, TensorSpec) or is_given_array(value):
        return value
    if is_tensor and isinstance(value, float):  # a number where an array may go (``clip``'s ``a_min``)
        return value
    if _described_list(value):
        return tuple(cast("Sequence[InputValue]", value))
    if is_tensor:
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, (list, tuple)) for v in value):
            return tuple(TensorSpec(check_shape(op, argument, v)) for v in value)
        return TensorSpec(check_shape(op, argument, value))
    return tuple(value) if isinstance(value, list) else value


def _described_tensor(value: object) -> bool:
    return isinstance(value, TensorSpec) or is_given_array(value)


def _described_list(value: object) -> bool:
    """A list of tensors, described already."""
    return isinstance(value, (list, tuple)) and bool(value) and all(_described_tensor(v) for v in value)


def holds_tensors(value: object) -> bool:
    """Whether an input value is a tensor, or a list of them, described already (a ``TensorSpec``, an
    array the caller gave) rather than a shape to describe."""
    return _described_tensor(value) or _described_list(value)


def check_shape(op: str, argument: str, shape: object) -> tuple[int, ...]:
    """A shape as a tuple of non-negative ints (numpy's integers too); raises OpperfError naming the
    argument otherwise."""
    if _is_whole(shape):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not all(_is_whole(d) and d >= 0 for d in shape):
        raise OpperfError(
            f"{op}: input {argument!r} has malformed shape {shape!r}; "
            "a shape is a tuple of non-negative integers such as (1024, 1024)"
        )
    return tuple(int(d) for d in shape)


def _is_whole(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
