"""Pinning workers to CPUs: the choice is a pure function; the pinning is checked on a real worker."""

import os

import pytest

from opperf.frameworks.mxnet.backend import engine_threads
from opperf.measure.isolation import IsolatedRunner
from opperf.utils.affinity import AUTO, NONE, available_cpus, parse_cpu_list, worker_cpus
from opperf.utils.devices import CPU
from opperf.utils.errors import OpperfError


@pytest.mark.parametrize(
    ("text", "cpus"), [("1", (1,)), ("0,2-3", (0, 2, 3)), ("3-3", (3,)), (" 2 , 0 ", (0, 2)), ("1,1", (1,))]
)
def test_cpu_lists_parse(text, cpus):
    assert parse_cpu_list(text) == cpus


@pytest.mark.parametrize(
    ("text", "message"), [("a", "'a' is not a CPU"), ("3-1", "runs backwards"), ("1-", "'1-'")]
)
def test_malformed_cpu_lists_are_named(text, message):
    with pytest.raises(ValueError, match=message):
        parse_cpu_list(text)


def test_auto_takes_one_cpu_per_thread_from_the_end():
    assert worker_cpus(AUTO, 1, (0, 1, 2, 3)) == (3,)
    assert worker_cpus(AUTO, 2, (0, 1, 2, 3)) == (2, 3)
    assert worker_cpus(AUTO, 4, (0, 1, 2, 3)) is None  # every CPU: nothing to pin
    assert worker_cpus(AUTO, None, (0, 1)) is None  # thread count unknown
    assert worker_cpus(NONE, 1, (0, 1)) is None
    assert worker_cpus("0", 2, (0, 1)) == (0,)


def test_cpus_outside_the_allowed_set_are_refused_with_the_allowed_ones():
    with pytest.raises(OpperfError, match=r"CPUs \[5\] this process may not use; available: 0,1"):
        worker_cpus("1,5", 1, (0, 1))
    with pytest.raises(OpperfError, match="give auto, none or CPUs"):
        worker_cpus("x", 1, (0, 1))


def test_mxnet_engine_threads_follow_the_environment(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert engine_threads() == 3
    monkeypatch.setenv("MXNET_OMP_MAX_THREADS", "5")
    assert engine_threads() == 5
    monkeypatch.delenv("MXNET_OMP_MAX_THREADS")
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert 1 <= engine_threads() <= len(available_cpus())


def test_a_pinned_worker_keeps_every_thread_on_its_cpu():
    cpu = available_cpus()[-1]
    with IsolatedRunner("mxnet", timeout_s=120, threads=1, cpus=(cpu,)) as runner:
        overhead = runner.harness_overhead("native", CPU)
        pid = runner._process.pid
        threads = os.listdir(f"/proc/{pid}/task")
        affinities = {frozenset(os.sched_getaffinity(int(tid))) for tid in threads}
    assert overhead is not None and 0 < overhead < 1e-3
    assert len(threads) > 1  # MXNet's engine threads started after the pinning, and inherited it
    assert affinities == {frozenset({cpu})}
