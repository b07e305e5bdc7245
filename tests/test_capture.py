"""Capturing real models' operator calls, checked against independent counts; the configs file format."""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest

from opperf.cli import main
from opperf.results import configs
from opperf.results.configs import Call, ConfigsFile, Configuration, Header
from opperf.results.measurement import TensorSpec, freeze_inputs
from opperf.sweep.models import capture_model, load_model

SMALL_SHAPES = {
    ("mxnet", "resnet18_v1"): (1, 3, 32, 32),
    ("mxnet", "mobilenet1.0"): (1, 3, 32, 32),
    ("mxnet", "lstm"): (2, 8),
    ("mxnet", "transformer"): (2, 8, 32),
    ("torch", "resnet18"): (1, 3, 32, 32),
    ("torch", "transformer"): (2, 8, 32),
    ("torch", "lstm"): (2, 8),
}


def _shapes(inputs) -> tuple[tuple[int, ...], ...]:
    """The call's tensor shapes in argument order, tensor lists flattened."""
    shapes = []
    for _, value in inputs:
        values = value if isinstance(value, tuple) else (value,)
        shapes += [v.shape for v in values if isinstance(v, TensorSpec)]
    return tuple(shapes)


# What the symbol graph writes differently from the imperative run it is checked against, stated once:
# Symbol `+` is elemwise_add where NDArray `+` is broadcast_add; NDArray.reshape is a view (no operator
# call) where Symbol.reshape is a Reshape node; nodes with no input are factories, which capture filters.
SYMBOL_OVERLOADS = {"elemwise_add": "broadcast_add"}
NDARRAY_VIEWS = {"Reshape"}


def _graph_counts(model, inputs, attributes: bool) -> Counter:
    from opperf.frameworks.mxnet.capture import graph_calls

    return Counter(
        (SYMBOL_OVERLOADS.get(op, op), shapes, tuple(sorted(attrs.items())) if attributes else ())
        for op, shapes, attrs in graph_calls(model, inputs)
        if shapes and op not in NDARRAY_VIEWS
    )


def _captured_counts(calls, attributes: bool) -> Counter:
    def text(inputs):
        return tuple(sorted((k, str(v)) for k, v in inputs if not _shapes(((k, v),))))

    return Counter((c.op, _shapes(c.inputs), text(c.inputs) if attributes else ()) for c in calls)


def test_mxnet_resnet18_capture_agrees_exactly_with_the_symbol_graph():
    loaded = load_model("mxnet", "resnet18_v1", SMALL_SHAPES["mxnet", "resnet18_v1"])
    captured = capture_model("mxnet", loaded, "inference")
    from opperf.frameworks.mxnet.capture import capture

    calls = capture(loaded.model, loaded.inputs, "inference").calls
    graph = _graph_counts(loaded.model, loaded.inputs, attributes=True)
    assert _captured_counts(calls, attributes=True) == graph
    assert len(captured.configurations) == len(graph) == 28
    assert captured.calls == sum(graph.values()) == 68


@pytest.mark.parametrize("name", ["mobilenet1.0", "lstm", "transformer"])
def test_mxnet_built_in_models_agree_with_the_symbol_graph(name):
    from opperf.frameworks.mxnet.capture import capture

    loaded = load_model("mxnet", name, SMALL_SHAPES["mxnet", name])
    captured = capture(loaded.model, loaded.inputs, "inference")
    assert _captured_counts(captured.calls, False) == _graph_counts(loaded.model, loaded.inputs, False)
    assert captured.calls


