"""JAX model capture from a function's jaxpr, its built-in models, the configs file it writes replayed
by a JAX sweep, and ``opperf model`` running the jaxpr equation by equation."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from opperf.cli import main
from opperf.results.measurement import TensorSpec

jax = pytest.importorskip("jax")

from opperf.frameworks.jax import capture, model_profile  # noqa: E402
from opperf.frameworks.jax.models import MODELS  # noqa: E402

OPPERF = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "opperf.py")
QUICK = ["--warmup", "1", "--runs", "2", "--no-backward", "--quiet"]


def _captured(name: str, shape: tuple[int, ...] | None = None):
    model = MODELS[name]
    function, inputs = model.build(shape or model.default_shape)
    return function, inputs, capture.capture(function, inputs, "inference")


def test_a_capture_records_lax_operators_with_the_shapes_the_model_gave_them():
    _, _, captured = _captured("mlp", (4, 16))
    products = [call for call in captured.calls if call.op == "lax.dot_general"]
    # Three dense layers: (4, 16) x (16, 512), (4, 512) x (512, 512), (4, 512) x (512, 10).
    shapes = [(dict(c.inputs)["lhs"].shape, dict(c.inputs)["rhs"].shape) for c in products]
    assert shapes == [((4, 16), (16, 512)), ((4, 512), (512, 512)), ((4, 512), (512, 10))]
    assert dict(products[0].inputs)["dimension_numbers"] == (((1,), (0,)), ((), ()))
    assert len(captured.native_names) == len(captured.calls)
    assert "dot_general" in captured.native_names
    # jnp and nn functions are entered: GELU's tanh and the log-softmax's exp and log are there.
    assert {"lax.tanh", "lax.exp", "lax.log"} <= {call.op for call in captured.calls}
    # reduce_max has no public jax.lax function in this JAX: left out, and counted.
    assert sum(captured.filtered.values()) >= 1


def test_a_convolutions_dimension_numbers_are_written_as_text():
    _, _, captured = _captured("resnet", (2, 16, 16, 3))
    convolutions = [dict(c.inputs) for c in captured.calls if c.op == "lax.conv_general_dilated"]
    assert len(convolutions) == 9  # the stem, two in each of three blocks, two 1x1 projections
    assert all(c["dimension_numbers"] == ("NHWC", "HWIO", "NHWC") for c in convolutions)
    assert convolutions[0]["lhs"] == TensorSpec((2, 16, 16, 3), dtype="float32")
    assert {c["window_strides"] for c in convolutions} == {(1, 1), (2, 2)}


def test_a_captured_model_replays_in_a_jax_sweep(tmp_path):
    configs, results = tmp_path / "mlp.jsonl", tmp_path / "mlp.json"
    capture_argv = ["capture", "--framework", "jax", "--model", "mlp", "--input-shape", "4,16"]
    assert main([*capture_argv, "--output-file", str(configs)]) == 0
    lines = configs.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["framework"] == "jax" and header["model"] == "mlp" and header["calls"] > len(lines) - 1
    sweep = ["--framework", "jax", "--configs", str(configs), *QUICK, "--no-isolation"]
    assert main([*sweep, "--output-file", str(results)]) == 0
    records = json.loads(results.read_text())["results"]
    assert len(records) == len(lines) - 1
    assert all(record["status"] == "ok" for record in records), [r["reason"] for r in records]


def test_model_times_each_captured_operator_in_the_jaxpr():
    function, inputs, captured = _captured("mlp", (4, 16))
    in_model = model_profile.profile(function, inputs, 3, captured)
    assert in_model.operator_calls["lax.dot_general"] == pytest.approx(3)
    assert all(seconds > 0 for seconds in in_model.operator_seconds.values())
    assert sum(in_model.operator_seconds.values()) <= in_model.profiled_wall_s
    assert in_model.end_to_end_s > 0


def test_model_blocks_the_equations_it_does_not_time():
    # An argmax the capture filters, then two cheap timed equations, with JAX dispatching
    # asynchronously (as on a GPU): unblocked, the argmax finished inside the first timed equation,
    # which read nearly the whole pass (36 ms of 37). In a process of its own: the setting is read
    # when JAX's CPU backend starts.
    code = (
        "import jax, jax.numpy as jnp\n"
        "jax.config.update('jax_cpu_enable_async_dispatch', True)\n"
        "from opperf.frameworks.jax.capture import capture\n"
        "from opperf.frameworks.jax.model_profile import profile\n"
        "def model(x):\n    return jnp.argmax(x, axis=1).astype(jnp.float32) + 1.0\n"
        "x = jnp.ones((2048, 4096))\n"
        "captured = capture(model, (x,), 'inference')\n"
        "assert 'lax.argmax' not in {c.op for c in captured.calls}, captured.calls\n"
        "profiled = profile(model, (x,), 5, captured)\n"
        "print(sum(profiled.operator_seconds.values()) / profiled.profiled_wall_s)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code],
        cwd=os.path.dirname(OPPERF),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert float(completed.stdout) < 0.25


def test_model_reports_a_resnet_whose_every_operator_replays(tmp_path):
    # In a process of its own: JAX's CPU backend takes its thread count when it starts.
    report = tmp_path / "model.json"
    argv = ["model", "--framework", "jax", "--model", "resnet", "--input-shape", "2,16,16,3", "--passes", "2"]
    completed = subprocess.run(
        [sys.executable, OPPERF, *argv, "--output-file", str(tmp_path / "m.md"), "--json-file", str(report)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    document = json.loads(report.read_text())
    assert {c["status"] for c in document["configurations"]} == {"ok"}
    convolution = next(row for row in document["operators"] if row["op"] == "lax.conv_general_dilated")
    assert convolution["calls"] == 9 and convolution["standalone_s"] > 0


def test_captured_gathers_replay_with_their_dimension_numbers_mode_and_fill_value(tmp_path):
    """An embedding lookup (``emb[ids]``) and ``jnp.take``: their gathers were captured with the
    dimension numbers as bare positions (the replay failed to unpack them), no mode, and a NaN fill
    value the replay refused, so ``opperf model`` had no standalone time for them."""
    import jax.numpy as jnp
    import numpy as np

    from opperf.results.configs import Configuration

    def model(table, ids):
        return table[ids].sum() + jnp.take(table, ids[0], axis=0).sum()

    inputs = (jnp.asarray(np.ones((100, 8), np.float32)), jnp.asarray(np.zeros((4, 5), np.int32)))
    captured = capture.capture(model, inputs, "inference")
    gathers = [dict(call.inputs) for call in captured.calls if call.op == "lax.gather"]
    assert len(gathers) == 2
    assert all(dict(g["dimension_numbers"])["collapsed_slice_dims"] == (0,) for g in gathers)
    assert {g.get("mode") for g in gathers} <= {"clip", "fill", "promise_in_bounds"} and all(
        "mode" in g for g in gathers
    )
    configs, results = tmp_path / "gathers.jsonl", tmp_path / "gathers.json"
    header = {"format": "opperf-configs", "version": 1, "framework": "jax"}
    lines = [
        json.dumps(header),
        *(
            json.dumps(Configuration(c.op, c.inputs).to_json())
            for c in captured.calls
            if c.op == "lax.gather"
        ),
    ]
    configs.write_text("\n".join(lines) + "\n")
    sweep = ["--framework", "jax", "--configs", str(configs), *QUICK, "--no-isolation"]
    assert main([*sweep, "--output-file", str(results)]) == 0
    records = json.loads(results.read_text())["results"]
    assert len(records) == 2 and all(r["status"] == "ok" for r in records), [r["reason"] for r in records]
