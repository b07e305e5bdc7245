"""Calling a registered operator through something other than its generated Python front end, for
the operators whose front end cannot express a valid call.

Three ways, each a callable taking the rule's inputs as keywords:

- the imperative C API, for operators whose front end mangles an input or attribute;
- a one-operator graph run through ``mx.nd.CachedOp``, for operators that exist only inside graphs:
  control flow (``_foreach``, ``_while_loop``, ``_cond``), whose body is a subgraph, built from the
  public ``mx.sym.contrib`` entry points with a small fixed body; and MKL-DNN's fused nodes
  (``_sg_mkldnn_conv``, ...), made by MXNet's own graph pass (``optimize_for(backend="MKLDNN")``) from
  the layer they fuse. Arrays are the graph's inputs; attributes shape it, and each distinct set of
  attributes builds its graph once. MXNet's profiler records a control-flow operator as the operators
  its body runs, so the native figure of such an operator is the sum of its body's operators;
- ``Custom``, with opperf's small ``CustomOp`` (y = 2x) registered under the ``op_type`` the rule names.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from typing import Any

from opperf.frameworks.mxnet.arrays import is_array

_SUBGRAPH = "takes a subgraph: it runs inside a graph built through its mx.sym.contrib entry point"
_FUSED = "a node MXNet's MKL-DNN graph pass fuses from a layer: it runs inside the optimised graph"

# Operator -> why its front end cannot call it.
DIRECT_INVOCATION: dict[str, str] = {
    "BatchNorm_v1": "its moving mean and variance are auxiliary inputs the front end does not accept",
    "IdentityAttachKLSparseReg": "its moving average is an auxiliary input the front end does not accept",
    "_zeros_without_dtype": "the front end turns dtype into a name; the operator takes a type number",
    "_foreach": _SUBGRAPH,
    "_while_loop": _SUBGRAPH,
    "_cond": _SUBGRAPH,
    "_sg_mkldnn_conv": _FUSED,
    "_sg_mkldnn_fully_connected": _FUSED,
    "_sg_mkldnn_selfatt_qk": _FUSED,
    "_sg_mkldnn_selfatt_valatt": _FUSED,
    "Custom": "runs a Python CustomOp, which must be registered in the process first",
}


def direct_call(op_name: str) -> Callable[..., object]:
    """A callable taking the operator's tensors and attributes as keywords, tensors in input order."""
    return _CALLERS.get(op_name, _c_api_call)(op_name)


def _c_api_call(op_name: str) -> Callable[..., object]:
    """The operator invoked through MXNet's imperative C API."""
    from mxnet._ctypes.ndarray import _imperative_invoke
    from mxnet.base import _LIB, OpHandle, c_str, check_call

    handle = OpHandle()
    check_call(_LIB.NNGetOpHandle(c_str(op_name), ctypes.byref(handle)))

    def call(**inputs: object) -> object:
        arrays = [value for value in inputs.values() if is_array(value)]
        attributes = {key: str(value) for key, value in inputs.items() if not is_array(value)}
        keys, values = list(attributes), list(attributes.values())
        return _imperative_invoke(handle.value, arrays, keys, values, None, False, False)

    call.__name__ = op_name
    return call


# ---------------------------------------------------------------------------------------------------
# Graphs: each builder takes the input symbols by name and the attributes, and returns the outputs.


def _foreach(inputs: dict, **_: object):
    """A recurrent loop over the first axis of ``data``: state = tanh(x + state)."""
    import mxnet as mx

    def body(x, states):
        state = mx.sym.tanh(x + states[0])
        return state, [state]

    outputs, states = mx.sym.contrib.foreach(body, inputs["data"], [inputs["state"]])
    return mx.sym.Group([outputs, *states])


def _while_loop(inputs: dict, steps: int, **_: object):
    """``steps`` iterations of state = tanh(state + data), counted by a loop variable from 0."""
    import mxnet as mx

    data = inputs["data"]

    def step(counter, state):
        state = mx.sym.tanh(state + data)
        return [state], [counter + 1, state]

    outputs, states = mx.sym.contrib.while_loop(
        cond=lambda counter, state: counter < steps,
        func=step,
        loop_vars=[inputs["counter"], inputs["state"]],
        max_iterations=steps,
    )
    return mx.sym.Group([*outputs, *states])


