"""Stages: each stage measured by the one harness with its compile time and its check against eager,
a stage an operator cannot take skipped with the reason, a stage that computes otherwise failed, and
the stage in every record and in the row key."""

from __future__ import annotations

import os

import numpy as np
import pytest

from opperf.cli import main
from opperf.frameworks import describe, get_backend
from opperf.measure import harness
from opperf.measure.roofline.peaks import default_cache_dir
from opperf.measure.stages import STAGES, StageCheck, compare
from opperf.operators import longtail
from opperf.report.stages import render_tag_speedups, tag_speedups
from opperf.results.coverage import Coverage
from opperf.results.document import measurement_from_record, record
from opperf.results.key import record_key
from opperf.results.measurement import BenchmarkSpec, Measurement, Status, TensorSpec, freeze_inputs
from opperf.results.options import RunOptions, SweepFactors
from opperf.results.rows import results_file
from opperf.sweep.run import SweepConfig, specs_for

FAST = {"warmup": 1, "runs": 3, "profiler": "python", "threads": 1}


def _measure(
    framework: str, op: str, stage: str, *, size: tuple[int, ...] | None = None, **options
) -> Measurement:
    entry = longtail.entry(op)
    spec = BenchmarkSpec(
        namespace=longtail.NAMESPACE,
        op=op,
        inputs=freeze_inputs(entry.configure(*(size or entry.small))),
        options=RunOptions(framework=framework, **{**FAST, **options}).validated(),
        category=longtail.CATEGORY,
        stage=stage,
    )
    return harness.measure(get_backend(framework).session, spec)


def test_mxnet_graph_stage_is_a_hybridized_block_checked_against_eager_with_its_build_time():
    measured = _measure("mxnet", "bbox2delta", "graph")
    assert measured.status is Status.OK, measured.reason
    assert measured.stage_check.agrees and measured.stage_check.max_abs_diff < 1e-4
    assert 0 < measured.compile_s < 30
    assert len(measured.forward) == 3 and len(measured.backward) == 3  # backward through the CachedOp
    assert measured.compile_s not in measured.forward


@pytest.mark.parametrize(
    ("framework", "op", "stage", "reason"),
    [
        ("mxnet", "nms_loop", "graph", "MXNet cannot hybridize nms_loop: NotImplementedForSymbol"),
        ("mxnet", "sequence_mask", "graph", "has no attribute 'shape'"),
        ("mxnet", "valid_flags", "graph", "needs at least one input array"),
        ("mxnet", "bbox2delta", "compile", "MXNet has no compile stage"),
        ("torch", "nms_loop", "graph", "torch.jit.script cannot take nms_loop"),
        ("torch", "bbox2delta", "cudagraph", "CUDA graphs need a GPU; run it with --ctx gpu(0)"),
        ("mxnet", "bbox2delta", "cudagraph", "MXNet has no cudagraph stage"),
    ],
)
def test_a_stage_an_operator_cannot_take_is_skipped_with_the_reason(framework, op, stage, reason):
    measured = _measure(framework, op, stage)
    assert measured.status is Status.SKIPPED
    assert reason in measured.reason
    assert measured.forward is None and measured.compile_s is None


def test_torch_compile_stage_compiles_once_into_opperfs_cache_and_agrees_with_eager():
    measured = _measure("torch", "map_roi_levels", "compile", run_backward=False)
    assert measured.status is Status.OK, measured.reason
    assert measured.stage_check.agrees
    assert measured.compile_s > 0.05  # a compile, not a cached call
    cache = get_backend("torch").session.compile_cache
    assert cache == default_cache_dir() / "torch-compile" / str(os.getpid())
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(cache)
    assert any(cache.iterdir())  # inductor wrote there, not to /tmp/torchinductor_<user>


def _aten(op: str, inputs: dict[str, object]) -> Measurement:
    spec = BenchmarkSpec(
        namespace="torch",
        op=op,
        inputs=freeze_inputs(inputs),
        options=RunOptions(framework="torch", run_backward=False, **FAST).validated(),
        stage="graph",
    )
    return harness.measure(get_backend("torch").session, spec)


