"""Per-operator overrides: values that must agree with the operator's other inputs, each mapping the
configuration's context to the arguments it replaces or adds (``derived.derive`` applies them)."""

from __future__ import annotations

from opperf.frameworks.jax.rules.derived import INDEX_DTYPE, Override, T, index, numel, rows
from opperf.operators.rules.generic import RuleContext
from opperf.results.measurement import InputValue, TensorSpec

KRONECKER_SHARE = 8
"""A Kronecker product's factors are a ``side // 8`` square each (at most ``KRONECKER_SIDE``): a (1024,
1024) result in the standard profile."""
KRONECKER_SIDE = 64
"""The largest factor of a Kronecker product: its result is the square of the factors' elements, and a
drawn side of 2,048 would make factors of 256 and a 17 GB result."""
OUTER_SCALE = 4
"""The vectors of ``outer`` are ``4 * side`` long: a (1024, 1024) result in the standard profile."""
COEFFICIENTS = 8
"""Polynomial coefficient vectors."""
VECTOR = 1024
"""The length of vectors whose result is quadratic in it (``outer``, ``vander``, ``diagflat``)."""


def side(c: RuleContext) -> int:
    """A matrix product's side: its context (category ``gemm``) is one square of the profile's
    ``features``, 256 in the standard profile and drawn under ``--shapes fuzz``."""
    return c.shape[0]


def _square(c: RuleContext) -> TensorSpec:
    return T((side(c),) * 2)


def _vector(c: RuleContext) -> TensorSpec:
    return T((numel(c),))


def _integers(*names: str) -> Override:
    """Integer-only operators (bitwise, shifts, gcd): int32 arrays in [1, 10) of the pair's shapes."""
    return lambda c: {name: T(c.pair[i % 2], dtype=INDEX_DTYPE) for i, name in enumerate(names)}


def _typed(dtype: str, *names: str) -> Override:
    return lambda c: {name: T(c.shape, dtype=dtype) for name in names}


def _matrices(*names: str) -> Override:
    return lambda c: {name: _square(c) for name in names}


def _vectors(*names: str, length: int = VECTOR) -> Override:
    return lambda c: {name: T((length,)) for name in names}


def _polynomials(*names: str) -> Override:
    return lambda c: {name: T((COEFFICIENTS,)) for name in names}


def _given(**values: InputValue) -> Override:
    return lambda c: dict(values)


def _sorted_vector(c: RuleContext) -> TensorSpec:
    return T((rows(c),), low=0, high=4 * rows(c), structure="sorted_unique", dtype="float32")


def _transposed(c: RuleContext) -> TensorSpec:
    """(columns, rows): covariance of the configuration's columns as variables (its rows would give a
    (10000, 10000) result)."""
    return T(tuple(reversed(c.shape)))


def _take_along(c: RuleContext) -> dict[str, InputValue]:
    return {"arr": T(c.shape), "indices": index(c.shape, rows(c)), "axis": 0}


