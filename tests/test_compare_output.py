"""``--compare``: one thread count for every namespace whatever the import order, a JSON document, and
FullyConnected's flatten=True given to torch as MXNet computes it."""

from __future__ import annotations

import json

import mxnet as mx
import numpy as np
import pytest
import torch

from opperf import RunOptions, run_benchmark_operator, run_performance_test
from opperf.cli import main
from opperf.results.document import SCHEMA_VERSION
from opperf.results.measurement import TensorSpec
from opperf.verdicts.compare.calls import counterpart, translate
from opperf.verdicts.compare.comparison import COMPARE_THREADS, compare

QUICK = RunOptions(warmup=0, runs=2, run_backward=False)
ADD = {"lhs": (64, 64), "rhs": (64, 64)}


FIRST_ARGUMENTS = {
    "mx.nd": {"lhs": (64, 64), "rhs": (64, 64)},
    "mx.np": {"x1": (64, 64), "x2": (64, 64)},
    "torch": {"input": (64, 64), "other": (64, 64)},
}
"""``add``'s configuration in each first namespace's own argument names."""


@pytest.mark.parametrize("namespaces", [("torch", "mx.nd"), ("mx.nd", "torch"), ("mx.np", "torch", "mx.nd")])
def test_every_namespace_runs_on_one_thread_count_whatever_the_order(namespaces):
    (row,) = compare("add", [FIRST_ARGUMENTS[namespaces[0]]], namespaces, QUICK, rounds=2)
    threads = {ns: m.spec.options.threads for ns, m in row.measurements.items()}
    assert threads == dict.fromkeys(namespaces, COMPARE_THREADS), row.problems
    assert torch.get_num_threads() == COMPARE_THREADS


def test_threads_asked_for_are_used_by_every_namespace():
    (row,) = compare(
        "add", [ADD], ("mx.nd", "torch"), RunOptions(warmup=0, runs=1, threads=2, run_backward=False), 2
    )
    assert {m.spec.options.threads for m in row.measurements.values()} == {2}


def test_compare_writes_json_pairing_its_records(tmp_path, capsys):
    output = tmp_path / "c.json"
    argv = [
        "compare",
        "mx.nd,torch",
        "--ops",
        "exp,FullyConnected",
        "--warmup",
        "0",
        "--runs",
        "1",
        "--rounds",
        "2",
    ]
    assert main([*argv, "--no-backward", "--output-file", str(output)]) == 0
    document = json.loads(output.read_text())
    assert (
        document["schema_version"] == SCHEMA_VERSION and document["environment"]["threads"] == COMPARE_THREADS
    )
    results, rows = document["results"], document["comparison"]["rows"]
    assert {row["operator"] for row in rows} == {"exp", "FullyConnected"}
    for row in rows:
        nd, th = (results[row["records"][ns]] for ns in ("mx.nd", "torch"))
        assert nd["namespace"] == "mx.nd" and th["namespace"].startswith("torch")
        assert nd["status"] == th["status"] == "ok", row
        assert row["forward_ratio"]["mx.nd"] == 1.0 and row["forward_ratio"]["torch"] > 0
        assert nd["threads"] == th["threads"] == COMPARE_THREADS


