"""The same operator across mx.nd, mx.np/mx.npx and torch, on one input configuration."""

import pytest

from opperf import run_benchmark_operator
from opperf.benchmark import RunOptions
from opperf.cli import main
from opperf.comparison import Counterpart, compare, counterpart, translate

QUICK = RunOptions(warmup=1, runs=2, threads=1)
NAMESPACES = ("mx.nd", "mx.np", "torch")


def test_tensors_translate_by_position_and_attributes_by_the_mapping():
    pooling = counterpart("Pooling", "torch")
    configuration = {"data": (2, 3, 8, 8), "kernel": (2, 2), "pad": (1, 1), "pool_type": "avg"}
    assert pooling.function_name(configuration) == "avg_pool2d"
    assert translate(configuration, ["data"], ["input"], pooling) == {
        "input": (2, 3, 8, 8),
        "kernel_size": (2, 2),
        "padding": (1, 1),
    }
    assert counterpart("FullyConnected", "mx.np") == Counterpart("mx.npx", "fully_connected")
    assert counterpart("exp", "mx.np").name == "exp"  # matched by name


@pytest.mark.parametrize(
    ("name", "configuration"),
    [
        ("add", {"lhs": (16, 16), "rhs": (16, 16)}),
        ("FullyConnected", {"data": (4, 8), "weight": (6, 8), "bias": (6,), "num_hidden": 6}),
        (
            "Convolution",
            {"data": (2, 3, 8, 8), "weight": (4, 3, 3, 3), "bias": (4,), "kernel": (3, 3), "num_filter": 4},
        ),
        (
            "BatchNorm",
            {"data": (2, 3, 4, 4), "gamma": (3,), "beta": (3,), "moving_mean": (3,), "moving_var": (3,)},
        ),
    ],
)
def test_matched_operators_run_in_every_namespace_with_backward(name, configuration):
    (row,) = compare(name, [configuration], NAMESPACES, QUICK)
    assert not row.problems
    for namespace, measurement in row.measurements.items():
        assert measurement.status.value == "ok", (namespace, measurement.reason)
        assert measurement.forward and measurement.backward, (namespace, measurement.backward_reason)
    assert row.measurements["torch"].spec.framework == "torch"


def test_a_configuration_without_counterpart_is_reported_not_raised():
    (row,) = compare(
        "Pooling", [{"data": (2, 3, 8, 8), "kernel": (2, 2), "pool_type": "sum"}], NAMESPACES, QUICK
    )
    assert row.measurements["torch"] is None and "sum" in row.problems["torch"]
    assert row.measurements["mx.nd"].status.value == "ok"


def test_run_benchmark_operator_compares_with_torch():
    results = run_benchmark_operator(name="add", namespaces=NAMESPACES, size=(16, 16), warmup=1, runs=2)
    assert [set(r["add"][0]["inputs"]) for r in results] == [{"lhs", "rhs"}, {"x1", "x2"}, {"input", "other"}]


def test_cli_comparison_table(tmp_path):
    output = tmp_path / "compare.md"
    flags = ["--compare", "mx.nd,torch", "--ops", "exp", "--warmup", "1", "--runs", "2", "--threads", "1"]
    status = main([*flags, "--output-file", str(output)])
    text = output.read_text()
    assert status == 0
    assert "mx.nd fwd ms" in text and "torch fwd ratio" in text
    assert text.count("| exp ") == 3  # one row per standard shape
