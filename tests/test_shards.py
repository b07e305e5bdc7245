"""Shards: a deterministic, balanced, stable partition, and shards that merge back to the whole."""

from __future__ import annotations

import json
import random

import pytest

from opperf.cli import main
from opperf.sweep.shards import Shard, partition
from opperf.utils.errors import OpperfError

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
