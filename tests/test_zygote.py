"""Fork-server workers (``opperf.zygote``): real forks of a process that imported MXNet, with the
crash handling of spawned workers."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from opperf.isolation import IsolatedRunner
from opperf.options import RunOptions
from opperf.results import BenchmarkSpec, Status, TensorSpec, freeze_inputs


def _job(op: str, namespace: str = "mx.nd", **inputs: TensorSpec) -> BenchmarkSpec:
    return BenchmarkSpec(namespace, op, freeze_inputs(inputs), RunOptions(warmup=0, runs=1))


HEALTHY = _job("exp", data=TensorSpec((8, 8)))
CRASHING = _job("_contrib_quantize_asym", "mx.nd.contrib", data=TensorSpec((4, 4)))  # segfaults MXNet 1.9.1


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _has_mxnet(pid: int) -> bool:
    return "libmxnet.so" in Path(f"/proc/{pid}/maps").read_text()


def test_each_fresh_worker_is_a_new_fork_of_one_zygote_with_mxnet_loaded():
    """Retiring a worker and measuring again gives a new process, a child of the same zygote (not of
    this process), with MXNet mapped, much faster than the first start (which imported MXNet)."""
    with IsolatedRunner(timeout_s=60, threads=1, fork_server=True) as runner:
        start = time.perf_counter()
        (first,) = runner.run([HEALTHY])
        first_s = time.perf_counter() - start
        pids, parents, forks_s = [runner.worker_pid], [_parent(runner.worker_pid)], []
        for _ in range(3):
            runner.retire_worker()
            start = time.perf_counter()
            (again,) = runner.run([HEALTHY])
            forks_s.append(time.perf_counter() - start)
            assert again.status is Status.OK and again.forward
            pids.append(runner.worker_pid)
            parents.append(_parent(runner.worker_pid))
            assert _has_mxnet(runner.worker_pid)
    assert first.status is Status.OK
    assert len(set(pids)) == 4 and len(set(parents)) == 1 and parents[0] != os.getpid()
    assert max(forks_s) < first_s / 2


def test_a_crash_in_a_fork_is_a_record_and_the_zygote_lives_on():
    """A segfault in a forked worker gives a crashed record with the exit status (as a spawned
    worker's: MXNet's handler exits 255) and its output; the next job gets a fresh fork of the same
    zygote; a zygote that is killed is started again."""
    with IsolatedRunner(timeout_s=60, threads=1, fork_server=True) as runner:
        (before,) = runner.run([HEALTHY])
        zygote = _parent(runner.worker_pid)
        crashed, after = list(runner.run([CRASHING, HEALTHY]))
        assert _parent(runner.worker_pid) == zygote
        os.kill(zygote, signal.SIGKILL)
        time.sleep(0.2)
        (restarted,) = runner.run([HEALTHY])
        assert _parent(runner.worker_pid) not in (zygote, os.getpid())
    assert crashed.status is Status.CRASHED
    assert "Segmentation fault" in crashed.reason and "status 255" in crashed.reason
    assert [m.status for m in (before, after, restarted)] == [Status.OK] * 3
