"""Both timing strategies on real operators: times, backward presence, memory."""

import math

import mxnet as mx
import pytest

from opperf.measure.benchmark import RunOptions, benchmark
from opperf.measure.harness import harness_overhead
from opperf.measure.sampling import StopReason
from opperf.results.measurement import Status
from opperf.utils.devices import CPU

ITEMS = 64 * 64
FLOAT32 = 4
# MXNet's profiler prints memory in kB with 4 significant digits.
MEMORY_PRECISION = 1e-3


def _positive_finite(samples):
    return samples and all(s > 0 and math.isfinite(s) for s in samples)


@pytest.mark.parametrize("profiler", ["native", "python"])
def test_forward_and_backward_times(profiler):
    (m,) = benchmark(
        mx.nd.add, [{"lhs": (64, 64), "rhs": (64, 64)}], RunOptions(warmup=1, runs=4, profiler=profiler)
    )
    assert m.status is Status.OK, m.reason
    assert len(m.forward) == 4 and _positive_finite(m.forward)
    assert len(m.backward) == 4 and _positive_finite(m.backward)
    assert m.backward_reason is None
    assert m.memory_peak_bytes >= ITEMS * FLOAT32 * (1 - MEMORY_PRECISION)


def test_native_profiler_names_the_operators_it_timed():
    (m,) = benchmark(mx.nd.exp, [{"data": (64, 64)}], RunOptions(warmup=1, runs=2))
    assert m.profiled_ops == ("exp",)


def test_memory_counts_every_output():
    (m,) = benchmark(
        mx.nd.split, [{"data": (64, 64), "num_outputs": 2}], RunOptions(warmup=1, runs=2, run_backward=False)
    )
    assert m.memory_peak_bytes >= ITEMS * FLOAT32 * (1 - MEMORY_PRECISION)


def test_memory_scales_with_tensor_size():
    small, large = benchmark(
        mx.nd.exp,
        [{"data": (32, 32)}, {"data": (128, 128)}],
        RunOptions(warmup=1, runs=2, run_backward=False),
    )
    assert large.memory_peak_bytes == pytest.approx(16 * small.memory_peak_bytes, rel=0.01)


def test_no_backward_without_a_gradient():
    (m,) = benchmark(mx.nd.argmax_channel, [{"data": (8, 8)}], RunOptions(warmup=1, runs=2))
    assert m.status is Status.OK, m.reason
    assert m.backward is None
    assert "no gradient" in m.backward_reason


def test_index_inputs_take_no_gradient():
    from opperf.results.measurement import TensorSpec

    indices = TensorSpec((4, 8), low=0, high=100, integral=True)
    (m,) = benchmark(
        mx.nd.Embedding,
        [{"data": indices, "weight": (100, 16), "input_dim": 100, "output_dim": 16}],
        RunOptions(warmup=1, runs=2),
    )
    assert m.status is Status.OK, m.reason
    assert m.backward_reason is None and _positive_finite(m.backward)


def test_no_backward_when_not_requested():
    (m,) = benchmark(mx.nd.exp, [{"data": (16, 16)}], RunOptions(warmup=0, runs=2, run_backward=False))
    assert m.backward is None and m.backward_reason == "backward not requested"


def test_broken_backward_keeps_forward_and_says_why():
    # MXNet 1.9.1's _backward_topk rejects the parameters sort records for it.
    (m,) = benchmark(mx.nd.sort, [{"data": (8, 8)}], RunOptions(warmup=1, runs=2))
    assert m.status is Status.OK, m.reason
    assert _positive_finite(m.forward) and m.backward is None
    assert m.backward_reason.startswith("recording for backward failed: MXNetError")


def test_failure_is_a_result_not_an_exception():
    (m,) = benchmark(mx.nd.dot, [{"lhs": (4, 5), "rhs": (6, 7)}], RunOptions(warmup=0, runs=1))
    assert m.status is Status.FAILED
    assert "MXNetError" in m.reason and m.forward is None


def test_numpy_namespace_operator():
    (m,) = benchmark(mx.np.add, [{"x1": (32, 32), "x2": (32, 32)}], RunOptions(warmup=1, runs=2))
    assert m.status is Status.OK, m.reason
    assert m.spec.namespace == "mx.np"
    assert _positive_finite(m.forward) and _positive_finite(m.backward)


def test_training_mode_forward_with_or_without_backward():
    # Dropout does its work only in training mode; forward-only runs must not silently skip it.
    options = RunOptions(warmup=1, runs=3, run_backward=False)
    (m,) = benchmark(mx.nd.Dropout, [{"data": (256, 256), "p": 0.5}], options)
    (copy,) = benchmark(mx.nd.identity, [{"data": (256, 256)}], options)
    assert m.profiled_ops == ("Dropout",)
    assert m.memory_peak_bytes > copy.memory_peak_bytes  # the mask is allocated in training mode


@pytest.mark.parametrize("dtype", ["int32", "int64", "float16", "float64"])
def test_other_dtypes_run(dtype):
    (m,) = benchmark(
        mx.nd.broadcast_div, [{"lhs": (16, 16), "rhs": (16, 16)}], RunOptions(warmup=0, runs=1, dtype=dtype)
    )
    assert m.status is Status.OK, m.reason
    assert m.spec.options.dtype == dtype


def test_given_arrays_are_not_modified():
    data = mx.nd.ones((4, 4))
    benchmark(mx.nd.exp, [{"data": data}], RunOptions(warmup=0, runs=1))
    assert data.grad is None


def test_adaptive_sampling_is_the_default_and_recorded():
    (m,) = benchmark(mx.nd.exp, [{"data": (64, 64)}], RunOptions(budget_s=0.2))
    assert m.status is Status.OK
    assert m.warmup_runs >= 1
    assert m.stop_reason in (StopReason.PRECISE, StopReason.BUDGET, StopReason.CAP)
    assert m.met_target is not None
    assert len(m.forward) >= 5 and len(m.backward) == len(m.forward)
    assert m.competing_load is None or m.competing_load >= 0


def test_fixed_counts_are_exact():
    (m,) = benchmark(mx.nd.exp, [{"data": (64, 64)}], RunOptions(warmup=2, runs=7))
    assert (m.warmup_runs, len(m.forward), m.stop_reason, m.met_target) == (2, 7, StopReason.FIXED, None)


@pytest.mark.parametrize("profiler", ["native", "python"])
def test_harness_overhead_is_small_positive_and_finite(profiler):
    from opperf.frameworks import get_backend

    overhead = harness_overhead(get_backend("mxnet").session, profiler, CPU)
    assert 0 < overhead < 1e-3 and math.isfinite(overhead)
