"""PyTorch on a CUDA GPU: device time, host latency, device work, faults that cost a worker.

Every test needs a CUDA build of PyTorch and a GPU; where there is none (CI, this project's CPU
machines) the module is skipped and says so. They run on the lent GPU machine with
``benchmarks/gpu.py``, which runs this file first.
"""

import statistics

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU visible to PyTorch: these tests run on a GPU machine", allow_module_level=True)

from opperf.measure.benchmark import RunOptions, benchmark  # noqa: E402
from opperf.measure.isolation import IsolatedRunner  # noqa: E402
from opperf.results.measurement import BenchmarkSpec, Status, TensorSpec, freeze_inputs  # noqa: E402
from opperf.utils.devices import Device  # noqa: E402

GPU = {"framework": "torch", "device": "gpu(0)", "warmup": 5, "runs": 40}


def _kernel_seconds_per_call(call, calls: int = 20) -> float:
    """Device seconds per call from the PyTorch profiler's own per-kernel totals (not opperf's)."""
    from torch.profiler import ProfilerActivity, profile

    for _ in range(5):
        call()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as session:
        for _ in range(calls):
            call()
        torch.cuda.synchronize()
    # Only the device's own events: an operator's entry repeats its kernels' time (on an H100, the
    # sum over both read exp at 4.6 us a call against a 2.2 us kernel).
    device = [e for e in session.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA]
    return sum(e.self_device_time_total for e in device) * 1e-6 / calls


def test_a_gpu_record_is_device_time_with_host_latency_and_kernels_beside_it():
    data = torch.rand(1024, 1024, device="cuda")
    (m,) = benchmark(torch.exp, [{"input": (1024, 1024)}], RunOptions(**GPU, run_backward=False))
    assert m.status is Status.OK and m.timer == "device" and m.reason is None
    kernel = _kernel_seconds_per_call(lambda: torch.exp(data))
    assert statistics.median(m.forward) == pytest.approx(kernel, rel=0.15)
    assert statistics.median(m.host_forward) > statistics.median(m.forward)
    (work,) = [w for w in m.device_work if w.phase == "forward"]
    assert work.kind == "kernel" and work.per_call == 1 and "exp" in work.name.lower()
    assert m.profiled_ops == ("aten::exp",)


def test_backward_device_time_counts_the_autograd_threads_kernels():
    (m,) = benchmark(torch.exp, [{"input": (1024, 1024)}], RunOptions(**GPU))
    assert m.status is Status.OK and m.backward and all(s > 0 for s in m.backward)
    assert {w.phase for w in m.device_work} == {"forward", "backward"}
    assert m.host_backward is not None and len(m.host_backward) >= 3


def test_a_copy_to_the_host_is_named_as_a_memcpy():
    (m,) = benchmark(torch.Tensor.cpu, [{"self": (1024, 1024)}], RunOptions(**GPU, run_backward=False))
    assert m.status is Status.OK and m.timer == "device"
    assert [w.kind for w in m.device_work] == ["memcpy"]


def test_a_call_without_device_work_is_timed_on_the_host_saying_why():
    (m,) = benchmark(torch.Tensor.size, [{"self": (8, 8)}], RunOptions(**GPU, run_backward=False))
    assert m.status is Status.OK and m.timer == "host"
    assert "ran no kernel, memory copy or memory set on the GPU" in m.reason


def test_the_next_configuration_starts_without_the_last_ones_cached_memory():
    """The caching allocator's blocks of a (4096, 4096) configuration (256 MiB) go back to the device
    before the next configuration's inputs are made."""
    large = RunOptions(**GPU, run_backward=False)
    (first, second) = benchmark(torch.exp, [{"input": (4096, 4096)}, {"input": (8, 8)}], large)
    assert first.status is Status.OK and second.status is Status.OK
    assert torch.cuda.memory_reserved() - torch.cuda.memory_allocated() < 64 * 2**20


def test_a_backward_pass_that_runs_nothing_on_the_device_has_no_time_and_says_why():
    """``add``'s gradient is the incoming one: no kernel runs, so the record has its forward device
    time, no backward time, and the backward pass's host latency."""
    (m,) = benchmark(torch.add, [{"input": (1024, 1024), "other": (1024, 1024)}], RunOptions(**GPU))
    assert m.status is Status.OK and m.timer == "device" and m.forward
    assert m.backward is None and "ran no kernel" in m.backward_reason
    assert m.host_backward is not None


