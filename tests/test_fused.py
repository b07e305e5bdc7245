"""Fused patterns: each variant measured by the one harness on small shapes, fusion proved from the
optimised graph (and a backend that fused nothing skipped with "graph unchanged"), outputs checked
against the unfused chain (which catches ``fuse_modules`` moving a ReLU across an addition), MKL-DNN's
fused backward refused for the reason it is refused, and the variant in records, row keys and reports."""

from __future__ import annotations

import json

import numpy as np
import pytest

from opperf.frameworks import get_backend
from opperf.measure import harness
from opperf.operators import fused
from opperf.operators.rules import NoRuleError
from opperf.report.csv_report import render_csv
from opperf.report.fused import fused_rows, render_fused
from opperf.report.html_views import staged_rows
from opperf.results.document import measurement_from_record, record
from opperf.results.key import record_key
from opperf.results.load import read_run
from opperf.results.measurement import BenchmarkSpec, Measurement, Status, freeze_inputs
from opperf.results.options import RunOptions, SweepFactors
from opperf.results.record import read_record
from opperf.results.rows import results_file
from opperf.sweep.document import build_document
from opperf.sweep.run import SweepConfig, specs_for
from opperf.verdicts.diff import diff
from opperf.verdicts.markdown import table_row
from opperf.verdicts.table import render_csv as render_diff_csv

FAST = {"warmup": 1, "runs": 3, "profiler": "python", "threads": 1}


def _spec(framework: str, name: str, stage: str, variant: str, **options) -> BenchmarkSpec:
    pattern = fused.entry(name)
    return BenchmarkSpec(
        namespace=fused.NAMESPACE,
        op=name,
        inputs=freeze_inputs(pattern.configure(*pattern.small)),
        options=RunOptions(framework=framework, **{**FAST, **options}).validated(),
        category=fused.CATEGORY,
        stage=stage,
        variant=variant,
    )


def _measure(framework: str, name: str, stage: str, variant: str, **options) -> Measurement:
    return harness.measure(get_backend(framework).session, _spec(framework, name, stage, variant, **options))


@pytest.mark.parametrize("framework", ["mxnet", "torch"])
def test_each_framework_registers_the_patterns_and_expands_their_variants_per_stage(framework):
    backend = get_backend(framework)
    patterns = [op for op in backend.operators() if op.category == fused.CATEGORY]
    assert [op.name for op in patterns] == [
        "conv_relu", "conv_bn", "conv_bn_relu", "conv_bn_add_relu", "fc_relu", "bn_relu",
    ]  # fmt: skip
    op = patterns[0]
    options = RunOptions(framework=framework)
    both = SweepConfig(options=options, factors=SweepFactors(stages=("eager", "fused")))
    specs = specs_for(op, both, backend)
    expected = {
        "mxnet": ["unfused", "parts", "mkldnn", "contrib"],  # onednn is 2.x's: this 1.x build lacks it
        "torch": ["unfused", "parts", "ao", "freeze"],
    }
    per_config = len(expected[framework])
    assert [s.variant for s in specs[:per_config]] == expected[framework]
    assert len(specs) == per_config * len(fused.entry(op.name).sizes)
    # Any other operator runs its other stages and no fused one.
    add = next(o for o in backend.operators() if o.name in ("broadcast_add", "add"))
    assert {(s.stage, s.variant) for s in specs_for(add, both, backend)} == {("eager", "")}
    only_fused = SweepConfig(options=options, factors=SweepFactors(stages=("fused",)))
    with pytest.raises(NoRuleError, match="fused stage is fused patterns' only"):
        specs_for(add, only_fused, backend)


def test_mxnet_mkldnn_fuses_conv_bn_relu_into_one_node_agrees_and_refuses_backward():
    measured = _measure("mxnet", "conv_bn_relu", "fused", "mkldnn")
    assert measured.status is Status.OK, measured.reason
    check = measured.stage_check
    assert check.graph_ops == ("_sg_mkldnn_conv",) and check.fused is True
    assert check.agrees and check.max_abs_diff < 1e-4
    assert measured.backward is None and "inference only" in measured.backward_reason
    assert 0 < measured.compile_s < 30 and len(measured.forward) == 3


