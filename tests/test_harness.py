"""The one harness over both frameworks' sessions: real operators, an injected clock, and the
failure paths every framework shares."""

from __future__ import annotations

import dataclasses
import itertools
import os
import time
from pathlib import Path

import pytest

from opperf.frameworks import get_backend
from opperf.measure.harness import PerCallSampler, harness_overhead, measure
from opperf.measure.sampling import SamplingPlan, StopReason
from opperf.measure.timing import PythonTimer
from opperf.results.measurement import BenchmarkSpec, Status, TensorSpec, freeze_inputs
from opperf.results.options import RunOptions
from opperf.utils.devices import CPU
from opperf.utils.errors import OpperfError

SPECS = {
    "mxnet": BenchmarkSpec("mx.nd", "exp", freeze_inputs({"data": TensorSpec((8, 8))})),
    "torch": BenchmarkSpec(
        "torch", "exp", freeze_inputs({"input": TensorSpec((8, 8))}), RunOptions(framework="torch")
    ),
}
TICK_NS = 1000


def _ticking_clock():
    """A nanosecond clock that advances one tick per reading, whatever the machine does."""
    ticks = itertools.count(step=TICK_NS)
    return lambda: next(ticks)


@pytest.mark.parametrize("framework", sorted(SPECS))
def test_samples_are_exactly_what_an_injected_clock_reads(framework):
    session = get_backend(framework).session
    spec = SPECS[framework]
    passes = session.prepare(spec, seed=0, function=None)
    sampler = PerCallSampler(PythonTimer(synchronize=passes.synchronize, clock=_ticking_clock()))
    with passes.scope():
        samples = sampler.sample(passes, SamplingPlan(warmup=2, runs=5))
    # Each timed call reads the clock twice, so every sample is exactly one tick.
    assert samples.sampled.forward == (TICK_NS * 1e-9,) * 5
    assert samples.sampled.backward == (TICK_NS * 1e-9,) * 5
    assert (samples.sampled.warmup_runs, samples.sampled.stop_reason) == (2, StopReason.FIXED)


@pytest.mark.parametrize("framework", sorted(SPECS))
def test_a_real_measurement_through_each_session(framework):
    spec = SPECS[framework]
    options = RunOptions(framework=framework, warmup=1, runs=4, profiler="python")
    m = measure(get_backend(framework).session, BenchmarkSpec(spec.namespace, spec.op, spec.inputs, options))
    assert m.status is Status.OK, m.reason
    assert len(m.forward) == len(m.backward) == 4 and all(s > 0 for s in m.forward)
    assert m.memory_peak_bytes is not None and m.memory_peak_bytes >= 8 * 8 * 4
    assert m.sampling_s is not None and m.sampling_s >= sum(m.forward)


@pytest.mark.parametrize("framework", sorted(SPECS))
def test_a_tensor_that_does_not_fit_is_skipped_before_anything_is_allocated(framework):
    spec = SPECS[framework]
    huge = dict(spec.inputs) | {next(iter(dict(spec.inputs))): TensorSpec((2**40,))}
    m = measure(
        get_backend(framework).session,
        BenchmarkSpec(spec.namespace, spec.op, freeze_inputs(huge), spec.options),
    )
    assert m.status is Status.SKIPPED and "GiB" in m.reason


MISMATCHED = {
    "mxnet": BenchmarkSpec(
        "mx.nd", "broadcast_add", freeze_inputs({"lhs": TensorSpec((8, 8)), "rhs": TensorSpec((3, 5))})
    ),
    "torch": BenchmarkSpec(
        "torch",
        "add",
        freeze_inputs({"input": TensorSpec((8, 8)), "other": TensorSpec((3, 5))}),
        RunOptions(framework="torch"),
    ),
}


