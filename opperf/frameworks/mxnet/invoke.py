"""Calling a registered operator through MXNet's imperative C API, for the few operators whose
generated Python front end cannot express a valid call."""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from opperf.frameworks.mxnet.arrays import is_array

# Operator -> why its front end cannot call it.
DIRECT_INVOCATION: dict[str, str] = {
    "BatchNorm_v1": "its moving mean and variance are auxiliary inputs the front end does not accept",
    "IdentityAttachKLSparseReg": "its moving average is an auxiliary input the front end does not accept",
    "_zeros_without_dtype": "the front end turns dtype into a name; the operator takes a type number",
}


def direct_call(op_name: str) -> Callable[..., object]:
    """A callable taking the operator's tensors and attributes as keywords, tensors in input order."""
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
