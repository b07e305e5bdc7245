"""Worker faults: a reply that stalls part way is a timeout at the deadline, a killed sweep leaves no
worker log behind, and a worker still starting dies with its sweep."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from opperf import RunOptions, Status
from opperf.measure.isolation import IsolatedRunner
from opperf.results.measurement import BenchmarkSpec, TensorSpec, freeze_inputs

ROOT = Path(__file__).resolve().parents[1]

# A process speaking the worker protocol that answers "ready", then, for a job, sends the header of
# a reply and the first byte of its body and goes silent: what a worker stopped mid-reply looks like.
STALLING_WORKER = textwrap.dedent(
    f"""\
    #!{sys.executable}
    import json, os, struct, sys, time
    ready = json.dumps("ready").encode()
    os.write(1, struct.pack("!Q", len(ready)) + ready)
    sys.stdin.buffer.read(8)
    os.write(1, struct.pack("!Q", 1000) + b"x")
    time.sleep(600)
    """
)


def _job() -> BenchmarkSpec:
    inputs = freeze_inputs({"lhs": TensorSpec((4, 4)), "rhs": TensorSpec((4, 4))})
    return BenchmarkSpec(namespace="mx.nd", op="add", inputs=inputs, options=RunOptions(runs=2, warmup=1))


def test_a_reply_stalled_part_way_ends_at_the_deadline(tmp_path):
    script = tmp_path / "stalling_worker"
    script.write_text(STALLING_WORKER)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    # The runner starts ``python -c BOOTSTRAP ...``; the stalling script ignores its arguments.
    started = time.monotonic()
    with IsolatedRunner("mxnet", timeout_s=1.5, python=str(script)) as runner:
        [measurement] = runner.run([_job()])
    assert measurement.status is Status.TIMEOUT
    assert time.monotonic() - started < 10


def _children(pid: int) -> list[int]:
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                children.append(int(entry))
    return children


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _sweep(tmp_path: Path) -> subprocess.Popen:
    selection = ["--ops", "broadcast_add,broadcast_sub", "--runs", "200", "--warmup", "1", "--threads", "1"]
    command = [
        sys.executable,
        str(ROOT / "opperf.py"),
        *selection,
        "--quiet",
        "--output-file",
        str(tmp_path / "r.json"),
    ]
    environment = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return condition()


@pytest.mark.slow
def test_a_killed_sweep_leaves_no_worker_and_no_log(tmp_path):
    sweep = _sweep(tmp_path)
    assert _wait(lambda: bool(_children(sweep.pid)), 60), "no worker started"
    [worker] = _children(sweep.pid)
    assert not list(tmp_path.glob("opperf-worker-*.log"))  # unlinked as soon as it was made
    time.sleep(3)  # the worker is measuring now
    sweep.send_signal(signal.SIGKILL)
    sweep.wait()
    assert _wait(lambda: not _alive(worker), 2), "the worker outlived its sweep"
    assert not list(tmp_path.glob("opperf-worker-*"))


def test_a_worker_still_starting_dies_with_its_sweep(tmp_path):
    sweep = _sweep(tmp_path)
    assert _wait(lambda: bool(_children(sweep.pid)), 60), "no worker started"
    [worker] = _children(sweep.pid)
    sweep.send_signal(signal.SIGKILL)  # the worker is still importing its framework
    sweep.wait()
    assert _wait(lambda: not _alive(worker), 0.5), "the starting worker outlived its sweep"
    assert not list(tmp_path.glob("opperf-worker-*"))
