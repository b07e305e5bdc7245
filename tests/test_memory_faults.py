"""Memory faults: configurations that would not fit are refused from their inferred output shapes,
available memory honours cgroup limits, and a worker that outgrows its allowance anyway is stopped by
opperf (a ``crashed`` record saying out of memory, with its peak) before the kernel's OOM killer acts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import mxnet as mx
import pytest
import torch

from opperf import RunOptions, Status, benchmark
from opperf.measure import memory
from opperf.measure.isolation import IsolatedRunner
from opperf.results.measurement import BenchmarkSpec, TensorSpec, freeze_inputs
from opperf.utils.cgroups import memory_headroom_bytes
from opperf.utils.errors import OpperfError

ROOT = Path(__file__).resolve().parent.parent
MiB = 2**20
GiB = 2**30


def _spec(framework: str, namespace: str, op: str, inputs: dict, **options: object) -> BenchmarkSpec:
    return BenchmarkSpec(
        namespace=namespace,
        op=op,
        inputs=freeze_inputs(inputs),
        options=RunOptions(framework=framework, **options),
    )


# --- cgroup v1 and v2 limits, read from files laid out as the kernel lays them out ---------------------


def _fake_system(root: Path, mountinfo: str, membership: str, files: dict[str, str]) -> str:
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/mountinfo").write_text(mountinfo)
    (root / "proc/self/cgroup").write_text(membership)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return str(root)


def test_cgroup_v2_headroom_is_limit_less_unreclaimable_usage(tmp_path):
    root = _fake_system(
        tmp_path,
        "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
        "0::/user.slice/job\n",
        {
            "sys/fs/cgroup/user.slice/job/memory.max": f"{3 * GiB}\n",
            "sys/fs/cgroup/user.slice/job/memory.current": f"{1 * GiB}\n",
            "sys/fs/cgroup/user.slice/job/memory.stat": f"anon 1\ninactive_file {256 * MiB}\n",
            "sys/fs/cgroup/user.slice/memory.max": "max\n",
            "sys/fs/cgroup/user.slice/memory.current": f"{9 * GiB}\n",
        },
    )
    assert memory_headroom_bytes(root) == 3 * GiB - (1 * GiB - 256 * MiB)


def test_cgroup_v1_takes_the_tightest_ancestor_and_ignores_unlimited(tmp_path):
    unlimited = "9223372036854771712\n"
    root = _fake_system(
        tmp_path,
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n",
        "4:memory:/outer/inner\n1:cpu:/\n0::/\n",
        {
            "sys/fs/cgroup/memory/outer/inner/memory.limit_in_bytes": unlimited,
            "sys/fs/cgroup/memory/outer/inner/memory.usage_in_bytes": f"{100 * MiB}\n",
            "sys/fs/cgroup/memory/outer/memory.limit_in_bytes": f"{2 * GiB}\n",
            "sys/fs/cgroup/memory/outer/memory.usage_in_bytes": f"{GiB}\n",
            "sys/fs/cgroup/memory/outer/memory.stat": f"cache 5\ntotal_inactive_file {100 * MiB}\n",
            "sys/fs/cgroup/memory/memory.limit_in_bytes": unlimited,
        },
    )
    assert memory_headroom_bytes(root) == 2 * GiB - (GiB - 100 * MiB)


def test_no_cgroup_limit_reads_as_unknown(tmp_path):
    root = _fake_system(
        tmp_path,
        "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
        "0::/\n",
        {"sys/fs/cgroup/memory.max": "max\n", "sys/fs/cgroup/memory.current": "123\n"},
    )
    assert memory_headroom_bytes(root) is None
    assert memory_headroom_bytes(str(tmp_path / "nothing")) is None


MEMORY_CGROUP = "/sys/fs/cgroup/memory"


def _own_memory_cgroup() -> Path | None:
    """This process's v1 memory cgroup directory, where one can be made (root, a memory controller)."""
    if os.geteuid() != 0 or not os.path.isdir(MEMORY_CGROUP):
        return None
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            directory = Path(MEMORY_CGROUP) / path.lstrip("/")
            return directory if directory.is_dir() else Path(MEMORY_CGROUP)
    return None


