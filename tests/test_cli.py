"""The opperf command: a real (small) sweep, and every bad option rejected with a clear message."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from markers import cpu_only_build, int32_only_build

from opperf.cli import main
from opperf.utils.affinity import available_cpus
from opperf.utils.files import write_atomically

ROOT = Path(__file__).resolve().parents[1]


def _run(*arguments, capsys):
    code = main(list(arguments))
    return code, capsys.readouterr().err


def test_sweep_selected_operators_writes_markdown_and_json(tmp_path, capsys):
    report, results = tmp_path / "out.md", tmp_path / "out.json"
    code, err = _run(
        "--ops",
        "broadcast_add,exp,Pooling",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--output-format",
        "md",
        "--output-file",
        str(report),
        "--json-file",
        str(results),
        capsys=capsys,
    )
    assert code == 0, err
    document = json.loads(results.read_text())
    assert {r["op"] for r in document["results"]} == {"broadcast_add", "exp", "Pooling"}
    assert len([r for r in document["results"] if r["op"] == "Pooling"]) == 12
    environment = document["environment"]
    assert environment["runs"] == 2
    assert document["coverage"]["operators"] == 3
    # auto affinity: one CPU per intra-op thread, unless that is every CPU
    pinned = environment["worker_cpus"]
    assert pinned is None or len(pinned) == environment["threads"] < len(available_cpus())
    assert 0 < environment["harness_overhead_s"] < 1e-3
    text = report.read_text()
    assert "## binary_broadcast" in text and "## pooling" in text and "## unary" in text


def test_python_profiler_and_category_selection(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, err = _run(
        "--categories",
        "binary_elemwise",
        "--profiler",
        "python",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--output-file",
        str(out),
        "--quiet",
        capsys=capsys,
    )
    assert code == 0, err
    document = json.loads(out.read_text())
    assert {r["category"] for r in document["results"]} == {"binary_elemwise"}
    assert all(r["profiler"] == "python" for r in document["results"])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("--ops", "broadcast_ad"), "unknown operator 'broadcast_ad'; did you mean broadcast_add"),
        (("--categories", "pooling,unray"), "unknown category 'unray'; did you mean unary"),
        pytest.param(("--ctx", "gpu(0)"), "no CUDA support", marks=cpu_only_build),
        pytest.param(("--int64-tensor", "on"), "INT64_TENSOR_SIZE is off", marks=int32_only_build),
        (("--output-file", "/no/such/folder/out.json"), "output folder '/no/such/folder' does not exist"),
    ],
)
def test_bad_options_fail_with_error(arguments, message, capsys):
    code, err = (
        _run(*arguments, "--ops", "exp", capsys=capsys)
        if "--ops" not in arguments
        else _run(*arguments, capsys=capsys)
    )
    assert code == 2
    assert err.startswith("error: ") and message in err


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("--runs", "0"), "must be at least 1"),
        (("--runs", "100001"), "must be at most 100,000"),  # more samples than a results file holds
        (("--dtype", "float33"), "invalid choice: 'float33'"),
        (("--profiler", "gprof"), "invalid choice: 'gprof'"),
        (("--int64-tensor", "maybe"), "expected on or off"),
        (("--affinity", "cpu1"), "'cpu1' is not a CPU number or range like 2-3"),
        (("--ctx", "tpu"), "argument --ctx: malformed device 'tpu'; use cpu, gpu(N)"),
    ],
)
def test_argparse_rejects_bad_values(arguments, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(list(arguments))
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_script_help_lists_flags():
    result = subprocess.run(
        [sys.executable, str(ROOT / "opperf.py"), "--help"], capture_output=True, text=True, check=True
    )
    for flag in (
        "--ctx",
        "--dtype",
        "--output-format",
        "--profiler",
        "--int64-tensor",
        "--ops",
        "--categories",
    ):
        assert flag in result.stdout


def test_atomic_write_replaces_whole_file(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    write_atomically(str(target), "new")
    assert target.read_text() == "new"
    assert list(tmp_path.iterdir()) == [target]
    assert target.stat().st_mode & 0o044  # readable by others, like any file the user writes


def test_engine_choice_is_applied_and_recorded(tmp_path):
    out = tmp_path / "r.json"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "opperf.py"),
            "--engine",
            "naive",
            "--ops",
            "exp",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--quiet",
            "--output-file",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    assert json.loads(out.read_text())["environment"]["engine"] == "NaiveEngine"


def test_coverage_table_names_reasons(tmp_path, capsys):
    code = main(
        [
            "--ops",
            "exp,_NDArray",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--coverage",
            "--output-file",
            str(tmp_path / "r.json"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "| total" in out and "skipped (1):" in out
    assert "_NDArray: takes a raw C pointer" in out


@pytest.mark.parametrize(("flag", "value"), [("--ops", ""), ("--categories", ",,"), ("--fail-on", "bogus")])
def test_empty_selections_and_unknown_statuses_are_usage_errors(flag, value, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([flag, value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "names nothing" in err or "unknown status 'bogus'" in err


def test_fail_on_gates_a_sweep_whose_operators_failed(tmp_path, capsys):
    output = str(tmp_path / "r.json")
    arguments = ["--ops", "_contrib_quantized_elemwise_mul,exp", "--runs", "2", "--warmup", "0", "--quiet"]
    assert main([*arguments, "--output-file", output]) == 0
    assert main([*arguments, "--output-file", output, "--fail-on", "failed,crashed"]) == 1
    assert "--fail-on: 1 operators: _contrib_quantized_elemwise_mul (failed)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("folder/", "is a folder"),
        ("x" * 250 + ".json", "too long for its journal"),
        ("no/such/out.json", "does not exist"),
    ],
)
def test_output_paths_that_cannot_be_written_are_refused_before_anything_runs(
    tmp_path, capsys, name, message
):
    (tmp_path / "folder").mkdir()
    code = main(["--ops", "exp", "--output-file", str(tmp_path / name) + ("/" if name.endswith("/") else "")])
    assert code == 2
    assert message in capsys.readouterr().err


RUN1, RUN2 = (str(Path(__file__).parent / "data" / "verdicts" / f"mxnet_run{n}.json") for n in (1, 2))


@pytest.mark.parametrize(
    ("command", "flag"),
    [
        (["--ops", "exp", "--output-file", "{tmp}/out.json"], "--json-file"),
        (["--ops", "exp", "--output-file", "{tmp}/out.json"], "--history"),
        (["diff", RUN1, RUN2], "--json-file"),
        (["compare", "mx.nd,mx.np", "--ops", "exp"], "--json-file"),
    ],
)
def test_an_output_that_cannot_be_written_is_named_by_its_own_flag(tmp_path, capsys, command, flag):
    argv = [part.format(tmp=tmp_path) for part in command]
    assert main([*argv, flag, str(tmp_path / "no" / "such.file")]) == 2
    assert capsys.readouterr().err.strip().endswith(f"create it or choose another {flag}")
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize(
    "command",
    [
        ["--ops", "exp", "--output-file", "{tmp}/x.md", "--json-file", "{tmp}/./x.md"],
        ["diff", RUN1, RUN2, "--output-file", "{tmp}/x.md", "--json-file", "{tmp}/x.md"],
        [
            "compare",
            "mx.nd,mx.np",
            "--ops",
            "exp",
            "--output-file",
            "{tmp}/x.md",
            "--json-file",
            "{tmp}/x.md",
        ],
    ],
)
def test_two_outputs_naming_one_file_are_refused_before_anything_runs(tmp_path, capsys, command):
    """The second written would replace the first: the Markdown report was lost to the JSON one."""
    assert main([part.format(tmp=tmp_path) for part in command]) == 2
    assert "--output-file and --json-file name the same file" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("flag", ["--output-file", "--json-file"])
def test_diff_refuses_to_write_over_a_file_it_diffs(tmp_path, capsys, flag):
    """A swapped argument had replaced the NEW side's measurements with the diff report, exit 0."""
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    base.write_bytes(Path(RUN1).read_bytes())
    new.write_bytes(Path(RUN2).read_bytes())
    kept = new.read_bytes()
    assert main(["diff", str(base), str(new), flag, str(tmp_path / "." / "new.json")]) == 2
    assert f"{flag} " in capsys.readouterr().err and new.read_bytes() == kept


@pytest.mark.parametrize("flag", ["--output-file", "--json-file"])
def test_an_empty_output_name_is_refused_not_taken_for_the_default(tmp_path, monkeypatch, capsys, flag):
    monkeypatch.chdir(tmp_path)
    argv = ["--ops", "exp", "--output-file", "out.json", flag, ""]
    assert main(argv) == 2
    assert f"{flag} '' names no file" in capsys.readouterr().err and not list(tmp_path.iterdir())
