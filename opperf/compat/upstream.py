"""Upstream opperf's entry points, with upstream's signatures and result shape.

``run_performance_test`` and ``run_benchmark_operator`` return ``[{op: [record, ...]}, ...]``; the typed
``Measurement`` results behind them come from ``opperf.measure.benchmark.benchmark``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from opperf.compat.legacy import legacy_results
from opperf.frameworks import framework_of_namespace, get_backend
from opperf.measure.benchmark import benchmark, check_shape, signature_of, upstream_options
from opperf.results.measurement import Measurement
from opperf.utils.errors import OpperfError, suggest
from opperf.verdicts.compare.calls import check_devices, check_namespaces
from opperf.verdicts.compare.comparison import compare

DEFAULT_NAMESPACES = ("mx.nd", "mx.np", "mx.npx")


def run_performance_test(
    ops: Callable[..., object] | Sequence[Callable[..., object]],
    inputs: Sequence[dict[str, Any]],
    run_backward: bool = True,
    dtype: str = "float32",
    ctx: object = None,
    profiler: str = "native",
    warmup: int | None = None,
    runs: int | None = None,
    seed: int = 0,
) -> list[dict[str, list[dict[str, Any]]]]:
    """Benchmark one operator or a list of them on each input configuration.

    ``inputs`` maps argument names to shapes (tensors are generated, seeded), arrays (used as given)
    or scalar values. ``warmup``/``runs`` of None (the default) sample adaptively until the median is
    precise; numbers run exactly that many passes. Example::

        run_performance_test(nd.add, inputs=[{"lhs": (1024, 1024), "rhs": (1024, 1024)}])
    """
    options = upstream_options(
        ctx=ctx,
        run_backward=run_backward,
        dtype=dtype,
        profiler=profiler,
        warmup=warmup,
        runs=runs,
        seed=seed,
    )
    return legacy_results(benchmark(ops, inputs, options))


def run_benchmark_operator(
    name: str,
    size: tuple[int, ...] = (128, 128),
    additional_inputs: dict[str, Any] | None = None,
    namespaces: Sequence[str] = DEFAULT_NAMESPACES,
    run_backward: bool = False,
    dtype: str = "float32",
    ctx: object = None,
    profiler: str = "native",
    warmup: int | None = None,
    runs: int | None = None,
    seed: int = 0,
    threads: int | None = None,
) -> list[dict[str, list[dict[str, Any]]]]:
    """Benchmark the operator called ``name`` in each namespace that has it (``mx.nd`` against ``mx.np``,
    and ``torch`` when named), on the same input configuration.

    Every required tensor argument (in the first namespace that has ``name``) gets shape ``size``;
    ``additional_inputs`` overrides or adds arguments in that namespace's names, e.g.
    ``run_benchmark_operator("pick", size=(128, 128), additional_inputs={"index": (128, 1)})``. Other
    namespaces get the configuration translated (``opperf.verdicts.compare.calls``), and each is
    measured once with the ``warmup`` and ``runs`` given (``runs=2`` is two passes, as upstream; it
    was twenty rounds of two while the comparison's rounds applied). Returns one
    result list entry
    per namespace that has a counterpart, in the order given.
    """
    if not isinstance(name, str) or not name or name.startswith("__"):
        raise OpperfError(f"name must be an operator's name, e.g. 'add', not {name!r}")
    if isinstance(namespaces, str) or not namespaces:
        raise OpperfError(f"namespaces must list namespaces, e.g. ('mx.nd', 'mx.np'), not {namespaces!r}")
    if additional_inputs is not None and not isinstance(additional_inputs, dict):
        raise OpperfError(
            f"additional_inputs must map argument names to values, e.g. {{'index': (128, 1)}}, not "
            f"{additional_inputs!r:.60}"
        )
    check_namespaces(namespaces)
    size = check_shape(name, "size", size)
    found = [ns for ns in namespaces if get_backend(framework_of_namespace(ns)).lookup(ns, name)]
    if not found:
        known = {n for ns in namespaces for n in get_backend(framework_of_namespace(ns)).namespace_names(ns)}
        raise OpperfError(f"no operator {name!r} in {', '.join(namespaces)}{suggest(name, known)}")
    first = found[0]
    backend = get_backend(framework_of_namespace(first))
    function = cast("Callable[..., object]", backend.lookup(first, name))
    signature = signature_of(function, backend.identify(function).info)
    configuration: dict[str, Any] = {
        argument: [size, size] if argument in signature.tensor_lists else size
        for argument in sorted(signature.tensors & signature.required)
    }
    configuration.update(additional_inputs or {})
    options = upstream_options(
        ctx=ctx,
        run_backward=run_backward,
        dtype=dtype,
        profiler=profiler,
        warmup=warmup,
        runs=runs,
        seed=seed,
        threads=threads,
    )
    check_devices(namespaces, options)
    ordered = [first, *(ns for ns in namespaces if ns != first)]
    # once each, as upstream measured it: the caller asked for times with these passes, not for a
    # verdict (``opperf compare`` rounds for those)
    (row,) = compare(name, [configuration], ordered, options, rounds=1)
    if first in row.problems:  # the configuration does not apply in the namespace it is stated in
        raise OpperfError(f"{first}.{name}: {row.problems[first]}")
    measured = [
        cast(Measurement, row.measurements[ns]) for ns in namespaces if row.measurements.get(ns) is not None
    ]
    return legacy_results(measured)
