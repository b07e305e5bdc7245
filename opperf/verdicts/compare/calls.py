"""What each namespace of a comparison calls for an operator, and with what arguments.

Operators are matched by name where the namespaces agree, and where they do not by what each
framework lists (``frameworks/<name>/compare.py``: ``FullyConnected`` is
``torch.nn.functional.linear``). A configuration is stated once, in the first namespace's argument
names; each other namespace gets it translated: tensors by position (``lhs``, ``rhs`` become ``x1``,
``x2`` and ``input``, ``other``), attributes by the mapping's renames (``pad`` becomes ``padding``),
attributes a namespace infers from the tensors (``num_filter``) dropped.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from opperf.frameworks import (
    FRAMEWORKS,
    describe,
    framework_module,
    framework_of_namespace,
    get_backend,
    started_environment,
)
from opperf.measure.benchmark import RunOptions, holds_tensors, signature_of, specs_of
from opperf.operators.counterparts import Counterpart
from opperf.results.measurement import BenchmarkSpec
from opperf.utils.errors import OpperfError, suggest


def counterpart(name: str, namespace: str) -> Counterpart:
    """How ``name`` (an ``mx.nd`` operator) is called in ``namespace``: as its framework lists it
    (``frameworks/<name>/compare.py``), else by the name itself with that framework's renames."""
    calls = framework_module(framework_of_namespace(namespace), "compare")
    listed = calls.COUNTERPARTS.get(name)
    if listed is not None and calls.answers(listed, namespace):
        return cast(Counterpart, listed)
    return Counterpart(namespace, name, renames=calls.DEFAULT_RENAMES)


OUTPUT = "out"
"""The argument NumPy-style functions write their result to: an output, never an input to translate."""


def tensor_order(function: Callable[..., object], framework: str) -> list[str]:
    """The tensor arguments of ``function`` in the order it takes them (``out`` not among them)."""
    info = get_backend(framework).identify(function).info
    if info is not None:
        return [a.name for a in info.arguments if a.is_tensor and a.name != OUTPUT]
    tensors = signature_of(function, None).tensors
    return [name for name in parameter_names(function) if name in tensors and name != OUTPUT]


KEYWORD_REST = (inspect.Parameter.VAR_KEYWORD,)
"""A ``**kwargs``: it names no argument of its own."""


VARIABLE = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
"""``*args`` and ``**kwargs``: a call names neither."""


def parameter_names(function: Callable[..., object], leaving_out: tuple[object, ...] = ()) -> list[str]:
    """``function``'s parameters in order, but those of the kinds ``leaving_out`` (``KEYWORD_REST``,
    ``VARIABLE``); none where it has no signature (a NumPy ufunc that ``mx.np`` exposes)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.kind not in leaving_out]


def translate(
    configuration: Mapping[str, Any],
    source_tensors: Sequence[str],
    target_tensors: Sequence[str],
    target: Counterpart,
) -> dict[str, object]:
    """``configuration`` in the target's argument names: tensors by position, attributes renamed.
    A value that holds tensors is a tensor wherever the source's signature did not say so (a Python
    wrapper whose documentation names another argument)."""
    source_tensors = [*source_tensors] + [
        name for name, value in configuration.items() if name not in source_tensors and holds_tensors(value)
    ]
    translated: dict[str, Any] = {}
    for name, value in configuration.items():
        if name in target.drop:
            continue
        if name in target.renames:
            translated[target.renames[name]] = value
        elif name in source_tensors and not isinstance(value, float):  # a number goes by its name
            position = source_tensors.index(name)
            if position >= len(target_tensors):
                raise OpperfError(f"{target.namespace} takes no tensor in the place of {name!r}")
            translated[target_tensors[position]] = value
        else:
            translated[name] = value
    translated = {**target.extra, **translated}
    return target.adapt(configuration, translated) if target.adapt else translated


def check_namespaces(namespaces: Sequence[str]) -> None:
    """Raise OpperfError naming the first namespace opperf knows no function in, with those it knows,
    or one named twice (its rounds would be one column twice, never a ratio)."""
    twice = next((namespace for namespace in namespaces if namespaces.count(namespace) > 1), None)
    if twice is not None:
        raise OpperfError(
            f"namespace {twice!r} is named twice; name each once (an A/A comparison takes two spellings "
            "of one namespace, e.g. jnp,jax.numpy)"
        )
    for namespace in namespaces:
        if not get_backend(framework_of_namespace(namespace)).namespace_names(namespace):
            known = "; ".join(describe(name).namespaces for name in FRAMEWORKS)
            raise OpperfError(f"unknown namespace {namespace!r}; use one of {known}")


def check_operators(names: Sequence[str], namespace: str) -> None:
    """Raise OpperfError naming the first of ``names`` that ``namespace`` has no function of, before
    anything runs (a comparison that stopped at it would lose what it measured before)."""
    for name in names:
        function_in(namespace, name)


def function_in(namespace: str, name: str) -> Callable[..., object]:
    """The function ``name`` of ``namespace``; OpperfError naming the closest names where it has none."""
    backend = get_backend(framework_of_namespace(namespace))
    function = backend.lookup(namespace, name)
    if function is None:
        raise OpperfError(
            f"no operator {name!r} in {namespace}{suggest(name, backend.namespace_names(namespace))}"
        )
    return function


def check_devices(namespaces: Sequence[str], options: RunOptions) -> None:
    """Raise OpperfError, before anything runs, when a framework of the comparison cannot start here,
    lacks the device (``cpu(5)``, a GPU the build or machine has not) or refuses an option (JAX's
    ``--profiler native``, MXNet's ``--layout transposed``), naming that framework: otherwise every
    record of it would fail with it."""
    for framework in dict.fromkeys(framework_of_namespace(namespace) for namespace in namespaces):
        started_environment(get_backend(framework))  # one that cannot start here at all
        replace(options, framework=framework).validated(get_backend(framework))


def call_in(
    name: str,
    namespace: str,
    configuration: Mapping[str, Any],
    source_tensors: Sequence[str],
    options: RunOptions,
    first: str,
) -> tuple[Callable[..., object], BenchmarkSpec]:
    """What ``namespace`` calls for ``name``, and the spec of calling it with ``configuration`` (as it
    is in the ``first`` namespace, whose names it is stated in)."""
    # the first namespace calls the function by the name it is compared under, whatever other
    # namespaces list for that name (torch.transpose, not the permute NumPy's transpose maps to)
    target = Counterpart(namespace, name) if namespace == first else counterpart(name, namespace)
    function_name = target.function_name(configuration)
    framework = framework_of_namespace(namespace)
    backend = get_backend(framework)
    function = backend.lookup(target.namespace, function_name)
    if function is None:
        raise OpperfError(f"no counterpart of {name!r} in {namespace} ({target.namespace}.{function_name})")
    if namespace == first:
        inputs = dict(configuration)
    else:
        # a function whose signature says nothing of its tensors (``torch.unique``) takes them first
        named = parameter_names(function, leaving_out=VARIABLE)
        tensors = tensor_order(function, framework) or named[: len(source_tensors)]
        inputs = translate(configuration, source_tensors, tensors, target)
    run_options = replace(options, framework=framework).validated(backend)
    (spec,) = specs_of(function, inputs, run_options)
    if backend.lookup(spec.namespace, spec.function or spec.op) is not function:
        # named where the framework defines it (``mx.np.allclose`` is MXNet's ``mx.nd`` function):
        # the record and a worker name it as the comparison calls it
        spec = replace(spec, namespace=target.namespace, function=function_name)
    return function, spec
