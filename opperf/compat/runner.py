"""One generic category runner; the upstream-named per-category functions are made from it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opperf.compat.legacy import legacy_results
from opperf.measure.benchmark import upstream_options
from opperf.operators.rules.profiles import INT64, STANDARD, SizeProfile
from opperf.sweep.run import SweepConfig, run_sweep

CategoryRunner = Callable[..., dict[str, list[dict[str, Any]]]]


def run_categories(
    categories: tuple[str, ...],
    ctx: object = None,
    dtype: str = "float32",
    profiler: str = "native",
    int64_tensor: str = "off",
    warmup: int | None = None,
    runs: int | None = None,
    run_backward: bool = True,
    profile: SizeProfile | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Benchmark every operator of ``categories`` with the rules' inputs: ``{op: [record, ...]}``.

    ``warmup``/``runs`` of None sample adaptively (the default); numbers run exactly that many passes.
    """
    chosen_profile = profile or (INT64 if str(int64_tensor).lower() == "on" else STANDARD)
    config = SweepConfig(
        options=upstream_options(
            ctx=ctx, run_backward=run_backward, dtype=dtype, profiler=profiler, warmup=warmup, runs=runs
        ),
        profile=chosen_profile,
        categories=categories,
    )
    merged: dict[str, list[dict[str, Any]]] = {}
    for entry in legacy_results(list(run_sweep(config).measurements)):
        merged.update(entry)
    return merged


def category_runner(*categories: str) -> CategoryRunner:
    """A function benchmarking ``categories``, with ``run_categories``' keyword arguments."""

    def runner(**options: Any) -> dict[str, list[dict[str, Any]]]:
        return run_categories(categories, **options)

    runner.__doc__ = (
        f"Benchmark every operator in categories {', '.join(categories)}; "
        "keyword arguments as for ``opperf.compat.runner.run_categories``."
    )
    return runner