def test_an_aten_operator_is_traced_and_a_stage_that_computes_otherwise_fails():
    """``add`` traces to the same sums; dropout draws a new mask in the trace, which cannot match."""
    added = _aten("add", {"input": TensorSpec((8, 4)), "other": TensorSpec((8, 4))})
    assert added.status is Status.OK and added.stage_check.agrees and added.compile_s > 0
    dropped = _aten("dropout", {"input": TensorSpec((8, 4)), "p": 0.5, "train": True})
    assert dropped.status is Status.FAILED
    assert "graph stage's outputs differ from eager" in dropped.reason
    assert not dropped.stage_check.agrees and dropped.stage_check.max_abs_diff > 1e-4
    assert dropped.forward is None and dropped.compile_s > 0


def test_compare_allows_size_one_axes_only_and_tolerance_1e_4():
    assert compare([np.float32(2.0)], [np.array([2.00005])]).agrees
    assert not compare([np.ones(3)], [np.ones(3) * 1.01]).agrees
    assert "shape" in compare([np.ones((2, 3))], [np.ones((3, 2))]).detail
    assert not compare([np.array([1.0, np.inf])], [np.array([1.0, 5.0])]).agrees
    assert "2 outputs" in compare([np.ones(1)], [np.ones(1), np.ones(1)]).detail
    spectrum = np.array([1 + 1j, 2 + 2j])
    assert compare([spectrum], [spectrum.copy()]).agrees
    assert not compare([spectrum], [spectrum.conj()]).agrees  # the imaginary parts count


def test_every_configuration_runs_in_every_stage_asked_for_one_after_another():
    backend = get_backend("mxnet")
    op = next(o for o in backend.operators() if o.name == "box_iou")
    specs = specs_for(op, SweepConfig(factors=SweepFactors(stages=("eager", "graph"))), backend)
    assert [s.stage for s in specs] == ["eager", "graph"] * len(longtail.entry("box_iou").sizes)
    assert specs[0].inputs == specs[1].inputs


def test_the_stage_is_in_every_record_in_the_row_key_and_read_back():
    spec = BenchmarkSpec("opperf.operators.longtail", "box_iou", (), RunOptions(), category=longtail.CATEGORY)
    check = StageCheck(True, 1e-7)
    eager = Measurement(spec=spec, status=Status.OK, forward=(2e-3, 2e-3))
    graph = Measurement(
        spec=BenchmarkSpec(**{**spec.__dict__, "stage": "graph"}),
        status=Status.OK,
        forward=(1e-3, 1e-3),
        compile_s=0.5,
        stage_check=check,
    )
    records = [record(eager), record(graph)]
    assert [r["stage"] for r in records] == ["eager", "graph"]
    assert records[1]["compile_s"] == 0.5 and records[1]["stage_check"]["agrees"] is True
    assert record_key(records[0]) != record_key(records[1])
    assert record_key(records[0]).differing(record_key(records[1])) == ("stage",)
    restored = measurement_from_record(records[1])
    assert restored.spec.stage == "graph" and restored.compile_s == 0.5 and restored.stage_check == check
    assert record(restored) == records[1]


def _record(op: str, stage: str, median: float | None, profiler: str = "python") -> dict[str, object]:
    return {
        "framework": "torch",
        "namespace": longtail.NAMESPACE,
        "op": op,
        "category": longtail.CATEGORY,
        "inputs": {"n": 1},
        "stage": stage,
        "profiler": profiler,
        "status": "ok" if median else "skipped",
        "forward": {"samples_s": [median]} if median else None,
    }


def _read(records):
    return results_file({"results": records}, "test.json").rows


def test_per_tag_speedup_is_the_geometric_mean_over_configurations_with_skips_counted():
    measured = [
        ("bbox2roi", "eager", 8e-3),
        ("bbox2roi", "compile", 2e-3),  # 4x
        ("nms_loop", "eager", 1e-3),
        ("nms_loop", "compile", 1e-3),  # 1x
        ("nms_loop", "graph", None),  # skipped
        ("bbox2roi", "graph", 4e-3),  # 2x
    ]
    results = [_record(*found) for found in measured]
    figures = {(f.tag, f.stage): f for f in tag_speedups(_read(results))}
    assert figures["ForLoop", "compile"].speedup == pytest.approx(2.0)  # sqrt(4 * 1)
    assert figures["ForLoop", "graph"].speedup == pytest.approx(2.0)
    assert (figures["ForLoop", "graph"].measured, figures["ForLoop", "graph"].not_measured) == (1, 1)
    assert figures["InputAware", "graph"].speedup is None  # only nms_loop, skipped
    assert ("Reduce", "graph") not in figures
    native = _read([_record(*found, profiler="native") for found in measured])
    assert tag_speedups(native) == []
    assert "--profiler python" in render_tag_speedups(native)
    assert render_tag_speedups(_read(results)).count("| ForLoop") == 2