def _profiler_counts(model, inputs, captured_ops: set[str]) -> Counter:
    """The independent count for PyTorch: torch.profiler's events of the captured registry operators
    (names folded as the registry folds them) that no other such event encloses, with input shapes."""
    import torch

    from opperf.frameworks.torch.capture import PRIVATE_OPERATORS
    from opperf.frameworks.torch.registry import fold_name, load_registry

    names = frozenset(load_registry().registered_names)

    def op_of(event) -> str | None:
        if not event.name.startswith("aten::"):
            return None
        name = event.name[6:]
        folded = PRIVATE_OPERATORS[name][0] if name in PRIVATE_OPERATORS else fold_name(name, names)
        return folded if folded in captured_ops else None

    def enclosed(event) -> bool:
        parent = event.cpu_parent
        while parent is not None:
            if op_of(parent):
                return True
            parent = parent.cpu_parent
        return False

    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad(), torch.profiler.profile(record_shapes=True) as session:
            model(*inputs)
    finally:
        torch.backends.mha.set_fastpath_enabled(True)
    return Counter(
        (op_of(e), tuple(tuple(s) for s in e.input_shapes if s))
        for e in session.events()
        if op_of(e) and not enclosed(e)
    )


@pytest.mark.parametrize("name", ["resnet18", "transformer", "lstm"])
def test_torch_built_in_models_agree_with_the_profiler(name):
    from opperf.frameworks.torch.capture import capture

    loaded = load_model("torch", name, SMALL_SHAPES["torch", name])
    captured = capture(loaded.model, loaded.inputs, "inference")
    ops = {c.op for c in captured.calls}
    # The profiler records no shapes of tensor lists (stack's) nor of 0-d tensors.
    mine = Counter(
        (c.op, tuple(v.shape for _, v in c.inputs if isinstance(v, TensorSpec) and v.shape))
        for c in captured.calls
    )
    assert mine == _profiler_counts(loaded.model, loaded.inputs, ops)
    if name == "resnet18":
        assert Counter(c.op for c in captured.calls) == {
            "convolution": 20,
            "native_batch_norm": 20,
            "relu": 17,
            "add": 8,
            "max_pool2d_with_indices": 1,
            "mean": 1,
            "addmm": 1,
        }


def test_torch_transformer_is_seen_operator_by_operator():
    """The fused fast path would be one opaque call; capture switches it off and restores it."""
    import torch

    loaded = load_model("torch", "transformer", SMALL_SHAPES["torch", "transformer"])
    captured = capture_model("torch", loaded, "inference")
    assert {"scaled_dot_product_attention", "native_layer_norm", "addmm"} <= {
        c.op for c in captured.configurations
    }
    assert torch.backends.mha.get_fastpath_enabled()


def test_user_model_through_module_callable(tmp_path, capsys):
    output = tmp_path / "tiny.jsonl"
    argv = [
        "capture",
        "--framework",
        "torch",
        "--model",
        "tests.tiny_user_model:tiny",
        "--output",
        str(output),
    ]
    assert main(argv) == 0
    parsed = configs.read(str(output))
    assert parsed.header.model == "tests.tiny_user_model:tiny"
    assert parsed.header.input_shape == (3, 8)
    assert [(c.op, c.count) for c in parsed.configurations] == [("addmm", 1), ("relu", 1), ("addmm", 1)]
    first = parsed.configurations[0]
    assert dict(first.inputs)["mat1"] == TensorSpec((3, 8), dtype="float32")