def _cond(inputs: dict, **_: object):
    """tanh(data) when its sum is positive, else sigmoid(data): the predicate is computed in the graph."""
    import mxnet as mx

    data = inputs["data"]
    return mx.sym.contrib.cond(mx.sym.sum(data) > 0, lambda: mx.sym.tanh(data), lambda: mx.sym.sigmoid(data))


def _fused(layer: Callable[..., Any]) -> Callable[..., object]:
    """The graph MXNet's MKL-DNN pass makes of ``layer``: one fused ``_sg_mkldnn_*`` node."""

    def build(inputs: dict, **attributes: object):
        return layer(inputs, **attributes).optimize_for("MKLDNN")

    return build


def _convolution_relu(inputs: dict, **attributes: object):
    import mxnet as mx

    return mx.sym.Activation(mx.sym.Convolution(**inputs, **attributes), act_type="relu")


def _fully_connected_relu(inputs: dict, **attributes: object):
    import mxnet as mx

    return mx.sym.Activation(mx.sym.FullyConnected(**inputs, **attributes), act_type="relu")


def _selfatt_qk(inputs: dict, **attributes: object):
    import mxnet as mx

    return mx.sym.contrib.interleaved_matmul_selfatt_qk(**inputs, **attributes)


def _selfatt_valatt(inputs: dict, **attributes: object):
    import mxnet as mx

    return mx.sym.contrib.interleaved_matmul_selfatt_valatt(**inputs, **attributes)


GRAPH_BUILDERS: dict[str, Callable[..., object]] = {
    "_foreach": _foreach,
    "_while_loop": _while_loop,
    "_cond": _cond,
    "_sg_mkldnn_conv": _fused(_convolution_relu),
    "_sg_mkldnn_fully_connected": _fused(_fully_connected_relu),
    "_sg_mkldnn_selfatt_qk": _fused(_selfatt_qk),
    "_sg_mkldnn_selfatt_valatt": _fused(_selfatt_valatt),
}


# MXNet gives its fused MKL-DNN nodes zero gradients (they are made for inference), so a backward pass
# through them would time the filling of zeros: recording them for autograd is refused instead.
ZERO_GRADIENT = frozenset(name for name in GRAPH_BUILDERS if name.startswith("_sg_mkldnn_"))


def graph_symbol(op_name: str, input_names: tuple[str, ...], attributes: tuple[tuple[str, object], ...]):
    """The graph that runs ``op_name``, over variables named as the rule's tensors."""
    import mxnet as mx

    variables = {name: mx.sym.var(name) for name in input_names}
    return GRAPH_BUILDERS[op_name](variables, **dict(attributes))


def _graph_call(op_name: str) -> Callable[..., object]:
    @functools.cache
    def compiled(input_names: tuple[str, ...], attributes: tuple[tuple[str, object], ...]):
        import mxnet as mx

        symbol = graph_symbol(op_name, input_names, attributes)
        return mx.nd.CachedOp(symbol), tuple(symbol.list_inputs())

    def call(**inputs: object) -> object:
        from mxnet import autograd

        if op_name in ZERO_GRADIENT and autograd.is_recording():
            raise RuntimeError(
                f"{op_name} is not differentiable: MXNet gives its fused inference nodes zero gradients"
            )
        arrays = {name: value for name, value in inputs.items() if is_array(value)}
        attributes = tuple((name, value) for name, value in inputs.items() if name not in arrays)
        cached, order = compiled(tuple(arrays), attributes)
        return cached(*(arrays[name] for name in order))

    call.__name__ = op_name
    return call


# ---------------------------------------------------------------------------------------------------
# Custom: a CustomOp registered on first use (registering it at import would be a side effect).


@functools.cache
def _register_custom_op(op_type: str) -> None:
    """Register opperf's CustomOp, y = 2x with its gradient, computed with NDArray operators in Python
    as custom operators are, under the name ``op_type``."""
    import mxnet as mx

    class Scale(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] * 2)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], out_grad[0] * 2)

    @mx.operator.register(op_type)
    class ScaleProp(mx.operator.CustomOpProp):
        def __init__(self) -> None:
            super().__init__(need_top_grad=True)

        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return Scale()


def _custom_call(op_name: str) -> Callable[..., object]:
    def call(**inputs: object) -> object:
        import mxnet as mx

        _register_custom_op(inputs["op_type"])
        return mx.nd.Custom(inputs["data"], op_type=inputs["op_type"])

    call.__name__ = op_name
    return call


_CALLERS: dict[str, Callable[[str], Callable[..., object]]] = {
    **{name: _graph_call for name in GRAPH_BUILDERS},
    "Custom": _custom_call,
}