@pytest.mark.parametrize("framework", ["mxnet", "torch"])
def test_a_piecewise_constant_long_tail_operator_gets_no_backward_pass_with_the_reason(framework):
    # map_roi_levels is floor(log2(.)) clipped: MXNet's backward through it crashed the worker.
    measured = _measure(framework, "map_roi_levels", "eager", run_backward=True)
    assert measured.status is Status.OK, measured.reason
    assert measured.forward and measured.backward is None
    assert "piecewise constant" in measured.backward_reason
    differentiable = _measure(framework, "bbox2delta", "eager", run_backward=True)
    assert differentiable.backward and differentiable.backward_reason is None


def test_a_stage_an_operator_cannot_take_leaves_its_coverage_ok_unless_nothing_else_ran():
    eager = _measure("mxnet", "bbox2delta", "eager")
    compiled = _measure("mxnet", "bbox2delta", "compile")  # MXNet has no compile stage
    failed = Measurement(spec=compiled.spec, status=Status.FAILED, reason="outputs differ")
    assert eager.status is Status.OK and compiled.status is Status.SKIPPED
    assert Coverage.of([eager, compiled], registered=1).operators[0].status is Status.OK
    only = Coverage.of([compiled], registered=1).operators[0]
    assert only.status is Status.SKIPPED and "no compile stage" in only.reason
    assert Coverage.of([eager, failed], registered=1).operators[0].status is Status.FAILED


def test_an_operators_coverage_gives_the_reason_of_its_worst_status():
    """A skipped configuration's reason never stands beside a failure: each status keeps its own."""
    spec = BenchmarkSpec("mx.nd", "Pooling", (), category="pooling")
    skipped = Measurement(spec=spec, status=Status.SKIPPED, reason="no backward on this device")
    failed = Measurement(spec=spec, status=Status.FAILED, reason="kernel larger than input")
    for order in ([skipped, failed], [failed, skipped]):
        (state,) = Coverage.of(order, registered=1).operators
        assert (state.status, state.reason) == (Status.FAILED, "kernel larger than input")


def test_a_pass_of_several_calls_gives_per_call_figures():
    """A CUDA graph's replay runs ``calls`` calls: its samples, host latency and device work are
    divided among them."""
    from opperf.measure.harness import HostLatency, Samples
    from opperf.measure.sampling import Sampled, StopReason
    from opperf.results.measurement import DeviceWork

    sampled = Sampled((20e-6, 40e-6), None, warmup_runs=1, stop_reason=StopReason.FIXED, met_target=None)
    samples = Samples(
        sampled,
        timer="device",
        host=HostLatency((60e-6,)),
        device_work=(DeviceWork("forward", "kernel", "k", 20.0, 30e-6),),
    )
    each = samples.per_call(20)
    assert each.sampled.forward == pytest.approx((1e-6, 2e-6)) and each.sampled.backward is None
    assert each.host.forward == pytest.approx((3e-6,)) and each.host.backward is None
    assert (each.device_work[0].per_call, each.device_work[0].seconds) == (1.0, pytest.approx(1.5e-6))
    assert samples.per_call(1) is samples


@pytest.mark.parametrize(
    ("framework", "stages", "runs"),
    [
        ("jax", "graph", "eager, compile"),
        ("jax", "graph,cudagraph", "eager, compile"),
        ("mxnet", "compile", "eager, graph"),
    ],
)
def test_a_sweep_of_stages_the_framework_runs_none_of_is_refused(tmp_path, capsys, framework, stages, runs):
    """Refused before anything runs, where every operator was recorded skipped with exit 0; a stage
    beside one it runs is still recorded skipped, with its reason (above)."""
    argv = [
        "--framework",
        framework,
        "--ops",
        "exp",
        "--stages",
        stages,
        "--output-file",
        str(tmp_path / "o.json"),
    ]
    assert main(argv) == 2
    assert f"--stages {stages}: " in capsys.readouterr().err and not list(tmp_path.iterdir())
    assert set(describe(framework).stages) <= set(STAGES) and runs in ", ".join(describe(framework).stages)
