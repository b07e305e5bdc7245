"""Interleaved A/B jobs: two real worker interpreters taking turns, an environment change on one
side, the A/B file, and what ``opperf diff`` makes of paired rounds."""

from __future__ import annotations

import json
import math
import random
import statistics
import sys
from pathlib import Path

import pytest
from interpreters import without_site_packages

from opperf.cli import main
from opperf.measure.isolation import IsolatedRunner
from opperf.measure.messages import BuildDescription
from opperf.measure.sampling import SamplingPlan
from opperf.results.key import Key
from opperf.results.load import Run
from opperf.results.measurement import BenchmarkSpec, Measurement, Status, TensorSpec, freeze_inputs
from opperf.results.options import RunOptions
from opperf.results.record import Phase, Record
from opperf.verdicts.ab.job import (
    MAX_ROUND_TARGET,
    REWARM_PASSES,
    ROUND_MIN_RUNS,
    interleaved,
    mismatches,
    order,
    pass_seconds,
    round_options,
    round_plan,
)
from opperf.verdicts.ab.sequential import Schedule
from opperf.verdicts.decide import Verdict
from opperf.verdicts.diff import diff

QUICK = ("--threads", "1", "--warmup", "1", "--runs", "3", "--rounds", "2")
SLOWDOWN_SITE = Path(__file__).resolve().parents[1] / "benchmarks" / "slowdown"
"""The test-only slowdown, injected into workers from outside opperf (its ``sitecustomize``)."""


def test_sides_take_turns_going_first():
    assert [order(r) for r in range(4)] == [
        ("base", "new"),
        ("new", "base"),
        ("base", "new"),
        ("new", "base"),
    ]


