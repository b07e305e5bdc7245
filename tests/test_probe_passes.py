"""Passes PyTorch no longer spends outside sampling: the size limit settled by the fit check's
meta-device run where that runs through (a real probe pass where it does not), and the peak memory
read from the sampler's first profiler session rather than a pass of its own."""

from __future__ import annotations

import pytest

from opperf.frameworks import get_backend
from opperf.measure import harness
from opperf.measure.benchmark import RunOptions, benchmark
from opperf.results.measurement import Status

torch = pytest.importorskip("torch")

from torch.utils._python_dispatch import _get_current_dispatch_mode  # noqa: E402

QUICK = {"framework": "torch", "warmup": 1, "runs": 3}


def _counting(body):
    """``body`` wrapped to count its calls on real tensors under a dispatch mode (the size limit's)."""
    limited: list[str] = []

    def function(input):
        if input.device.type == "cpu" and _get_current_dispatch_mode() is not None:
            limited.append(type(_get_current_dispatch_mode()).__name__)
        return body(input)

    return function, limited


def test_a_call_the_meta_device_runs_takes_no_real_pass_under_the_size_limit():
    function, limited = _counting(torch.exp)
    (m,) = benchmark(function, [{"input": (64, 64)}], RunOptions(**QUICK))
    assert m.status is Status.OK, m.reason
    assert limited == []


def test_a_call_the_meta_device_cannot_run_is_probed_for_real():
    # nonzero's output shape depends on the values: the meta device has no answer
    function, limited = _counting(lambda input: torch.nonzero(input).float().sum())
    (m,) = benchmark(function, [{"input": (64, 64)}], RunOptions(**QUICK))
    assert m.status is Status.OK, m.reason
    assert limited == ["SizeLimitMode"]


def test_a_refusal_found_on_the_meta_device_skips_the_configuration_with_the_same_reason():
    (m,) = benchmark(torch.vander, [{"x": (20000,)}], RunOptions(**QUICK))
    assert m.status is Status.SKIPPED
    assert m.reason.startswith("aten::") and "would allocate a tensor of 1,526 MiB" in m.reason


@pytest.mark.parametrize(
    ("function", "inputs"),
    [
        (torch.exp, {"input": (256, 256)}),  # with a backward pass
        (torch.argmax, {"input": (64, 64)}),  # none: an integer output
        (torch.matmul, {"input": (64, 32), "other": (32, 128)}),
    ],
)
def test_the_peak_memory_read_from_the_sampling_is_what_a_probe_pass_of_its_own_reads(function, inputs):
    from opperf.frameworks.torch.profiling import peak_memory_bytes

    (m,) = benchmark(function, [inputs], RunOptions(**QUICK))
    assert m.status is Status.OK, m.reason
    session = get_backend("torch").session
    passes = harness.prepare(session, m.spec, function)
    with passes.scope():
        probed = peak_memory_bytes(passes.full_pass, on_gpu=False)
    assert m.memory_peak_bytes == probed > 0
