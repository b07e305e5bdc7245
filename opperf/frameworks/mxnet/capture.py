"""Recording the MXNet operators a Gluon model calls, as registry operators with opperf inputs.

Every generated ``mx.nd`` operator function (operator overloads such as ``x + y`` included) calls
``mxnet.ndarray.register._imperative_invoke`` with the operator's handle, its arrays and its
attributes; ``recording`` wraps that function for the duration of a forward pass. Handles map to
registry names through the C API, names to their canonical operator as the registry folds aliases,
and arrays to the operator's tensor argument names as MXNet's symbol API lists them for these
attributes. The model runs imperatively (not hybridized), once before recording so deferred
parameter initialisation is not recorded.

Calls with no array input (``_zeros``, ``_random_uniform``: array factories) are left out and
counted in the header's ``filtered``.

``graph_calls`` is the independent count the tests check a capture against: the model's exported
symbol graph, its shapes from ``infer_shape``.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

from opperf.frameworks.base import foreign_model_error
from opperf.frameworks.mxnet.registry import accepted_inputs, load_registry
from opperf.operators.info import ArgKind, OpInfo
from opperf.results.configs import Call, Captured
from opperf.results.measurement import InputValue, TensorSpec, freeze_inputs


def captured_by(mode: str) -> str:
    """How a capture in ``mode`` recorded the calls, for the configs file's header."""
    return (
        f"mxnet.ndarray.register._imperative_invoke wrapped during one imperative (non-hybridized) {mode} "
        "forward pass after a warm-up pass; calls without an array input (factories) are filtered"
    )


FACTORY = "factory"
# Attributes the front end adds that are not the operator's: where the output goes and its name.
NOT_ATTRIBUTES = frozenset({"ctx", "out", "name"})


@functools.cache
def handle_names() -> dict[int, str]:
    """Operator handle (an address) -> registered name, for every registered operator."""
    from mxnet.base import _LIB, OpHandle, c_str, check_call

    names = {}
    for name in load_registry().registered_names:
        handle = OpHandle()
        check_call(_LIB.NNGetOpHandle(c_str(name), ctypes.byref(handle)))
        names[handle.value] = name
    return names


def accepted_arguments(op: str) -> frozenset[str] | None:
    """The argument names the MXNet operator ``op`` (canonical or alias) takes; None if unknown."""
    info = load_registry().by_name.get(op)
    return frozenset(a.name for a in info.arguments) if info is not None else None


def _attribute(value: object) -> InputValue:
    """An attribute value as the results file keeps it: numbers, booleans, strings and tuples as they
    are, anything else (a NumPy dtype) as its text."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (tuple, list)):
        return tuple(_attribute(v) for v in value)
    return getattr(value, "__name__", None) or str(value)


def _tensor(array: Any) -> TensorSpec:
    import numpy as np

    return TensorSpec(tuple(int(d) for d in array.shape), dtype=np.dtype(array.dtype).name)


def describe_call(name: str, arrays: list, keys: list[str], values: list[object]) -> Call:
    """A call of the registered operator ``name`` as a registry operator and its named inputs."""
    info: OpInfo = load_registry().by_name[name]
    attributes = {k: _attribute(v) for k, v in zip(keys, values, strict=True) if k not in NOT_ATTRIBUTES}
    tensors = _name_arrays(info, arrays, attributes)
    return Call(info.name, freeze_inputs({**tensors, **attributes}))


def _name_arrays(info: OpInfo, arrays: list, attributes: dict[str, InputValue]) -> dict[str, InputValue]:
    listed = [a for a in info.arguments if a.kind is ArgKind.TENSOR_LIST]
    if info.var_args_key and listed:
        attributes.pop(info.var_args_key, None)
        return {listed[0].name: tuple(_tensor(a) for a in arrays)}
    names = accepted_inputs(info.name, tuple((k, str(v)) for k, v in attributes.items()))
    if names is None or len(names) < len(arrays):
        names = tuple(a.name for a in info.tensor_arguments)
    return {name: _tensor(array) for name, array in zip(names, arrays, strict=False)}


@contextlib.contextmanager
def recording() -> Iterator[tuple[list[Call], Counter, list[str]]]:
    """Record every imperative operator call in the block: (calls, filtered calls by reason, each
    kept call's registered name)."""
    from mxnet.ndarray import register

    calls: list[Call] = []
    filtered: Counter = Counter()
    native: list[str] = []
    names = handle_names()
    original = register._imperative_invoke

    def invoke(handle, ndargs, keys, vals, out, *rest):
        if ndargs:
            calls.append(describe_call(names[handle], list(ndargs), list(keys), list(vals)))
            native.append(names[handle])
        else:
            filtered[FACTORY] += 1
        return original(handle, ndargs, keys, vals, out, *rest)

    register._imperative_invoke = invoke
    try:
        yield calls, filtered, native
    finally:
        register._imperative_invoke = original


def capture(model: Any, inputs: tuple, mode: str) -> Captured:
    """The operator calls of one forward pass of the Gluon block ``model`` on ``inputs`` (autograd
    recording in training mode, so Dropout and BatchNorm take their training paths)."""
    import mxnet as mx

    if not isinstance(model, mx.gluon.Block):
        raise foreign_model_error("the model", model, "a Gluon Block")

    def forward() -> None:
        if mode == "training":
            with mx.autograd.record(train_mode=True):
                outputs = model(*inputs)
        else:
            outputs = model(*inputs)
        mx.nd.waitall()
        del outputs

    forward()  # deferred parameter initialisation happens here, unrecorded
    with recording() as (calls, filtered, native):
        forward()
    return Captured(tuple(calls), filtered, tuple(native))


def graph_calls(model: Any, inputs: tuple) -> list[tuple[str, tuple[tuple[int, ...], ...], dict[str, str]]]:
    """The model's operator nodes from its exported symbol graph: (canonical operator, input shapes,
    attributes as text), shapes from ``infer_shape`` on the inputs' shapes. An independent count of
    what a forward pass runs."""
    import mxnet as mx

    names = [f"data{i}" for i in range(len(inputs))]
    symbol = model(*(mx.sym.var(n) for n in names))
    if isinstance(symbol, (list, tuple)):
        symbol = mx.sym.Group(list(symbol))
    internals = symbol.get_internals()
    _, shapes, _ = internals.infer_shape(**{n: x.shape for n, x in zip(names, inputs, strict=True)})
    by_output = dict(zip(internals.list_outputs(), shapes, strict=True))
    nodes = json.loads(symbol.tojson())["nodes"]
    registry = load_registry().by_name

    def shape_of(node_id: int, index: int) -> tuple[int, ...]:
        node = nodes[node_id]
        if node["op"] == "null":
            return tuple(by_output[node["name"]])
        key = f"{node['name']}_output" if index == 0 else f"{node['name']}_output{index}"
        return tuple(by_output.get(key) or by_output[f"{node['name']}_output{index}"])

    return [
        (
            registry[node["op"]].name,
            tuple(shape_of(i, k) for i, k, _ in node["inputs"]),
            dict(node.get("attrs", {})),
        )
        for node in nodes
        if node["op"] != "null"
    ]
