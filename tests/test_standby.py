"""Standby workers (``IsolatedRunner(standby=True)``): each fresh worker a new process started
beside the one measuring, off its CPUs, with the crash handling of any worker."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from opperf.measure.isolation import IsolatedRunner
from opperf.results.measurement import BenchmarkSpec, Status, TensorSpec, freeze_inputs
from opperf.results.options import RunOptions
from opperf.utils.affinity import available_cpus


def _job(op: str, namespace: str = "mx.nd", **inputs: TensorSpec) -> BenchmarkSpec:
    return BenchmarkSpec(namespace, op, freeze_inputs(inputs), RunOptions(warmup=0, runs=1))


HEALTHY = _job("exp", data=TensorSpec((8, 8)))
CRASHING = _job("_contrib_quantize_asym", "mx.nd.contrib", data=TensorSpec((4, 4)))  # segfaults MXNet 1.9.1


def _children() -> set[int]:
    """This process's child processes that have not exited (a zombie, exited and not yet reaped,
    is not counted)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            state, parent = stat.rsplit(")", 1)[1].split()[:2]
            if int(parent) == os.getpid() and state != "Z":
                found.add(int(entry.name))
    return found


def _thread_affinities(pid: int) -> list[set[int]]:
    """The CPUs each thread of ``pid`` may run on (empty once it has exited)."""
    found = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for thread in threads:
        try:
            found.append(os.sched_getaffinity(int(thread)))
        except OSError:
            continue
    return found


def _settled_children(expected: set[int], within_s: float = 10.0) -> set[int]:
    """This process's live children once they are ``expected`` (retired workers exit on their
    own, in about a second), or as they are after ``within_s``."""
    deadline = time.monotonic() + within_s
    while (found := _children()) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


@pytest.mark.skipif(len(available_cpus()) < 2, reason="needs a CPU besides the workers'")
def test_the_standby_starts_off_the_workers_cpus_and_each_round_gets_a_new_process():
    """While a worker pinned to the last CPU measures, the next one is already a live child of this
    process on the other CPUs; retired, the worker is replaced by it, which then runs on the
    workers' CPU; every worker is a distinct process, and a retired one, moved off the workers'
    CPU, exits on its own while the runner goes on."""
    cpu = available_cpus()[-1]
    with IsolatedRunner(timeout_s=60, threads=1, cpus=[cpu], standby=True) as runner:
        pids: list[int] = []
        observed = 0
        for _ in range(3):
            (measured,) = runner.run([HEALTHY])
            assert measured.status is Status.OK and measured.forward
            worker = runner.worker_pid
            pids.append(worker)
            assert os.sched_getaffinity(worker) == {cpu}
            (standby,) = _children() - set(pids)  # a retired worker may still be exiting
            assert cpu not in os.sched_getaffinity(standby)
            runner.retire_worker()
            affinities = _thread_affinities(worker)  # while it exits, off the workers' CPU
            observed += bool(affinities)
            assert all(cpu not in cpus for cpus in affinities)
        assert observed  # a worker takes about a second to exit: at least one was seen exiting
        assert _settled_children({standby}) == {standby}
    assert len(set(pids)) == 3
    time.sleep(0.1)
    assert _children() == set()  # closing stops the standby too


def test_a_crash_is_a_record_and_the_standby_takes_over():
    """A segfault gives a crashed record with the exit status (MXNet's handler exits 255) and its
    output, and the next job runs in the standby, a new process; a standby killed while it waits
    is replaced, not reported as the next job's crash."""
    with IsolatedRunner(timeout_s=60, threads=1, standby=True) as runner:
        (before,) = runner.run([HEALTHY])
        first = runner.worker_pid
        crashed, after = list(runner.run([CRASHING, HEALTHY]))
        assert runner.worker_pid not in (first, None)
        (standby,) = _children() - {runner.worker_pid}
        os.kill(standby, signal.SIGKILL)
        time.sleep(0.1)
        runner.retire_worker()
        (replaced,) = runner.run([HEALTHY])
    assert crashed.status is Status.CRASHED
    assert "Segmentation fault" in crashed.reason and "status 255" in crashed.reason
    assert [m.status for m in (before, after, replaced)] == [Status.OK] * 3