def test_a_device_fault_costs_the_worker_and_is_tried_once_more_then_the_next_configuration_runs():
    """Indices out of range trip a device-side assert, which leaves the CUDA context unusable: the
    worker is replaced (once for the retry), and the next configuration measures in a fresh one."""
    options = RunOptions(**GPU, run_backward=False)
    out_of_range = BenchmarkSpec(
        "torch",
        "take",
        freeze_inputs(
            {
                "input": TensorSpec((16,)),
                "index": TensorSpec((8,), dtype="int64", low=1000, high=2000, integral=True),
            }
        ),
        options,
    )
    fine = BenchmarkSpec("torch", "exp", freeze_inputs({"input": TensorSpec((64, 64))}), options)
    with IsolatedRunner("torch", timeout_s=120, threads=1) as runner:
        first = runner.worker_pid
        faulted, after = list(runner.run([out_of_range, fine]))
        assert faulted.status is Status.FAILED
        assert "again in a fresh worker" in faulted.reason
        assert after.status is Status.OK and after.timer == "device"
        assert runner.worker_pid != first


def test_a_gpu_record_carries_the_gpus_clocks_warmed_before_sampling():
    (m,) = benchmark(torch.exp, [{"input": (1024, 1024)}], RunOptions(**GPU, run_backward=False))
    assert m.gpu_state is not None, "nvidia-ml-py (the gpu extra) is installed where these tests run"
    assert m.gpu_state.before.sm_clock_mhz > 0 and m.gpu_state.after.sm_clock_mhz > 0
    assert not m.gpu_state.low_clock


def test_cold_flushes_the_l2_cache_so_inputs_come_from_device_memory():
    """(2048, 2048) float32 in and out (32 MiB) stays in an H100's 50 MiB L2 when hot; flushed before
    each call, the same kernel reads its input from HBM, and takes longer."""
    hot, cold = (
        benchmark(torch.exp, [{"input": (2048, 2048)}], RunOptions(**GPU, run_backward=False, cache=cache))[0]
        for cache in ("hot", "cold")
    )
    assert hot.status is Status.OK and cold.status is Status.OK and cold.timer == "device"
    assert statistics.median(cold.forward) > 1.05 * statistics.median(hot.forward)


def test_the_cudagraph_stage_times_a_replay_per_call_without_launch_gaps():
    """20 captured exp calls replayed at once: each call's device time is the eager kernel's, and
    its host latency a fraction of an eager call's (one launch for twenty)."""
    options = RunOptions(**GPU, run_backward=False)
    eager, graphed = benchmark(torch.exp, [{"input": (1024, 1024)}], options, stages=("eager", "cudagraph"))
    assert graphed.spec.stage == "cudagraph" and graphed.status is Status.OK, graphed.reason
    assert graphed.stage_check.agrees and graphed.timer == "device"
    assert statistics.median(graphed.forward) == pytest.approx(statistics.median(eager.forward), rel=0.3)
    assert statistics.median(graphed.host_forward) < 0.5 * statistics.median(eager.host_forward)
    assert "the cudagraph stage replays forward calls" in graphed.backward_reason


def test_a_configuration_that_does_not_fit_names_the_process_holding_the_memory():
    """Another process holds all but a little of the GPU: a configuration larger than what is left
    is skipped before it runs, naming that process (where NVML sees processes)."""
    import os
    import subprocess
    import sys

    free, _ = torch.cuda.mem_get_info()
    hold = max(0, free - 2 * 2**30)
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import torch,time; x=torch.empty({hold}, dtype=torch.uint8, device='cuda'); "
         "print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        (m,) = benchmark(torch.exp, [{"input": (32768, 32768)}], RunOptions(**GPU, run_backward=False))
        assert m.status is Status.SKIPPED and "out of memory (not run)" in m.reason
        from opperf.utils import gpu_state

        holders = gpu_state.memory_holders(Device("gpu"), os.getpid())
        if holders is not None:  # NVML inside a container may see no processes
            assert holders in m.reason and f"pid {holder.pid}" in holders
    finally:
        holder.kill()
