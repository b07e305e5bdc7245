"""MXNet's operator registry, read once through its C API into immutable ``OpInfo`` records.

Every registered name is accounted for: forward operators become one record per canonical name with
their aliases attached; ``_backward_*`` operators only mark their forward operator as differentiable.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass, replace

from opperf.frameworks.mxnet.categories import categorize
from opperf.operators.info import OpInfo, parse_argument

# Registry name prefix -> (namespace the Python API shows it under, module holding its function,
# whether the prefix is stripped from the function name). Order matters: the first match wins.
PREFIX_EXPOSURE: tuple[tuple[str, str, str, bool], ...] = (
    ("_contrib_", "mx.nd.contrib", "mxnet.ndarray.contrib", True),
    ("_linalg_", "mx.nd.linalg", "mxnet.ndarray.linalg", True),
    ("_sparse_", "mx.nd.sparse", "mxnet.ndarray.sparse", True),
    ("_image_", "mx.nd.image", "mxnet.ndarray.image", True),
    ("_random_", "mx.nd.random", "mxnet.ndarray._internal", False),
    ("_npi_", "mx.np", "mxnet.ndarray.numpy._internal", True),
    ("_np_", "mx.np", "mxnet.ndarray.numpy._op", True),
    ("_npx_", "mx.npx", "mxnet.ndarray.numpy_extension", True),
    ("_", "mx.nd._internal", "mxnet.ndarray._internal", False),
    ("", "mx.nd", "mxnet.ndarray.op", False),
)

NUMPY_NAMESPACES = frozenset({"mx.np", "mx.npx"})

# Module of a generated operator front end -> the registry prefixes its function names drop.
GENERATED_MODULE_PREFIXES: dict[str, tuple[str, ...]] = {
    "ndarray": ("",),
    "mxnet.ndarray.contrib": ("_contrib_",),
    "mxnet.ndarray.linalg": ("_linalg_",),
    "mxnet.ndarray.sparse": ("_sparse_",),
    "mxnet.ndarray.image": ("_image_",),
    "mxnet.ndarray.random": ("_random_", "_sample_"),
    "mxnet.numpy": ("_np_",),
    "mxnet.ndarray.numpy": ("_np_",),
    "mxnet.ndarray.numpy._op": ("_np_",),
    "mxnet.ndarray.numpy._internal": ("_npi_",),
    "mxnet.numpy_extension": ("_npx_",),
    "mxnet.ndarray.numpy_extension": ("_npx_",),
}


@dataclass(frozen=True)
class Registry:
    """All registered names and the distinct forward operators they resolve to."""

    registered_names: tuple[str, ...]
    operators: tuple[OpInfo, ...]

    @functools.cached_property
    def by_name(self) -> dict[str, OpInfo]:
        """Every name (canonical and alias) to its operator; computed once, the registry being immutable."""
        return {name: op for op in self.operators for name in op.all_names}


def exposure(name: str) -> tuple[str, str, str]:
    """(namespace, module, function name) under which a registered name is callable."""
    for prefix, namespace, module, strip in PREFIX_EXPOSURE:
        if name.startswith(prefix):
            return namespace, module, name[len(prefix) :] if strip else name
    raise AssertionError("the empty prefix matches every name")


def is_backward_name(name: str) -> bool:
    """Backward operators: ``_backward_relu``, ``_npi_backward_ediff1d``, ``_split_v2_backward``."""
    return "_backward_" in name or name.endswith("_backward")


def backward_target(name: str) -> str:
    """The forward operator a backward operator's name points at: ``_backward_relu`` -> ``relu``."""
    if "_backward_" in name:
        return name.split("_backward_", 1)[1]
    return name[: -len("_backward")]


