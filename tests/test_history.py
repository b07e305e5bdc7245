"""History: step detection on series with known steps, and the store over real result files."""

from __future__ import annotations

import copy
import json
import random
import sqlite3
from pathlib import Path

import pytest

from opperf.cli import main
from opperf.history.steps import detect_steps
from opperf.history.store import History

DATA = Path(__file__).parent / "data" / "verdicts"


def _noisy(levels: list[float], spread: float, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [level * (1 + rng.uniform(-spread, spread)) for level in levels]


def test_a_step_up_that_holds_is_found_where_it_happened():
    series = _noisy([1.0] * 8 + [1.3] * 6, spread=0.02)
    (step,) = detect_steps(series, threshold=0.05)
    assert step.index == 8 and step.regression and 1.25 < step.ratio < 1.35


def test_a_step_up_then_back_down_gives_two_steps():
    series = _noisy([1.0] * 6 + [2.0] * 4 + [1.0] * 5, spread=0.02)
    steps = detect_steps(series, threshold=0.05)
    assert [(s.index, s.regression) for s in steps] == [(6, True), (10, False)]


def test_one_slow_run_is_not_a_step():
    series = _noisy([1.0] * 6 + [3.0] + [1.0] * 6, spread=0.02)
    assert detect_steps(series, threshold=0.05) == []


def test_a_step_within_the_series_own_noise_is_not_reported():
    series = _noisy([1.0] * 8 + [1.1] * 8, spread=0.4, seed=5)
    assert detect_steps(series, threshold=0.05) == []


def test_a_step_below_the_threshold_is_not_reported():
    series = _noisy([1.0] * 8 + [1.03] * 8, spread=0.001)
    assert detect_steps(series, threshold=0.05) == []


def _runs(tmp_path: Path, factors: list[float]) -> list[Path]:
    """Copies of a real result file, one per run, exp's samples scaled by each factor."""
    base = json.loads((DATA / "mxnet_run1.json").read_text())
    paths = []
    for index, factor in enumerate(factors):
        document = copy.deepcopy(base)
        document["environment"]["started"] = f"2026-11-{index + 1:02d}T00:00:00+00:00"
        for record in document["results"]:
            for phase in ("forward", "backward"):
                if record["op"] == "exp" and record.get(phase):
                    record[phase]["samples_s"] = [s * factor for s in record[phase]["samples_s"]]
        path = tmp_path / f"run{index}.json"
        path.write_text(json.dumps(document))
        paths.append(path)
    return paths


def test_add_is_idempotent_and_detect_gates_on_a_current_regression(tmp_path, capsys):
    db = str(tmp_path / "history.sqlite")
    runs = _runs(tmp_path, [1.0, 1.01, 0.99, 1.0, 1.5, 1.49, 1.51])
    assert main(["history", "add", *map(str, runs), "--db", db]) == 0
    assert main(["history", "add", str(runs[0]), "--db", db]) == 0
    assert "already in the store" in capsys.readouterr().err
    with History(db) as history:
        assert history.runs() == len(runs)
        series = history.series("exp")
    assert series and all(len(s.points) == len(runs) for s in series)
    assert main(["history", "detect", "--db", db, "--fail-on", "regression"]) == 1
    out = capsys.readouterr().out
    assert "exp" in out and "slower" in out and "x1.5" in out and "broadcast_add" not in out
    assert main(["history", "show", "--db", db, "--op", "exp"]) == 0
    assert "step x1.5" in capsys.readouterr().out


def test_a_regression_undone_no_longer_gates(tmp_path):
    db = str(tmp_path / "history.sqlite")
    runs = _runs(tmp_path, [1.0, 1.0, 1.0, 1.6, 1.6, 1.6, 1.0, 1.0, 1.0])
    assert main(["history", "add", *map(str, runs), "--db", db]) == 0
    assert main(["history", "detect", "--db", db, "--fail-on", "regression"]) == 0


def test_a_file_that_is_no_database_is_refused(tmp_path, capsys):
    bad = tmp_path / "not.sqlite"
    bad.write_text("hello")
    assert main(["history", "detect", "--db", str(bad)]) == 2
    assert "not an opperf history database" in capsys.readouterr().err
    sqlite3.connect(tmp_path / "fresh.sqlite").close()
    assert main(["history", "detect", "--db", str(tmp_path / "fresh.sqlite")]) == 0


@pytest.mark.slow
def test_a_sweep_adds_itself(tmp_path):
    db = tmp_path / "history.sqlite"
    arguments = ["--ops", "exp", "--runs", "2", "--warmup", "0", "--quiet", "--history", str(db)]
    assert main([*arguments, "--output-file", str(tmp_path / "a.json")]) == 0
    with History(str(db)) as history:
        assert history.runs() == 1 and history.series("exp")