@pytest.fixture
def memory_cgroup():
    """A fresh memory cgroup (v1) to run a command in, removed afterwards; skipped where the machine
    gives no way to make one."""
    parent = _own_memory_cgroup()
    if parent is None:
        pytest.skip("needs root and a cgroup v1 memory controller to make a memory cgroup")
    group = parent / f"opperf-test-{uuid.uuid4().hex[:8]}"
    try:
        group.mkdir()
    except OSError as error:
        pytest.skip(f"cannot make a memory cgroup here: {error}")
    yield group
    for _ in range(50):
        try:
            group.rmdir()
            break
        except OSError:
            subprocess.run(["sleep", "0.1"], check=False)


def _run_in_cgroup(group: Path, limit: int, script: str, env: dict | None = None, timeout: int = 120):
    (group / "memory.limit_in_bytes").write_text(str(limit))
    command = f'echo $$ > {group}/cgroup.procs && exec {sys.executable} -c "$0"'
    return subprocess.run(
        ["sh", "-c", command, script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        check=False,
    )


def test_available_memory_inside_a_memory_cgroup_is_the_cgroups(memory_cgroup):
    script = "from opperf.measure import memory; print(memory.available_host_bytes())"
    done = _run_in_cgroup(memory_cgroup, 600 * MiB, script)
    assert done.returncode == 0, done.stderr
    available = int(done.stdout.split()[-1])
    assert 0 < available < 600 * MiB - memory.RESERVE_BYTES
    assert memory._meminfo_available() > 600 * MiB  # what /proc/meminfo alone would have believed


# --- refusing from inferred output shapes ----------------------------------------------------------


def test_estimate_counts_inferred_outputs_and_doubles_for_gradients():
    spec = _spec(
        "torch",
        "torch",
        "add",
        {"input": TensorSpec((4096, 4096)), "other": TensorSpec((4096,))},
        run_backward=False,
    )
    inputs = (4096 * 4096 + 4096) * 4
    assert memory.estimated_bytes(spec) == 2 * inputs  # outputs unknown: taken as the inputs' size
    assert memory.estimated_bytes(spec, 64 * MiB) == inputs + 64 * MiB
    backward = _spec("torch", "torch", "add", dict(spec.inputs), run_backward=True)
    assert memory.estimated_bytes(backward, 64 * MiB) == 2 * (inputs + 64 * MiB)
    assert memory.fit_problem(spec, 200 * MiB, 64 * MiB) is None
    refusal = memory.fit_problem(backward, 200 * MiB, 64 * MiB)
    assert refusal.startswith("out of memory (not run)") and "64.0 MiB of them outputs" in refusal


def test_mxnet_infers_broadcast_outputs_without_running(monkeypatch):
    monkeypatch.setenv(memory.LIMIT_VARIABLE, "2GiB")
    rss_before = memory.resident_bytes()
    inputs = [{"lhs": (30000, 1), "rhs": (1, 30000)}]
    refused = benchmark([mx.nd.broadcast_add], inputs, RunOptions(run_backward=False, runs=2, warmup=1))
    numpy_spec = _spec(
        "mxnet", "mx.np", "_npi_add", {"lhs": TensorSpec((30000, 1)), "rhs": TensorSpec((1, 30000))}
    )
    from opperf.frameworks import get_backend

    session = get_backend("mxnet").session
    assert session.output_bytes(numpy_spec, None) == 30000 * 30000 * 4
    [measurement] = refused
    assert measurement.status is Status.SKIPPED
    assert (
        "out of memory (not run)" in measurement.reason and "3.35 GiB of them outputs" in measurement.reason
    )
    assert memory.resident_bytes() - rss_before < 512 * MiB  # nothing of 3.4 GiB was allocated
    concat = _spec("mxnet", "mx.nd", "concat", {"data": (TensorSpec((3, 4)), TensorSpec((5, 4))), "dim": 0})
    assert session.output_bytes(concat, None) == 8 * 4 * 4


def test_torch_infers_vander_outputs_on_the_meta_device(monkeypatch):
    monkeypatch.setenv(memory.LIMIT_VARIABLE, "2GiB")
    [measurement] = benchmark(
        torch.vander, [{"x": (65536,)}], RunOptions(run_backward=False, runs=2, warmup=1)
    )
    assert measurement.status is Status.SKIPPED
    assert "16.00 GiB of them outputs" in measurement.reason
    from opperf.frameworks import get_backend

    session = get_backend("torch").session
    small = _spec("torch", "torch", "vander", {"x": TensorSpec((64,))})
    assert session.output_bytes(small, None) == 64 * 64 * 4
    # Values decide bincount's output: not inferred, so the fit check falls back to the inputs' size.
    counts = _spec("torch", "torch", "bincount", {"input": TensorSpec((4,), dtype="int64", integral=True)})
    assert session.output_bytes(counts, None) is None


def test_a_bad_memory_limit_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(memory.LIMIT_VARIABLE, "lots")
    with pytest.raises(OpperfError, match="OPPERF_MEMORY_LIMIT='lots' is not a memory size"):
        memory.memory_limit_bytes()
    monkeypatch.setenv(memory.LIMIT_VARIABLE, "1.5GiB")
    assert memory.memory_limit_bytes() == int(1.5 * GiB)


# --- the guard: a worker that outgrows its allowance is stopped by opperf ---------------------------

# bincount's output size is its largest input value: 3e8 int64 counts, 2.2 GiB no shape inference sees.
GUARD_SCRIPT = textwrap.dedent(
    """
    import json
    from opperf.measure.isolation import IsolatedRunner
    from opperf.results.options import RunOptions
    from opperf.results.measurement import BenchmarkSpec, TensorSpec, freeze_inputs
    options = RunOptions(framework="torch", runs=3, warmup=1)
    def spec(op, inputs):
        return BenchmarkSpec(namespace="torch", op=op, inputs=freeze_inputs(inputs), options=options)
    big = spec("bincount", {"input": TensorSpec((4,), dtype="int64", low=3e8, high=3e8 + 1, integral=True)})
    small = spec("add", {"input": TensorSpec((8, 8)), "other": TensorSpec((8, 8))})
    with IsolatedRunner("torch", timeout_s=60) as runner:
        for measurement in (*runner.run([big]), *runner.run([small])):
            print(json.dumps([measurement.status.value, measurement.reason, measurement.memory_peak_bytes]))
    """
)


def _guard_records(done: subprocess.CompletedProcess) -> list:
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]