@pytest.mark.parametrize("framework", sorted(MISMATCHED))
def test_an_operator_that_raises_becomes_a_failed_result(framework):
    m = measure(get_backend(framework).session, MISMATCHED[framework])
    assert m.status is Status.FAILED and m.forward is None
    assert "shape" in m.reason.lower() or "size" in m.reason.lower(), m.reason


@pytest.mark.parametrize("framework", sorted(SPECS))
def test_the_harness_overhead_is_a_small_positive_time(framework):
    overhead = harness_overhead(get_backend(framework).session, "python", CPU)
    assert 0 < overhead < 1e-3


@pytest.mark.parametrize(("mode", "identity"), [("inference", True), ("training", False)])
def test_forward_passes_run_in_the_options_mode(mode, identity):
    """MXNet's Dropout passes its input through in inference mode and drops half of it in training."""
    options = RunOptions(run_backward=False, mode=mode).validated()
    spec = BenchmarkSpec("mx.nd", "Dropout", freeze_inputs({"data": TensorSpec((64, 64)), "p": 0.5}), options)
    passes = get_backend("mxnet").session.prepare(spec, seed=0, function=None)
    with passes.scope():
        output = passes.forward().asnumpy()
    assert bool((output == 0).mean() < 0.01) == identity


def test_pytorch_inference_mode_makes_inference_tensors():
    options = RunOptions(framework="torch", run_backward=False).validated()
    assert options.mode == "inference"
    passes = get_backend("torch").session.prepare(
        BenchmarkSpec("torch", "exp", SPECS["torch"].inputs, options), seed=0, function=None
    )
    with passes.scope():
        assert passes.forward().value.is_inference()


def test_the_mode_defaults_from_backward_and_a_contradiction_is_refused():
    assert RunOptions().validated().mode == "training"
    assert RunOptions(run_backward=False).validated().mode == "inference"
    assert RunOptions(run_backward=False, mode="training").validated().mode == "training"
    with pytest.raises(OpperfError, match="mode inference times forward passes only"):
        RunOptions(mode="inference").validated()


FLUSH_S = 0.02


@pytest.mark.parametrize("profiler", ["python", "native"])
def test_a_flush_runs_before_every_timed_call_and_outside_its_time(profiler):
    """``Passes.flush`` (a GPU's L2 flush when cold) runs before each timed forward and backward
    call; its 20 ms never reach a sample of an 8x8 exp."""
    session = get_backend("torch").session
    passes = session.prepare(SPECS["torch"], seed=0, function=None)
    flushed = []

    def flush():
        flushed.append(1)
        time.sleep(FLUSH_S)

    passes = dataclasses.replace(passes, flush=flush)
    with passes.scope():
        samples = session.sampler(profiler, CPU).sample(passes, SamplingPlan(warmup=2, runs=5))
    timed = (*samples.sampled.forward, *samples.sampled.backward)
    assert len(timed) == 10 and max(timed) < FLUSH_S / 2
    assert len(flushed) == 10


def test_mxnets_trace_goes_to_a_folder_of_the_users_own_never_through_a_name_another_planted(
    tmp_path, monkeypatch
):
    """The trace MXNet writes at exit: in ``opperf-<uid>`` (mode 700) in the temporary folder; where
    that name is another's (here a link planted to a file of the user's), in a fresh folder instead."""
    import stat
    import tempfile

    from opperf.frameworks.mxnet.profiling import trace_file

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    own = Path(trace_file.__wrapped__())
    assert own.parent == tmp_path / f"opperf-{os.getuid()}"
    assert stat.S_IMODE(own.parent.stat().st_mode) == 0o700
    own.parent.rmdir()
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / f"opperf-{os.getuid()}").symlink_to(victim)
    elsewhere = Path(trace_file.__wrapped__())
    assert elsewhere.parent.parent == tmp_path and elsewhere.parent.name.startswith("opperf-")
    assert not elsewhere.parent.is_symlink() and elsewhere.parent != tmp_path / f"opperf-{os.getuid()}"
