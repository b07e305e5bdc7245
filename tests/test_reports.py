"""Rendering: JSON contract, golden Markdown (times normalised), CSV, schema versions."""

import json
import re
from pathlib import Path

import pytest

from opperf.report.csv_report import render_csv
from opperf.report.json_report import load_json, render_json
from opperf.report.markdown import render_markdown
from opperf.results.document import SCHEMA_VERSION, SchemaError
from opperf.results.measurement import BenchmarkSpec, Measurement, Status, TensorSpec, freeze_inputs
from opperf.sweep.document import build_document

GOLDEN = Path(__file__).parent / "golden"
PEAKS = {
    "bandwidth_bytes_per_s": 20e9,
    "gemm_flops_per_s": 100e9,
    "measured_at": "2026-11-21T00:00:00+00:00",
    "method": "fixed for this test",
    "blas_threads": 2,
}
ENVIRONMENT = {
    "framework_version": "1.9.1",
    "device": "cpu(0)",
    "dtype": "float32",
    "profiler": "native",
    "harness_overhead_s": 1e-6,
    "machine_peaks": PEAKS,
}


def _spec(op, category, **inputs):
    return BenchmarkSpec("mx.nd", op, freeze_inputs(inputs), category=category)


MEASUREMENTS = (
    Measurement(
        _spec("broadcast_add", "binary_broadcast", lhs=TensorSpec((4, 4)), rhs=TensorSpec((4, 1))),
        Status.OK,
        forward=(0.001, 0.002, 0.003),
        backward=(0.004, 0.004, 0.005),
        memory_peak_bytes=64,
        profiled_ops=("broadcast_add",),
    ),
    Measurement(
        _spec("Pooling", "pooling", data=TensorSpec((1, 1, 4, 4)), kernel=(2, 2), pool_type="max"),
        Status.OK,
        forward=(0.5e-3,),
        backward_reason="backward not requested",
        memory_peak_bytes=16,
    ),
    Measurement(
        _spec("Pooling", "pooling", data=TensorSpec((1, 1, 4, 4)), kernel=(2, 2), pool_type="avg"),
        Status.OK,
        forward=(0.25e-3,),
        memory_peak_bytes=16,
    ),
    Measurement(
        BenchmarkSpec("mx.np", "_npi_add", freeze_inputs({"lhs": TensorSpec((2,))}), function="add"),
        Status.OK,
        forward=(1e-6,),
        backward=(2e-6,),
        memory_peak_bytes=8,
    ),
    Measurement(_spec("_foreach", "internal"), Status.SKIPPED, reason="takes a subgraph"),
    Measurement(_spec("dot", "gemm", lhs=TensorSpec((4, 5))), Status.FAILED, reason="MXNetError: shapes"),
)


def _document():
    return build_document(MEASUREMENTS, ENVIRONMENT, registered=1167)


def test_json_contract_fields():
    document = json.loads(render_json(_document()))
    assert document["schema_version"] == SCHEMA_VERSION
    assert document["environment"] == ENVIRONMENT
    coverage = document["coverage"]
    assert (coverage["operators"], coverage["ok"], coverage["skipped"], coverage["failed"]) == (5, 3, 1, 1)
    assert coverage["by_category"]["pooling"]["ok"] == 1
    first = document["results"][0]
    for key in (
        "framework",
        "namespace",
        "op",
        "category",
        "inputs",
        "status",
        "reason",
        "forward",
        "backward",
        "memory_peak_bytes",
    ):
        assert key in first
    assert first["inputs"] == {"lhs": {"shape": [4, 4]}, "rhs": {"shape": [4, 1]}}
    assert first["forward"]["samples_s"] == [0.001, 0.002, 0.003]
    assert first["forward"]["median_s"] == 0.002
    assert document["results"][1]["backward"] is None


def test_configurations_of_one_operator_are_all_kept():
    pooling = [r for r in _document()["results"] if r["op"] == "Pooling"]
    assert [r["inputs"]["pool_type"] for r in pooling] == ["max", "avg"]


def test_markdown_golden():
    text = render_markdown(_document())
    assert text == (GOLDEN / "report.md").read_text()


def test_markdown_names_the_function_users_call():
    text = render_markdown(_document())
    assert "| mx.np.add (_npi_add) " in text
    assert "| mx.nd.broadcast_add " in text


def test_markdown_times_are_milliseconds():
    text = render_markdown(_document())
    assert re.search(r"\| mx\.nd\.broadcast_add +\| lhs=4x4, rhs=4x1 +\| 2\.0000 ", text)


