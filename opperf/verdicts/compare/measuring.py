"""Where a comparison's measurements run: in this process (the Python API, as ``benchmark`` runs
its operators), or in one worker process per framework and round (the command line, as a sweep
runs them).

A worker's state outlives what it measures: one preparation of softmax (10000, 100) measured in
every round read mx.np 1.71x mx.nd's forward time in all 12 rounds of one run and 0.98-1.02 in
three other runs, and its backward 1.2, 0.88, 1.12 and 0.95 in four, each run's rounds agreeing with
each other. Rounds that share a worker cannot show such a state; they read it as a difference of the
namespaces, and the verdict followed the run. In fresh workers each round, the state moves from
round to round and shows in the rounds' disagreement instead. Namespaces of one framework (``mx.nd``
and ``mx.np``) share a round's worker: what differs between them is the function called, not the
process, and both sides of a pair then meet the same worker. Each round waits for one worker start a
framework (about 1 s of CPU for MXNet), not one a namespace.

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

from opperf.frameworks import framework_of_namespace, get_backend
from opperf.measure import harness
from opperf.measure.isolation import IsolatedRunner
from opperf.results.measurement import BenchmarkSpec, Measurement
from opperf.utils.affinity import available_cpus, worker_cpus


class Measurer(Protocol):
    """Measures round ``index`` of ``spec``, ``namespace``'s call of ``function``; told when a round
    begins (``start_round``), before its first measurement."""

    def __call__(
        self, namespace: str, spec: BenchmarkSpec, function: Callable[..., object], index: int
    ) -> Measurement: ...

    def start_round(self, index: int) -> None: ...


class InProcess:
    """Each round prepared and measured here, with the spec's thread count set first."""

    def __call__(
        self, namespace: str, spec: BenchmarkSpec, function: Callable[..., object], index: int
    ) -> Measurement:
        backend = get_backend(spec.framework)
        backend.set_threads(spec.options.threads)
        return harness.measure(backend.session, spec, function)

    def start_round(self, index: int) -> None:
        """Nothing: this process is the only one there is."""


in_process = InProcess()


class InWorkers(contextlib.AbstractContextManager["InWorkers"]):
    """One worker per framework and round: a round's worker prepares each configuration it measures,
    and the next round gets a fresh one (``start_round``), started on the other CPUs while it measures
    so that a round does not wait for it (``IsolatedRunner(standby=True)``; where the workers are not
    pinned, or pinned to every CPU, it starts when it is needed). Workers are pinned as
    ``affinity`` says (``--affinity``); a round of a configuration may take ``timeout_s``."""

    def __init__(self, timeout_s: float, affinity: str, threads: int | None) -> None:
        """``threads``: every namespace's intra-op thread count. OpperfError, before anything runs,
        when ``affinity`` names CPUs this process may not use."""
        self._timeout_s = timeout_s
        self._threads = threads
        available = available_cpus()
        self._cpus = worker_cpus(affinity, threads, available)
        # a standby starts on the CPUs the workers are not pinned to: without any, it would start
        # beside the round's measurements
        self._standby = bool(self._cpus) and bool(set(available) - set(self._cpus or ()))
        self._runners: dict[str, IsolatedRunner] = {}

    def __call__(
        self, namespace: str, spec: BenchmarkSpec, function: Callable[..., object], index: int
    ) -> Measurement:
        return self._runner(spec).run_round(spec, index, public=True).measurement

    def start_round(self, index: int) -> None:
        """Each framework's next measurement in a fresh worker (none before round 0's)."""
        if index > 0:
            for runner in self._runners.values():
                runner.retire_worker()

    def worker_pid(self, namespace: str) -> int | None:
        """The process id of the worker measuring ``namespace`` now; None before its first round."""
        runner = self._runners.get(framework_of_namespace(namespace))
        return runner.worker_pid if runner is not None else None

    def _runner(self, spec: BenchmarkSpec) -> IsolatedRunner:
        if spec.framework not in self._runners:
            self._runners[spec.framework] = IsolatedRunner(
                spec.framework, self._timeout_s, self._threads, self._cpus, standby=self._standby
            )
        return self._runners[spec.framework]

    def __exit__(self, *exc_info: object) -> None:
        for runner in self._runners.values():
            runner.close()
        self._runners.clear()
