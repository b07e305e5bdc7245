"""One API over both frameworks: each function runs on its own backend, with the threads asked for."""

import json

import mxnet as mx
import pytest
import torch
from torch.nn import functional

from opperf.cli import main
from opperf.frameworks import framework_of
from opperf.measure.benchmark import RunOptions, benchmark
from opperf.measure.isolation import IsolatedRunner, thread_environment
from opperf.results.measurement import BenchmarkSpec, Status, TensorSpec, freeze_inputs

QUICK = RunOptions(warmup=1, runs=2)


def test_functions_are_recognised_by_their_module():
    assert {framework_of(f) for f in (torch.add, functional.conv2d, torch.Tensor.dim, torch.linalg.inv)} == {
        "torch"
    }
    assert {framework_of(f) for f in (mx.nd.add, mx.np.add, mx.nd.Convolution)} == {"mxnet"}


def test_each_function_runs_on_its_own_framework_whatever_the_default():
    (mx_exp,) = benchmark(mx.nd.exp, [{"data": (8, 8)}], QUICK)
    (torch_exp,) = benchmark(torch.exp, [{"input": (8, 8)}], QUICK)  # QUICK says framework="mxnet"
    assert (mx_exp.spec.framework, torch_exp.spec.framework) == ("mxnet", "torch")
    assert mx_exp.status is Status.OK and torch_exp.status is Status.OK


def test_threads_are_set_and_recorded():
    (m,) = benchmark(torch.add, [{"input": (8, 8), "other": (8, 8)}], RunOptions(warmup=1, runs=2, threads=1))
    assert m.spec.options.threads == 1 and torch.get_num_threads() == 1


def test_workers_get_the_thread_count_before_the_framework_starts():
    assert thread_environment(None) == {}
    assert thread_environment(2)["OMP_NUM_THREADS"] == "2"
    options = RunOptions(framework="torch", threads=1, warmup=1, runs=2)
    spec = BenchmarkSpec("torch", "exp", freeze_inputs({"input": TensorSpec((8, 8))}), options)
    with IsolatedRunner("torch", timeout_s=120, threads=1) as runner:
        (m,) = runner.run([spec])
    assert m.status is Status.OK, m.reason


def test_cli_sweeps_pytorch(tmp_path):
    output = tmp_path / "torch.json"
    status = main(["--framework", "torch", "--ops", "add", "--threads", "1", "--warmup", "1", "--runs", "2",
                   "--output-format", "json", "--output-file", str(output), "--quiet"])  # fmt: skip
    assert status == 0
    document = json.loads(output.read_text())
    assert document["environment"]["framework"] == "torch"
    assert document["environment"]["threads"] == 1
    assert {r["framework"] for r in document["results"]} == {"torch"}
    assert all(r["status"] == "ok" and r["threads"] == 1 for r in document["results"])