def _half(c: RuleContext) -> int:
    return max(1, rows(c) // 2)


def _trailing(c: RuleContext) -> tuple[int, ...]:
    return c.shape[1:]


def _slice_sizes(c: RuleContext) -> tuple[int, ...]:
    return (_half(c), *_trailing(c))


_GATHER_NUMBERS = (("offset_dims", (1,)), ("collapsed_slice_dims", (0,)), ("start_index_map", (0,)))
_SCATTER_NUMBERS = (
    ("update_window_dims", (1,)),
    ("inserted_window_dims", (0,)),
    ("scatter_dims_to_operand_dims", (0,)),
)


def _matrix_of(c: RuleContext) -> tuple[int, ...]:
    return c.shape if len(c.shape) == 2 else (rows(c), 1)


def _gather(c: RuleContext) -> dict[str, InputValue]:
    """Rows of a matrix gathered by row index: ``x[indices]`` as ``lax.gather`` takes it."""
    matrix = c.shape if len(c.shape) == 2 else (rows(c), 1)
    return {
        "operand": T(matrix),
        "start_indices": index((rows(c), 1), rows(c)),
        "dimension_numbers": _GATHER_NUMBERS,
        "slice_sizes": (1, matrix[1]),
    }


def _scatter(function: str | None = None) -> Override:
    """Rows written at row indices: ``x.at[indices].set(updates)`` as ``lax.scatter*`` take it."""

    def rule(c: RuleContext) -> dict[str, InputValue]:
        matrix = c.shape if len(c.shape) == 2 else (rows(c), 1)
        given: dict[str, InputValue] = {
            "operand": T(matrix),
            "scatter_indices": index((rows(c), 1), rows(c)),
            "dimension_numbers": _SCATTER_NUMBERS,
        }
        if function is None:
            given["updates"] = T(matrix)
        else:
            given["func"] = function
        return given

    return rule


def _spread(inputs: int) -> Override:
    """A ufunc written as ``f(*args)`` (``jnp.logical_and`` in JAX 0.4): ``inputs`` arrays in ``args``;
    where the signature names its inputs (a ufunc object, JAX 0.5 and later), the names rule."""

    def rule(c: RuleContext) -> dict[str, InputValue]:
        if c.op.argument("args") is None:
            return {}
        return {"args": tuple(T(c.pair[i % 2]) for i in range(inputs))}

    return rule


def _meshgrid(c: RuleContext) -> dict[str, InputValue]:
    side = min(rows(c), VECTOR)
    return {"xi": (T((side,)), T((side,)))}


def _ragged_dot(c: RuleContext) -> dict[str, InputValue]:
    """Four groups of a quarter of the rows each (the group sizes sum to the rows)."""
    group = max(1, side(c) // 4)
    return {
        "lhs": T((4 * group, side(c))),
        "rhs": T((4, side(c), side(c))),
        "group_sizes": T((4,), dtype=INDEX_DTYPE, low=group, high=group + 1, integral=True),
    }


def _einsum(c: RuleContext) -> dict[str, InputValue]:
    return {"subscripts": "ij,jk->ik", "operands": (_square(c), _square(c))}


_INTEGER_BINARY = (
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "left_shift",
    "right_shift", "gcd", "lcm",
)  # fmt: skip
_INTEGER_UNARY = ("bitwise_not", "invert", "bitwise_invert", "bitwise_count")
_LAX_INTEGER_BINARY = (
    "lax.shift_left",
    "lax.shift_right_arithmetic",
    "lax.shift_right_logical",
    "lax.bitwise_and",
    "lax.bitwise_or",
    "lax.bitwise_xor",
    "lax.and_",
    "lax.or_",
    "lax.xor",
    "lax.mulhi",
)
_LAX_INTEGER_UNARY = ("lax.population_count", "lax.clz", "lax.not_", "lax.bitwise_not")
_SERIES = ("special.exp1", "special.expi")
"""Special functions evaluated by a series per element (about 3 s a call on a (1024, 1024) array;
Hurwitz's zeta takes 500 MB of terms): measured on a vector of the configuration's rows."""
_TOP_K = ("lax.approx_max_k", "lax.approx_min_k", "lax.top_k")
_LOGICAL_BINARY = ("logical_and", "logical_or", "logical_xor")
_SET_OPERATIONS = ("setdiff1d", "setxor1d", "intersect1d", "union1d")
_PERCENTILES = ("percentile", "nanpercentile", "quantile", "nanquantile")
_POLYNOMIALS = ("poly", "polyder", "polyint", "roots", "trim_zeros")
_POLYNOMIAL_PAIRS = ("polyadd", "polysub", "polymul", "polydiv")


def _spherical_harmonics(c: RuleContext) -> dict[str, InputValue]:
    return {
        "m": T((rows(c),), dtype=INDEX_DTYPE, low=0, high=1, integral=True),
        "n": T((rows(c),), dtype=INDEX_DTYPE, low=1, high=2, integral=True),
        "theta": T((rows(c),)),
        "phi": T((rows(c),)),
        "n_max": 1,
    }


def _overrides() -> dict[str, Override]:
    table: dict[str, Override] = {
        **{name: _integers("x1", "x2") for name in _INTEGER_BINARY},
        **{name: _integers("x") for name in _INTEGER_UNARY},
        **{name: _integers("x", "y") for name in _LAX_INTEGER_BINARY},
        **{name: _integers("x") for name in _LAX_INTEGER_UNARY},
        **{name: _given(q=0.5) for name in _PERCENTILES},
        "poly": lambda c: {"seq_of_zeros": T((COEFFICIENTS,))},
        "polyder": _polynomials("p"),
        "polyint": _polynomials("p"),
        "roots": _given(p=T((COEFFICIENTS,))),
        "trim_zeros": lambda c: {"filt": _vector(c)},
        **{name: _polynomials("a1", "a2") for name in _POLYNOMIAL_PAIRS},
        "polydiv": _polynomials("u", "v"),
        "polyval": lambda c: {"p": T((COEFFICIENTS,)), "x": T(c.shape)},
        "polyfit": lambda c: {"x": T((rows(c),)), "y": T((rows(c),)), "deg": 2},
        **{name: _matrices("a", "b") for name in ("matmul", "dot", "inner", "tensordot")},
        "vecdot": _matrices("x1", "x2"),
        "lax.scaled_dot": _matrices("lhs", "rhs"),  # JAX 0.7 and later; unscaled
        "nn.scaled_matmul": lambda c: {  # JAX 0.6 and later: blocks of 32 scaled
            "lhs": T((8, side(c), side(c))), "rhs": T((8, side(c), side(c))),
            "lhs_scales": T((8, side(c), side(c) // 32)), "rhs_scales": T((8, side(c), side(c) // 32)),
        },
        "lax.random_gamma_grad": lambda c: {"a": T(c.pair[0]), "x": T(c.pair[1])},  # (*args) in JAX 0.10
        "matvec": lambda c: {"x1": T(c.shape), "x2": T((c.shape[-1],))},  # JAX 0.6 and later
        "vecmat": lambda c: {"x1": T((rows(c),)), "x2": T(c.shape)},
        "vdot": _matrices("a", "b"),
        "kron": lambda c: {name: T((min(side(c) // KRONECKER_SHARE, KRONECKER_SIDE),) * 2) for name in "ab"},
        "outer": lambda c: {name: T((OUTER_SCALE * side(c),)) for name in ("a", "b")},
        "cross": lambda c: {"a": T((rows(c), 3)), "b": T((rows(c), 3))},
        "diagflat": _vectors("v"),
        "vander": _vectors("x"),
        "cov": lambda c: {"m": _transposed(c)},
        "corrcoef": lambda c: {"x": _transposed(c)},
        "convolve": lambda c: {"a": _vector(c), "v": T((16,))},
        "correlate": lambda c: {"a": _vector(c), "v": T((16,))},
        "einsum": _einsum,
        "lax.xeinsum": lambda c: {"spec": "ij,jk->ik", "operands": (_square(c), _square(c))},
        "lax.dot_general": lambda c: {
            "lhs": _square(c), "rhs": _square(c), "dimension_numbers": (((1,), (0,)), ((), ())),
        },
        "lax.dot": _matrices("lhs", "rhs"),
        "lax.batch_matmul": lambda c: {"lhs": T((8, side(c), side(c))), "rhs": T((8, side(c), side(c)))},
        "lax.ragged_dot": _ragged_dot,
        "meshgrid": _meshgrid,
        **{name: _spread(2) for name in _LOGICAL_BINARY},
        "logical_not": _spread(1),
        "argpartition": _given(kth=0),
        "partition": _given(kth=0),
        "clip": lambda c: {"x": T(c.shape), "min": 0.2, "max": 0.8},
        "cumulative_sum": _given(axis=0),
        "cumulative_prod": _given(axis=0),
        "diag_indices_from": lambda c: {"arr": T((min(rows(c), VECTOR),) * 2)},
        "tril_indices_from": lambda c: {"arr": T((min(rows(c), VECTOR),) * 2)},
        "triu_indices_from": lambda c: {"arr": T((min(rows(c), VECTOR),) * 2)},
        **{name: lambda c: {"element": T(c.shape), "test_elements": T((16,))} for name in ("isin",)},
        **{name: lambda c: {"ar1": T(c.shape), "ar2": T((16,))} for name in _SET_OPERATIONS},
        "mask_indices": lambda c: {"args": (), "n": min(rows(c), VECTOR), "mask_func": "triu"},
        "repeat": _given(repeats=2),
        "reshape": _given(shape=(-1,)),
        "roll": _given(shift=1),
        "unstack": _given(axis=-1),
        "ix_": lambda c: {"args": (T((min(rows(c), VECTOR),), dtype=INDEX_DTYPE),) * 2},
        "nn.one_hot": lambda c: {"x": index((rows(c),), 16), "num_classes": 16},
        "take_along_axis": _take_along,
        "put_along_axis": lambda c: {  # JAX 0.5 and later; in place is refused
            **_take_along(c), "values": T(c.shape), "inplace": False,
        },
        "lax.unstack": _given(axis=-1),  # JAX 0.6 and later; along the rows, 10,000 outputs
        "lax.split": lambda c: {"sizes": (_half(c), rows(c) - _half(c)), "axis": 0},
        "take": lambda c: {"a": T(c.shape), "indices": index((rows(c),), numel(c))},
        "choose": lambda c: {"a": index(c.shape, 3), "choices": (T(c.shape),) * 3},
        "put": lambda c: {"ind": index((rows(c),), numel(c)), "v": T((rows(c),)), "inplace": False},
        "place": lambda c: {"mask": T(c.shape, dtype="bool"), "vals": T((8,)), "inplace": False},
        "fill_diagonal": lambda c: {"val": 1.5, "inplace": False},
        "compress": lambda c: {"condition": T((rows(c),), dtype="bool"), "a": T(c.shape), "axis": 0},
        "extract": lambda c: {"condition": T(c.shape, dtype="bool"), "arr": T(c.shape)},
        "searchsorted": lambda c: {"a": _sorted_vector(c), "v": T(c.shape)},
        "digitize": lambda c: {
            "x": T(c.shape, low=0, high=16), "bins": T((16,), low=0, high=16, structure="sorted_unique"),
        },
        "bincount": lambda c: {"x": index((numel(c),), 1024), "length": 1024},
        "interp": lambda c: {"x": T(c.shape), "xp": _sorted_vector(c), "fp": T((rows(c),))},
        "histogram2d": lambda c: {"x": T((numel(c),)), "y": T((numel(c),))},
        "histogramdd": lambda c: {"sample": T((rows(c), 2))},
        "where": lambda c: {"condition": T(c.shape, dtype="bool"), "x": T(c.shape), "y": T(c.shape)},
        "select": lambda c: {
            "condlist": (T(c.shape, dtype="bool"),) * 2, "choicelist": (T(c.shape),) * 2,
        },
        "piecewise": lambda c: {
            "x": T(c.shape), "condlist": (T(c.shape, dtype="bool"),), "funclist": ("negative", "exp"),
        },
        "packbits": _typed("uint8", "a"),
        "unpackbits": _typed("uint8", "a"),
        "ldexp": lambda c: {"x1": T(c.pair[0]), "x2": T(c.pair[1], dtype=INDEX_DTYPE)},
        "ravel_multi_index": lambda c: {
            "multi_index": (index((rows(c),), rows(c)), index((rows(c),), c.shape[-1])), "dims": c.shape,
        },
        "unravel_index": lambda c: {"indices": index((rows(c),), numel(c)), "shape": c.shape},
        "indices": lambda c: {"dimensions": c.shape},
        "split": _given(indices_or_sections=2),
        "array_split": _given(indices_or_sections=3),
        "hsplit": _given(indices_or_sections=1),
        "vsplit": _given(indices_or_sections=2),
        "dsplit": lambda c: {"ary": T((*c.shape, 2)), "indices_or_sections": 2},
        "insert": _given(obj=0, values=1.5),
        "delete": _given(obj=0, axis=0),
        "pad": _given(pad_width=1),
        "array": lambda c: {"object": T(c.shape)},
        "asarray": lambda c: {"a": T(c.shape)},
        "from_dlpack": lambda c: {"x": T(c.shape)},
        "full": _given(fill_value=1.5),
        "full_like": _given(fill_value=1.5),
        "lax.full": _given(fill_value=1.5),
        "lax.full_like": _given(fill_value=1.5),
        "kaiser": lambda c: {"M": min(rows(c), VECTOR), "beta": 5.0},
        "linspace": lambda c: {"start": 0.0, "stop": 1.0, "num": numel(c)},
        "logspace": lambda c: {"start": 0.0, "stop": 1.0, "num": numel(c)},
        "geomspace": lambda c: {"start": 1.0, "stop": 2.0, "num": numel(c)},
        "arange": lambda c: {"start": numel(c)},
        "fromfunction": lambda c: {"function": "add", "shape": c.shape},
        "apply_along_axis": lambda c: {"func1d": "sum", "axis": 0, "arr": T(c.shape)},
        "apply_over_axes": lambda c: {"func": "jnp_sum", "a": T(c.shape), "axes": (0,)},
        "astype": _given(dtype="int32"),
        "special.bernoulli": _given(n=64),
        "special.lpmn": lambda c: {"m": 2, "n": 2, "z": T((rows(c),))},
        "special.lpmn_values": lambda c: {"m": 2, "n": 2, "z": T((rows(c),)), "is_normalized": False},
        "special.sph_harm": _spherical_harmonics,
        "special.sph_harm_y": _spherical_harmonics,  # JAX 0.6 and later, sph_harm's successor
        "nn.dot_product_attention": lambda c: {
            "query": T((4, 128, 8, 64)), "key": T((4, 128, 8, 64)), "value": T((4, 128, 8, 64)),
        },
        "lax.convert_element_type": _given(new_dtype="bfloat16"),
        "lax.bitcast_convert_type": _given(new_dtype="int32"),
        "lax.iota": lambda c: {"dtype": "int32", "size": numel(c)},
        "lax.broadcasted_iota": lambda c: {"dtype": "int32", "shape": c.shape, "dimension": 0},
        "lax.integer_pow": _given(y=3),
        "lax.real": _typed("complex64", "x"),
        "lax.imag": _typed("complex64", "x"),
        "lax.polygamma": lambda c: {"m": T(c.shape, low=1, high=2, integral=True), "x": T(c.shape)},
        "lax.squeeze": lambda c: {"array": T((*c.shape, 1)), "dimensions": (len(c.shape),)},
        "lax.expand_dims": _given(dimensions=(0,)),
        "lax.reduce_and": _typed("bool", "operand"),
        "lax.reduce_or": _typed("bool", "operand"),
        "lax.reduce_xor": _typed("bool", "operand"),
        "lax.broadcast_in_dim": lambda c: {
            "shape": (2, *c.shape), "broadcast_dimensions": tuple(range(1, len(c.shape) + 1)),
        },
        "lax.pad": lambda c: {"padding_value": 0.0, "padding_config": ((1, 1, 0),) * len(c.shape)},
        "lax.slice": lambda c: {
            "start_indices": (0,) * len(c.shape), "limit_indices": (_half(c), *_trailing(c)),
        },
        "lax.slice_in_dim": lambda c: {"start_index": 0, "limit_index": _half(c)},
        "lax.index_in_dim": _given(index=0),
        "lax.dynamic_slice": lambda c: {"start_indices": (0,) * len(c.shape), "slice_sizes": _slice_sizes(c)},
        "lax.dynamic_slice_in_dim": lambda c: {"start_index": 0, "slice_size": _half(c)},
        "lax.dynamic_index_in_dim": _given(index=0),
        "lax.dynamic_update_slice": lambda c: {
            "update": T(_slice_sizes(c)), "start_indices": (0,) * len(c.shape),
        },
        "lax.dynamic_update_slice_in_dim": lambda c: {
            "update": T(_slice_sizes(c)), "start_index": 0, "axis": 0,
        },
        "lax.dynamic_update_index_in_dim": lambda c: {
            "update": T((1, *_trailing(c))), "index": 0, "axis": 0,
        },
        "lax.index_take": lambda c: {"idxs": (index((rows(c),), rows(c)),), "axes": (0,)},
        "lax.gather": _gather,
        "lax.scatter": _scatter(),
        "lax.scatter_add": _scatter(),
        "lax.scatter_mul": _scatter(),
        "lax.scatter_min": _scatter(),
        "lax.scatter_max": _scatter(),
        "lax.scatter_sub": _scatter(),  # JAX 0.5 and later
        "lax.scatter_apply": lambda c: {**_scatter("exp")(c), "update_shape": _matrix_of(c)},
        "lax.concatenate": lambda c: {"operands": (T(c.shape),) * 3, "dimension": 0},
        "lax.rng_uniform": lambda c: {"a": 0.0, "b": 1.0, "shape": c.shape},
        "lax.rng_bit_generator": lambda c: {
            "key": T((4,), dtype="uint32", low=0, high=2**31, integral=True), "shape": c.shape,
        },
        "lax.fft": lambda c: {"fft_type": "RFFT", "fft_lengths": (c.shape[-1],)},
        "lax.reduce": lambda c: {
            "operands": T(c.shape), "init_values": 0.0, "computation": "add", "dimensions": (0,),
        },
        "lax.stop_gradient": lambda c: {"x": T(c.shape)},
        "lax.select_n": lambda c: {"which": T(c.shape, dtype="bool"), "cases": (T(c.shape),) * 2},
        "lax.cond": lambda c: {
            "pred": True, "true_fun": "exp", "false_fun": "negative", "operands": (T(c.shape),),
        },
        "lax.switch": lambda c: {"index": 0, "branches": ("exp", "negative"), "operands": (T(c.shape),)},
        "lax.while_loop": lambda c: {
            "cond_fun": "while_above_thousandth", "body_fun": "halve", "init_val": T(c.shape),
        },
        "lax.fori_loop": lambda c: {"lower": 0, "upper": 8, "body_fun": "fori_halve", "init_val": T(c.shape)},
        "lax.scan": lambda c: {
            "f": "scan_running_sum", "init": T(_trailing(c)), "xs": T(c.shape),
        },
        "lax.map": lambda c: {"f": "exp", "xs": T(c.shape)},
        "lax.associative_scan": lambda c: {"fn": "add", "elems": T(c.shape)},
        **{name: lambda c: {"k": min(8, c.shape[-1])} for name in _TOP_K},
        "lax.select": lambda c: {"pred": T(c.shape, dtype="bool")},
        "gradient": _given(axis=0),
        "nn.glu": _given(axis=0),
        "special.bessel_jn": lambda c: {"z": T((rows(c),)), "v": 2},
        "special.beta": lambda c: {"args": (T(c.pair[0]), T(c.pair[1]))},
        "special.multigammaln": lambda c: {"a": T(c.shape, low=2, high=3), "d": 3},
        "special.polygamma": lambda c: {"n": T(c.shape, dtype=INDEX_DTYPE, low=1, high=2, integral=True)},
        "special.zeta": lambda c: {"x": T((rows(c),), low=2, high=3), "q": T((rows(c),), low=1, high=2)},
        **{name: lambda c: {"x": T((rows(c),))} for name in _SERIES},
        "special.expn": lambda c: {
            "n": T((rows(c),), dtype=INDEX_DTYPE, low=1, high=4, integral=True), "x": T((rows(c),)),
        },
    }  # fmt: skip
    return table


OVERRIDES: dict[str, Override] = _overrides()
"""Each operator's override, by operator name."""
