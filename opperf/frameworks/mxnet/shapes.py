"""The bytes an MXNet operator's outputs take, inferred from its inputs' shapes without running it.

A one-operator symbol over variables named like the inputs is built from the registered operator
(through the C API, so internal and ``_npi_`` operators work alike), and MXNet's own shape and type
inference (``infer_shape``, ``infer_type``) gives its outputs: ``broadcast_add`` of (30000, 1) and
(1, 30000) is known to make 3.4 GiB before anything is allocated.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import io
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from opperf.frameworks.mxnet.registry import NUMPY_NAMESPACES
from opperf.operators.info import OpInfo
from opperf.results.measurement import Alias, BenchmarkSpec, TensorSpec, is_given_array, is_tensor_list


def output_bytes(spec: BenchmarkSpec, info: OpInfo) -> int | None:
    """Bytes of the outputs of one forward pass of registered operator ``info`` on ``spec``'s inputs,
    or None where MXNet cannot infer them (shapes that depend on values, a sparse input)."""
    import mxnet as mx

    numpy_semantics = spec.namespace in NUMPY_NAMESPACES
    scope = (
        (mx.util.np_shape(True), mx.util.np_array(True))
        if numpy_semantics
        else (contextlib.nullcontext(), contextlib.nullcontext())
    )
    shapes: dict[str, tuple[int, ...]] = {}
    types: dict[str, Any] = {}
    try:
        # Partial inference warns (unknown dimensions are handled below), and a failed one prints its
        # arguments to standard output before raising: neither is the user's business.
        with scope[0], scope[1], warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            args, kwargs = _symbol_arguments(spec, info.var_args_key, shapes, types, numpy_semantics)
            symbol = _symbol_function(info.name)(*args, **kwargs)
            _, out_shapes, _ = symbol.infer_shape(**shapes)
            _, out_types, _ = symbol.infer_type(**types)
    except Exception:  # no inference for this call: the caller falls back to input size
        return None
    unknown = -1 if numpy_semantics else 0  # what an unknown dimension reads in each semantics
    if not out_shapes or any(shape is None or any(d <= unknown for d in shape) for shape in out_shapes):
        return None
    fallback = np.dtype(spec.options.dtype).itemsize
    return sum(
        math.prod(shape) * (np.dtype(kind).itemsize if kind is not None else fallback)
        for shape, kind in zip(out_shapes, out_types or [None] * len(out_shapes), strict=False)
    )


def _symbol_arguments(
    spec: BenchmarkSpec, var_args_key: str, shapes: dict, types: dict, numpy_semantics: bool
) -> tuple[list, dict]:
    """The symbol call's arguments, as the session's calls arrange them: variables for tensors (their
    shapes and types noted), attributes as given; tensor lists, and every tensor of an operator with a
    variable-length key, positional."""
    import mxnet as mx

    def variable(name: str, value) -> object:
        if isinstance(value, TensorSpec):
            if value.storage != "default":
                raise ValueError("sparse storage: no dense shape inference")
            shapes[name], types[name] = value.shape, np.dtype(value.dtype or spec.options.dtype)
        else:
            shapes[name], types[name] = tuple(value.shape), np.dtype(value.dtype)
        symbol = mx.sym.var(name)
        return symbol.as_np_ndarray() if numpy_semantics else symbol

    args: list = []
    kwargs: dict = {}
    for name, value in spec.inputs:
        if isinstance(value, Alias):
            raise ValueError("an aliased (in-place) input")
        if is_tensor_list(value):
            args.extend(variable(f"{name}{i}", v) for i, v in enumerate(value))
        elif isinstance(value, TensorSpec) or is_given_array(value):
            if var_args_key:
                args.append(variable(name, value))
            else:
                kwargs[name] = variable(name, value)
        else:
            kwargs[name] = value
    if args and var_args_key and var_args_key not in kwargs:
        kwargs[var_args_key] = len(args)
    return args, kwargs


@functools.cache
def _symbol_function(op: str) -> Callable[..., Any]:
    """The symbol front end of registered operator ``op``, made from its handle."""
    from mxnet.base import _LIB, OpHandle, c_str, check_call
    from mxnet.symbol.register import _make_symbol_function

    handle = OpHandle()
    check_call(_LIB.NNGetOpHandle(c_str(op), ctypes.byref(handle)))
    return _make_symbol_function(handle, op, op)
