"""Values a hostile CI job or a hurried user passes, refused before anything runs with a message that
names the fix (or, for ``--timeout none``, the explicit way to ask for no time limit)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from opperf import run_benchmark_operator
from opperf.cli import main
from opperf.utils.errors import OpperfError

QUICK = ["--ops", "exp", "--runs", "2", "--warmup", "0", "--threads", "1", "--no-isolation", "--quiet"]


@pytest.mark.parametrize("argv", [["sweep", *QUICK], ["compare", "mx.nd,torch", *QUICK[:2]]])
def test_an_empty_device_is_refused_not_taken_for_the_default(argv, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--ctx", ""])
    assert stopped.value.code == 2
    assert "an empty device names none" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("ctx", "expected"),
    [("cpu(5)", "the CPU is one device"), ("tpu", "malformed device 'tpu'"), ("gpu(-1)", "malformed device")],
)
def test_explain_refuses_a_device_no_machine_has(ctx, expected, capsys):
    assert main(["explain", "exp", "--ctx", ctx]) == 2
    assert expected in capsys.readouterr().err


def test_explain_takes_a_gpu_spelling_without_a_gpu(capsys):
    # explain says which rules and skips apply to a device kind: no GPU need be here to ask about one.
    assert main(["explain", "Convolution", "--ctx", "cuda:0"]) == 0
    assert "input configurations" in capsys.readouterr().out


@pytest.mark.parametrize("size", [(-1, 4), (4, 2.5), "big", (True, 4)])
def test_run_benchmark_operator_refuses_a_malformed_size(size):
    with pytest.raises(OpperfError, match="size"):
        run_benchmark_operator(name="add", size=size)


@pytest.mark.slow
def test_run_benchmark_operator_takes_numpy_integer_sizes():
    [entry, *_] = run_benchmark_operator(name="add", size=(np.int64(4), np.int32(4)), runs=2, warmup=0)
    assert entry["add"][0]["inputs"]["lhs"] == (4, 4)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "forever"])
def test_timeout_takes_no_nan_or_inf_and_names_none(value, capsys):
    with pytest.raises(SystemExit):
        main([*QUICK, "--timeout", value])
    assert "none" in capsys.readouterr().err


@pytest.mark.parametrize("spelling", ["none", "None"])
def test_timeout_none_runs_without_a_limit_and_records_it(spelling, tmp_path):
    output = tmp_path / "r.json"
    assert main([*QUICK, "--timeout", spelling, "--output-file", str(output)]) == 0
    document = json.loads(output.read_text())
    assert document["environment"]["timeout_s"] is None
    assert {record["status"] for record in document["results"]} == {"ok"}


def test_compare_refuses_a_device_before_any_namespace_runs(capsys):
    assert main(["compare", "mx.nd,torch", "--ops", "exp", "--runs", "2", "--ctx", "cpu(5)"]) == 2
    captured = capsys.readouterr()
    assert "the CPU is one device" in captured.err and captured.out == ""  # no table of failures


@pytest.mark.parametrize("ctx", ["cpu(5)", "gpu(7)"])
def test_run_benchmark_operator_refuses_a_device_it_would_fail_on(ctx):
    with pytest.raises(OpperfError, match=r"device (cpu|gpu)\("):
        run_benchmark_operator(name="add", namespaces=("mx.nd", "torch"), ctx=ctx)


def test_a_non_finite_input_value_reaches_the_results_file_and_back():
    # JSON has no infinity: clamp(min=-inf) is written as {"float": "-inf"} and read back as -inf.
    import torch

    from opperf import RunOptions, benchmark
    from opperf.report.json_report import load_json, render_json
    from opperf.results.document import SCHEMA_VERSION, measurement_from_record, record
    from opperf.results.inputs import describe_inputs

    options = RunOptions(warmup=0, runs=2, run_backward=False)
    (measurement,) = benchmark(torch.clamp, [{"input": (8, 8), "min": float("-inf"), "max": 0.5}], options)
    assert measurement.status.value == "ok", measurement.reason
    document = {"schema_version": SCHEMA_VERSION, "environment": {}, "results": [record(measurement)]}
    (written,) = load_json(render_json(document))["results"]
    assert written["inputs"]["min"] == {"float": "-inf"} and written["inputs"]["max"] == 0.5
    assert dict(measurement_from_record(written).spec.inputs)["min"] == float("-inf")
    assert describe_inputs(written["inputs"]) == "input=8x8, min=-inf, max=0.5"
