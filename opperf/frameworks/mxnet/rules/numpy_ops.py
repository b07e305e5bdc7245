"""Hand-written input rules for ``mx.np``/``mx.npx`` operators and internal operators whose inputs
cannot be derived from their signatures (integer-only arithmetic, square matrices, index arguments)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opperf.frameworks.mxnet.rules.layers import Configurations, T
from opperf.operators.rules.profiles import LayerSizes
from opperf.results.measurement import Alias, Structure


def _integers(*names: str) -> Callable[[LayerSizes], Configurations]:
    """Integer tensors (bitwise and number-theoretic operators accept no floats)."""
    return lambda s: [{name: T((s.features * 4, s.features), dtype="int32") for name in names}]


# Random samplers with scalar parameters, which MXNet would broadcast if given as tensors instead.
SAMPLER_PARAMETERS: dict[str, dict[str, Any]] = {
    "_npi_bernoulli": {"prob": 0.5, "logit": 0.5, "is_logit": False},
    "_npi_exponential": {"scale": 1.0},
    "_npi_rayleigh": {"scale": 1.0},
    **{
        op: {"loc": 0.5, "scale": 0.5}
        for op in ("_npi_gumbel", "_npi_logistic", "_npi_normal", "_npi_normal_n")
    },
    **{op: {"low": 0.0, "high": 5.0} for op in ("_npi_uniform", "_npi_uniform_n")},
}


def _sampler(parameters: dict[str, Any]) -> Callable[[LayerSizes], Configurations]:
    """A sampler drawing a (4 x features, features) array: without ``size`` it draws one value."""
    return lambda s: [{**parameters, "size": (s.features * 4, s.features)}]


def _window(s: LayerSizes) -> Configurations:
    return [{"M": s.features * 16}]


def _square(*names: str, structure: Structure | None = None) -> Callable[[LayerSizes], Configurations]:
    def rule(s: LayerSizes) -> Configurations:
        n = s.features // 2 or 1
        shape = (s.batch // 4 or 1, n, n)
        return [{name: T(shape, structure=structure if i == 0 else None) for i, name in enumerate(names)}]

    return rule


def _matrix_product(a: str, b: str, **extra: object) -> Callable[[LayerSizes], Configurations]:
    return lambda s: [{a: T((s.features * 2, s.features)), b: T((s.features, s.features)), **extra}]


def _tensor_inverse(s: LayerSizes) -> Configurations:
    n = s.features // 16 or 1  # a 256 x 256 matrix in the standard profile
    return [{"a": T((n, n, n * n), structure=None)}]


def _tensor_solve(s: LayerSizes) -> Configurations:
    n = s.features // 16 or 1
    return [{"a": T((n * n, n, n), structure=None), "b": T((n * n,))}]


def _matrix(s: LayerSizes, name: str = "data", **extra: object) -> Configurations:
    return [{name: T((s.features, s.features)), **extra}]


def _split(indices_axis: int) -> Callable[[LayerSizes], Configurations]:
    def rule(s: LayerSizes) -> Configurations:
        shape = (s.batch, s.features, s.features // 4 or 1)
        return [{"data": T(shape), "indices": (0, shape[indices_axis] // 2), "axis": indices_axis}]

    return rule


def _einsum(s: LayerSizes) -> Configurations:
    n = s.features
    return [{"data": (T((n, n)), T((n, n))), "subscripts": "ij,jk->ik"}]


def _gamma_sampler(s: LayerSizes) -> Configurations:
    return [{"shape": 2.0, "scale": 1.0, "size": (s.features, s.features)}]


def _moveaxis(s: LayerSizes) -> Configurations:
    return [{"a": T((s.batch, s.features, s.channels)), "source": (0,), "destination": (2,)}]


def _roll(s: LayerSizes) -> Configurations:
    return _matrix(s, shift=(3,), axis=(0,))


def _bincount(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features * 64,), dtype="int64", low=0, high=s.features, integral=True)}]


def _percentile(s: LayerSizes) -> Configurations:
    return [{"a": T((s.features * 4, s.features)), "q": T((3,), low=10, high=90)}]


def _polyval(s: LayerSizes) -> Configurations:
    return [{"p": T((8,)), "x": T((s.features * 64,))}]


def _rot90(s: LayerSizes) -> Configurations:
    return _matrix(s, k=1, axes=(0, 1))


def _multinomial(s: LayerSizes) -> Configurations:
    return [{"n": 10, "pvals": (0.1, 0.2, 0.3, 0.4), "size": (s.features,)}]


def _broadcast_to(s: LayerSizes) -> Configurations:
    return [{"array": T((1, s.features)), "shape": (s.features * 4, s.features)}]


def _diag_indices_from(s: LayerSizes) -> Configurations:
    return _matrix(s)


def _boolean_mask_assign(value_is_tensor: bool) -> Callable[[LayerSizes], Configurations]:
    def rule(s: LayerSizes) -> Configurations:
        shape = (s.features * 4, s.features)
        config: dict[str, Any] = {
            "data": T(shape),
            "mask": T(shape, dtype="bool", low=0, high=2, integral=True),
        }
        config["value"] = T((1,)) if value_is_tensor else 0.5
        config["start_axis"] = 0
        config["out"] = Alias("data")  # the assignment happens in place
        return [config]

    return rule


def _insert_tensor(s: LayerSizes) -> Configurations:
    rows = s.features * 4
    return [
        {
            "arr": T((rows, s.features)),
            "values": T((s.batch, s.features)),
            "obj": T((s.batch,), dtype="int64", low=0, high=rows, integral=True),
            "axis": 0,
        }
    ]


def _insert_scalar(s: LayerSizes) -> Configurations:
    return [{"arr": T((s.features * 4, s.features)), "values": T((1, s.features)), "int_ind": 3, "axis": 0}]


def _insert_slice(s: LayerSizes) -> Configurations:
    return [
        {
            "arr": T((s.features * 4, s.features)),
            "values": T((1, s.features)),
            "start": 0,
            "stop": 8,
            "step": 2,
            "axis": 0,
        }
    ]


def _constraint_check(s: LayerSizes) -> Configurations:
    return [{"input": T((s.features,), dtype="bool", low=1, high=2, integral=True), "msg": "check"}]


def _pad(s: LayerSizes) -> Configurations:
    return [{"data": T((s.features, s.features)), "pad_width": ((1, 1), (2, 2)), "mode": "constant"}]


def _choice(s: LayerSizes) -> Configurations:
    return [{"a": s.features * 16, "size": (s.features,)}]


NUMPY_RULES: dict[str, Callable[[LayerSizes], Configurations]] = {
    **{
        op: _integers("lhs", "rhs")
        for op in ("_npi_bitwise_and", "_npi_bitwise_or", "_npi_bitwise_xor", "_npi_lcm")
    },
    **{
        op: (lambda s: [{"data": T((s.features * 4, s.features), dtype="int32"), "scalar": 3}])
        for op in (
            "_npi_bitwise_and_scalar",
            "_npi_bitwise_or_scalar",
            "_npi_bitwise_xor_scalar",
            "_npi_lcm_scalar",
        )
    },
    "_npi_bitwise_not": _integers("x"),
    **{op: _sampler(parameters) for op, parameters in SAMPLER_PARAMETERS.items()},
    "_npi_blackman": _window,
    "_npi_hamming": _window,
    "_npi_hanning": _window,
    "_npi_cholesky": _square("A", structure="spd"),
    "_npi_eig": _square("A", structure="spd"),
    "_npi_eigvals": _square("A", structure="spd"),
    "_npi_eigh": _square("A", structure="spd"),
    "_npi_eigvalsh": _square("A", structure="spd"),
    "_npi_solve": _square("A", "B", structure="spd"),
    "_npi_pinv": lambda s: [{**_square("A")(s)[0], "rcond": T((1,), low=1e-6, high=2e-6)}],
    "_npi_tensorinv": _tensor_inverse,
    "_npi_tensorsolve": _tensor_solve,
    "_npi_matmul": _matrix_product("a", "b"),
    "_np_dot": _matrix_product("a", "b"),
    "_npi_tensordot_int_axes": _matrix_product("a", "b", axes=1),
    "_npi_diag_indices_from": _diag_indices_from,
    "_npi_dsplit": _split(2),
    "_npi_hsplit": _split(1),
    "_npi_einsum": _einsum,
    "_npi_gamma": _gamma_sampler,
    "_np_moveaxis": _moveaxis,
    "_np_roll": _roll,
    "_npi_bincount": _bincount,
    "_npi_percentile": _percentile,
    "_npi_polyval": _polyval,
    "_npi_rot90": _rot90,
    "_npi_multinomial": _multinomial,
    "_npi_broadcast_to": _broadcast_to,
    "_npi_boolean_mask_assign_scalar": _boolean_mask_assign(False),
    "_npi_boolean_mask_assign_tensor": _boolean_mask_assign(True),
    "_npi_insert_tensor": _insert_tensor,
    "_npi_insert_scalar": _insert_scalar,
    "_npi_insert_slice": _insert_slice,
    "_npx_constraint_check": _constraint_check,
    "_npi_pad": _pad,
    "_npi_choice": _choice,
}
