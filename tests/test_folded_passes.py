"""No pass runs only for the harness's sake: the first pass a session runs while preparing (to find
whether a backward pass runs) is the first warm-up pass, and the peak memory is read from a warm-up
pass; both frameworks alike."""

from __future__ import annotations

import pytest

from opperf.frameworks import get_backend
from opperf.measure import harness
from opperf.measure.benchmark import RunOptions, benchmark
from opperf.measure.isolation import _Prepared
from opperf.measure.messages import Round
from opperf.measure.sampling import SamplingPlan
from opperf.results.measurement import Status
from opperf.utils.devices import CPU

mx = pytest.importorskip("mxnet")
torch = pytest.importorskip("torch")


def _counted(framework: str):
    """exp of ``framework``, wrapped to count the passes that run it on real tensors."""
    calls: list[int] = []

    def mxnet_exp(data):
        calls.append(1)
        return mx.nd.exp(data)

    def torch_exp(input):
        if input.device.type == "cpu":  # not the fit check's run on the meta device
            calls.append(1)
        return torch.exp(input)

    return (mxnet_exp, "data") if framework == "mxnet" else (torch_exp, "input"), calls


@pytest.mark.parametrize("framework", ["mxnet", "torch"])
@pytest.mark.parametrize("backward", [True, False])
def test_the_first_pass_and_the_memory_pass_are_warm_up_passes(framework, backward):
    (function, name), calls = _counted(framework)
    options = RunOptions(framework=framework, warmup=3, runs=4, profiler="python", run_backward=backward)
    (m,) = benchmark(function, [{name: (64, 64)}], options)
    assert m.status is Status.OK, m.reason
    assert (m.backward is not None) is backward
    # PyTorch runs no first pass where no backward pass is asked for; MXNet runs it either way
    first = 1 if framework == "mxnet" or backward else 0
    assert m.warmup_runs == 3
    assert len(calls) == 3 + 4 == first + (3 - first) + len(m.forward)  # no pass of the harness's own
    assert m.memory_peak_bytes is not None and m.memory_peak_bytes >= 64 * 64 * 4
    assert m.sampling_s >= sum(m.forward) + sum(m.backward or ())


@pytest.mark.parametrize(
    ("op", "inputs"),
    [
        ("exp", {"data": (256, 256)}),
        ("FullyConnected", {"data": (32, 256), "weight": (128, 256), "bias": (128,), "num_hidden": 128}),
        ("softmax", {"data": (64, 512)}),
        # its second and third passes read up to 7x the settled peak
        (
            "Convolution",
            {
                "data": (8, 16, 32, 32),
                "weight": (32, 16, 3, 3),
                "bias": (32,),
                "kernel": (3, 3),
                "num_filter": 32,
            },
        ),
    ],
)
@pytest.mark.parametrize("warmup", [3, None])
def test_mxnet_peak_memory_read_in_warm_up_passes_is_the_settled_peak_a_later_probe_reads(op, inputs, warmup):
    function = getattr(mx.nd, op)
    (m,) = benchmark(function, [inputs], RunOptions(warmup=warmup, runs=3))
    assert m.status is Status.OK, m.reason
    session = get_backend("mxnet").session
    passes = harness.prepare(session, m.spec, function)
    with passes.scope():
        for _ in range(10):
            passes.timed_full_pass()
        settled = session.peak_memory(passes.full_pass, CPU)
    assert m.memory_peak_bytes == settled > 0


@pytest.mark.parametrize("framework", ["mxnet", "torch"])
def test_a_warm_up_too_short_for_the_reading_to_settle_leaves_the_probe_to_a_pass_of_its_own(framework):
    (function, name), calls = _counted(framework)
    options = RunOptions(framework=framework, warmup=2, runs=3, profiler="python")
    (m,) = benchmark(function, [{name: (64, 64)}], options)
    assert m.status is Status.OK, m.reason
    assert len(calls) == 2 + 3 + 1  # one probed warm-up pass after the first: no second to agree with
    assert m.memory_peak_bytes is not None and m.memory_peak_bytes >= 64 * 64 * 4


@pytest.mark.parametrize("framework", ["mxnet", "torch"])
def test_measuring_a_preparation_counts_its_pass_and_probes_no_memory_when_asked(framework):
    (function, name), calls = _counted(framework)
    session = get_backend(framework).session
    (m,) = benchmark(
        function, [{name: (64, 64)}], RunOptions(framework=framework, warmup=1, runs=1, profiler="python")
    )
    passes = harness.prepare(session, m.spec, function)
    del calls[:]
    plan = SamplingPlan(warmup=2, runs=3)
    later = harness.measure_prepared(session, m.spec, passes, probe_memory=False, plan=plan)
    assert later.status is Status.OK, later.reason
    assert (later.warmup_runs, later.memory_peak_bytes, len(calls)) == (2, None, 1 + 3)


@pytest.mark.parametrize("framework", ["mxnet", "torch"])
def test_a_round_counts_the_pass_of_its_own_preparation_only(framework):
    """An A/B worker's round warms up on the pass it ran preparing the configuration just before; a
    round measured on a preparation an earlier round made counts no pass of it (it ran long ago)."""
    function, name = (mx.nd.exp, "data") if framework == "mxnet" else (torch.exp, "input")
    backend = get_backend(framework)
    options = RunOptions(framework=framework, warmup=1, runs=1, profiler="python")
    (m,) = benchmark(function, [{name: (64, 64)}], options)
    plan = SamplingPlan(warmup=0, runs=3)
    prepared = _Prepared()
    fresh = prepared.measure(backend, Round(m.spec, 1, plan))
    again = prepared.measure(backend, Round(m.spec, 2, plan))
    assert fresh.measurement.status is Status.OK, fresh.measurement.reason
    first = fresh.measurement
    assert (fresh.prepared_in, first.warmup_runs, first.memory_peak_bytes) == (1, 1, None)
    assert (again.prepared_in, again.measurement.warmup_runs) == (1, 0)