@pytest.mark.parametrize(
    ("name", "variant", "graph"),
    [
        ("conv_relu", "onednn", "['Convolution', 'Activation']"),  # 2.x's name: no error, no fusion
        ("bn_relu", "mkldnn", "['BatchNorm', 'Activation']"),  # MKL-DNN has no bn+relu fusion
    ],
)
def test_an_mxnet_backend_that_fused_nothing_is_skipped_with_graph_unchanged(name, variant, graph):
    measured = _measure("mxnet", name, "fused", variant)
    assert measured.status is Status.SKIPPED and measured.forward is None
    assert measured.reason.startswith(fused.GRAPH_UNCHANGED) and graph in measured.reason


def test_mxnet_backward_through_the_mkldnn_fused_block_gives_zero_gradients_the_reason_it_is_refused():
    import mxnet as mx
    from mxnet import autograd

    from opperf.frameworks.mxnet.fused import build

    spec = _spec("mxnet", "conv_bn_relu", "fused", "mkldnn")
    plain, optimised = build(spec), build(spec)
    data = mx.nd.array(np.random.default_rng(0).uniform(-1, 1, (1, 4, 8, 8)))
    optimised.block.optimize_for(data, backend="MKLDNN")
    gradients = []
    for built in (plain, optimised):
        x = data.copy()
        x.attach_grad()
        with autograd.record(train_mode=False):
            out = built.block(x)
        out.backward()
        gradients.append(x.grad.asnumpy())
    assert np.abs(gradients[0]).max() > 1e-3  # the unfused block's gradient is real
    assert not gradients[1].any()  # the fused block's is all zeros, without an error


@pytest.mark.parametrize(
    ("name", "graph"),
    [
        ("bn_relu", ("_contrib_BatchNormWithReLU",)),
        ("conv_bn_relu", ("Convolution", "_contrib_BatchNormWithReLU")),
    ],
)
def test_mxnet_contrib_fuses_batchnorm_and_relu_into_one_operator_and_takes_backward(name, graph):
    measured = _measure("mxnet", name, "fused", "contrib")
    assert measured.status is Status.OK, measured.reason
    assert measured.stage_check.graph_ops == graph and measured.stage_check.fused is True
    assert measured.stage_check.agrees and measured.compile_s is None
    assert measured.backward_reason is None and len(measured.backward) == 3


def test_mxnet_contribs_gradient_agrees_with_the_unfused_chains_in_training_mode_only():
    """Why the contrib variant takes backward: recorded in training mode (opperf's only backward mode)
    its gradient is the chain's; recorded in predict mode it is wrong without an error."""
    import mxnet as mx
    from mxnet import autograd

    from opperf.frameworks.mxnet.fused import build, contrib_layers

    spec = _spec("mxnet", "bn_relu", "fused", "contrib")
    plain, contrib = build(spec), build(spec, contrib_layers(("bn", "relu")))
    rng = np.random.default_rng(0)
    data, head = (mx.nd.array(rng.uniform(-1, 1, (2, 4, 8, 8))) for _ in range(2))

    def gradient(built, train_mode: bool) -> np.ndarray:
        x = data.copy()
        x.attach_grad()
        with autograd.record(train_mode=train_mode):
            out = built.block(x)
        out.backward(head)
        return x.grad.asnumpy()

    assert np.abs(gradient(plain, True)).max() > 0.1
    np.testing.assert_allclose(gradient(contrib, True), gradient(plain, True), rtol=1e-5, atol=1e-6)
    assert np.abs(gradient(contrib, False) - gradient(plain, False)).max() > 0.1


def test_mxnet_contrib_has_no_operator_for_conv_relu_so_the_graph_is_unchanged():
    measured = _measure("mxnet", "conv_relu", "fused", "contrib")
    assert measured.status is Status.SKIPPED and measured.forward is None
    assert measured.reason.startswith(fused.GRAPH_UNCHANGED) and "contrib" in measured.reason


