"""Selections in the names users know: a public function selects the registry operator it calls, and the
profiler agrees; another framework's name, or a name that calls no single operator, is a clear error."""

from __future__ import annotations

import json

import pytest

from opperf import RunOptions, benchmark
from opperf.cli import main
from opperf.frameworks import get_backend
from opperf.sweep.public_names import resolve_public_name
from opperf.sweep.run import select_operators

QUICK = RunOptions(runs=1, warmup=0, run_backward=False)


@pytest.mark.parametrize(
    ("framework", "typed", "operator"),
    [
        ("mxnet", "add", "broadcast_add"),
        ("mxnet", "nd.add", "broadcast_add"),
        ("mxnet", "mx.nd.add", "broadcast_add"),
        ("mxnet", "mx.nd.subtract", "broadcast_sub"),
        ("mxnet", "mx.np.add", "_npi_add"),
        ("mxnet", "np.add", "_npi_add"),
        ("mxnet", "mxnet.numpy.add", "_npi_add"),
        ("mxnet", "mx.np.mean", "_npi_mean"),
        ("mxnet", "npx.relu", "_npx_relu"),
        ("mxnet", "mx.nd.contrib.box_nms", "_contrib_box_nms"),
        ("mxnet", "Convolution", "Convolution"),
        ("torch", "torch.add", "add"),
        ("torch", "Tensor.add", "add"),
        ("torch", "F.conv2d", "conv2d"),
        ("torch", "torch.nn.functional.conv2d", "conv2d"),
        ("torch", "nn.functional.relu", "relu"),
        ("torch", "logsigmoid", "log_sigmoid"),
        ("torch", "linalg.norm", "linalg_norm"),
    ],
)
def test_a_public_name_selects_the_operator_it_calls(framework, typed, operator):
    (op,) = select_operators(get_backend(framework), (typed,), ())
    assert op.name == operator


@pytest.mark.parametrize(
    ("typed", "inputs"),
    [
        ("mx.nd.add", {"lhs": (4, 4), "rhs": (4, 4)}),
        ("mx.nd.subtract", {"lhs": (4, 4), "rhs": (4, 4)}),
        ("mx.np.add", {"x1": (4, 4), "x2": (4, 4)}),
        ("mx.np.exp", {"x": (4, 4)}),
        ("npx.relu", {"data": (4, 4)}),
    ],
)
def test_mxnet_profiler_records_the_selected_operator_when_the_function_runs(typed, inputs):
    public = resolve_public_name("mxnet", typed)
    function = get_backend("mxnet").lookup(public.namespace, public.function)
    (measurement,) = benchmark(function, [inputs], QUICK)
    registered = get_backend("mxnet").operators()
    names = next(op.all_names for op in registered if op.name == public.operator)
    assert set(measurement.profiled_ops) & set(names), (public, measurement.profiled_ops)


@pytest.mark.parametrize(
    ("typed", "inputs"),
    [
        ("F.conv2d", {"input": (1, 2, 5, 5), "weight": (3, 2, 3, 3)}),
        ("logsigmoid", {"input": (4, 4)}),
        ("torch.add", {"input": (4, 4), "other": (4, 4)}),
    ],
)
def test_torch_profiler_records_the_selected_operator_when_the_function_runs(typed, inputs):
    public = resolve_public_name("torch", typed)
    function = get_backend("torch").lookup(public.namespace, public.function)
    (measurement,) = benchmark(function, [inputs], QUICK)
    assert f"aten::{public.operator}" in measurement.profiled_ops


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["list", "--ops", "conv2d"], "torch's torch.conv2d (operator conv2d); select it with"),
        (["list", "--ops", "torch.add"], "select it with --framework torch"),
        (["list", "--framework", "torch", "--ops", "mx.nd.add"], "broadcast_add); select it with --fr"),
        (["list", "--ops", "zz.add"], "mxnet namespaces: mx.nd,"),
        (["list", "--ops", "addd"], "did you mean"),
        (
            ["list", "--framework", "torch", "--ops", "F.cross_entropy"],
            "F.cross_entropy calls several operators",
        ),
        (["explain", "mx.np.nonexistent"], "unknown operator 'mx.np.nonexistent'"),
        (["list", "--ops", "mx.nd.save"], "mx.nd.save is MXNet's mx.nd.save, which is no operator"),
        (["list", "--ops", "npx.save"], "MXNet's mx.npx.save, which is no operator opperf times"),
        (["list", "--framework", "torch", "--ops", "torch.save"], "no entry point of one aten operator"),
        (["list", "--framework", "jax", "--ops", "load"], "jax.numpy.load, which is no operator opperf "
         "times: reads or writes a file"),
        (["list", "--framework", "jax", "--ops", "lax.dtype"], "it runs no array computation"),
    ],
)  # fmt: skip
def test_a_name_that_selects_nothing_is_a_usage_error(argv, expected, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and expected in err and "Traceback" not in err


def test_a_sweep_selected_by_public_names_says_what_they_map_to(tmp_path, capsys):
    output = tmp_path / "r.json"
    argv = ["--ops", "add,mx.np.add,Convolution", "--no-isolation", "--runs", "1", "--warmup", "0"]
    assert main([*argv, "--threads", "1", "--no-backward", "--output-file", str(output)]) == 0
    err = capsys.readouterr().err
    assert "note: add selects broadcast_add (what mx.nd.add calls)" in err
    assert "note: mx.np.add selects _npi_add (what mx.np.add calls)" in err
    measured = {record["op"] for record in json.loads(output.read_text())["results"]}
    assert measured == {"broadcast_add", "_npi_add", "Convolution"}