def test_a_namespace_whose_worker_outgrows_memory_costs_its_records_not_the_comparison(
    tmp_path, capsys, monkeypatch
):
    # Every worker passes this allowance while it imports its framework: the comparison, in this
    # process, records each namespace's configurations as crashed, with why, and writes its table.
    monkeypatch.setenv("OPPERF_MEMORY_LIMIT", "100MiB")
    argv = ["compare", "mx.nd,torch", "--ops", "exp", "--warmup", "0", "--runs", "1", "--rounds", "1"]
    assert main([*argv, "--no-backward", "--output-format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert {record["namespace"] for record in document["results"]} == {"mx.nd", "torch"}
    for record in document["results"]:
        assert record["status"] == "crashed" and "OPPERF_MEMORY_LIMIT" in record["reason"], record
        assert record["memory_peak_bytes"] > 100 * 2**20


@pytest.mark.slow
def test_sweep_compare_honours_output_format_and_json_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("opperf.cli.compare.COMPARE_ROUNDS", 2)  # sweep --compare takes the default
    table, document = tmp_path / "c.md", tmp_path / "c.json"
    argv = ["--compare", "mx.nd,mx.np", "--ops", "exp", "--warmup", "0", "--runs", "1", "--no-backward"]
    assert main([*argv, "--output-file", str(table), "--json-file", str(document)]) == 0
    assert table.read_text().startswith("# mx.nd vs mx.np") and "1 intra-op thread." in table.read_text()
    assert json.loads(document.read_text())["comparison"]["namespaces"] == ["mx.nd", "mx.np"]
    assert main([*argv, "--output-format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["comparison"]["rows"]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--output-file", "c.csv"], "a comparison is written as md or json, not csv"),
        (["--output-format", "md", "--output-file", "c.json"], "contradicts"),
        (["--output-format", "hud"], "a comparison is written as md or json"),
        (["--threads", "1,2"], "at one thread count; --threads varies a sweep's rows"),
        (["--stages", "graph"], "eager, at one thread count; --stages varies a sweep's rows"),
        (["--in-place", "--shapes", "fuzz"], "--shapes, --in-place vary a sweep's rows: leave them out"),
        (["--history", "h.sqlite"], "--history is a sweep's: leave it out, or sweep on its own"),
        (["--fail-on", "failed", "--coverage"], "--coverage, --fail-on are a sweep's: leave them out"),
        (["--categories", "unary", "--engine", "naive"], "--categories, --engine are a sweep's"),
    ],
)
def test_compare_refuses_what_it_cannot_write(tmp_path, monkeypatch, capsys, flags, expected):
    monkeypatch.chdir(tmp_path)
    assert main(["--compare", "mx.nd,torch", "--ops", "exp", *flags]) == 2
    assert expected in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("data", "flatten", "expected"),
    [
        ((4, 3, 2, 2), True, (4, 12)),
        ((4, 3, 2, 2), None, (4, 12)),
        ((4, 12), True, (4, 12)),
        ((4, 3, 12), False, (4, 3, 12)),
    ],
)
def test_fully_connected_data_reaches_torch_as_mxnet_reads_it(data, flatten, expected):
    hidden, features = 5, expected[-1]
    configuration = {"data": TensorSpec(data), "weight": TensorSpec((hidden, features)), "num_hidden": hidden}
    if flatten is not None:
        configuration["flatten"] = flatten
    target = counterpart("FullyConnected", "torch")
    translated = translate(configuration, ["data", "weight", "bias"], ["input", "weight", "bias"], target)
    assert translated["input"].shape == expected and "flatten" not in translated
    # The translation computes what MXNet computes: same numbers through both frameworks.
    values = np.random.default_rng(0).random(data, dtype=np.float32)
    weight = np.random.default_rng(1).random((hidden, features), dtype=np.float32)
    mxnet_out = mx.nd.FullyConnected(
        mx.nd.array(values),
        mx.nd.array(weight),
        no_bias=True,
        num_hidden=hidden,
        flatten=flatten is not False,
    ).asnumpy()
    torch_out = torch.nn.functional.linear(
        torch.from_numpy(values).reshape(expected), torch.from_numpy(weight)
    )
    np.testing.assert_allclose(mxnet_out, torch_out.numpy(), rtol=1e-5)