def test_mxnet_proof_is_read_from_the_exported_graph_and_fails_clearly_when_there_is_none():
    from opperf.frameworks.mxnet.fused import build, exported_ops
    from opperf.measure.harness import SkipError

    built = build(_spec("mxnet", "conv_bn", "graph", "unfused"))
    with pytest.raises(SkipError, match=f"^{fused.CANNOT_PROVE}: .*HybridBlock.export"):
        exported_ops(built.block)  # never hybridized: no graph to export
    import mxnet as mx

    built.block.hybridize()
    built.block(mx.nd.ones((1, 4, 8, 8)))
    assert exported_ops(built.block) == ["Convolution", "BatchNorm"]


def test_mxnet_parts_and_hybridized_chain_agree_with_the_unfused_one_and_take_backward():
    parts = _measure("mxnet", "conv_bn_add_relu", "eager", "parts")
    graph = _measure("mxnet", "conv_bn_add_relu", "graph", "unfused")
    for measured in (parts, graph):
        assert measured.status is Status.OK, measured.reason
        assert measured.stage_check.agrees and len(measured.backward) == 3
    assert graph.stage_check.graph_ops == ("Convolution", "BatchNorm", "elemwise_add", "Activation")
    assert graph.stage_check.fused is False


def test_torch_ao_fusion_across_the_residual_add_is_caught_as_wrong_output():
    wrong = _measure("torch", "conv_bn_add_relu", "fused", "ao")
    assert wrong.status is Status.FAILED and "differ" in wrong.reason
    assert not wrong.stage_check.agrees and wrong.stage_check.max_abs_diff > 0.05
    assert wrong.stage_check.graph_ops == ("ConvReLU2d",)  # it did fuse: into the wrong computation
    right = _measure("torch", "conv_bn_relu", "fused", "ao")
    assert right.status is Status.OK and right.stage_check.agrees
    assert right.stage_check.graph_ops == ("ConvReLU2d",) and right.stage_check.fused is True
    assert len(right.backward) == 3


def test_torch_freeze_folds_batchnorm_and_leaves_conv_relu_unchanged():
    folded = _measure("torch", "conv_bn", "fused", "freeze")
    assert folded.status is Status.OK, folded.reason
    assert "aten::batch_norm" not in folded.stage_check.graph_ops and folded.stage_check.fused
    assert folded.stage_check.agrees
    unchanged = _measure("torch", "conv_relu", "fused", "freeze")
    assert unchanged.status is Status.SKIPPED and unchanged.reason.startswith(fused.GRAPH_UNCHANGED)


@pytest.mark.slow
def test_torch_compile_lists_inductors_kernels_as_proof_and_fuses_bn_relu_after_the_convolution():
    measured = _measure("torch", "conv_bn_relu", "compile", "inductor", run_backward=False)
    assert measured.status is Status.OK, measured.reason
    kernels = measured.stage_check.graph_ops
    assert "extern_kernels.convolution" in kernels  # the convolution stays separate without freezing
    assert any(k.startswith("cpp_fused_") and "batch_norm" in k and "relu" in k for k in kernels)
    assert measured.stage_check.fused and measured.stage_check.agrees and measured.compile_s > 0


@pytest.mark.slow
def test_torch_inductor_freezing_folds_batchnorm_fuses_relu_into_the_convolution_and_refuses_backward():
    measured = _measure("torch", "conv_bn_relu", "compile", "inductor-freezing")
    assert measured.status is Status.OK, measured.reason
    kernels = measured.stage_check.graph_ops
    assert "torch.ops.mkldnn._convolution_pointwise.default[relu]" in kernels
    assert not any("batch_norm" in k for k in kernels)  # folded into the convolution's weights
    assert measured.stage_check.fused and measured.stage_check.agrees
    from opperf.frameworks.torch import fused as torch_fused

    assert measured.backward is None and measured.backward_reason == torch_fused.FREEZING_BACKWARD


@pytest.mark.slow
def test_torch_inductor_without_freezing_does_not_fuse_conv_relu_and_says_so():
    measured = _measure("torch", "conv_relu", "compile", "inductor", run_backward=False)
    assert measured.status is Status.OK, measured.reason
    kernels = measured.stage_check.graph_ops
    assert "extern_kernels.convolution" in kernels and any("relu" in k for k in kernels)
    assert measured.stage_check.fused is False and measured.stage_check.agrees


