"""JAX on a CUDA GPU: records measured there, and sweeps sharing one GPU.

Every test needs JAX with CUDA and a GPU; where there is none (CI, this project's CPU machines) the
module is skipped and says so. They run on the lent GPU machine with ``benchmarks/gpu.py``.
"""

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("jax")

from opperf.frameworks.jax import devices  # noqa: E402

devices.share_gpus()  # before this process starts JAX's backends, as opperf's own processes do
if not devices.on_gpu_available():
    pytest.skip("no GPU visible to JAX: these tests run on a GPU machine", allow_module_level=True)

from opperf.measure.benchmark import RunOptions, benchmark  # noqa: E402
from opperf.results.measurement import Status  # noqa: E402

OPPERF = Path(__file__).resolve().parent.parent / "opperf.py"
GPU = RunOptions(framework="jax", device="gpu(0)", profiler="python", warmup=5, runs=40)


def _loop_seconds(call, calls: int = 50) -> float:
    """The median seconds of ``call`` blocked until its result is ready, in a plain loop."""
    for _ in range(10):
        call().block_until_ready()
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        call().block_until_ready()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def test_a_gpu_record_is_the_call_blocked_until_ready_on_the_gpu():
    import jax
    import jax.numpy as jnp

    (m,) = benchmark(jnp.exp, [{"x": (1024, 1024)}], replace(GPU, run_backward=False))
    assert m.status is Status.OK, m.reason
    data = jax.device_put(jnp.ones((1024, 1024)), jax.devices("gpu")[0])
    loop = _loop_seconds(lambda: jnp.exp(data))
    assert statistics.median(m.forward) == pytest.approx(loop, rel=0.5)


def test_two_sweeps_share_one_gpu_each_measuring_everything(tmp_path):
    """Each sweep starts JAX's GPU backend in its own process and its workers: with 75% of the GPU
    taken by each process that starts it, the second sweep's processes would find a quarter left."""
    arguments = ["--framework", "jax", "--ctx", "gpu(0)", "--ops", "exp,add,nn.softmax", "--quiet"]
    sweeps = [
        subprocess.Popen(
            [
                sys.executable,
                str(OPPERF),
                *arguments,
                "--output-file",
                str(tmp_path / f"{i}.json"),
            ],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "XLA_PYTHON_CLIENT_PREALLOCATE"},
        )
        for i in range(2)
    ]
    try:
        outputs = [sweep.communicate(timeout=600)[0] for sweep in sweeps]
    finally:  # neither sweep outlives the test
        for sweep in sweeps:
            if sweep.poll() is None:
                sweep.terminate()  # SIGTERM: a sweep stops its workers too
                try:
                    sweep.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    sweep.kill()
                    sweep.wait()
    for sweep, output in zip(sweeps, outputs, strict=True):
        assert sweep.returncode == 0, output
    for i in range(2):
        document = json.loads((tmp_path / f"{i}.json").read_text())
        assert document["environment"]["framework_settings"]["xla_python_client_preallocate"] == "false"
        assert {r["status"] for r in document["results"]} == {"ok"}, [
            (r["op"], r["reason"]) for r in document["results"] if r["status"] != "ok"
        ]
        assert all(r["device"] == "gpu(0)" for r in document["results"])