def test_framework_code_stays_behind_the_backend_interface():
    import subprocess
    import sys

    script = (
        "import sys\n"
        "import opperf.cli, opperf.verdicts.compare.rendering, opperf.results.document\n"
        "import opperf.report.markdown\n"
        "assert 'torch' not in sys.modules and 'mxnet' not in sys.modules, 'reports imported a framework'\n"
        "from opperf.frameworks import get_backend\n"
        "get_backend('mxnet').operators()\n"
        "assert 'torch' not in sys.modules, 'the MXNet path imported torch'\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_a_framework_that_is_not_installed_names_the_extra_to_install():
    """Run where torch cannot be imported: --framework torch says which extra installs it."""
    import subprocess
    import sys

    blocker = "import sys; sys.modules['torch'] = None\n"  # import torch now fails, as without it
    code = blocker + "from opperf.cli import main; sys.exit(main(['--framework', 'torch', '--ops', 'add']))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 2, result.stderr
    assert "pip install 'opperf[torch]'" in result.stderr and "Traceback" not in result.stderr


def test_without_mxnet_a_torch_sweep_runs_and_an_mxnet_sweep_names_its_extra(tmp_path):
    """MXNet is an extra like any framework (issue 30): where ``import mxnet`` fails, a PyTorch sweep
    runs and ``diff`` reads its file, and the default (MXNet) sweep says which extra installs it."""
    import subprocess
    import sys

    blocker = "import sys; sys.modules['mxnet'] = None\nfrom opperf.cli import main\n"
    result = tmp_path / "torch.json"
    torch = blocker + (
        f"status = main(['--framework', 'torch', '--ops', 'exp', '--runs', '2', '--warmup', '0', '--quiet',"
        f" '--output-file', {str(result)!r}])\n"
        "assert 'mxnet' not in [m for m in sys.modules if sys.modules[m] is not None], 'imported mxnet'\n"
        "sys.exit(status)"
    )
    done = subprocess.run([sys.executable, "-c", torch], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(result.read_text())["results"][0]["framework"] == "torch"
    mxnet = blocker + "sys.exit(main(['--ops', 'exp']))"
    done = subprocess.run([sys.executable, "-c", mxnet], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "pip install 'opperf[mxnet]'" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_a_framework_that_declares_no_optional_capability_is_asked_nothing_of_it(monkeypatch):
    """Long-tail operators, fused patterns and capture are capabilities a framework declares (issue
    30), not obligations: without them its registry has no such rows, and capture says it has none."""
    import dataclasses

    import opperf.frameworks.torch as torch_package
    from opperf.frameworks import capability_part, get_backend
    from opperf.operators import fused, longtail
    from opperf.utils.errors import OpperfError

    backend = get_backend("torch")
    categories = {op.category for op in backend.operators()}
    assert {longtail.CATEGORY, fused.CATEGORY} <= categories
    bare = dataclasses.replace(torch_package.FRAMEWORK, capabilities=frozenset())
    monkeypatch.setattr(torch_package, "FRAMEWORK", bare)
    assert not {longtail.CATEGORY, fused.CATEGORY} & {op.category for op in backend.operators()}
    assert not set(backend.registered_names()) & {op.name for op in longtail.catalogue()}
    assert fused.framework_variants("torch") == ()
    with pytest.raises(OpperfError, match=r"PyTorch declares no model capture \(MXNet, JAX have it\)"):
        capability_part("torch", "capture", "capture")


@pytest.mark.parametrize(
    ("variable", "value", "problem"),
    [
        # parsed as MXNet is imported: a C++ terminate killed opperf itself (exit 134, no word of its own)
        ("OMP_NUM_THREADS", "banana", "OMP_NUM_THREADS expect int but value='banana'"),
        ("MXNET_CPU_WORKER_NTHREADS", "2.5", "MXNET_CPU_WORKER_NTHREADS expect int but value='2.5'"),
        # read as its engine starts: every configuration failed, and the sweep exited 0
        ("MXNET_ENGINE_TYPE", "banana", "Cannot find Engine banana"),
    ],
)
def test_an_mxnet_that_cannot_start_here_is_refused_before_anything_runs(tmp_path, variable, value, problem):
    """A setting MXNet reads from the environment and cannot take: one line naming it, exit 2, before
    a worker measures anything, with no traceback from MXNet's exit hook after it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    command = [sys.executable, str(Path(__file__).resolve().parents[1] / "opperf.py"), "--ops", "exp"]
    command += ["--output-file", "out.json"]
    environment = {**os.environ, variable: value}
    found = subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, env=environment, check=False
    )
    assert found.returncode == 2, found.stderr
    assert found.stderr.startswith("error: MXNet fails to start here (") and found.stderr.count("\n") == 1
    assert problem in found.stderr and not list(tmp_path.iterdir())


def test_an_mxnet_setting_it_takes_is_checked_and_the_sweep_runs(tmp_path):
    """Where a checked setting is set and MXNet takes it, the child that starts MXNet first lets the
    sweep go on (the check refuses what fails, nothing else)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    command = [sys.executable, str(Path(__file__).resolve().parents[1] / "opperf.py"), "--ops", "exp"]
    command += ["--runs", "2", "--warmup", "0", "--quiet", "--output-file", "out.json"]
    environment = {**os.environ, "MXNET_ENGINE_TYPE": "NaiveEngine", "OMP_NUM_THREADS": "1"}
    found = subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, env=environment, check=False
    )
    assert found.returncode == 0, found.stderr
    assert json.loads((tmp_path / "out.json").read_text())["results"][0]["status"] == "ok"