@pytest.mark.slow
def test_torch_inductor_that_refuses_the_tracing_options_is_skipped_as_unprovable(monkeypatch):
    """A PyTorch whose inductor lost an option the proof sets (simulated by asking for one that never
    existed) skips the variant with the reason, before compiling anything."""
    from opperf.frameworks.torch import fused as torch_fused

    options = {**torch_fused._PROOF_OPTIONS, "trace.no_such_option": True}
    monkeypatch.setattr(torch_fused, "_PROOF_OPTIONS", options)
    measured = _measure("torch", "conv_relu", "compile", "inductor", run_backward=False)
    assert measured.status is Status.SKIPPED and measured.forward is None
    assert measured.reason.startswith(f"{fused.CANNOT_PROVE}: torch.compile refuses the options")
    assert "trace.no_such_option" in measured.reason


def test_torch_inductor_proof_fails_clearly_without_generated_code_and_reads_epilogues(tmp_path):
    from opperf.frameworks.torch.fused import inductor_fused, inductor_kernels
    from opperf.measure.harness import SkipError

    with pytest.raises(SkipError, match=f"^{fused.CANNOT_PROVE}: inductor traced no output_code.py"):
        inductor_kernels(tmp_path / "empty")
    code = tmp_path / "trace" / "model__0_inference_0.0" / "output_code.py"
    code.parent.mkdir(parents=True)
    code.write_text("def call(args):\n    buf0 = empty_strided_cpu((4, ), (1, ), torch.float32)\n")
    with pytest.raises(SkipError, match=f"^{fused.CANNOT_PROVE}: no kernel call"):
        inductor_kernels(tmp_path / "trace")
    code.parent.mkdir(parents=True)
    code.write_text(
        "def call(args):\n"
        "    cpp_fused_relu_0(arg6_1, buf0, buf1)\n"
        "    buf2 = torch.ops.mkldnn._convolution_pointwise.default(buf1, w, b, 1, 'relu', [None], '')\n"
        "    extern_kernels.convolution(buf0, buf1, arg1_1, stride=(1, 1))\n"
    )
    kernels = inductor_kernels(tmp_path / "trace")
    assert kernels == [
        "cpp_fused_relu_0",
        "torch.ops.mkldnn._convolution_pointwise.default[relu]",
        "extern_kernels.convolution",
    ]
    assert not (tmp_path / "trace").exists()  # read once, then removed
    assert inductor_fused(("conv", "relu"), kernels[1:2])  # ReLU as the convolution's epilogue
    assert not inductor_fused(("conv", "relu"), ["extern_kernels.convolution", "cpp_fused_relu_0"])
    assert inductor_fused(("conv", "bn"), ["torch.ops.mkldnn._convolution_pointwise.default"])  # bn folded


def test_the_variant_is_in_records_row_keys_csv_reports_and_diffs(tmp_path):
    measured = [
        _measure("mxnet", "conv_relu", stage, variant, runs=3)
        for stage, variant in (
            ("eager", "unfused"),
            ("eager", "parts"),
            ("fused", "mkldnn"),
            ("fused", "onednn"),
        )
    ]
    records = [record(m) for m in measured]
    assert [r["variant"] for r in records] == ["unfused", "parts", "mkldnn", "onednn"]
    assert record_key(records[0]).differing(record_key(records[1])) == ("variant",)
    assert record(measurement_from_record(records[2])) == records[2]
    assert records[2]["stage_check"]["graph_ops"] == ["_sg_mkldnn_conv"]
    read = results_file({"results": records}, "fused.json").rows
    rows = fused_rows(read)
    assert [row[5] for row in rows] == ["fused/mkldnn", "fused/onednn"]
    base, mkldnn = records[0]["forward"]["median_s"], records[2]["forward"]["median_s"]
    assert rows[0][7] == f"{base / mkldnn:.2f}x" and rows[0][8] == "yes"
    assert rows[1][8] == "no (graph unchanged)" and rows[1][6] == "skipped"
    assert "## Fused patterns" in render_fused(read)
    csv = render_csv({"results": records}).splitlines()
    assert "variant" in csv[0].split(",") and "fused" in csv[0].split(",")
    # The HTML report: labels name the variant, and a fused variant's speedup is over the unfused chain.
    rows = [read_record(r, "run.json", "run.json") for r in records]
    assert rows[1].label.endswith("parts]") and rows[2].label.endswith("fused, mkldnn]")
    (speedup,) = [s for s in staged_rows(rows) if s.staged.variant == "mkldnn"]
    assert speedup.eager is rows[0] and speedup.speedup == pytest.approx(base / mkldnn)
    # A diff of the file with itself: the variant is a column of its CSV and named in its Markdown.
    path = tmp_path / "run.json"
    path.write_text(json.dumps(build_document(measured, {}, registered=len(measured))))
    compared = diff([read_run(str(path))], [read_run(str(path))], threshold=0.05, alpha=0.05)
    assert "variant" in render_diff_csv(compared).splitlines()[0].split(",")
    assert any(table_row(row)[0].endswith("[fused, mkldnn]") for row in compared.rows)