HOSTILE_MODELS = """
import os, sys
import torch

def tiny():
    return torch.nn.Linear(8, 4).eval(), (torch.rand(3, 8),)

def moves():
    os.chdir(os.path.dirname(os.getcwd()))
    return tiny()

def exits():
    sys.exit(3)

def identity():
    return torch.nn.Identity(), (torch.rand(3, 8),)
"""


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", ":tiny"], "cannot load model ':tiny': write module:callable"),
        (["--model", "..hostile_models:tiny"], "cannot load model '..hostile_models:tiny': write module:"),
        (["--model", "hostile_models:exits"], "model hostile_models:exits called sys.exit(3) while building"),
        (["--model", "hostile_models:identity"], "made no torch operator call opperf replays"),
        (["--model", "hostile_models:tiny", "--framework", "mxnet"], "not a Gluon Block: if it is another"),
        (["--model", "hostile_models:tiny", "--framework", "jax"], "example input is a torch.Tensor, not an"),
        (["--model", "hostile_models:tiny", "--input-shape", "5,5"], "--input-shape sets a built-in model's"),
    ],
)
def test_a_model_that_cannot_be_captured_is_a_usage_error(tmp_path, monkeypatch, capsys, argv, message):
    """An empty or relative module name was a traceback with exit 1; a model's sys.exit ended opperf
    with its status and nothing written; a model that calls no operator (an identity, or another
    framework's model) was captured as nothing and ``opperf model`` then replayed the whole registry
    (another framework's model is named so before it runs);
    ``--input-shape`` was dropped for a callable."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hostile_models.py").write_text(HOSTILE_MODELS)
    for command in ("capture", "model"):
        framework = [] if "--framework" in argv else ["--framework", "torch"]
        output = "o.jsonl" if command == "capture" else "o.md"
        assert main([command, *framework, *argv, "--output-file", output, "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1, err
        assert not (tmp_path / output).exists()


def test_a_model_that_moves_elsewhere_leaves_the_outputs_where_the_user_named_them(tmp_path, monkeypatch):
    """A model that changed the working directory took every output file with it (exit 0)."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    (work / "hostile_models.py").write_text(HOSTILE_MODELS)
    assert main(["capture", "--framework", "torch", "--model", "hostile_models:moves", "--output-file",
                 "c.jsonl", "--quiet"]) == 0  # fmt: skip
    assert configs.read(str(work / "c.jsonl")).configurations and os.getcwd() == str(work)
    assert not (tmp_path / "c.jsonl").exists()


def _file(*configurations: Configuration, framework: str = "torch") -> ConfigsFile:
    return ConfigsFile(Header(framework=framework, model="m"), configurations)


ADD = Configuration("add", freeze_inputs({"input": TensorSpec((2, 3)), "other": TensorSpec((2, 3))}), 3)
RELU = Configuration("relu", freeze_inputs({"input": TensorSpec((4,), dtype="float32")}), 1)


def test_configs_file_round_trips_through_its_text():
    original = _file(ADD, RELU)
    parsed = configs.parse(configs.render(original), "f.jsonl")
    assert parsed == original
    assert parsed.calls == 4


def test_distinct_counts_calls_in_first_call_order():
    a, b = Call("relu", ADD.inputs), Call("add", ADD.inputs)
    assert configs.distinct([a, b, a, a]) == (
        Configuration("relu", ADD.inputs, 3),
        Configuration("add", ADD.inputs, 1),
    )


def test_merge_adds_counts_and_refuses_mixed_frameworks():
    merged = configs.merge([_file(ADD, RELU), _file(ADD)])
    assert [(c.op, c.count) for c in merged] == [("add", 6), ("relu", 1)]
    with pytest.raises(configs.OpperfError, match="different frameworks"):
        configs.merge([_file(ADD), _file(ADD, framework="mxnet")])


def test_sample_is_seeded_and_keeps_order():
    many = tuple(Configuration("relu", freeze_inputs({"input": TensorSpec((n,))})) for n in range(1, 30))
    first, again, other = configs.sample(many, 5, 1), configs.sample(many, 5, 1), configs.sample(many, 5, 2)
    assert first == again and first != other and len(first) == 5
    assert list(first) == sorted(first, key=many.index)
    assert configs.sample(many, 100, 0) == many


HEADER = {"format": "opperf-configs", "version": 1, "framework": "torch", "model": "m"}
GOOD_LINE = {"op": "relu", "inputs": {"input": {"shape": [4]}}, "count": 1}


