"""A configs file from elsewhere replays only what a sweep would run: hostile files against real
registries and real sweeps (``opperf.operators.rules.replay``)."""

from __future__ import annotations

import json

import pytest

from opperf.cli import main
from opperf.frameworks import get_backend
from opperf.operators.rules import replay_refusal
from opperf.operators.rules.profiles import INT64, STANDARD
from opperf.results.measurement import freeze_inputs, input_from_json

FAST = ["--warmup", "1", "--runs", "2", "--no-backward", "--threads", "1", "--quiet"]


@pytest.fixture(scope="module")
def operators():
    return {
        framework: {op.name: op for op in get_backend(framework).operators()}
        for framework in ("mxnet", "torch")
    }


def _refusal(operators, framework: str, op: str, inputs: dict, device: str = "cpu", profile=STANDARD):
    described = freeze_inputs({name: input_from_json(value) for name, value in inputs.items()})
    return replay_refusal(operators[framework][op], described, profile, device)


@pytest.mark.parametrize(
    ("framework", "op", "inputs", "message"),
    [
        # Operators on the skip list keep their reason, whatever the file gives them.
        ("torch", "from_file", {"filename": "/tmp/victim", "shared": True, "size": 10**6}, "reads a file"),
        ("mxnet", "_Native", {"info": 0x4141414141, "need_top_grad": True}, "takes a raw C pointer"),
        ("mxnet", "_NDArray", {"info": "0x4141414141"}, "takes a raw C pointer"),
        ("mxnet", "_cvimread", {"filename": "/etc/passwd"}, "reads an image file"),
        ("torch", "cudnn_convolution", {"input": {"shape": [1, 1, 4, 4]}}, "no CPU implementation"),
        # Resources: a device, a registered CustomOp's name, pinned memory, a generator.
        ("mxnet", "_arange", {"start": 0.0, "stop": 8.0, "ctx": "gpu(0)"}, "'ctx' names a resource"),
        ("mxnet", "Custom", {"data": [{"shape": [4]}], "op_type": "evil"}, "'op_type' names a resource"),
        ("torch", "zeros", {"size": [4], "device": "meta"}, "'device' names a resource"),
        ("torch", "empty", {"size": [4], "pin_memory": True}, "'pin_memory' names a resource"),
        (
            "torch",
            "bernoulli",
            {"input": {"shape": [4]}, "generator": "cuda"},
            "'generator' names a resource",
        ),
        # Text where the rules alone set text, or where a tensor or number goes.
        ("torch", "exp", {"input": "/etc/passwd"}, "'input' is the text '/etc/passwd'"),
        ("mxnet", "broadcast_add", {"lhs": "/etc/passwd", "rhs": {"shape": [4]}}, "is the text"),
        ("torch", "sum", {"input": {"shape": [4]}, "dtype": "__class__"}, "not a name this framework has"),
        ("mxnet", "Activation", {"data": {"shape": [4]}, "act_type": "system"}, "not one of relu"),
        # Values of another kind than the argument takes.
        ("mxnet", "Convolution", {"data": {"shape": [1, 1, 4, 4]}, "kernel": "3"}, "is the text '3'"),
        ("mxnet", "_arange", {"start": 0.0, "stop": 8.0, "repeat": 1.5}, "it takes an integer"),
        ("mxnet", "exp", {"data": [1, 2]}, "it takes a tensor or a number"),
        # Tensors beyond what the framework's sweeps make.
        ("mxnet", "exp", {"data": {"shape": [4], "dtype": "object"}}, "dtype 'object'"),
        ("mxnet", "exp", {"data": {"shape": [4], "storage": "mkldnn", "density": 1}}, "storage 'mkldnn'"),
        ("mxnet", "exp", {"data": {"shape": [2**16, 2**16]}}, "more than 2147483647"),
        ("torch", "exp", {"input": {"shape": [1] * 40}}, "rank 40"),
        # Lists no model calls with: a million one-element tensors took a worker to 2.7 GB.
        ("mxnet", "add_n", {"args": [{"shape": [1]}] * 100_000}, "a list of 100,000 items, more than 1,024"),
        ("torch", "sum", {"input": {"shape": [4]}, "dim": [0] * 5000}, "a list of 5,000 items"),
    ],
)
def test_hostile_configurations_are_refused_with_the_reason(operators, framework, op, inputs, message):
    refusal = _refusal(operators, framework, op, inputs)
    assert refusal is not None and message in refusal