def test_explain_shows_a_patterns_layers_and_variants_and_float64_runs(capsys):
    from opperf.cli import main

    assert main(["explain", "conv_bn_add_relu", "--framework", "mxnet"]) == 0
    out = capsys.readouterr().out
    assert "layers:      conv -> bn -> add -> relu" in out
    assert "fused/mkldnn: optimize_for(x, backend='MKLDNN')" in out and "1. data=1x64x56x56" in out
    measured = _measure("torch", "conv_bn", "fused", "freeze", dtype="float64")
    assert measured.status is Status.OK and measured.stage_check.agrees


@pytest.mark.slow
def test_a_sweep_of_a_pattern_in_workers_keeps_variants_and_proofs_and_reports_them():
    from opperf.report.markdown import render_markdown
    from opperf.sweep.document import build_document
    from opperf.sweep.run import run_sweep

    options = RunOptions(budget_s=0.05, threads=1, profiler="python")
    factors = SweepFactors(stages=("eager", "fused"))
    result = run_sweep(SweepConfig(options=options, factors=factors, ops=("conv_relu",)))
    assert [(m.spec.stage, m.spec.variant) for m in result.measurements[:4]] == [
        ("eager", "unfused"), ("eager", "parts"), ("fused", "mkldnn"), ("fused", "contrib"),
    ]  # fmt: skip
    mkldnn = result.measurements[2]
    assert mkldnn.status is Status.OK and mkldnn.stage_check.graph_ops == ("_sg_mkldnn_conv",)
    assert result.measurements[3].reason.startswith(fused.GRAPH_UNCHANGED)
    document = build_document(result.measurements, result.environment.to_json(), result.registered)
    markdown = render_markdown(document)
    assert "## Fused patterns" in markdown and "[fused: mkldnn]" in markdown


def test_the_fused_stage_alone_is_refused_for_a_selection_of_no_pattern_and_labelled_where_skipped(
    tmp_path, capsys
):
    """``--stages fused`` over operators none of which is a pattern ran, exit 0, and wrote each one
    ``skipped`` as stage eager (never asked for) with empty inputs; beside a pattern, such an operator's
    skipped record now says the stage it could not take."""
    from opperf.cli import main

    quick = ["--stages", "fused", "--threads", "1", "--budget", "0.02", "--no-isolation", "--quiet"]
    assert main(["--ops", "exp,add", *quick, "--output-file", str(tmp_path / "none.json")]) == 2
    err = capsys.readouterr().err
    assert (
        "error: --stages fused: the fused stage is fused patterns' only (category fused), and none of" in err
    )
    assert not (tmp_path / "none.json").exists()
    out = tmp_path / "some.json"
    assert main(["--ops", "exp,conv_relu", *quick, "--output-file", str(out)]) == 0
    records = json.loads(out.read_text())["results"]
    (exp,) = [r for r in records if r["op"] == "exp"]
    assert (exp["status"], exp["stage"]) == ("skipped", "fused") and "fused patterns' only" in exp["reason"]
    assert {r["stage"] for r in records if r["op"] == "conv_relu"} == {"fused"}