def test_csv_has_one_row_per_configuration():
    lines = render_csv(_document()).strip().splitlines()
    assert len(lines) == 1 + len(MEASUREMENTS)
    assert "forward_median_s" in lines[0]


def test_unknown_schema_version_is_refused():
    with pytest.raises(SchemaError, match="schema_version 99"):
        load_json(json.dumps({"schema_version": 99}))


def test_stored_version_1_file_still_loads_and_renders():
    document = load_json((GOLDEN / "results_v1.json").read_text())
    statuses = {r["op"]: r["status"] for r in document["results"]}
    assert statuses == {"broadcast_add": "ok", "argmax_channel": "ok", "_foreach": "skipped"}
    no_gradient = next(r for r in document["results"] if r["op"] == "argmax_channel")
    assert no_gradient["backward"] is None and "no gradient" in no_gradient["backward_reason"]
    assert "## binary_broadcast" in render_markdown(document)
    assert len(render_csv(document).strip().splitlines()) == 1 + len(document["results"])


def test_coverage_lists_each_operator_once_with_its_state_and_aliases():
    document = build_document(MEASUREMENTS, ENVIRONMENT, registered=1167, aliases={"Pooling": ("pooling",)})
    entries = document["coverage"]["by_operator"]
    assert sorted(e["op"] for e in entries) == sorted({m.spec.op for m in MEASUREMENTS})
    by_op = {e["op"]: e for e in entries}
    assert by_op["Pooling"]["aliases"] == ["pooling"] and by_op["Pooling"]["status"] == "ok"
    assert by_op["_foreach"] == {
        "op": "_foreach",
        "category": "internal",
        "status": "skipped",
        "reason": "takes a subgraph",
        "aliases": [],
    }
    coverage = document["coverage"]
    assert (
        sum(coverage[key] for key in ("ok", "skipped", "failed", "crashed", "timeout"))
        == coverage["operators"]
    )


def test_flags_say_when_figures_deserve_doubt():
    results = {r["function"]: r for r in _document()["results"] if r["status"] == "ok"}
    assert results["mx.nd.broadcast_add"]["flags"] == ["noisy"]  # IQR is 50% of the median
    # 1 µs against a harness overhead of 1 µs.
    assert results["mx.np.add"]["flags"] == ["overhead_dominated"]
    busy = Measurement(
        MEASUREMENTS[2].spec, Status.OK, forward=(1e-3,) * 5, met_target=False, competing_load=1.0
    )
    (record,) = build_document([busy], ENVIRONMENT, registered=1)["results"]
    assert record["flags"] == ["imprecise", "busy_machine"]


def test_roofline_counts_the_forward_work():
    broadcast_add = _document()["results"][0]
    roofline = broadcast_add["roofline"]
    # Reads 4x4 and 4x1 float32, writes 4x4: 144 bytes; one addition per output element.
    assert (roofline["bytes"], roofline["flops"]) == (144, 16)
    assert roofline["gb_per_s"] == pytest.approx(144 / 0.002 / 1e9)
    assert roofline["fraction_of_peak"]["bound"] == "memory"
    assert roofline["fraction_of_peak"]["bandwidth"] == pytest.approx(144 / 0.002 / 20e9)


def test_hud_records_follow_the_oss_benchmark_database_format():
    from opperf.report.hud import hud_records

    records = hud_records(json.loads(render_json(_document())))
    ok_phases = sum(
        bool(r["forward"]) + bool(r["backward"]) for r in _document()["results"] if r["status"] == "ok"
    )
    assert len(records) == ok_phases
    first = records[0]
    assert set(first) == {"benchmark", "model", "metric", "runners"}
    assert first["benchmark"]["name"] == "opperf" and first["model"]["type"] == "operator"
    assert first["metric"]["name"] in ("forward_median_ms", "backward_median_ms")
    assert all(isinstance(v, float) for v in first["metric"]["benchmark_values"])


@pytest.mark.parametrize("check", [{"max_abs_diff": 0.1}, {"agrees": None}, ["agrees"]])
def test_a_stage_check_that_does_not_say_whether_outputs_agreed_is_an_error_not_a_traceback(
    tmp_path, capsys, check
):
    from opperf.cli import main

    document = json.loads(render_json(_document()))
    document["results"][0]["stage_check"] = check
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document))
    for command in (
        ["diff", str(path), str(path)],
        ["report", str(path), "--output-file", str(tmp_path / "r.html")],
    ):
        assert main(command) == 2
        error = capsys.readouterr().err
        assert error.startswith("error:") and "stage_check" in error and "Traceback" not in error