@pytest.mark.parametrize(
    ("framework", "op", "inputs"),
    [
        ("torch", "einsum", {"equation": "ij,jk->ik", "tensors": [{"shape": [2, 3]}, {"shape": [3, 4]}]}),
        ("torch", "div", {"input": {"shape": [4]}, "other": {"shape": [4]}, "rounding_mode": "floor"}),
        ("torch", "sum", {"input": {"shape": [4, 4]}, "dim": [1], "keepdim": True, "dtype": "float64"}),
        ("torch", "conv2d", {"input": {"shape": [1, 3, 8, 8]}, "weight": {"shape": [4, 3, 3, 3]},
                             "padding": "same"}),
        ("torch", "exp", {"input": {"shape": [4], "storage": "sliced", "density": 1.0}}),
        ("mxnet", "Convolution", {"data": {"shape": [1, 3, 8, 8]}, "weight": {"shape": [4, 3, 3, 3]},
                                  "kernel": [3, 3], "num_filter": 4, "no_bias": True, "layout": "NCHW"}),
        ("mxnet", "_npi_einsum", {"data": [{"shape": [2, 3]}, {"shape": [3, 4]}], "subscripts": "ij,jk->ik"}),
        ("mxnet", "_arange", {"start": 0.0, "stop": 8.0, "ctx": ""}),
        ("mxnet", "Cast", {"data": {"shape": [4]}, "dtype": "float16"}),
        ("mxnet", "exp", {"data": {"shape": [2**16, 2**16]}}),
    ],
)  # fmt: skip
def test_what_a_capture_records_is_accepted(operators, framework, op, inputs):
    profile = INT64 if inputs.get("data") == {"shape": [2**16, 2**16]} else STANDARD
    assert _refusal(operators, framework, op, inputs, profile=profile) is None


@pytest.mark.parametrize("framework", ["mxnet", "torch"])
def test_every_swept_configuration_replays_from_its_record(operators, framework):
    """A results file of a whole sweep, replayed: none of its configurations is refused."""
    from opperf.operators.rules import NoRuleError, inputs_for
    from opperf.results.measurement import describe_value

    backend = get_backend(framework)
    replayed = 0
    for op in operators[framework].values():
        try:
            swept = inputs_for(op, STANDARD, "cpu")
        except NoRuleError:
            continue
        for inputs in swept:
            described = {k: describe_value(v) for k, v in backend.applicable_inputs(op, inputs).items()}
            refusal = _refusal(operators, framework, op.name, described)
            assert refusal is None, (op.name, described)
            replayed += 1
    assert replayed > 1000


def _write_configs(path, framework: str, lines: list[dict]) -> None:
    header = {"format": "opperf-configs", "version": 1, "framework": framework}
    path.write_text("".join(json.dumps(line) + "\n" for line in [header, *lines]))


def _records(path) -> dict[str, list[dict]]:
    records: dict[str, list[dict]] = {}
    for record in json.loads(path.read_text())["results"]:
        records.setdefault(record["op"], []).append(record)
    return records


def test_a_configuration_named_by_an_alias_and_by_its_operator_is_replayed_once(tmp_path):
    """Names are made canonical before configurations merge: one configuration, its counts added."""
    from opperf.results.replay import load_replay

    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    _write_configs(first, "mxnet", [{"op": "relu", "inputs": {"data": {"shape": [4, 4]}}, "count": 2}])
    _write_configs(second, "mxnet", [{"op": "_relu_alias", "inputs": {"data": {"shape": [4, 4]}}}])
    chosen = load_replay(
        [str(first), str(second)], "mxnet", lambda op: frozenset({"data"}), {"_relu_alias": "relu"}
    )
    assert [(c.op, c.count) for c in chosen] == [("relu", 3)]


def test_a_configs_file_without_configurations_is_refused_before_anything_runs(tmp_path, capsys):
    """An empty replay selects nothing, where an empty selection elsewhere is the whole registry."""
    configs, output = tmp_path / "empty.jsonl", tmp_path / "out.json"
    _write_configs(configs, "mxnet", [])
    assert main(["sweep", "--configs", str(configs), "--output-file", str(output)]) == 2
    assert f"{configs} holds no configuration" in capsys.readouterr().err
    assert not list(tmp_path.glob("out.json*"))


def test_a_torch_file_cannot_write_to_a_file_through_from_file(tmp_path, capsys):
    """The trial's first finding: ``from_file`` with ``shared`` grew any writable file to 4 MB."""
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"victim")
    configs, output = tmp_path / "evil.jsonl", tmp_path / "out.json"
    _write_configs(
        configs,
        "torch",
        [
            {"op": "from_file", "inputs": {"filename": str(victim), "shared": True, "size": 10**6}},
            {"op": "exp", "inputs": {"input": {"shape": [4, 4]}}},
            {"op": "exp", "inputs": {"input": {"shape": [10**5, 10**5, 10**3]}}},
            {"op": "zeros", "inputs": {"size": [4], "device": "meta"}},
        ],
    )
    assert main(["sweep", "--configs", str(configs), "--output-file", str(output), *FAST]) == 0
    assert victim.read_bytes() == b"victim"
    records = _records(output)
    (from_file,) = records["from_file"]
    assert from_file["status"] == "skipped"
    assert from_file["reason"].startswith(f"{configs}:2: reads a file from disk")
    assert from_file["inputs"]["filename"] == str(victim)  # what was refused is on the record
    small, huge = records["exp"]
    assert small["status"] == "ok"
    assert huge["status"] == "skipped" and huge["reason"].startswith("out of memory (not run)")
    (zeros,) = records["zeros"]
    assert zeros["status"] == "skipped" and zeros["reason"].startswith(
        f"{configs}:5: zeros's argument 'device'"
    )


