"""The functions a rule may hand an operator that takes one (``lax.scan``'s body, ``lax.reduce_window``'s
computation), by name: a configuration names one of ``BODIES`` as data, and the session passes the
function. A name not listed is refused before anything runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

FUNCTION_ARGUMENTS = frozenset(
    {
        "f", "fn", "func", "func1d", "function", "body_fun", "cond_fun", "true_fun", "false_fun",
        "branches", "computation", "comparator", "funclist", "mask_func",
    }
)  # fmt: skip
"""Arguments that take a function (``branches`` a tuple of them)."""


def _lax() -> Any:
    import jax.lax

    return jax.lax


def _sum(values: Any) -> Any:
    return values.sum()


def _scan_step(carry: Any, x: Any) -> tuple[Any, Any]:
    """A running sum: the carry is the sum so far, each step's output the carry."""
    total = carry + x
    return total, total


def _loop_step(_: int, value: Any) -> Any:
    return value * 0.5 + 0.25


def _halve(value: Any) -> Any:
    return value * 0.5


def _above_a_thousandth(value: Any) -> Any:
    """True while any element is above 0.001: about ten halvings of values below 1."""
    return value.max() > 1e-3


def _triu(values: Any, k: int = 0) -> Any:
    import jax.numpy

    return jax.numpy.triu(values, k)


def _jnp_sum(values: Any, axis: int) -> Any:
    import jax.numpy

    return jax.numpy.sum(values, axis=axis)


BODIES: Mapping[str, Callable[[], Callable[..., Any]]] = {
    "add": lambda: _lax().add,
    "max": lambda: _lax().max,
    "mul": lambda: _lax().mul,
    "exp": lambda: _lax().exp,
    "negative": lambda: _lax().neg,
    "sum": lambda: _sum,
    "scan_running_sum": lambda: _scan_step,
    "fori_halve": lambda: _loop_step,
    "halve": lambda: _halve,
    "while_above_thousandth": lambda: _above_a_thousandth,
    "jnp_sum": lambda: _jnp_sum,
    "triu": lambda: _triu,
}
"""Each body by the name a configuration gives, made on first use (importing JAX then)."""


def body(name: object) -> Callable[..., Any] | tuple[Callable[..., Any], ...]:
    """The function (or, for a tuple of names, the functions) a configuration names."""
    if isinstance(name, (tuple, list)):
        return tuple(body(n) for n in name)  # type: ignore[misc]
    if not isinstance(name, str) or name not in BODIES:
        raise ValueError(f"{name!r} names no body opperf passes (known: {', '.join(sorted(BODIES))})")
    return BODIES[name]()
