"""Worker isolation with real failures: an MXNet segfault and a real hang; and workers that run
nothing from the folder the sweep runs in."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from interpreters import script

from opperf.measure.isolation import IsolatedRunner, describe_exit, startup_failure
from opperf.results.measurement import BenchmarkSpec, Status, TensorSpec, freeze_inputs
from opperf.results.options import RunOptions


def _job(op, namespace="mx.nd", backward=False, **inputs):
    options = RunOptions(run_backward=backward, warmup=0, runs=1)
    return BenchmarkSpec(namespace, op, freeze_inputs(inputs), options)


# quantize_asym segfaults MXNet 1.9.1 on any input.
CRASHING = _job("_contrib_quantize_asym", "mx.nd.contrib", data=TensorSpec((4, 4)))
# _npi_delete with a large float index list runs for many minutes.
HANGING = _job("_npi_delete", "mx.np", arr=TensorSpec((1024, 1024)), obj=TensorSpec((1024, 1024)))
HEALTHY = _job("exp", data=TensorSpec((8, 8)))


# batch_take logs a deprecation warning on every call.
WARNING = _job(
    "batch_take", a=TensorSpec((4, 4)), indices=TensorSpec((4,), dtype="int32", low=0, high=4, integral=True)
)


@pytest.mark.slow
def test_crash_becomes_a_record_and_the_next_job_gets_a_fresh_worker():
    with IsolatedRunner(timeout_s=120) as runner:
        warned, crashed, healthy = list(runner.run([WARNING, CRASHING, HEALTHY]))
    assert warned.status is Status.OK
    assert crashed.status is Status.CRASHED
    assert "Segmentation fault" in crashed.reason and "status 255" in crashed.reason
    assert crashed.reason.endswith("(and again in a fresh worker, tried once more)")
    assert "deprecated" not in crashed.reason  # only what the crashed job printed
    assert healthy.status is Status.OK and healthy.forward


@pytest.mark.slow
def test_hang_becomes_a_timeout_for_the_rest_of_the_operator():
    with IsolatedRunner(timeout_s=4) as runner:
        results = list(runner.run([HANGING, HANGING]))
        (after,) = list(runner.run([HEALTHY]))
    assert [m.status for m in results] == [Status.TIMEOUT, Status.TIMEOUT]
    assert "time limit of 4 s" in results[0].reason and "the worker was killed" in results[0].reason
    assert results[1].reason.startswith("not run: the operator's earlier configurations spent its time limit")
    assert after.status is Status.OK


def _torch_job(shape):
    options = RunOptions(framework="torch", warmup=1, runs=3)
    return BenchmarkSpec("torch", "exp", freeze_inputs({"input": TensorSpec(shape)}), options)


def test_a_runner_makes_a_folder_for_compiled_programs_only_where_its_framework_keeps_them():
    """PyTorch's runner makes none (JAX's does: ``test_jax_backend``): a sweep killed before it closes
    its runner would otherwise leave an empty folder behind every time."""
    with IsolatedRunner("torch", timeout_s=120, threads=1) as runner:
        (m,) = list(runner.run([_torch_job((8, 8))]))
        assert m.status is Status.OK and runner.compiled_folder is None


@pytest.mark.slow
def test_the_workers_peak_resident_memory_is_recorded():
    """A worker that held a 64 MiB input, its output and their gradients peaks that much higher than
    one that measured an 8 x 8 tensor."""
    peaks = []
    for shape in ((8, 8), (4096, 4096)):
        with IsolatedRunner("torch", timeout_s=120, threads=1) as runner:
            (m,) = list(runner.run([_torch_job(shape)]))
        assert m.status is Status.OK, m.reason
        peaks.append(runner.peak_rss_bytes)
    small, large = peaks
    assert 50 * 2**20 < small < 2**30
    assert large - small > 3 * 64 * 2**20


def test_exit_descriptions():
    assert describe_exit(-11) == "killed by SIGSEGV"
    assert describe_exit(-9) == "killed by SIGKILL"
    assert describe_exit(255) == "exited with status 255"


FAST = ["--warmup", "1", "--runs", "2", "--no-backward", "--threads", "1", "--quiet"]


@pytest.mark.parametrize("framework", ["mxnet", "torch"])
def test_workers_import_nothing_from_the_working_directory(tmp_path, framework):
    """Workers used to start with ``python -c``, which puts the working directory first on the module
    path: a ``ctypes.py`` there ran in every worker. Modules named like the ones a worker imports (and
    a whole ``opperf`` package) are left in the folder a sweep runs in; none of them may run."""
    folder = tmp_path / "downloads"
    (folder / "opperf").mkdir(parents=True)
    planted = [
        "ctypes",
        "importlib",
        "runpy",
        "numpy",
        "mxnet",
        "torch",
        "json",
        "struct",
        "opperf/__init__",
    ]
    for name in planted:
        marker = tmp_path / f"ran_{name.replace('/', '_')}"
        (folder / f"{name}.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "opperf.py")
    completed = subprocess.run(
        [sys.executable, script, "--framework", framework, "--ops", "exp", "--output-file", "o.json", *FAST],
        cwd=folder,
        check=False,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert completed.returncode == 0, completed.stderr
    assert sorted(p.name for p in tmp_path.glob("ran_*")) == []
    (record,) = json.loads((folder / "o.json").read_text())["results"][:1]
    assert record["status"] == "ok"


def test_a_job_whose_worker_dies_once_is_measured_in_a_fresh_worker(tmp_path):
    """The worker aborts the first time it measures ``exp`` (as a flaky operator's segfault does):
    without a second try, two sweeps of one build would read ``newly-failing`` for it."""
    marker = tmp_path / "crashed-once"
    site = Path(__file__).resolve().parents[1] / "benchmarks" / "slowdown"
    environment = {"PYTHONPATH": str(site), "OPPERF_TEST_CRASH_ONCE": f"exp:{marker}"}
    with IsolatedRunner(timeout_s=120, environment=environment) as runner:
        (measured,) = list(runner.run([HEALTHY]))
    assert marker.exists()
    assert measured.status is Status.OK and measured.forward
    assert measured.reason.startswith("crashed once (worker killed by SIGABRT")
    assert measured.reason.endswith("then measured in a fresh worker")


def test_a_worker_that_did_not_start_is_named_by_the_exception_it_ended_with():
    """Its log's tail may begin inside the traceback (a framework's import failing deep in its
    plugins): the exception's own line names it, not the frames around it."""
    frames = "".join(
        f'  File "/site-packages/jax/_src/m{i}.py", line {i}, in <module>\n    import x\n' for i in range(60)
    )
    tail = (frames + "ModuleNotFoundError: No module named 'numpy'\n")[-2000:]
    assert "Traceback" not in tail
    assert startup_failure(tail) == "ModuleNotFoundError: No module named 'numpy'"
    chained = (
        "Traceback (most recent call last):\nKeyError: 'a'\n\nDuring handling...\nRuntimeError: no GPU\n"
    )
    assert startup_failure(chained) == "RuntimeError: no GPU"
    assert startup_failure("exec failed:\n  no such file\n") == "exec failed: no such file"
    bare = "Traceback (most recent call last):\n  File x\nException: boom\n"
    assert startup_failure(bare) == "Exception: boom"