@functools.cache
def load_registry() -> Registry:
    """Enumerate MXNet's registry (one pass per process; the result is immutable)."""
    names = _list_op_names()
    canonical_of = {name: _canonical_name(name) for name in names}
    backward_targets = {
        canonical_of.get(backward_target(name), backward_target(name))
        for name in names
        if is_backward_name(name)
    }
    aliases: dict[str, list[str]] = {}
    for name in names:
        if not is_backward_name(name):
            aliases.setdefault(canonical_of[name], []).append(name)
    operators = []
    for canonical, all_names in sorted(aliases.items()):
        arguments, var_args_key = _arguments(canonical)
        info = OpInfo(
            name=canonical,
            aliases=tuple(sorted(n for n in all_names if n != canonical)),
            namespaces=tuple(dict.fromkeys(exposure(n)[0] for n in [canonical, *sorted(all_names)])),
            function_name=exposure(canonical)[2],
            arguments=arguments,
            has_backward=bool(set(all_names) & backward_targets),
            var_args_key=var_args_key,
        )
        operators.append(replace(info, category=categorize(info)))
    return Registry(registered_names=tuple(sorted(names)), operators=tuple(operators))


def _lib():
    from mxnet.base import _LIB

    return _LIB


def _list_op_names() -> list[str]:
    from mxnet.base import check_call, py_str

    names = ctypes.POINTER(ctypes.c_char_p)()
    size = ctypes.c_uint()
    check_call(_lib().MXListAllOpNames(ctypes.byref(size), ctypes.byref(names)))
    return [py_str(names[i]) for i in range(size.value)]


def _symbol_info(name: str):
    from mxnet.base import OpHandle, c_str, check_call, mx_uint

    handle = OpHandle()
    check_call(_lib().NNGetOpHandle(c_str(name), ctypes.byref(handle)))
    real_name, description = ctypes.c_char_p(), ctypes.c_char_p()
    num_args = mx_uint()
    arg_names = ctypes.POINTER(ctypes.c_char_p)()
    arg_types = ctypes.POINTER(ctypes.c_char_p)()
    arg_descriptions = ctypes.POINTER(ctypes.c_char_p)()
    var_args_key, return_type = ctypes.c_char_p(), ctypes.c_char_p()
    check_call(
        _lib().MXSymbolGetAtomicSymbolInfo(
            handle,
            ctypes.byref(real_name),
            ctypes.byref(description),
            ctypes.byref(num_args),
            ctypes.byref(arg_names),
            ctypes.byref(arg_types),
            ctypes.byref(arg_descriptions),
            ctypes.byref(var_args_key),
            ctypes.byref(return_type),
        )
    )
    return real_name, num_args, arg_names, arg_types, var_args_key


def _canonical_name(name: str) -> str:
    from mxnet.base import py_str

    real_name = _symbol_info(name)[0]
    return py_str(real_name.value) if real_name.value else name


def _arguments(name: str):
    from mxnet.base import py_str

    _, num_args, arg_names, arg_types, var_args_key = _symbol_info(name)
    arguments = tuple(
        parse_argument(py_str(arg_names[i]), py_str(arg_types[i])) for i in range(num_args.value)
    )
    return arguments, py_str(var_args_key.value) if var_args_key.value else ""


@functools.lru_cache(maxsize=4096)
def accepted_inputs(name: str, attributes: tuple[tuple[str, str], ...]) -> tuple[str, ...] | None:
    """The tensor inputs ``name`` takes with these attributes, as MXNet's symbol API lists them.

    Which inputs an operator has can depend on its attributes (a bias unless ``no_bias``, a length
    tensor with ``use_length``); composing a symbol resolves that. None when the attributes do not
    form a valid symbol.
    """
    from mxnet.base import MXNetError, OpHandle, SymbolHandle, c_str, c_str_array, check_call, mx_uint
    from mxnet.symbol import Symbol

    handle = OpHandle()
    check_call(_lib().NNGetOpHandle(c_str(name), ctypes.byref(handle)))
    keys = [key for key, _ in attributes]
    values = [value for _, value in attributes]
    symbol_handle = SymbolHandle()
    try:
        check_call(
            _lib().MXSymbolCreateAtomicSymbol(
                handle,
                mx_uint(len(keys)),
                c_str_array(keys),
                c_str_array(values),
                ctypes.byref(symbol_handle),
            )
        )
        symbol = Symbol(symbol_handle)
        symbol._compose(name="op")
        names = [*symbol.list_arguments(), *symbol.list_auxiliary_states()]
    except MXNetError:
        return None
    return tuple(n[len("op_") :] for n in names if n.startswith("op_"))