def _relu(value: object) -> dict[str, object]:
    """A configuration line of relu with ``value`` as its input."""
    return {"op": "relu", "inputs": {"input": value}}


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        ([{"format": "something-else"}], 1, "not an opperf configs file"),
        ([{**HEADER, "version": 99}], 1, "newer than this opperf reads"),
        (["{not json"], 1, "not a JSON object"),
        ([HEADER, GOOD_LINE, {"op": "relu_typo", "inputs": {}}], 3, "unknown operator 'relu_typo'"),
        ([HEADER, {"op": "relu", "inputs": {"inptu": {"shape": [4]}}}], 2, "relu takes no argument 'inptu'"),
        ([HEADER, {**GOOD_LINE, "count": 0}], 2, "not a positive integer"),
        ([HEADER, {**GOOD_LINE, "count": "2"}], 2, "not a positive integer"),
        ([HEADER, GOOD_LINE, '{"op": "relu", "inputs": {"input": {"sha'], 3, "not a JSON object"),
        ([HEADER, {**GOOD_LINE, "tags": "resnet"}], 2, "not a list of text"),
        ([HEADER, {**GOOD_LINE, "comment": "x"}], 2, "a configuration has no key 'comment'"),
        ([{**HEADER, "modle": "m"}], 1, "the header has no key 'modle'; did you mean"),
        ([{**HEADER, "input_shape": "1,3"}], 1, "the header's input_shape is '1,3'"),
        ([{**HEADER, "mode": "eval"}], 1, "the header's mode is 'eval'"),
        (
            [HEADER, _relu({"shape": "abc"})],
            2,
            "argument 'input': a tensor's shape",
        ),
        ([HEADER, _relu({"shape": [-1]})], 2, "list of non-negative integers"),
        (
            [HEADER, _relu({"shape": [4], "dtype": 7})],
            2,
            "a tensor's dtype is 7",
        ),
        (
            [HEADER, _relu({"shape": [4], "storage": "disk"})],
            2,
            "storage is 'disk'",
        ),
        ([HEADER, _relu({"shape": [4], "density": 2})], 2, "density is 2"),
        ([HEADER, _relu({"shape": [4], "file": "x"})], 2, "no key 'file'"),
        ([HEADER, _relu({"path": "/etc"})], 2, "is no input"),
        ([HEADER, '{"op": "relu", "inputs": {"input": ' + "[" * 100000 + "]" * 100000 + "}}"], 2, "nested"),
        ([HEADER, _relu([[[[[[[[[[1]]]]]]]]]])], 2, "nested more than"),
        ([{**HEADER, "version": 0}], 1, "configs files start at version 1"),
        ([HEADER, GOOD_LINE, _relu({"shape": [4], "dtype": "nosuchdtype"})], 3, "dtype 'nosuchdtype'"),
        ([HEADER, _relu({"shape": [1] * 40})], 2, "a tensor of rank 40, more than 32 (torch has no such"),
    ],
)
def test_malformed_configs_files_are_usage_errors_with_the_line(tmp_path, capsys, lines, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    status = main(
        ["sweep", "--framework", "torch", "--configs", str(path), "--output-file", str(tmp_path / "o.json")]
    )
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.startswith("error: ") and f"{path}:{line}: " in err and message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_configs_file_that_is_not_text_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "binary.jsonl"
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert main(["sweep", "--configs", str(path), "--output-file", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: not a configs file (not UTF-8") and "Traceback" not in err


@pytest.mark.parametrize(
    ("reference", "said"),
    [
        ("{fifo}", "configs.jsonl:1: empty"),  # a FIFO without a writer reads as empty, not as a wait
        ("dlop:{fifo}", "not a DLOP-Bench file"),
        ("/dev/zero", "it is no regular file (a character device)"),
        ("dlop:/dev/zero", "it is no regular file (a character device)"),
    ],
)
def test_a_configs_path_that_is_no_file_is_refused_not_read(tmp_path, capsys, reference, said):
    """A FIFO blocked the sweep forever; /dev/zero filled memory until the kernel killed it."""
    import os

    fifo = tmp_path / "configs.jsonl"
    os.mkfifo(fifo)
    argv = ["sweep", "--configs", reference.format(fifo=fifo), "--output-file", str(tmp_path / "o.json")]
    assert main([*argv, "--framework", "torch"] if "dlop" in reference else argv) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and not (tmp_path / "o.json").exists()


def test_configs_of_another_framework_name_the_flag(tmp_path, capsys):
    path = tmp_path / "mx.jsonl"
    path.write_text(json.dumps({**HEADER, "framework": "mxnet"}) + "\n")
    assert main(["sweep", "--framework", "torch", "--configs", str(path)]) == 2
    assert "replay them with --framework mxnet, or leave --framework out" in capsys.readouterr().err


def test_a_torch_capture_replays_without_naming_its_framework(tmp_path, capsys):
    """The header says torch: a replay without --framework runs torch, not MXNet (whose registry has no
    ``relu`` taking ``input``)."""
    path, output = tmp_path / "torch.jsonl", tmp_path / "o.json"
    path.write_text(json.dumps(HEADER) + "\n" + json.dumps(GOOD_LINE) + "\n")
    argv = ["sweep", "--configs", str(path), "--output-file", str(output), "--runs", "2", "--warmup", "1"]
    assert main([*argv, "--no-backward", "--quiet"]) == 0
    assert "note: replaying torch configurations" in capsys.readouterr().err
    (record,) = json.loads(output.read_text())["results"]
    assert (record["framework"], record["op"], record["status"]) == ("torch", "relu", "ok")


def test_configs_files_of_two_frameworks_are_refused_naming_both(tmp_path, capsys):
    torch_file, mxnet_file = tmp_path / "t.jsonl", tmp_path / "m.jsonl"
    torch_file.write_text(json.dumps(HEADER) + "\n")
    mxnet_file.write_text(json.dumps({**HEADER, "framework": "mxnet"}) + "\n")
    assert main(["sweep", "--configs", f"{torch_file},{mxnet_file}"]) == 2
    err = capsys.readouterr().err
    assert f"{torch_file} (torch), {mxnet_file} (mxnet)" in err and err.count("\n") == 1


DLOP = "tests/data/dlop"


def test_dlop_bench_files_read_as_configurations():
    from opperf.frameworks.torch.capture import accepted_arguments
    from opperf.results.dlop import read_dlop

    conv = read_dlop(f"dlop:{DLOP}/conv2d.json", accepted_arguments)
    assert conv.header.framework == "torch" and len(conv.configurations) == 3
    second = dict(conv.configurations[1].inputs)
    assert second["weight"] == TensorSpec((8, 8, 3, 3)) and second["bias"] == TensorSpec((8,))
    assert dict(conv.configurations[2].inputs)["stride"] == (2, 2)
    relu = read_dlop(f"dlop:{DLOP}/relu.json", accepted_arguments)
    assert [dict(c.inputs) for c in relu.configurations] == [
        {"input": TensorSpec((4, 5))},
        {"input": TensorSpec((6, 7))},
    ]


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"input_size": [[2, 2]], "weight_size": [[1]]}, "no key 'kernel_size'"),
        ({"input_size": [["a", 2]], "kernel_size": [[1]]}, "a tensor's shape is ['a', 2]"),
        ({"input_size": [[2, 2]], "kernel_size": [{"x": 1}]}, "a tensor's shape is {'x': 1}"),
    ],
)
def test_malformed_dlop_files_are_usage_errors_naming_the_configuration(tmp_path, capsys, columns, message):
    path = tmp_path / "conv2d.json"
    path.write_text(json.dumps(columns))
    assert main(["sweep", "--framework", "torch", "--configs", f"dlop:{path}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: configuration 0: ") and message in err and "Traceback" not in err


def test_dlop_file_of_unknown_operator_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "no_such_op.json"
    path.write_text(json.dumps({"input_size": [[2, 2]]}))
    assert main(["sweep", "--framework", "torch", "--configs", f"dlop:{path}"]) == 2
    assert "is no torch registry operator" in capsys.readouterr().err


def test_model_report_joins_profile_capture_and_replay():
    """Hand-computed: add has two configurations (medians 2 ms x 3 calls, 1 ms x 1), relu one (4 ms x
    1); the profiler saw 6 ms of add, 2 ms of relu and 2 ms of a factory the capture left out."""
    from opperf.results.measurement import BenchmarkSpec, Measurement, Status
    from opperf.results.model_report import InModel, build
    from opperf.results.options import RunOptions

    big = freeze_inputs({"input": TensorSpec((8,)), "other": TensorSpec((8,))})
    captured = _file(Configuration("add", ADD.inputs, 3), Configuration("add", big, 1), RELU)

    def measured(c: Configuration, samples: tuple[float, ...]) -> Measurement:
        spec = BenchmarkSpec("torch", c.op, c.inputs, RunOptions(framework="torch"))
        return Measurement(spec, Status.OK, forward=samples)

    replay = [
        measured(captured.configurations[0], (1e-3, 2e-3, 9e-3)),
        measured(captured.configurations[1], (1e-3,)),
        measured(RELU, (4e-3, 4e-3)),
    ]
    profile = InModel(
        {"add": 6e-3, "relu": 2e-3, "empty": 2e-3}, {"add": 4, "relu": 1, "empty": 2}, 0.02, 0.01, 5, "p"
    )
    report = build(captured, profile, replay)
    rows = {row.op: row for row in report.operators}
    assert report.operators[0].op == "add"
    assert rows["add"].standalone_s == pytest.approx(7e-3) and rows["add"].configurations == 2
    assert rows["add"].calls == 4 and rows["add"].ratio == pytest.approx(7 / 6)
    assert rows["relu"].standalone_share == pytest.approx(4 / 11)
    assert rows["empty"].standalone_s is None and rows["empty"].calls == 2
    assert sum(row.in_model_share for row in report.operators) == pytest.approx(1.0)
    assert report.in_model_total_s == pytest.approx(0.01) and report.coverage == pytest.approx(0.5)
    assert report.configurations[0].total_s == pytest.approx(6e-3)


def test_an_operator_with_a_configuration_not_measured_has_no_standalone_time():
    """add's second configuration failed alone: its time summed the first only (2 ms x 3 calls) and
    read as the operator's, "faster standalone", its share of the total too. It has none now, the
    totals leave it out and say so, and compare relu's standalone time with relu's in-model time."""
    from opperf.report.model_markdown import render_model_markdown
    from opperf.results.measurement import BenchmarkSpec, Measurement, Status
    from opperf.results.model_report import InModel, build
    from opperf.results.options import RunOptions

    big = freeze_inputs({"input": TensorSpec((8,)), "other": TensorSpec((8,))})
    captured = _file(Configuration("add", ADD.inputs, 3), Configuration("add", big, 1), RELU)

    def measured(c: Configuration, status: Status, samples: tuple[float, ...]) -> Measurement:
        spec = BenchmarkSpec("torch", c.op, c.inputs, RunOptions(framework="torch"))
        return Measurement(spec, status, forward=samples, reason=None if status is Status.OK else "boom")

    replay = [
        measured(captured.configurations[0], Status.OK, (2e-3,)),
        measured(captured.configurations[1], Status.FAILED, ()),
        measured(RELU, Status.OK, (4e-3,)),
    ]
    profile = InModel({"add": 6e-3, "relu": 2e-3}, {"add": 4, "relu": 1}, 0.01, 0.01, 5, "p")
    report = build(captured, profile, replay)
    rows = {row.op: row for row in report.operators}
    assert (
        rows["add"].standalone_s is None
        and rows["add"].standalone_share is None
        and rows["add"].ratio is None
    )
    assert rows["relu"].standalone_share == pytest.approx(1.0)
    assert report.not_measured == ("add",) and report.standalone_total_s == pytest.approx(4e-3)
    assert report.in_model_of_measured_s == pytest.approx(2e-3)
    text = render_model_markdown(report)
    assert "4.000 ms, 2.00x their in-model total; not measured in full, so left out: add" in text
