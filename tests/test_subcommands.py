"""The subcommands that run nothing: list, explain, --version and --help, for both frameworks."""

from __future__ import annotations

import re

import pytest

from opperf.cli import main


def _run(*arguments: str, capsys) -> tuple[int, str, str]:
    code = main(list(arguments))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert re.fullmatch(r"opperf \S+\n", capsys.readouterr().out)


def test_help_shows_every_subcommand_and_each_frameworks_categories(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for subcommand in ("sweep", "list", "explain", "compare", "diff"):
        assert re.search(rf"^\s+{subcommand}\s", out, re.M), subcommand
    assert re.search(r"^mxnet categories: .*\bpooling\b", out, re.M)
    assert re.search(r"^torch categories: .*\bfft\b", out, re.M)
    assert "--ctx" in out and "--engine" in out


@pytest.mark.parametrize(
    ("framework", "category", "member", "alias"),
    [("mxnet", "pooling", "Pooling", "_npx_pooling"), ("torch", "pooling", "max_pool2d", None)],
)
def test_list_names_operators_categories_and_aliases(framework, category, member, alias, capsys):
    code, out, _ = _run("list", "--framework", framework, "--categories", category, capsys=capsys)
    assert code == 0
    row = next(line for line in out.splitlines() if line.split()[:1] == [member])
    assert category in row and (alias is None or alias in row)
    assert re.search(rf"^\d+ {framework} operators in 1 category: {category} \d+$", out, re.M)


@pytest.mark.parametrize(
    ("framework", "op", "rule", "counter", "configuration"),
    [
        ("mxnet", "Convolution", "hand-written: opperf.frameworks.mxnet.rules.layers", "MXConvolution",
         "data=32x16x32x32 (uniform in [0.1, 1)), weight=32x16x3x3 (uniform in [0.1, 1))"),
        ("mxnet", "broadcast_add", "derived from the signature", "Elementwise",
         "lhs=1024x1024 (uniform in [0.1, 1)), rhs=1024x1024 (uniform in [0.1, 1))"),
        ("torch", "conv2d", "hand-written: opperf.frameworks.torch.rules", "TorchConvolution(dims=2",
         "input=32x16x32x32 (uniform in [0.1, 1)), weight=32x16x3x3 (uniform in [0.1, 1))"),
    ],
)  # fmt: skip
def test_explain_shows_category_rule_inputs_and_counter(framework, op, rule, counter, configuration, capsys):
    code, out, _ = _run("explain", op, "--framework", framework, capsys=capsys)
    assert code == 0
    assert out.startswith(f"{op} ({framework})")
    assert re.search(r"^  category: +\w+: ", out, re.M)
    assert rule in out and counter in out and configuration in out
    assert re.search(r"^    1\. .*\[[\d,]+ bytes, [\d,]+ FLOPs\]$", out, re.M)


def test_explain_says_where_a_framework_without_counters_gets_its_work(capsys):
    """JAX has no work counters: XLA counts each configuration's work (its records carry a roofline),
    which explain said was none ("no work counter: no roofline figures")."""
    code, out, _ = _run("explain", "lax.conv_general_dilated", "--framework", "jax", capsys=capsys)
    assert code == 0 and "  roofline:    XLA's cost analysis of the compiled call" in out
    assert "no roofline" not in out


def test_explain_shows_the_values_and_layout_each_input_would_get(capsys):
    """A distribution touches what the rules leave free: ``take``'s indices are concentrated, its
    data normal; a layout only the framework that has it."""
    code, out, _ = _run("explain", "take", "--values", "normal", capsys=capsys)
    assert code == 0 and "values normal, layout contiguous" in out
    assert (
        "a=1024x256 (standard normal), indices=128 (indices in [0, 1023], concentrated about the middle)"
        in out
    )
    code, out, _ = _run(
        "explain", "conv2d", "--framework", "torch", "--layout", "channels-last", capsys=capsys
    )
    assert code == 0 and "input=32x16x32x32 (uniform in [0.1, 1), channels-last)" in out
    assert "bias=32 (uniform in [0.1, 1))," in out  # rank 1: no channels-last
    code, _, err = _run("explain", "Convolution", "--layout", "transposed", capsys=capsys)
    assert code == 2 and err.startswith("error: layout transposed: MXNet's arrays are always dense")


def test_explain_states_a_skip_reason(capsys):
    code, out, _ = _run("explain", "_NDArray", capsys=capsys)
    assert code == 0 and "input rule:  none: skipped (" in out and "skipped:" in out


def test_explain_an_unknown_operator_is_a_usage_error(capsys):
    code, _, err = _run("explain", "Convolutoin", capsys=capsys)
    assert code == 2 and err.startswith("error: unknown operator 'Convolutoin'") and "Convolution" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--dtype", "float128"], "argument --dtype: invalid choice: 'float128'"),
        (["--timeout", "-inf"], "it takes --timeout SECONDS|none"),
        (["history", "add"], "the following arguments are required: RESULTS"),
        (["diff", "a.json", "--threshold"], "it takes --threshold"),
    ],
)
def test_usage_errors_are_one_line_like_every_other_error(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith("error: ") and message in err
    assert err.count("\n") == 1 and "usage:" not in err and "--help`)" in err


def test_one_output_flag_everywhere_with_the_old_spellings_as_aliases(capsys):
    for subcommand, alias in (("report", "--html"), ("capture", "--output"), ("publish", "--out")):
        with pytest.raises(SystemExit):
            main([subcommand, "--help"])
        out = capsys.readouterr().out
        assert re.search(rf"--output-file \S+, {alias} \S+", out), subcommand


def test_selecting_the_fused_category_runs_its_fusion_backends(capsys):
    from opperf.cli import build_parser
    from opperf.cli.sweep import _fusion_stage

    arguments = build_parser().parse_args(["sweep", "--categories", "fused"])
    _fusion_stage(arguments)
    assert arguments.stages == ("eager", "fused")
    assert "category fused runs its fusion backends too (--stages eager,fused)" in capsys.readouterr().err
    chosen = build_parser().parse_args(["sweep", "--categories", "fused", "--stages", "eager"])
    _fusion_stage(chosen)
    assert chosen.stages == ("eager",)


def test_an_interpreter_without_opperfs_dependencies_says_so_in_one_line():
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "opperf.py"
    done = subprocess.run(  # -S: no site-packages, as in a Python that never had opperf installed
        [sys.executable, "-S", str(script), "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: {sys.executable} has no module ")
    assert ".venv/bin/opperf" in done.stderr and "activate" in done.stderr