@pytest.mark.slow
def test_worker_past_its_allowance_is_stopped_with_its_peak():
    done = subprocess.run(
        [sys.executable, "-c", GUARD_SCRIPT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), memory.LIMIT_VARIABLE: "1GiB"},
        check=False,
    )
    (status, reason, peak), (next_status, _, _) = _guard_records(done)
    assert status == "crashed" and reason.startswith("out of memory: the worker grew to")
    assert "OPPERF_MEMORY_LIMIT" in reason and "before the kernel's OOM killer" in reason
    assert GiB <= peak < 2 * GiB  # stopped near the line, far below the 2.2 GiB it asked for
    assert next_status == "ok"  # the next benchmark gets a fresh worker


@pytest.mark.slow
def test_worker_in_a_memory_cgroup_is_stopped_before_the_kernel_kills(memory_cgroup):
    done = _run_in_cgroup(memory_cgroup, 1536 * MiB, GUARD_SCRIPT)
    (status, reason, peak), (next_status, _, _) = _guard_records(done)
    assert status == "crashed" and "below the 256.0 MiB reserve" in reason
    assert peak is not None and peak < 1536 * MiB
    assert next_status == "ok"
    oom_kills = dict(line.split() for line in (memory_cgroup / "memory.oom_control").read_text().splitlines())
    assert oom_kills.get("oom_kill", "0") == "0"  # the kernel never had to act


def test_a_fitting_benchmark_is_untouched_by_the_guard(monkeypatch):
    monkeypatch.setenv(memory.LIMIT_VARIABLE, "8GiB")
    spec = _spec(
        "mxnet", "mx.nd", "add", {"lhs": TensorSpec((64, 64)), "rhs": TensorSpec((64, 64))}, runs=3, warmup=1
    )
    with IsolatedRunner("mxnet", timeout_s=60) as runner:
        [measurement] = runner.run([spec])
    assert measurement.status is Status.OK, measurement.reason