@pytest.mark.parametrize(
    "argv",
    [
        ["--compare", "mx.foo,torch"],
        ["compare", "mx.nd,torch.nope", "--ops", "exp"],
        ["compare", "foo,mx.nd"],
    ],
)
def test_an_unknown_namespace_is_named_before_anything_runs(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown namespace") and "Traceback" not in err


def test_an_unknown_operator_is_named_before_any_operator_runs(capsys, monkeypatch):
    # exp comes first and would have been measured, then lost, had the name been found only then.
    ran = []

    def spy(*args, **kwargs):
        ran.append(args)
        return []

    monkeypatch.setattr("opperf.cli.compare.compare_operators", spy)
    assert main(["compare", "mx.nd,torch", "--ops", "exp,nosuch", "--rounds", "1"]) == 2
    assert "error: no operator 'nosuch' in mx.nd" in capsys.readouterr().err and not ran


def test_fully_connected_with_4d_data_is_measured_in_torch():
    configuration = {
        "data": TensorSpec((4, 3, 4, 4)),
        "weight": TensorSpec((8, 48)),
        "bias": TensorSpec((8,)),
        "num_hidden": 8,
        "flatten": True,
    }
    (row,) = compare("FullyConnected", [configuration], ("mx.nd", "torch"), QUICK, rounds=2)
    assert row.measurements["torch"].status.value == "ok", row.measurements["torch"].reason
    assert dict(row.measurements["torch"].spec.inputs)["input"].shape == (4, 48)


@pytest.mark.slow
def test_run_benchmark_operator_labels_each_entry_with_its_function():
    results = run_benchmark_operator(
        name="add", size=(8, 8), namespaces=("mx.nd", "mx.np", "torch"), warmup=0, runs=1
    )
    assert [entry["add"][0]["function"] for entry in results] == ["mx.nd.add", "mx.np.add", "torch.add"]
    (subtract,) = run_benchmark_operator(
        name="subtract", size=(8, 8), namespaces=("mx.np",), warmup=0, runs=1
    )
    assert subtract["subtract"][0]["function"] == "mx.np.subtract"


def test_run_performance_test_labels_each_entry_with_its_function():
    inputs = [{"lhs": (8, 8), "rhs": (8, 8)}]
    results = run_performance_test([mx.nd.add, mx.nd.broadcast_sub], inputs=inputs, warmup=0, runs=1)
    assert [next(iter(entry.values()))[0]["function"] for entry in results] == [
        "mx.nd.add",
        "mx.nd.broadcast_sub",
    ]


@pytest.mark.slow
def test_numpy_style_functions_compare_through_each_namespaces_worker(capsys):
    # The workers look each function up as users call it (mx.np.hstack, NumPy's own allclose and
    # ufunc float_power that mx.np exposes); a configuration that failed is not run again.
    argv = ["compare", "mx.np,jnp,torch", "--ops", "hstack,float_power,allclose,deg2rad", "--rounds", "3"]
    assert main([*argv, "--warmup", "1", "--runs", "3", "--no-backward", "--output-format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    results, rows = document["results"], document["comparison"]["rows"]
    for row in rows:
        measured = {ns: results[i] for ns, i in row["records"].items() if i is not None}
        if row["operator"] == "deg2rad":  # MXNet 1.9.1 has no internal operator for it
            assert measured["mx.np"]["status"] == "failed" and row["rounds"]["mx.np"] == 1
            continue
        assert {r["status"] for r in measured.values()} == {"ok"}, (row["operator"], row["problems"])
        assert measured["mx.np"]["namespace"] == "mx.np"


def test_the_first_namespace_calls_the_function_by_its_own_name():
    # torch.transpose, not the permute that NumPy's transpose maps to in PyTorch.
    from opperf.verdicts.compare.selection import configurations

    (row,) = compare("transpose", configurations("transpose", ("torch",))[:1], ("torch",), QUICK, rounds=1)
    assert row.measurements["torch"].spec.label.endswith(".transpose"), row.measurements["torch"].spec
    assert row.measurements["torch"].status.value == "ok"


def test_a_namespace_named_twice_is_refused_before_anything_runs(capsys):
    assert main(["compare", "mx.nd,mx.nd", "--ops", "exp"]) == 2
    assert "namespace 'mx.nd' is named twice" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "refused"),
    [
        (["--profiler", "native"], "error: profiler native: JAX has no per-operator profiler"),
        (["--layout", "transposed"], "error: layout transposed: JAX arrays have no layout"),
    ],
)
def test_an_option_a_namespace_refuses_is_one_line_naming_its_framework(tmp_path, capsys, option, refused):
    """jnp's option refusals came after torch was measured, each jnp row "not compared", exit 0; the
    layout refusal named MXNet, which was not compared."""
    output = tmp_path / "c.md"
    argv = ["compare", "jnp,torch", "--ops", "exp", "--rounds", "3", "--output-file", str(output), *option]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(refused) and err.count("\n") == 1 and not output.exists()


def test_namespaces_timed_differently_are_said_to_be(tmp_path, capsys):
    """mx.np's profiler times the operator, jnp's Python timer the synchronised call with its dispatch:
    the table said neither, and printed their ratio as a verdict."""
    output = tmp_path / "c.md"
    argv = ["compare", "mx.np,jnp", "--ops", "add", "--rounds", "1", "--budget", "0.02", "--quiet"]
    assert main([*argv, "--output-file", str(output)]) == 0
    header = output.read_text().split("\n\n")[1]
    assert "The namespaces were timed differently" in header
    assert "mx.np by its framework's profiler" in header and "jnp by the Python timer" in header
    assert (
        main(["compare", "mx.np,mx.nd", "--ops", "add", "--rounds", "1", "--budget", "0.02", "--quiet"]) == 0
    )
    assert "timed differently" not in capsys.readouterr().out


STOPPED_AFTER = """
import os, signal, sys
import opperf.cli.compare as command
from opperf.cli import main
measured = []
inner = command.in_process

class StopsItself:
    def __call__(self, *arguments):
        measured.append(1)
        if len(measured) == {after}:  # a real SIGTERM, as `timeout` sends, between two measurements
            os.kill(os.getpid(), signal.SIGTERM)
        return inner(*arguments)

    def start_round(self, index):
        inner.start_round(index)

command.in_process = StopsItself()
sys.argv = ["opperf", *sys.argv[1:]]
sys.exit(main())
"""


@pytest.mark.parametrize(("after", "written"), [(10, True), (1, False)])
def test_a_stopped_comparison_writes_what_finished(tmp_path, after, written):
    """SIGTERM in the rounds writes the rows that got a round in both namespaces, says the comparison
    was interrupted and leaves rows short of the minimum rounds inconclusive, exit 143; stopped
    before any configuration got one, nothing is written (a file of no rows would pass for a result)."""
    import subprocess
    import sys

    output, document = tmp_path / "c.md", tmp_path / "c.json"
    command = [sys.executable, "-c", STOPPED_AFTER.replace("{after}", str(after)), "compare", "mx.nd,mx.np",
               "--ops", "exp,negative", "--no-isolation", "--runs", "2", "--warmup", "0",
               "--output-file", str(output), "--json-file", str(document)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False)
    assert done.returncode == 143, done.stderr
    assert "Traceback" not in done.stderr
    if not written:
        assert "interrupted (SIGTERM) before anything was written" in done.stderr
        assert not output.exists() and not document.exists()
        return
    # exp and negative have 3 configurations each, measured in two namespaces: the stop comes in round
    # 0 after the fifth configuration's mx.nd, a round that pairs nothing, so four rows of one round
    assert "interrupted (SIGTERM) after 4 of 6 configurations: what finished is written" in done.stderr
    written = json.loads(document.read_text())
    found = written["comparison"]
    assert written["environment"]["interrupted"] is True  # as a sweep's file says it
    assert (found["interrupted"], found["selected"], len(found["rows"])) == ("SIGTERM", 6, 4)
    for row in found["rows"]:
        assert row["rounds"] == {"mx.nd": 1, "mx.np": 1}, row
        forward = row["versus"]["mx.np"]["forward"]
        assert forward["verdict"] == "inconclusive" and "stopped after 1 round" in forward["reason"]
    assert "**Interrupted** (SIGTERM): 4 of 6 configurations" in output.read_text()
