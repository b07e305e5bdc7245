"""Where a comparison's measurements run: in this process (the Python API, as ``benchmark`` runs
its operators), or in one worker process per namespace (the command line, as a sweep runs them).

In workers, an operator that crashes, hangs or outgrows the machine's memory costs its namespace's
record of one configuration (``crashed`` or ``timeout``, with the reason and the worker's peak), not
the comparison: in this process, 4 of 20 chunks of ``compare mx.np,jnp,torch`` over 158 functions
grew past 4 GiB within a minute (``argwhere``, ``corrcoef``, ``cov``, ``isin``) and
``mx.np.allclose`` to 24 GiB, which the kernel's OOM killer would have answered by killing the
comparison itself (``opperf.measure.memory_guard``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Protocol

from opperf.frameworks import get_backend
from opperf.measure import harness
from opperf.measure.isolation import IsolatedRunner
from opperf.results.measurement import BenchmarkSpec, Measurement
from opperf.utils.affinity import available_cpus, worker_cpus


class Measurer(Protocol):
    """Measures round ``index`` of ``spec``, ``namespace``'s call of ``function``."""

    def __call__(
        self, namespace: str, spec: BenchmarkSpec, function: Callable[..., object], index: int
    ) -> Measurement: ...


def in_process(
    namespace: str, spec: BenchmarkSpec, function: Callable[..., object], index: int
) -> Measurement:
    """Each round prepared and measured here, with the spec's thread count set first."""
    backend = get_backend(spec.framework)
    backend.set_threads(spec.options.threads)
    return harness.measure(backend.session, spec, function)


class InWorkers(contextlib.AbstractContextManager["InWorkers"]):
    """One worker per namespace, started at its first measurement and kept for the comparison: it
    prepares a configuration in round 0 and measures later rounds on that preparation (a fresh worker
    after a crash prepares again). Workers are pinned as ``affinity`` says (``--affinity``); a round
    may take ``timeout_s``."""

    def __init__(self, timeout_s: float, affinity: str, threads: int | None) -> None:
        """``threads``: every namespace's intra-op thread count. OpperfError, before anything runs,
        when ``affinity`` names CPUs this process may not use."""
        self._timeout_s = timeout_s
        self._threads = threads
        self._cpus = worker_cpus(affinity, threads, available_cpus())
        self._runners: dict[str, IsolatedRunner] = {}

    def __call__(
        self, namespace: str, spec: BenchmarkSpec, function: Callable[..., object], index: int
    ) -> Measurement:
        return self._runner(namespace, spec).run_round(spec, index, public=True).measurement

    def _runner(self, namespace: str, spec: BenchmarkSpec) -> IsolatedRunner:
        if namespace not in self._runners:
            self._runners[namespace] = IsolatedRunner(
                spec.framework, self._timeout_s, self._threads, self._cpus
            )
        return self._runners[namespace]

    def __exit__(self, *exc_info: object) -> None:
        for runner in self._runners.values():
            runner.close()
        self._runners.clear()