def test_a_worker_that_never_says_it_is_ready_is_named_as_stalled(tmp_path, monkeypatch):
    """An interpreter that hangs while it starts is reported as such, with what it printed."""
    from opperf.measure import isolation

    monkeypatch.setattr(isolation, "STARTUP_TIMEOUT_S", 1.0)
    hanging = script(tmp_path / "python", "echo loading plugins >&2\nexec sleep 60")
    with (
        IsolatedRunner("mxnet", python=hanging) as runner,
        pytest.raises(isolation.WorkerStartError) as raised,
    ):
        runner.describe()
    assert raised.value.why == "it was not ready in 1 s; it printed: loading plugins"
    assert not raised.value.lacks_module


def test_a_worker_killed_takes_what_it_started_with_it(tmp_path, monkeypatch):
    """A wrapper that runs Python without ``exec`` (here, a command that hangs) is killed at its start
    deadline with every process it started: its child was left running, orphaned."""
    import time

    from opperf.measure import isolation

    monkeypatch.setattr(isolation, "STARTUP_TIMEOUT_S", 1.0)
    marker = f"{time.time() % 1000 + 60:.3f}"  # this test's own sleep, found by its argument
    hanging = script(tmp_path / "python", f"echo loading plugins >&2\nsleep {marker}")
    with IsolatedRunner("mxnet", python=hanging) as runner, pytest.raises(OSError):
        runner.describe()
    time.sleep(0.2)
    assert not [
        pid for pid in os.listdir("/proc") if pid.isdigit() and _command_line(pid) == ["sleep", marker]
    ]


@pytest.mark.parametrize("ending", ["abandoned", "died"])
def test_a_worker_stopped_or_dead_leaves_nothing_it_started(tmp_path, ending):
    """A worker whose interpreter started a helper (here a wrapper's background ``sleep``): a stopped
    ``sweep --devices`` killed the worker alone, and a worker that died (a crash, the kernel's
    out-of-memory kill) left its helper running."""
    import signal
    import time

    marker = f"{time.time() % 1000 + 60:.3f}"
    wrapper = script(tmp_path / "python", f'sleep {marker} &\nexec {sys.executable} "$@"')
    runner = IsolatedRunner("mxnet", python=wrapper)
    runner.describe()
    helpers = [
        pid for pid in os.listdir("/proc") if pid.isdigit() and _command_line(pid) == ["sleep", marker]
    ]
    assert len(helpers) == 1
    if ending == "abandoned":
        runner.abandon()
    else:
        os.kill(runner.worker_pid, signal.SIGKILL)
        time.sleep(0.2)
    runner.close()
    time.sleep(0.2)
    assert _command_line(helpers[0]) != ["sleep", marker]


def _command_line(pid: str) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as listing:
            return listing.read().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []  # ended while we looked


def test_an_interpreter_that_prints_on_the_reply_pipe_is_refused_saying_so(tmp_path):
    """A wrapper that echoes a line before starting Python writes on the pipe the worker answers on:
    its text read as a message's length was 7e18 bytes, and the sweep died of a MemoryError."""
    wrapper = script(tmp_path / "python", f'echo loading modules\nexec {sys.executable} "$@"')
    with IsolatedRunner("mxnet", python=wrapper) as runner, pytest.raises(OSError) as raised:
        runner.describe()
    assert "printed on the pipe it answers on (b'loading '" in str(raised.value)
    assert str(raised.value).endswith("have what it runs at start-up print on stderr")


def test_an_interpreter_that_cannot_be_run_is_named_and_leaks_no_descriptor():
    """A worker whose interpreter is gone is a crash that says so, and leaves no log file open."""
    open_before = len(os.listdir("/proc/self/fd"))
    with IsolatedRunner(timeout_s=30, python="/nonexistent/python") as runner:
        (lost,) = list(runner.run([HEALTHY]))
    assert lost.status is Status.CRASHED
    assert lost.reason == (
        "the benchmark worker did not start: /nonexistent/python cannot be run (No such file or directory)"
    )
    assert len(os.listdir("/proc/self/fd")) == open_before
