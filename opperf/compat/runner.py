"""One generic category runner; the upstream-named per-category functions are made from it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opperf.compat.legacy import legacy_results
from opperf.measure.benchmark import upstream_options
from opperf.operators.rules.profiles import INT64, STANDARD, SizeProfile
from opperf.sweep.run import SweepConfig, run_sweep
from opperf.utils.errors import OpperfError

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
    chosen_profile = profile or (INT64 if _large_tensors(int64_tensor) else STANDARD)
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


def _large_tensors(int64_tensor: object) -> bool:
    """Upstream's ``int64_tensor`` as the command line takes it (``on``/``off``, and True/False);
    OpperfError for anything else, which ran the standard profile without a word."""
    if int64_tensor in ("on", "off", True, False):
        return int64_tensor in ("on", True)
    raise OpperfError(f"int64_tensor must be 'on' or 'off', got {int64_tensor!r}")


def category_runner(*categories: str) -> CategoryRunner:
    """A function benchmarking ``categories``, with ``run_categories``' arguments in upstream's order
    (``ctx, dtype, profiler, int64_tensor, warmup, runs``), by position or by name."""

    def runner(*arguments: Any, **options: Any) -> dict[str, list[dict[str, Any]]]:
        return run_categories(categories, *arguments, **options)

    runner.__doc__ = (
        f"Benchmark every operator in categories {', '.join(categories)}; "
        "arguments as for ``opperf.compat.runner.run_categories`` (by position in upstream's order, or "
        "by name)."
    )
    return runner