def test_an_mxnet_file_cannot_hand_a_pointer_to_the_worker(tmp_path):
    """The trial's second finding: ``_Native`` with ``info: 0x4141414141`` made the worker dereference
    that address. Now it is refused before a worker sees it, and the sweep goes on."""
    configs, output = tmp_path / "evil.jsonl", tmp_path / "out.json"
    _write_configs(
        configs,
        "mxnet",
        [
            {"op": "_Native", "inputs": {"data": [{"shape": [4]}], "info": 0x4141414141}},
            {"op": "Custom", "inputs": {"data": [{"shape": [4]}], "op_type": "evil"}},
            {"op": "exp", "inputs": {"data": {"shape": [4, 4]}}},
        ],
    )
    assert main(["sweep", "--configs", str(configs), "--output-file", str(output), *FAST]) == 0
    records = _records(output)
    assert records["_Native"][0]["status"] == "skipped"
    assert records["_Native"][0]["reason"] == f"{configs}:2: takes a raw C pointer argument"
    assert records["Custom"][0]["reason"].startswith(
        f"{configs}:3: Custom's argument 'op_type' names a resource"
    )
    assert records["exp"][0]["status"] == "ok"
    assert {r["status"] for rs in records.values() for r in rs} == {"ok", "skipped"}


def test_a_results_file_replayed_as_configs_is_checked_alike(tmp_path):
    """A results file is a configs file too: a record a sweep would refuse is refused, naming it."""
    results, output = tmp_path / "results.json", tmp_path / "out.json"
    assert main(["sweep", "--framework", "torch", "--ops", "exp", "--output-file", str(results), *FAST]) == 0
    document = json.loads(results.read_text())
    hostile = {
        **document["results"][0],
        "op": "from_file",
        "inputs": {"filename": "/etc/passwd", "shared": True},
    }
    document["results"].append(hostile)
    results.write_text(json.dumps(document))
    assert main(["sweep", "--configs", str(results), "--output-file", str(output), *FAST]) == 0
    records = _records(output)
    assert [r["status"] for r in records["exp"]] == ["ok"] * len(records["exp"])
    count = len(document["results"])
    assert records["from_file"][0]["reason"].startswith(f"{results}: record {count}: reads a file from disk")


@pytest.mark.parametrize(
    ("flags", "refused"),
    [
        (["--dtype", "bfloat16"], "--dtype bfloat16: the --configs files' tensors name their own (float16)"),
        (["--shapes", "fuzz"], "--shapes draws shapes, and --configs replays the shapes its files hold"),
        (["--fuzz-count", "3"], "--fuzz-count draws shapes"),
    ],
)
def test_a_replay_refuses_settings_its_tensors_would_not_take(tmp_path, capsys, flags, refused):
    """Records said bfloat16 (or fuzz) while the files' float16 tensors ran as captured."""
    configs, output = tmp_path / "half.jsonl", tmp_path / "out.json"
    _write_configs(
        configs, "torch", [{"op": "exp", "inputs": {"input": {"shape": [8, 8], "dtype": "float16"}}}]
    )
    argv = ["sweep", "--framework", "torch", "--configs", str(configs), "--output-file", str(output), *flags]
    assert main(argv) == 2
    assert refused in capsys.readouterr().err and not output.exists()


def test_a_replay_is_recorded_in_the_dtype_its_tensors_name(tmp_path):
    """A model captured in float16 is recorded float16 (the run's default float32 applies to none of
    its tensors); a tensor that names no dtype takes the run's."""
    configs, output = tmp_path / "half.jsonl", tmp_path / "out.json"
    lines = [{"op": "exp", "inputs": {"input": {"shape": [8, 8], "dtype": "float16"}}}]
    _write_configs(configs, "torch", lines)
    argv = ["sweep", "--framework", "torch", "--configs", str(configs), "--output-file", str(output)]
    assert main([*argv, "--runs", "2", "--warmup", "0", "--quiet", "--no-isolation"]) == 0
    [record] = json.loads(output.read_text())["results"]
    assert record["dtype"] == "float16" and record["inputs"]["input"]["dtype"] == "float16"
