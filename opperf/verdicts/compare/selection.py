"""Which operators and input configurations a comparison runs: those named, or every function the
namespaces have in common (``--ops common``); each operator's configurations from the registry's
rules, stated in the first namespace's argument names."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opperf.frameworks import framework_module, framework_of_namespace, get_backend
from opperf.measure.benchmark import signature_of
from opperf.operators.info import OpInfo
from opperf.operators.rules import inputs_for
from opperf.operators.rules.profiles import STANDARD, SizeProfile
from opperf.utils.errors import OpperfError
from opperf.verdicts.compare.calls import (
    KEYWORD_REST,
    counterpart,
    function_in,
    parameter_names,
    tensor_order,
)

DEFAULT_OPERATORS = (
    "add", "multiply", "exp", "sum", "dot", "softmax",
    "Convolution", "Pooling", "FullyConnected", "BatchNorm",
)  # fmt: skip
"""What ``--compare`` runs when no operators are named: the common layers and element-wise basics."""


COMMON = "common"
"""What ``--ops`` takes for every function all the namespaces have (``common_functions``)."""


def common_functions(namespaces: Sequence[str]) -> tuple[str, ...]:
    """The public functions of the first namespace that every other namespace has a counterpart of
    (by name, or as its framework lists it) and that some namespace registers as an operator, in
    name order: ``compare mx.np,jnp,torch --ops common``."""
    first = namespaces[0]
    backend = get_backend(framework_of_namespace(first))
    return tuple(
        name
        for name in sorted(backend.namespace_names(first))
        if not name.startswith("_")
        and callable(backend.lookup(first, name))
        and all(_has_counterpart(name, namespace) for namespace in namespaces[1:])
        and any(_registered_info(name, namespace) is not None for namespace in namespaces)
    )


def _counterpart_function(name: str, namespace: str) -> Callable[..., object] | None:
    """What ``namespace`` calls for ``name`` where the configuration does not choose it; None where
    it has no such function. OpperfError where the configuration chooses (``Pooling``: max pooling
    has a counterpart, global pooling none)."""
    target = counterpart(name, namespace)
    return get_backend(framework_of_namespace(namespace)).lookup(target.namespace, target.function_name({}))


def _registered_info(name: str, namespace: str) -> OpInfo | None:
    """The registry record of ``name``'s counterpart in ``namespace``; None where it is none: a
    function no framework registers computes nothing on arrays (``set_printoptions``, ``torch.save``)."""
    try:
        function = _counterpart_function(name, namespace)
    except OpperfError:
        return None
    backend = get_backend(framework_of_namespace(namespace))
    return backend.identify(function).info if function is not None else None


def _has_counterpart(name: str, namespace: str) -> bool:
    try:
        return _counterpart_function(name, namespace) is not None
    except OpperfError:  # it has one for some configurations
        return True


def configurations(
    name: str, namespaces: Sequence[str], profile: SizeProfile = STANDARD
) -> list[dict[str, Any]]:
    """Input configurations for ``name`` in the first namespace's argument names: the registry's rules
    when it is a registered operator there; otherwise the first rules whose configurations the
    function takes (each required argument given, none it lacks): those of the registry operator a
    Python wrapper calls (``mx.np.add`` calls ``_npi_add(lhs, rhs)``: its tensors renamed as the
    wrapper names them, ``x1``, ``x2``), then those of the function's counterpart in each other
    namespace where that is a registered operator (``jnp.hstack``'s rules for ``mx.np.hstack``, whose
    called operator takes ``*data``: tensors by position, other arguments by name); else every
    required tensor argument with the profile's first shape."""
    first = namespaces[0]
    framework = framework_of_namespace(first)
    backend = get_backend(framework)
    function = function_in(first, name)
    info = backend.identify(function).info
    if info is not None:
        return [backend.applicable_inputs(info, inputs) for inputs in inputs_for(info, profile)]
    signature = signature_of(function, None)
    tensors = tensor_order(function, framework)
    candidates = [_called_configurations(framework, first, name, tensors, profile)]
    candidates += [_counterpart_configurations(name, other, function, profile) for other in namespaces[1:]]
    for found in candidates:
        fitting = [configuration for configuration in found if _fits(configuration, function)]
        if fitting:
            return fitting
    return [{argument: profile.shapes[0] for argument in sorted(signature.tensors & signature.required)}]


def _fits(configuration: Mapping[str, Any], function: Callable[..., object]) -> bool:
    """Whether ``function`` takes ``configuration``: every required argument, none it lacks, a
    ``**kwargs`` taking none besides its named ones (``mx.np.meshgrid(*xi, **kwargs)`` is given
    ``xi``, not ``a`` and ``newshape``); a function without a signature takes any."""
    signature = signature_of(function, None)
    given = set(configuration)
    if not signature.required <= given:
        return False
    if signature.accepted is not None:
        return given <= signature.accepted
    named = set(parameter_names(function, leaving_out=KEYWORD_REST))
    return not named or given <= named


def _called_configurations(
    framework: str, namespace: str, name: str, wrapper_tensors: Sequence[str], profile: SizeProfile
) -> list[dict[str, Any]]:
    """The rules of the registry operator a Python wrapper calls, its tensors named as the wrapper's."""
    called = _called_operator(framework, namespace, name)
    if called is None:
        return []
    backend = get_backend(framework)
    operator = [a.name for a in called.arguments if a.is_tensor]
    renames = dict(zip(operator, wrapper_tensors, strict=False))
    return [
        {renames.get(key, key): value for key, value in backend.applicable_inputs(called, inputs).items()}
        for inputs in inputs_for(called, profile)
    ]


def _counterpart_configurations(
    name: str, namespace: str, function: Callable[..., object], profile: SizeProfile
) -> list[dict[str, Any]]:
    """The rules of ``name``'s counterpart in ``namespace`` where it is a registered operator, in
    ``function``'s argument names: an argument ``function`` has by the same name keeps it, another goes
    to ``function``'s parameter at its position (``jnp.hstack(tup)`` to ``mx.np.hstack(arrays)``); a
    configuration with an argument that has neither is left out."""
    info = _registered_info(name, namespace)
    if info is None:
        return []
    backend = get_backend(framework_of_namespace(namespace))
    theirs = [a.name for a in info.arguments]
    mine = parameter_names(function, leaving_out=KEYWORD_REST) or theirs  # no signature: NumPy's
    translated = []
    for inputs in inputs_for(info, profile):
        configuration: dict[str, Any] = {}
        for argument, value in backend.applicable_inputs(info, inputs).items():
            position = theirs.index(argument) if argument in theirs else len(mine)
            renamed = argument if argument in mine else mine[position] if position < len(mine) else None
            if renamed is None or renamed in configuration:
                break
            configuration[renamed] = value
        else:
            translated.append(configuration)
    return translated


def _called_operator(framework: str, namespace: str, name: str) -> OpInfo | None:
    """The registry operator a Python wrapper calls (``mx.np.exp`` calls ``_npi_exp``), or None where
    it calls several: its rules give the configurations, in its own argument names."""
    called = framework_module(framework, "namespaces").called_operator(namespace, name)
    return next((op for op in get_backend(framework).operators() if called in op.all_names), None)