@pytest.mark.slow
def test_two_interpreters_one_with_an_environment_change(tmp_path, capsys):
    output = tmp_path / "ab.json"
    code = main(
        ["ab", "--ops", "exp,broadcast_add", *QUICK, "--base-python", sys.executable,
         "--new-python", sys.executable, "--new-env", f"PYTHONPATH={SLOWDOWN_SITE}",
         "--new-env", "OPPERF_TEST_SLOWDOWN=exp:4.0", "--output-file", str(output)]
    )  # fmt: skip
    assert code == 0
    document = json.loads(output.read_text())
    assert document["kind"] == "ab" and document["ab"]["rounds"] == 2
    assert document["ab"]["builds"]["new"]["environment"] == {
        "PYTHONPATH": str(SLOWDOWN_SITE),
        "OPPERF_TEST_SLOWDOWN": "exp:4.0",
    }
    assert document["ab"]["builds"]["base"]["framework_version"] == "1.9.1"
    assert document["ab"]["mismatches"] == []
    records = document["results"]
    configurations = {(r["op"], json.dumps(r["inputs"], sort_keys=True)) for r in records}
    assert len(records) == len(configurations) * 2 * 2  # rounds x sides
    assert {(r["side"], r["round"]) for r in records} == {(s, k) for s in ("base", "new") for k in (0, 1)}
    # Each round passes over every configuration in its own workers, so prepares each configuration
    # again; no round probes peak memory (a sweep's figure).
    assert all(r["prepared_in_round"] == r["round"] for r in records)
    assert all(r["memory_peak_bytes"] is None for r in records)

    def median(op: str, side: str) -> float:
        return sorted(r["forward"]["median_s"] for r in records if r["op"] == op and r["side"] == side)[0]

    # 4x injected: a job this short runs beside the standby workers' imports on the other CPU, which
    # has read one side's exp 1.6x slower than the other's in both rounds (seen in two suite runs).
    assert 2.5 < median("exp", "new") / median("exp", "base") < 6.0
    assert 0.6 < median("broadcast_add", "new") / median("broadcast_add", "base") < 1.6
    capsys.readouterr()
    assert main(["diff", str(output), "--output-format", "json", "--fail-on", "never"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    exp_ratios = [r["ratio"] for r in rows if r["op"] == "exp" and r.get("ratio")]
    assert exp_ratios and 2.5 < statistics.median(exp_ratios) < 6.0


def _exp(shape: tuple[int, ...]) -> BenchmarkSpec:
    options = RunOptions(run_backward=True, warmup=1, runs=3, threads=1)
    return BenchmarkSpec("mx.nd", "exp", freeze_inputs({"data": TensorSpec(shape)}), options)


def test_a_held_preparation_is_reused_and_no_round_probes_memory():
    """A worker measures later rounds of the configuration it holds on that preparation; a round of
    a configuration it does not hold (the next configuration of an A/B round, or a fresh worker)
    prepares it there; no round probes peak memory, a sweep's figure."""
    first, second = _exp((64, 64)), _exp((32, 32))
    with IsolatedRunner(timeout_s=120, threads=1) as runner:
        rounds = [runner.run_round(first, index) for index in range(3)]
        unheld = runner.run_round(second, 1)
        again = runner.run_round(first, 2)
    assert all(r.measurement.status is Status.OK and len(r.measurement.forward) == 3 for r in rounds)
    assert [r.prepared_in for r in rounds] == [0, 0, 0]
    assert all(r.measurement.memory_peak_bytes is None for r in (*rounds, unheld, again))
    assert rounds[1].measurement.backward and rounds[2].measurement.backward_reason is None
    assert unheld.prepared_in == 1
    assert again.prepared_in == 2 and again.measurement.spec == first


def test_a_malformed_environment_assignment_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["ab", "--new-env", "MXNET_MKLDNN_ENABLED", "--output-file", "ab.json"])
    assert exit_info.value.code == 2 and "expected NAME=VALUE" in capsys.readouterr().err


def test_differing_builds_are_reported():
    base = BuildDescription("/a/python", "1.8.0", ("add", "exp", "old_op"))
    new = BuildDescription("/b/python", "1.9.1", ("add", "exp", "new_op"))
    assert mismatches({"base": base, "new": new}) == [
        "framework version: base 1.8.0, new 1.9.1",
        "1 operator only in base: old_op",
        "1 operator only in new: new_op",
    ]
    assert mismatches({"base": base, "new": base}) == []


def _key(index: int) -> Key:
    return Key.from_mapping(
        {"framework": "mxnet", "namespace": "mx.nd", "op": f"op{index}", "inputs": "{}", "dtype": "float32",
         "device": "cpu(0)", "profiler": "native", "threads": 1, "cache": "hot", "run_backward": True}
    )  # fmt: skip


def _rounds(medians: dict[Key, list[float]], busy: bool = False) -> tuple[Run, ...]:
    """One Run per round: each key's median in that round, a 1% interval, no doubt flags."""
    count = len(next(iter(medians.values())))
    return tuple(
        Run(
            f"round {r}",
            {
                key: Record(key, "ok", None, {"forward": Phase(m[r], m[r] * 0.99, m[r] * 1.01, False)},
                               met_target=False, competing_load=1.0 if busy else None)
                for key, m in medians.items()
            },
        )
        for r in range(count)
    )  # fmt: skip


def test_paired_rounds_find_a_slowdown_and_nothing_else():
    """40 rows, each side three rounds in which the machine's speed moves both sides of a round
    alike (up to 30%), with 2% noise of their own; rows 0-3 are 20% slower on the new side."""
    rng = random.Random(7)
    base, new = {}, {}
    for index in range(40):
        key, true = _key(index), 1e-3 * (1 + index)
        stretches = [math.exp(rng.uniform(-0.3, 0.3)) for _ in range(3)]
        base[key] = [true * s * math.exp(rng.gauss(0, 0.02)) for s in stretches]
        slower = 1.2 if index < 4 else 1.0
        new[key] = [true * s * slower * math.exp(rng.gauss(0, 0.02)) for s in stretches]
    result = diff(_rounds(base), _rounds(new), threshold=0.05, alpha=0.05, paired=True)
    verdicts = {row.key.op: row.verdict for row in result.rows}
    assert {op for op, v in verdicts.items() if v is Verdict.SLOWER} == {"op0", "op1", "op2", "op3"}
    assert Verdict.FASTER not in verdicts.values()
    # Unpaired, the same figures cannot be told apart from the machine's stretches.
    unpaired = diff(_rounds(base), _rounds(new), threshold=0.05, alpha=0.05)
    assert Verdict.SLOWER not in {row.verdict for row in unpaired.rows}


def test_a_round_gets_a_share_of_the_budget_and_a_looser_target():
    options = RunOptions(budget_s=0.3, target_precision=0.02)
    assert round_options(options, 4) == RunOptions(budget_s=0.075, target_precision=0.04)
    assert round_options(options, 1) == options
    assert round_options(RunOptions(target_precision=0.1), 16).target_precision == MAX_ROUND_TARGET


def test_a_round_takes_its_share_of_the_minimum_and_later_rounds_only_re_warm():
    """By hand, for 6 rounds of a plan with a 5-sample minimum and 0.05 s a round (warm-up share
    0.0125 s): every round may stop after ROUND_MIN_RUNS samples (more than ceil(5/6) = 1), never
    more than the plan's minimum; round 0 warms up as a sweep does, later rounds with at most
    REWARM_PASSES passes, none when a pass takes longer than 0.0125 s."""
    plan = SamplingPlan(budget_s=0.05, min_runs=5)
    first = round_plan(plan, 6, 0, None)
    assert first == SamplingPlan(budget_s=0.05, min_runs=ROUND_MIN_RUNS) and ROUND_MIN_RUNS == 2
    later = SamplingPlan(budget_s=0.05, min_runs=ROUND_MIN_RUNS, max_warmup=REWARM_PASSES)
    assert round_plan(plan, 6, 3, 0.001) == later
    assert round_plan(SamplingPlan(budget_s=0.05, min_runs=1), 6, 0, None).min_runs == 1
    assert round_plan(plan, 6, 3, 0.02).max_warmup == 0
    assert round_plan(plan, 6, 3, None).max_warmup == REWARM_PASSES  # the last round did not measure
    assert round_plan(plan, 2, 1, 0.001).min_runs == 3
    fixed = SamplingPlan(warmup=2, runs=4)
    assert round_plan(fixed, 6, 3, 0.02) == fixed  # fixed counts mean exactly that, every round


def test_a_pass_is_the_forward_and_backward_medians():
    spec = _exp((4, 4))
    measured = Measurement(spec=spec, status=Status.OK, forward=(1.0, 3.0, 2.0), backward=(5.0, 4.0))
    assert pass_seconds(measured) == 2.0 + 4.5
    assert pass_seconds(Measurement(spec=spec, status=Status.FAILED, reason="x")) is None
    assert pass_seconds(None) is None


@pytest.mark.slow
def test_a_configuration_that_did_not_measure_gets_no_further_round():
    """Later rounds prepare without the check that the tensors fit (round 0 made it), and a row's
    status is the worst of its rounds', so a configuration round 0 found too large, or one that
    failed, is not sent again, even within ``min_rounds``; the small configuration beside them is
    measured in fresh workers every round."""
    huge, small = _exp((2**22, 2**22)), _exp((16, 16))
    failing = BenchmarkSpec(
        "mx.nd",
        "broadcast_add",
        freeze_inputs({"lhs": TensorSpec((3, 4)), "rhs": TensorSpec((5, 6))}),
        small.options,
    )
    with IsolatedRunner(timeout_s=120, threads=1) as base, IsolatedRunner(timeout_s=120, threads=1) as new:
        pairs = list(interleaved([huge, failing, small], {"base": base, "new": new}, Schedule(2, 2), 2))
    assert [(p.round, p.base.spec) for p in pairs] == [(0, huge), (0, failing), (0, small), (1, small)]
    for side in (pairs[0].base, pairs[0].new):
        assert side.status is Status.SKIPPED and "out of memory (not run)" in side.reason
    assert pairs[1].base.status is Status.FAILED and pairs[1].new.status is Status.FAILED
    assert pairs[3].base.status is Status.OK and pairs[3].prepared_in == {"base": 1, "new": 1}


@pytest.mark.parametrize(
    ("interpreter", "why", "remedy"),
    [
        ("/bin/true", "", "correct --new-python as that says"),
        (
            "python-without-numpy",
            "(ModuleNotFoundError: No module named 'numpy')",
            "pass a Python with numpy and mxnet installed as --new-python",
        ),
        (  # numpy there, MXNet not: opperf's own error, not a ModuleNotFoundError, says so
            "python-without-mxnet",
            "(opperf.frameworks.NotInstalledError: framework 'mxnet' is not installed",
            "pass a Python with numpy and mxnet installed as --new-python",
        ),
        (  # a wrapper that runs Python as its child: the worker is no child of opperf's
            "wrapper-without-exec",
            "must exec Python, not run it))",
            "correct --new-python as that says",
        ),
    ],
)
def test_a_side_whose_workers_cannot_start_is_refused_before_the_first_round(
    tmp_path, capsys, interpreter, why, remedy
):
    """``--new-python /bin/true`` ran to the end and exited 0, every row of the new side failing. The
    remedy follows the cause: numpy to install only where numpy is what it lacks."""
    if interpreter == "python-without-numpy":
        interpreter = without_site_packages(tmp_path / "python")
    if interpreter == "python-without-mxnet":
        shim = tmp_path / "shim"
        shim.mkdir()
        (shim / "mxnet.py").write_text("raise ImportError('no MXNet in this interpreter')\n")
        wrapper = tmp_path / "python"
        wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={shim} exec {sys.executable} "$@"\n')
        wrapper.chmod(0o755)
        interpreter = str(wrapper)
    if interpreter == "wrapper-without-exec":
        wrapper = tmp_path / "python"
        wrapper.write_text(f'#!/bin/sh\n{sys.executable} "$@"\n')
        wrapper.chmod(0o755)
        interpreter = str(wrapper)
    output = tmp_path / "ab.json"
    argv = ["ab", "--ops", "exp", *QUICK, "--new-python", interpreter, "--output-file", str(output)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: the new side's workers do not start in {interpreter} (")
    assert err.count("\n") == 1 and why in err and err.rstrip().endswith(f"; {remedy}"), err
    assert "Traceback" not in err and 'File "' not in err and not output.exists()


def test_more_minimum_rounds_than_rounds_are_refused_before_anything_runs(tmp_path, capsys):
    output = tmp_path / "ab.json"
    argv = ["ab", "--ops", "exp", "--min-rounds", "5", "--rounds", "2", "--output-file", str(output)]
    assert main(argv) == 2
    assert "--min-rounds 5 exceeds --rounds 2" in capsys.readouterr().err and not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("framework", "setting", "said"),
    [
        ("jax", "JAX_PLATFORMS=tpu", "Unable to initialize backend 'tpu'"),
        ("jax", "XLA_FLAGS=--xla_bogus_flag=1", "(Unknown flags in XLA_FLAGS: --xla_bogus_flag=1)"),
        # MXNet reads its engine only as it starts: one side's every configuration failed, exit 0
        ("mxnet", "MXNET_ENGINE_TYPE=banana", "(MXNetError: Cannot find Engine banana)"),
    ],
)
def test_a_side_whose_environment_its_framework_refuses_is_told_to_correct_it(
    tmp_path, capsys, framework, setting, said
):
    """The interpreter is fine; the setting the side adds is not: the message names both ways out."""
    output = tmp_path / "ab.json"
    argv = ["ab", "--framework", framework, "--ops", "exp", *QUICK, "--new-env", setting]
    assert main([*argv, "--output-file", str(output)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.rstrip().endswith(
        f"; correct its --new-env settings ({setting}) or --new-python"
    )
    assert said in err and not output.exists()


def test_two_jobs_naming_one_output_file_are_refused(tmp_path, capsys):
    from opperf.utils.files import claimed

    output = tmp_path / "ab.json"
    with claimed(str(output)):
        assert main(["ab", "--ops", "exp", *QUICK, "--output-file", str(output)]) == 2
    assert "another job is writing" in capsys.readouterr().err and not output.exists()
    assert not (tmp_path / "ab.json.lock").exists()


@pytest.mark.slow
def test_sigterm_stops_a_job_with_143_and_resume_measures_only_what_its_journal_lacks(tmp_path):
    """A job stopped by SIGTERM once its journal holds a few pairs: exit 143, its file marked
    interrupted, the journal kept; the same command with --resume takes those pairs as they were
    (the same samples, not measured again), measures the rest, and removes the journal."""
    import signal
    import subprocess
    import time
    from pathlib import Path

    output = tmp_path / "ab.json"
    journal = Path(f"{output}.journal.jsonl")
    script = Path(__file__).resolve().parent.parent / "opperf.py"
    command = [sys.executable, str(script), "ab", "--ops", "exp,log,sqrt,tanh,sin,cos", *QUICK,
               "--min-rounds", "2", "--output-file", str(output)]  # fmt: skip
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while (not journal.exists() or journal.read_text().count("\n") < 4) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, process.communicate()[1]
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert json.loads(output.read_text())["ab"]["interrupted"] is True
    assert "interrupted: " in err and "--resume" in err
    journaled = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert len(journaled) >= 3

    resumed = subprocess.run(
        [*command, "--resume"], stderr=subprocess.PIPE, text=True, timeout=180, check=False
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(journaled)} pairs from the journal" in resumed.stderr
    assert not journal.exists()
    document = json.loads(output.read_text())
    assert document["ab"]["interrupted"] is False
    records = {
        (r["function"], json.dumps(r["inputs"]), r["round"], r["side"]): r for r in document["results"]
    }
    for pair in journaled:
        for side in ("base", "new"):
            kept = records[pair[side]["function"], json.dumps(pair[side]["inputs"]), pair["round"], side]
            assert kept["forward"]["samples_s"] == pair[side]["forward"]["samples_s"]
    configurations = {(r["function"], json.dumps(r["inputs"])) for r in document["results"]}
    assert len(document["results"]) == 2 * 2 * len(configurations) > 2 * len(journaled)


@pytest.mark.slow
def test_sigterm_before_the_first_pair_exits_143_and_writes_nothing(tmp_path):
    """Stopped once its workers are up (the journal's header is written) and before a pair is
    measured: exit 143 and a line that says so, where it said the selection measured nothing."""
    import signal
    import subprocess
    import time
    from pathlib import Path

    output = tmp_path / "ab.json"
    journal = Path(f"{output}.journal.jsonl")
    script = Path(__file__).resolve().parent.parent / "opperf.py"
    command = [sys.executable, str(script), "ab", "--ops", "Convolution", *QUICK, "--output-file"]
    command.append(str(output))
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not journal.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert "interrupted before the first pair was measured: nothing written" in err
    assert "--resume" in err and not output.exists()


def test_a_journal_is_never_overwritten_nor_resumed_with_other_settings(tmp_path, capsys):
    """Without --resume or --fresh an interrupted job's journal is refused; resuming it with
    other settings, or resuming a sweep's journal, is refused by name; all before any worker runs."""
    output = tmp_path / "ab.json"
    journal = tmp_path / "ab.json.journal.jsonl"
    settings = {"journal": 1, "kind": "ab", "settings": {"rounds": 4}}
    journal.write_text(json.dumps(settings) + "\n")
    argv = ["ab", "--ops", "exp", *QUICK, "--output-file", str(output)]
    assert main(argv) == 2
    assert "holds an interrupted A/B job: continue it with --resume, or discard it with --fresh" in (
        capsys.readouterr().err
    )
    assert main([*argv, "--resume"]) == 2
    err = capsys.readouterr().err
    assert "cannot resume" in err and "rounds: journal 4, now 2" in err
    journal.write_text(json.dumps({"journal": 1, "settings": {}}) + "\n")  # a sweep's
    assert main([*argv, "--resume"]) == 2
    assert "is not an opperf A/B job journal" in capsys.readouterr().err
    assert main([*argv, "--resume", "--fresh"]) == 2
    assert "choose one" in capsys.readouterr().err
    assert not output.exists()


def test_a_worker_imports_nothing_beyond_numpy_and_the_framework(tmp_path):
    """Another build's interpreter (``ab --base-python``) has numpy and the framework, nothing of
    opperf's own dependencies: a worker there imports none of them (tabulate once broke it)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    blocked = ("tabulate", "pandas", "tqdm", "openpyxl", "matplotlib", "scipy")
    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        f"        if name.split('.')[0] in {blocked!r}: raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "import opperf.measure.worker, opperf.frameworks.mxnet.backend\n"
        "print('imported')\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert found.returncode == 0 and "imported" in found.stdout, found.stderr


def test_a_side_that_crashes_once_where_the_other_measured_is_measured_again(tmp_path, capsys):
    # The new side's first worker to measure exp aborts (as a segfaulting operator's does), once:
    # without a second try, identical code read ``newly-failing``, which fails a CI gate.
    output, marker = tmp_path / "ab.json", tmp_path / "crashed-once"
    code = main(
        ["ab", "--ops", "exp", *QUICK[:-2], "--rounds", "1", "--min-rounds", "1",
         "--new-python", sys.executable, "--new-env", f"PYTHONPATH={SLOWDOWN_SITE}",
         "--new-env", f"OPPERF_TEST_CRASH_ONCE=exp:{marker}", "--output-file", str(output)]
    )  # fmt: skip
    assert code == 0 and marker.exists()
    records = json.loads(output.read_text())["results"]
    assert all(r["status"] == "ok" for r in records)
    retried = [r for r in records if "crashed once" in (r["reason"] or "")]
    assert len(retried) == 1 and retried[0]["side"] == "new" and retried[0]["round"] == 0
    assert "SIGABRT" in retried[0]["reason"]
    capsys.readouterr()
    assert main(["diff", str(output)]) == 0
    assert "newly-failing" not in capsys.readouterr().out


def _pair_line(op: str = "exp", **changes) -> dict:
    from opperf.results.measurement import BenchmarkSpec, Measurement, Status, TensorSpec, freeze_inputs
    from opperf.results.options import RunOptions
    from opperf.verdicts.ab.journal import pair_entry

    spec = BenchmarkSpec("mx.nd", op, freeze_inputs({"data": TensorSpec((2, 2))}), RunOptions().validated())
    measured = Measurement(spec, Status.OK, forward=(1e-3, 1.1e-3))
    entry = pair_entry(0, measured, measured, {"base": 0, "new": 0})
    for name, value in changes.items():
        where, _, field = name.partition("__")
        if field:
            entry[where] = {**entry[where], field: value}
        else:
            entry[name] = value
    return entry


def _other_ops_record() -> dict:
    return _pair_line("log")["new"]


@pytest.mark.parametrize(
    "damage",
    [
        {"new__forward": {"samples_s": [float("nan"), 1e-3]}},  # the file it became could not be written
        {"new__forward": {"samples_s": ["x", "y"]}},
        {"new__forward": {"samples_s": [1e308, 1e308]}},
        {"new__forward": {"samples_s": [-1.0, -2.0]}},  # written, then refused by diff, journal gone
        {"round": -1},
        {"round": 10**30},
        {"round": True},
        {"round": 0.9},
        {"prepared_in": {"base": -7, "new": 0}},
        {"prepared_in": {"base": 1, "new": 0}},  # prepared in a round after this one
        {"prepared_in": {"elsewhere": 0}},
        {"new": "other"},  # replaced below by another operator's record
    ],
)
def test_a_journal_line_no_pair_of_this_job_is_damaged_and_measured_again(tmp_path, capsys, damage):
    """Each of these gave a traceback on --resume, or was taken as it came: another operator's record
    as the new side (diff then called exp 85x slower, exit 1), values diff refuses (the A/B file
    written, the journal removed, the file unreadable), a round outside the job."""
    from opperf.verdicts.ab.journal import load_pairs

    settings = {"rounds": 2}
    bad = _pair_line(**damage) if "new" not in damage else _pair_line(new=_other_ops_record())
    good = _pair_line(round=1, prepared_in={"base": 1, "new": 1})
    path = tmp_path / "ab.json.journal.jsonl"
    lines = [{"journal": 1, "kind": "ab", "settings": settings}, bad, good, good]  # good twice: once kept
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    pairs = load_pairs(str(path), settings, resume=True, fresh=False)
    assert [round_index for _, round_index in pairs] == [1]
    assert "2 damaged lines skipped (those pairs run again)" in capsys.readouterr().err


def test_a_final_write_that_fails_keeps_the_journal_and_says_how_to_go_on(tmp_path, capsys, monkeypatch):
    """The A/B file cannot be written at the end (a full disk, a folder made read-only meanwhile): the
    journal holds every pair, and the message says so and how to continue, where it said only that the
    file could not be written."""
    import opperf.cli.ab
    from opperf.utils.files import UnwritableError

    def full(path, text):
        raise UnwritableError(path, "No space left on device")

    monkeypatch.setattr(opperf.cli.ab, "write_atomically", full)
    output = tmp_path / "ab.json"
    argv = ["ab", "--ops", "exp", *QUICK, "--output-file", str(output)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"cannot write {output}: No space left on device; the journal is kept" in err and "--resume" in err
    monkeypatch.undo()
    assert main([*argv, "--resume"]) == 0
    assert "pairs from the journal" in capsys.readouterr().err and output.exists()
