"""Input rules for fused optimizers that take their tensors as one flat list, grouped per weight
(weight, grad, momentum, ... for each weight in turn, as MXNet's own optimizers pass them).

Mixed-precision (``mp``) variants update float16 weights and gradients and keep float32 master copies
and optimizer state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opperf.frameworks.mxnet.rules.layers import Configurations, T
from opperf.operators.rules.profiles import LayerSizes
from opperf.results.measurement import Alias

WEIGHTS = 3
HALF_PRECISION_ROLES = frozenset({"weight", "grad"})


def _multi_tensor(
    group: tuple[str, ...],
    *,
    mixed_precision: bool = False,
    trailing: tuple[str, ...] = (),
    rates: tuple[str, ...] = ("lrs", "wds"),
    count_argument: str = "num_weights",
    **extra: object,
) -> Callable[[LayerSizes], Configurations]:
    """``WEIGHTS`` groups of tensors in ``group`` order, then per-weight tensors named in ``trailing``."""

    def rule(s: LayerSizes) -> Configurations:
        shape = (s.features * 4, s.features)

        def tensor(role: str) -> T:
            half = mixed_precision and role in HALF_PRECISION_ROLES
            return T(shape, dtype="float16" if half else None)

        data = tuple(tensor(role) for _ in range(WEIGHTS) for role in group)
        data += tuple(T((WEIGHTS,), low=0.01, high=0.1) for _ in trailing)
        # MXNet's optimizers update the weights in place: out= is the weight of each group.
        config: dict[str, Any] = {
            "data": data,
            count_argument: WEIGHTS,
            "out": Alias("data", len(group), WEIGHTS),
            **extra,
        }
        config.update({rate: (0.1,) * WEIGHTS for rate in rates})
        return [config]

    return rule


def _lamb_phase2(mixed_precision: bool) -> Callable[[LayerSizes], Configurations]:
    def rule(s: LayerSizes) -> Configurations:
        shape = (s.features * 4, s.features)
        half = "float16" if mixed_precision else None
        config: dict[str, Any] = {
            "weight": T(shape, dtype=half),
            "g": T(shape),
            "r1": T((1,)),
            "r2": T((1,)),
            "lr": 0.1,
        }
        if mixed_precision:
            config["weight32"] = T(shape)
        return [config]

    return rule


def _mp_lamb_phase1(s: LayerSizes) -> Configurations:
    shape = (s.features * 4, s.features)
    return [
        {
            "weight": T(shape, dtype="float16"),
            "grad": T(shape, dtype="float16"),
            "mean": T(shape),
            "var": T(shape),
            "weight32": T(shape),
            "t": 1,
            "wd": 0.0,
        }
    ]


def _all_finite(s: LayerSizes) -> Configurations:
    shape = (s.features * 4, s.features)
    return [{"data": (T(shape),) * WEIGHTS, "num_arrays": WEIGHTS}]


ADAM = ("weight", "grad", "mean", "var")

OPTIMIZER_RULES: dict[str, Callable[[LayerSizes], Configurations]] = {
    "multi_sgd_update": _multi_tensor(("weight", "grad")),
    "multi_sgd_mom_update": _multi_tensor(("weight", "grad", "mom")),
    "multi_mp_sgd_update": _multi_tensor(("weight", "grad", "weight32"), mixed_precision=True),
    "multi_mp_sgd_mom_update": _multi_tensor(("weight", "grad", "mom", "weight32"), mixed_precision=True),
    "preloaded_multi_sgd_update": _multi_tensor(("weight", "grad"), trailing=("lrs", "wds"), rates=()),
    "preloaded_multi_sgd_mom_update": _multi_tensor(
        ("weight", "grad", "mom"), trailing=("lrs", "wds"), rates=()
    ),
    "preloaded_multi_mp_sgd_update": _multi_tensor(
        ("weight", "grad", "weight32"), mixed_precision=True, trailing=("lrs", "wds"), rates=()
    ),
    "preloaded_multi_mp_sgd_mom_update": _multi_tensor(
        ("weight", "grad", "mom", "weight32"), mixed_precision=True, trailing=("lrs", "wds"), rates=()
    ),
    "_multi_adamw_update": _multi_tensor(ADAM, trailing=("rescale_grad",), rates=("lrs", "wds", "etas")),
    "_multi_mp_adamw_update": _multi_tensor(
        (*ADAM, "weight32"), mixed_precision=True, trailing=("rescale_grad",), rates=("lrs", "wds", "etas")
    ),
    "_multi_lamb_update": _multi_tensor(
        ADAM, rates=("learning_rates", "wds"), count_argument="num_tensors", step_count=(1,) * WEIGHTS
    ),
    "_multi_mp_lamb_update": _multi_tensor(
        (*ADAM, "weight32"),
        mixed_precision=True,
        rates=("learning_rates", "wds"),
        count_argument="num_tensors",
        step_count=(1,) * WEIGHTS,
    ),
    "multi_all_finite": _all_finite,
    "lamb_update_phase2": _lamb_phase2(mixed_precision=False),
    "mp_lamb_update_phase2": _lamb_phase2(mixed_precision=True),
    "mp_lamb_update_phase1": _mp_lamb_phase1,
}
