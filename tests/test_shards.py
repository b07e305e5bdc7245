"""Shards: a deterministic, balanced, stable partition, and shards that merge back to the whole."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from opperf.cli import main
from opperf.sweep.costs import read_costs
from opperf.sweep.engines import shard_from_environment
from opperf.sweep.shards import Shard, balanced_partition, partition
from opperf.utils.errors import OpperfError

GOLDEN = Path(__file__).parent / "golden" / "results_v1.json"

QUICK = ("--categories", "rounding,join_split", "--warmup", "0", "--runs", "2", "--threads", "1", "--quiet")


def _costs(count: int, seed: int = 3) -> dict[str, float]:
    rng = random.Random(seed)
    return {f"op{i}": float(rng.choice([0.1, 1, 1, 2, 3, 3, 5])) for i in range(count)}


def test_every_operator_lands_in_exactly_one_shard_whatever_the_order():
    costs = _costs(300)
    shards = partition(costs, 4)
    assert sorted(name for shard in shards for name in shard) == sorted(costs)
    reordered = dict(reversed(list(costs.items())))
    assert partition(reordered, 4) == shards


def test_shards_are_balanced_by_cost_within_one_operator():
    costs = _costs(300)
    total = sum(costs.values())
    for shard in partition(costs, 4):
        assert abs(sum(costs[name] for name in shard) - total / 4) <= max(costs.values())


def test_adding_an_operator_moves_only_operators_beside_the_cuts():
    costs = _costs(300)
    before = {name: index for index, shard in enumerate(partition(costs, 4)) for name in shard}
    after = {
        name: index for index, shard in enumerate(partition({**costs, "new_op": 3.0}, 4)) for name in shard
    }
    moved = [name for name in costs if before[name] != after[name]]
    assert len(moved) <= 3 * 3  # at most the new operator's cost at each of the three cuts


@pytest.mark.parametrize("text", ["0/4", "5/4", "2", "a/b", "2/0"])
def test_a_malformed_shard_is_refused(text):
    with pytest.raises(OpperfError, match="expected K/N"):
        Shard.parse(text)


@pytest.mark.slow
def test_shards_merge_back_to_exactly_the_unsharded_records(tmp_path, capsys):
    def keys(path):
        records = json.loads(path.read_text())["results"]
        return sorted((r["op"], json.dumps(r["inputs"], sort_keys=True), r["status"]) for r in records)

    whole = tmp_path / "whole.json"
    assert main([*QUICK, "--output-file", str(whole)]) == 0
    parts = [tmp_path / f"shard{k}.json" for k in (1, 2)]
    for k, part in enumerate(parts, start=1):
        assert main([*QUICK, "--shard", f"{k}/2", "--output-file", str(part)]) == 0
        assert json.loads(part.read_text())["environment"]["shard"] == f"{k}/2"
    assert keys(parts[0]) and keys(parts[1]) and not set(keys(parts[0])) & set(keys(parts[1]))
    merged = tmp_path / "merged.json"
    assert main(["merge", *map(str, parts), "--output-file", str(merged)]) == 0
    assert keys(merged) == keys(whole)
    document = json.loads(merged.read_text())
    assert document["coverage"]["operators"] == json.loads(whole.read_text())["coverage"]["operators"]
    capsys.readouterr()
    # A shard given twice, or a file measured otherwise, is refused.
    assert main(["merge", str(parts[0]), str(parts[0]), "--output-file", str(merged)]) == 2
    assert "given twice" in capsys.readouterr().err
    other = tmp_path / "other.json"
    assert main([*QUICK, "--dtype", "float64", "--shard", "2/2", "--output-file", str(other)]) == 0
    capsys.readouterr()
    assert main(["merge", str(parts[0]), str(other), "--output-file", str(merged)]) == 2
    assert "dtype 'float32' vs 'float64'" in capsys.readouterr().err


SLURM_TASK = {"SLURM_ARRAY_TASK_ID": "6", "SLURM_ARRAY_TASK_MIN": "2", "SLURM_ARRAY_TASK_MAX": "8"}


@pytest.mark.parametrize(
    ("environ", "shards", "expected"),
    [
        (SLURM_TASK, None, Shard(5, 7)),  # --array=2-8: tasks 2..8 are shards 1..7
        ({**SLURM_TASK, "SLURM_ARRAY_TASK_COUNT": "7"}, None, Shard(5, 7)),
        ({**SLURM_TASK, "SLURM_ARRAY_TASK_STEP": "2"}, None, Shard(3, 4)),  # --array=2-8:2: 2, 4, 6, 8
        ({"SLURM_ARRAY_TASK_ID": "0"}, 4, Shard(1, 4)),
        ({"JOB_COMPLETION_INDEX": "3"}, 4, Shard(4, 4)),  # a Kubernetes Indexed Job's last pod
    ],
)
def test_shard_auto_reads_the_engines_task_index(environ, shards, expected):
    assert shard_from_environment(environ, shards) == expected


@pytest.mark.parametrize(
    ("environ", "shards", "message"),
    [
        ({}, None, "no engine's task index in the environment"),
        ({"JOB_COMPLETION_INDEX": "1"}, None, "needs --shards N"),
        ({"JOB_COMPLETION_INDEX": "4"}, 4, "gives shard 5 of 4"),
        ({"SLURM_ARRAY_TASK_ID": "1"}, None, "without SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MAX"),
        (
            {**SLURM_TASK, "SLURM_ARRAY_TASK_COUNT": "7"},
            3,
            "--shards 3 disagrees with the Slurm array's 7 tasks",
        ),
        ({**SLURM_TASK, "SLURM_ARRAY_TASK_STEP": "3"}, None, "not on its array's grid"),
        ({"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "2"}, None, "not a whole number"),
        ({"SLURM_ARRAY_TASK_ID": "0", "JOB_COMPLETION_INDEX": "0"}, 2, "both"),
    ],
)
def test_shard_auto_refuses_to_guess(environ, shards, message):
    with pytest.raises(OpperfError, match=message):
        shard_from_environment(environ, shards)


def test_a_sharded_sweep_records_the_engines_task_and_balances_by_a_previous_runs_costs(
    tmp_path, monkeypatch, capsys
):
    """A Slurm array task runs its shard and says where it ran; a previous sweep's costs balance
    the split (``plan`` prints it without running anything), and a costs file of another framework
    is refused."""
    monkeypatch.chdir(tmp_path)
    whole = ["--ops", "exp,log,sqrt,abs,sign,cos,sin,tan", "--no-isolation", *QUICK[2:]]
    assert main([*whole, "--output-file", "previous.json"]) == 0
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    monkeypatch.setenv("SLURM_ARRAY_TASK_COUNT", "2")
    monkeypatch.setenv("SLURM_ARRAY_JOB_ID", "4242")
    assert main([*whole, "--shard", "auto", "--costs", "previous.json", "--output-file", "part.json"]) == 0
    environment = json.loads((tmp_path / "part.json").read_text())["environment"]
    assert environment["shard"] == "2/2" and environment["batch_job"]["job_id"] == "4242"
    assert environment["batch_job"]["engine"] == "slurm" and environment["batch_job"]["task_id"] == "1"
    capsys.readouterr()
    assert (
        main(
            [
                "plan",
                "--shards",
                "2",
                "--ops",
                "exp,log,sqrt,abs,sign,cos,sin,tan",
                "--costs",
                "previous.json",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "expected s" in printed and "largest shard" in printed and printed.count("\nshard ") == 2
    costs = read_costs("previous.json", "mxnet")
    assert set(costs.by_operator) == {"exp", "log", "sqrt", "abs", "sign", "cos", "sin", "tan"}
    with pytest.raises(OpperfError, match="a sweep of mxnet, not torch"):
        read_costs("previous.json", "torch")


def test_measured_costs_are_split_longest_first_within_the_largest_operator():
    """One operator costs a third of a shard (a Python NMS loop among element-wise ones): the ring
    keeps its neighbours with it; longest first leaves every shard within it of the mean."""
    costs = {**_costs(300), "nms_loop": 60.0}
    for count in (4, 8):
        shards = balanced_partition(costs, count)
        loads = [sum(costs[name] for name in shard) for shard in shards]
        mean = sum(loads) / count
        assert sorted(n for shard in shards for n in shard) == sorted(costs)
        assert max(loads) - mean <= max(costs.values()) and max(loads) / mean < 1.05
        assert balanced_partition(dict(reversed(list(costs.items()))), count) == shards


def test_costs_charge_an_operator_the_time_its_crashes_took(tmp_path, monkeypatch):
    """A worker that segfaults costs the sweep its wait and a fresh worker: each record carries the
    seconds the sweep spent on it (``elapsed_s``), and the costs charge them to the operator that
    crashed, not to sampling alone, where a crash spends nothing."""
    monkeypatch.chdir(tmp_path)
    ops = "_contrib_quantize_asym,exp"
    assert main(["--ops", ops, *QUICK, "--output-file", "previous.json"]) == 0
    document = json.loads((tmp_path / "previous.json").read_text())
    records = document["results"]
    crashed = [r for r in records if r["op"] == "_contrib_quantize_asym"]
    assert crashed and all(r["status"] == "crashed" for r in crashed)
    assert all(r["elapsed_s"] > 0 for r in records)
    ok = [r for r in records if r["status"] == "ok"]
    assert ok and all(r["elapsed_s"] >= r["sampling"]["seconds"] for r in ok)
    costs = read_costs("previous.json", "mxnet")
    spent = sum(r["elapsed_s"] for r in crashed)
    assert costs.by_operator["_contrib_quantize_asym"] >= spent > 0
    besides = document["environment"]["wall_seconds"] - sum(r["elapsed_s"] for r in records)
    assert besides >= 0
    assert costs.by_operator["_contrib_quantize_asym"] == pytest.approx(
        spent + besides * len(crashed) / len(records), rel=1e-6
    )


def test_shards_of_a_sweep_over_thread_counts_merge(tmp_path):
    """Rows that differ only in their thread count are two configurations, not a repeat."""
    parts = [tmp_path / f"shard{k}.json" for k in (1, 2)]
    for k, part in enumerate(parts, start=1):
        argv = ["--ops", "exp,log", "--threads", "1,2", "--warmup", "1", "--runs", "2", "--shard", f"{k}/2"]
        assert main([*argv, "--output-file", str(part)]) == 0
    merged = tmp_path / "merged.json"
    assert main(["merge", *map(str, parts), "--output-file", str(merged)]) == 0
    records = json.loads(merged.read_text())["results"]
    assert {r["threads"] for r in records} == {1, 2}
    assert len(records) == sum(len(json.loads(p.read_text())["results"]) for p in parts)


@pytest.mark.parametrize(
    ("coverage", "message"),
    [
        ({"registered": "many"}, "coverage.registered is 'many', not a count"),
        ({"registered": 3, "by_operator": [{"status": "ok"}]}, "coverage.by_operator holds {'status': 'ok'}"),
        ({"registered": 3, "by_operator": [{"op": "exp", "aliases": [1]}]}, "holds {'op': 'exp', 'aliases'"),
    ],
)
def test_a_parts_malformed_coverage_is_named(tmp_path, capsys, coverage, message):
    parts = [tmp_path / f"shard{k}.json" for k in (1, 2)]
    for k, part in enumerate(parts, start=1):
        assert main([*QUICK, "--shard", f"{k}/2", "--output-file", str(part)]) == 0
    document = json.loads(parts[1].read_text())
    document["coverage"] = coverage
    parts[1].write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["merge", *map(str, parts), "--output-file", str(tmp_path / "merged.json")]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: {parts[1]}: coverage.") and message in error


def test_a_shard_count_no_sweep_needs_is_refused_and_a_large_one_plans_at_once(capsys):
    """A mistyped count is refused by name; the largest allowed is planned, one partition for all
    its shards (each shard partitioned the whole again: 10,000 shards took 93 s)."""
    with pytest.raises(SystemExit):
        main(["--ops", "exp", "--shard", "1/99999999"])
    assert "99999999 shards: at most 10,000" in capsys.readouterr().err
    assert main(["plan", "--shards", "10000", "--ops", "exp"]) == 0
    assert capsys.readouterr().out.count("(none)") == 9_999


def test_plan_splits_as_the_fuzzed_sweep_does(tmp_path, capsys):
    """plan took no --shapes: under fuzz a sweep's shards count the drawn configurations (deduplicated:
    some operators get fewer), and the cuts moved an operator between shards the plan showed."""
    selection = ["--categories", "unary,binary_broadcast,reduction,activation"]
    drawn = ["--shapes", "fuzz", "--fuzz-count", "5", "--seed", "0"]
    assert main(["plan", "--shards", "3", *selection, *drawn]) == 0
    planned = {
        line.split(":")[0].split()[1]: set(line.split(": ", 1)[1].split(", "))
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("shard ") and ": " in line
    }
    from opperf.frameworks import get_backend
    from opperf.results.options import RunOptions, SweepFactors
    from opperf.sweep.run import SweepConfig, select_operators, shard_plan

    config = SweepConfig(options=RunOptions(seed=0), factors=SweepFactors(shapes="fuzz", fuzz_count=5))
    operators = select_operators(
        get_backend("mxnet"), (), ("unary", "binary_broadcast", "reduction", "activation")
    )
    swept = {
        f"{k}/3": {op.name for op, _ in shard} for k, shard in enumerate(shard_plan(operators, config, 3), 1)
    }
    assert planned == swept


def test_costs_that_record_no_time_are_refused_not_split_into_one_shard(tmp_path, capsys):
    document = json.loads(GOLDEN.read_text())
    document["environment"]["wall_seconds"] = 0
    for record in document["results"]:
        record["elapsed_s"] = 0
    costs = tmp_path / "zero.json"
    costs.write_text(json.dumps(document))
    assert main(["plan", "--shards", "2", "--ops", "exp,add", "--costs", str(costs)]) == 2
    assert "records no time spent" in capsys.readouterr().err
