"""History: step detection on series with known steps, and the store over real result files."""

from __future__ import annotations

import copy
import json
import random
import sqlite3
from pathlib import Path

import pytest

from opperf.cli import main
from opperf.verdicts.history.steps import detect_steps
from opperf.verdicts.history.store import History

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
        assert history.run_count() == len(runs)
        series = history.series("exp")
    assert series and all(len(s.points) == len(runs) for s in series)
    assert main(["history", "detect", "--db", db, "--fail-on", "regression"]) == 1
    out = capsys.readouterr().out
    assert "exp" in out and "slower" in out and "x1.5" in out and "broadcast_add" not in out
    assert main(["history", "show", "--db", db, "--op", "exp"]) == 0
    assert "step x1.5" in capsys.readouterr().out
    for op in ("expp", "add"):  # a typo, or a name the store does not keep: the gate looked at nothing
        assert main(["history", "detect", "--db", db, "--op", op, "--fail-on", "regression"]) == 2
        assert capsys.readouterr().err.startswith(f"error: no history of '{op}' in ")


def test_a_run_whose_timer_read_0_s_is_no_point_of_its_series(tmp_path, capsys):
    """A run whose exp passes read 0 s is stored, but gives its series no point: detect and show go
    on over the other runs (the step after run 4 is still found)."""
    db = str(tmp_path / "history.sqlite")
    runs = _runs(tmp_path, [1.0, 1.01, 0.0, 0.99, 1.5, 1.49, 1.51])
    assert main(["history", "add", *map(str, runs), "--db", db]) == 0
    with History(db) as history:
        series = history.series("exp")
    assert series and all(len(s.points) == len(runs) - 1 for s in series)
    assert main(["history", "detect", "--db", db, "--fail-on", "regression"]) == 1
    assert "x1.5" in capsys.readouterr().out
    assert main(["history", "show", "--db", db, "--op", "exp"]) == 0


def test_a_file_that_repeats_a_configuration_is_refused_as_diff_refuses_it(tmp_path, capsys):
    """History reads records as diff does: a repeated configuration is named, nothing is added."""
    db, (run,) = str(tmp_path / "history.sqlite"), _runs(tmp_path, [1.0])
    document = json.loads(run.read_text())
    document["results"].append(document["results"][0])
    run.write_text(json.dumps(document))
    assert main(["history", "add", str(run), "--db", db]) == 2
    err = capsys.readouterr().err
    assert f"{run}: results[{len(document['results']) - 1}] repeats" in err
    assert "created" not in err and not Path(db).exists()  # refused before a store is made


@pytest.mark.parametrize(
    ("column", "value"), [("flags", "{not json"), ("median_s", "fast"), ("low_s", None), ("median_s", -1e-3)]
)
def test_a_row_edited_by_hand_is_a_damaged_database_not_a_traceback(tmp_path, capsys, column, value):
    db = str(tmp_path / "history.sqlite")
    assert main(["history", "add", *map(str, _runs(tmp_path, [1.0, 1.0])), "--db", db]) == 0
    with sqlite3.connect(db) as connection:
        connection.execute(f"UPDATE rows SET {column} = ? WHERE op = 'exp'", (value,))
    capsys.readouterr()
    for command in (["history", "detect"], ["history", "show", "--op", "exp"]):
        assert main([*command, "--db", db]) == 2
        error = capsys.readouterr().err
        assert error.startswith(f"error: {db}: a damaged history database (") and error.count("\n") == 1


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
    assert main(["history", "detect", "--db", str(tmp_path / "fresh.sqlite")]) == 2
    assert "an empty file, not an opperf history database" in capsys.readouterr().err


@pytest.mark.parametrize("action", [["detect"], ["show", "--op", "exp"], ["runs"], ["remove", "1"]])
def test_a_misspelt_db_is_refused_and_not_created(tmp_path, capsys, action):
    """``history detect --fail-on regression`` on a misspelt --db made an empty store and passed the
    gate having looked at nothing."""
    typo = tmp_path / "histroy.sqlite"
    assert main(["history", *action, "--db", str(typo)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {typo}: no such history database; create one with `opperf history add")
    assert not typo.exists()


def test_another_tools_database_is_refused_and_left_as_it_was(tmp_path, capsys):
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE accounts (name TEXT)")
    before = other.read_bytes()
    run = _runs(tmp_path, [1.0])[0]
    for argv in (["history", "add", str(run)], ["history", "detect"], ["publish", "--output-file", "site"]):
        assert main([*argv, "--db", str(other)]) == 2
        assert "not an opperf history database (its tables: accounts)" in capsys.readouterr().err
    assert other.read_bytes() == before


def test_a_store_of_a_newer_opperf_is_refused(tmp_path, capsys):
    db = str(tmp_path / "history.sqlite")
    assert main(["history", "add", str(_runs(tmp_path, [1.0])[0]), "--db", db]) == 0
    assert f"created the history database {db}" in capsys.readouterr().err
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    assert main(["history", "detect", "--db", db]) == 2
    assert "schema version 99, newer than this opperf reads" in capsys.readouterr().err


def test_a_read_only_store_is_one_line(tmp_path, capsys):
    import os

    db = tmp_path / "history.sqlite"
    first, second = _runs(tmp_path, [1.0, 1.2])
    assert main(["history", "add", str(first), "--db", str(db)]) == 0
    capsys.readouterr()
    db.chmod(0o444)
    if os.access(db, os.W_OK):
        pytest.skip("root writes to a read-only file: the check needs an ordinary user")
    assert main(["history", "add", str(second), "--db", str(db)]) == 2
    assert "it is read-only" in capsys.readouterr().err


def test_runs_are_listed_and_one_can_be_removed(tmp_path, capsys):
    db = str(tmp_path / "history.sqlite")
    runs = _runs(tmp_path, [1.0, 1.0, 1.0])
    assert main(["history", "add", *map(str, runs), "--db", db]) == 0
    assert main(["history", "runs", "--db", db]) == 0
    listing = capsys.readouterr().out
    assert all(str(path) in listing for path in runs)
    assert main(["history", "remove", str(runs[1]), "--db", db]) == 0
    assert "removed run 2" in capsys.readouterr().err
    assert main(["history", "remove", "1", "--db", db]) == 0
    with History(db) as history:
        assert [run.source for run in history.stored_runs()] == [str(runs[2])]
    assert main(["history", "remove", "7", "--db", db]) == 2
    assert "holds no run with the id or file '7'" in capsys.readouterr().err


def test_show_takes_inputs_as_reports_print_them(tmp_path, capsys):
    db = str(tmp_path / "history.sqlite")
    runs = _runs(tmp_path, [1.0, 1.0])
    assert main(["history", "add", *map(str, runs), "--db", db]) == 0
    assert main(["history", "show", "--db", db, "--op", "exp", "--inputs", "10000x100"]) == 0
    assert "exp(data=10000x100)" in capsys.readouterr().out
    named = ("mx.nd.exp(data=10000x100)", "mx.nd.exp(data=10000x100) forward")  # as detect prints it
    for chosen in (["--op", "exp", "--inputs", "data=10000x100"], *(["--op", name] for name in named)):
        assert main(["history", "show", "--db", db, *chosen]) == 0
        assert "exp(data=10000x100) forward" in capsys.readouterr().out
    assert main(["history", "show", "--db", db, "--op", "mx.nd.exp(data=10000x1)"]) == 2
    err = capsys.readouterr().err
    assert "no configuration of mx.nd.exp has the name 'mx.nd.exp(data=10000x1)'; it has: data=10000" in err
    # inputs are matched whole: data=10000x1 chose data=10000x100 too; the operator is there, these
    # inputs are not (it said the operator had no history)
    for inputs in ("data=10000x10", "1024x1024"):
        assert main(["history", "show", "--db", db, "--op", "exp", "--inputs", inputs]) == 2
        err = capsys.readouterr().err
        assert f"no configuration of exp has inputs {inputs!r}; it has: data=10000x100" in err, err
    assert main(["history", "show", "--db", db, "--op", "nosuch"]) == 2
    assert "no history of 'nosuch'" in capsys.readouterr().err


def test_remove_takes_a_file_as_named_from_here(tmp_path, capsys, monkeypatch):
    """The store kept the path a file was added by, and remove took only that string: a file added
    from its folder could not be removed from another, and a relative name, resolved against the
    folder remove ran in, could name another file of that name."""
    db = str(tmp_path / "history.sqlite")
    first, second = _runs(tmp_path, [1.0, 1.0])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / second.name).write_text(second.read_text())
    monkeypatch.chdir(second.parent)
    assert main(["history", "add", str(first), second.name, "--db", db]) == 0
    monkeypatch.chdir(elsewhere)
    assert main(["history", "remove", second.name, "--db", db]) == 2  # this folder's file was never added
    assert "holds no run with the id or file" in capsys.readouterr().err
    assert main(["history", "remove", str(second), "--db", db]) == 0
    assert "removed run 2" in capsys.readouterr().err


def test_two_writers_both_land(tmp_path):
    """The second of two sweeps adding at once died with "database is locked" after 5 s; writers
    now wait for each other."""
    import subprocess
    import sys

    db = str(tmp_path / "history.sqlite")
    runs = _runs(tmp_path, [1.0 + i / 100 for i in range(8)])
    assert main(["history", "add", str(runs[0]), "--db", db]) == 0
    script = Path(__file__).resolve().parent.parent / "opperf.py"
    writers = [
        subprocess.Popen([sys.executable, str(script), "history", "add", *map(str, half), "--db", db])
        for half in (runs[1:4], runs[4:])
    ]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    with History(db) as history:
        assert history.run_count() == 8


@pytest.mark.parametrize(
    "code",
    [
        "CREATE TRIGGER eat AFTER INSERT ON rows BEGIN DELETE FROM rows WHERE rowid = NEW.rowid; END",
        "CREATE TRIGGER fake AFTER INSERT ON rows BEGIN UPDATE rows SET median_s = median_s * 10"
        " WHERE rowid = NEW.rowid; END",
        "CREATE TRIGGER gone BEFORE DELETE ON runs BEGIN SELECT 1; END",
        "CREATE VIEW latest AS SELECT * FROM rows",
    ],
)
def test_a_store_with_sql_of_its_own_is_refused_before_it_runs(tmp_path, capsys, code):
    """A store from elsewhere is data: its triggers ran as opperf wrote (an added run's rows deleted
    or multiplied by 10 while it said "6 rows added", exit 0), and a view could stand for a table."""
    first, second = _runs(tmp_path, [1.0, 1.0])
    db = tmp_path / "h.sqlite"
    assert main(["history", "add", str(first), "--db", str(db)]) == 0
    with sqlite3.connect(db) as connection:
        connection.execute(code)
        before = list(connection.execute("SELECT * FROM rows"))
    capsys.readouterr()
    for argv in (["history", "add", str(second)], ["history", "detect"], ["history", "remove", "1"]):
        assert main([*argv, "--db", str(db)]) == 2
        err = capsys.readouterr().err
        assert (
            err.startswith(f"error: {db}: a history database with SQL of its own (") and err.count("\n") == 1
        )
    with sqlite3.connect(db) as connection:
        assert list(connection.execute("SELECT * FROM rows")) == before


def test_a_store_of_the_previous_version_is_read_and_upgraded_on_add(tmp_path):
    from opperf.verdicts.history.store import SCHEMA, SQLITE

    db = tmp_path / "old.sqlite"
    with sqlite3.connect(db) as connection:  # version 1: no meta, no ticks
        current = SCHEMA.format(**SQLITE)
        legacy = current.split("CREATE TABLE IF NOT EXISTS runs")[1].replace("    tick_s REAL,\n", "")
        connection.executescript("CREATE TABLE IF NOT EXISTS runs" + legacy)
    first, second = _runs(tmp_path, [1.0, 1.0])
    with sqlite3.connect(db) as connection:
        assert {r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")} == {
            "runs", "rows"
        }  # fmt: skip
    assert main(["history", "detect", "--db", str(db)]) == 0
    assert main(["history", "add", str(first), str(second), "--db", str(db)]) == 0
    with History(str(db)) as history:
        assert history.run_count() == 2
    with sqlite3.connect(db) as connection:
        assert "tick_s" in {row[1] for row in connection.execute("PRAGMA table_info(rows)")}
        assert dict(connection.execute("SELECT key, value FROM meta"))["format"] == "opperf-history"


@pytest.mark.slow
def test_a_sweep_adds_itself(tmp_path):
    db = tmp_path / "history.sqlite"
    arguments = ["--ops", "exp", "--runs", "2", "--warmup", "0", "--quiet", "--history", str(db)]
    assert main([*arguments, "--output-file", str(tmp_path / "a.json")]) == 0
    with History(str(db)) as history:
        assert history.run_count() == 1 and history.series("exp")


def test_a_history_that_is_no_store_is_refused_before_the_sweep_measures(tmp_path, capsys):
    other = tmp_path / "notes.txt"
    other.write_text("not a database\n")
    arguments = [
        "--ops",
        "exp",
        "--quiet",
        "--history",
        str(other),
        "--output-file",
        str(tmp_path / "a.json"),
    ]
    assert main(arguments) == 2
    assert "not an opperf history database" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def _series_of(
    levels_per_series: list[list[float]], spread: float, seed: int
) -> list[list[tuple[int, float]]]:
    """Series of (run, median) points: run r of every series is the same run."""
    rng = random.Random(seed)
    return [[(run, level * (1 + rng.uniform(-spread, spread))) for run, level in enumerate(levels)]
            for levels in levels_per_series]  # fmt: skip


def test_a_run_on_a_slow_stretch_of_the_machine_is_no_step():
    """Every configuration 15% slower in runs 3 to 5 (the machine, not the operators): no step once
    each run's machine factor is taken out; without it, every series had two."""
    from opperf.verdicts.history.steps import detect_steps, judge

    levels = [
        [1e-3 * (1 + i / 10) * (1.15 if run in (3, 4, 5) else 1.0) for run in range(9)] for i in range(24)
    ]
    series = _series_of(levels, 0.01, 3)
    assert all(detect_steps([m for _, m in points], 0.05) for points in series)  # each alone: steps
    assert judge(series, [None] * 24, 0.05, 0.05) == [[] for _ in series]


def test_one_tick_of_the_timer_is_no_step():
    """9 us against 8 us on MXNet's 1 us profiler is one tick: no step (one was reported so); two
    ticks above the resolution floor on a longer series is one."""
    from opperf.verdicts.history.steps import judge

    flat = [[(run, 1e-3) for run in range(6)] for _ in range(20)]
    tick_row = [(run, 9e-6 if run < 3 else 8e-6) for run in range(6)]
    assert judge([*flat, tick_row], [None] * 20 + [1e-6], 0.05, 0.05)[-1] == []
    found = judge([*flat, tick_row], [None] * 21, 0.05, 0.05)[-1]  # no tick known: an 11% step
    assert [step.index for step in found] == [3]


@pytest.mark.parametrize("slowed", [6, 8, 12])
def test_a_step_most_configurations_share_is_named_shared_and_the_others_are_never_called(slowed):
    """A build 1.5x slower in 6, 8 or all 12 of 12 configurations from run 4 of 8. Where half moved,
    the machine factor does not: the six have their step. Where most moved, the factor moves with them
    (as for a slower machine, which it cannot be told from): no configuration's step, but the factor's
    own step is named; the unchanged configurations, moved against it, were called "slower x1" (exit 1
    in CI) and are called nothing."""
    from opperf.verdicts.history.steps import judge, shared_steps

    levels = [[1e-3 * (1.5 if i < slowed and run >= 4 else 1.0) for run in range(8)] for i in range(12)]
    series = _series_of(levels, 0.01, 5)
    judged = judge(series, [None] * 12, 0.05, 0.05)
    assert all(steps == [] for steps in judged[slowed:])
    if slowed == 6:
        assert [[(s.index, round(s.ratio, 1)) for s in steps] for steps in judged[:6]] == [[(4, 1.5)]] * 6
    else:
        assert all(steps == [] for steps in judged)
        ((run, step),) = shared_steps(series, list(range(8)), 0.05)
        assert run == 4 and step.regression and step.ratio > 1.15


@pytest.mark.parametrize("stretch", [(3, 4, 5), (6, 7, 8), (5, 6, 7, 8), (0, 1, 2)])
def test_a_slow_stretch_of_the_machine_anywhere_is_no_configurations_step(stretch):
    """Every configuration 1.2x slower in the runs of ``stretch`` of 9, at the end too (a version that
    kept a level the runs had not yet left called all 24 configurations slower)."""
    from opperf.verdicts.history.steps import judge

    levels = [[1e-3 * (1 + i / 10) * (1.2 if run in stretch else 1.0) for run in range(9)] for i in range(24)]
    assert judge(_series_of(levels, 0.01, 13), [None] * 24, 0.05, 0.05) == [[] for _ in range(24)]


def test_an_injected_step_is_found_in_every_series_it_touched_and_nowhere_else():
    """A 1.3x step into 5 of 30 configurations from run 4 of 8, runs scattered by 3%: found in all
    5, with the false discovery rate held over all series."""
    from opperf.verdicts.history.steps import judge

    levels = [[1e-3 * (1.3 if i < 5 and run >= 3 else 1.0) for run in range(8)] for i in range(30)]
    judged = judge(_series_of(levels, 0.03, 7), [None] * 30, 0.05, 0.05)
    assert [[(s.index, round(s.ratio, 1)) for s in steps] for steps in judged[:5]] == [[(3, 1.3)]] * 5
    assert all(steps == [] for steps in judged[5:])
    assert all(0 <= steps[0].q <= 0.05 for steps in judged[:5])


def test_text_from_the_store_reaches_the_terminal_printable(tmp_path, capsys):
    """An operator named with escape sequences (clear the screen, retitle the window) and a file name
    with one: show, detect and runs print them escaped, never raw."""
    hostile = "exp\x1b[2J\x1b]0;pwned\x07"
    (run,) = _runs(tmp_path, [1.0])
    document = json.loads(run.read_text())
    for record in document["results"]:
        record["op"] = hostile if record["op"] == "exp" else record["op"]
    named = tmp_path / "run\x1b[31m.json"
    named.write_text(json.dumps(document))
    db = str(tmp_path / "h.sqlite")
    assert main(["history", "add", str(named), "--db", db]) == 0
    assert "\x1b" not in capsys.readouterr().err  # the file's name, as add reports it
    for argv in (["show", "--op", hostile], ["detect"], ["runs"], ["add", str(named)]):
        assert main(["history", *argv, "--db", db]) == 0
        shown = capsys.readouterr()
        assert "\x1b" not in shown.out + shown.err and "\x07" not in shown.out + shown.err
    assert main(["history", "show", "--op", hostile, "--db", db]) == 0
    assert "exp\\x1b[2J\\x1b]0;pwned\\x07" in capsys.readouterr().out


def test_a_store_whose_tables_lack_a_column_is_named_damaged_once(tmp_path, capsys):
    """add gave SQLite's words with no way out; detect named the way out twice."""
    db = str(tmp_path / "h.sqlite")
    first, second = _runs(tmp_path, [1.0, 1.0])
    assert main(["history", "add", str(first), "--db", db]) == 0
    with sqlite3.connect(db) as connection:
        connection.execute("ALTER TABLE rows DROP COLUMN tick_s")
    capsys.readouterr()
    for argv in (["add", str(second)], ["detect"]):
        assert main(["history", *argv, "--db", db]) == 2
        err = capsys.readouterr().err
        assert err.count("rebuild it with history add") == 1 and err.count("\n") == 1, err


def _daily_runs(tmp_path, count: int, shape) -> tuple[str, list]:
    """A store of ``count`` runs of mxnet_run1.json a day apart, each shaped by ``shape(document,
    index)``; the store's path and the runs' files."""
    base = json.loads((DATA / "mxnet_run1.json").read_text())
    paths = []
    for index in range(count):
        document = copy.deepcopy(base)
        document["environment"]["started"] = f"2026-11-{index + 1:02d}T00:00:00+00:00"
        shape(document, index)
        paths.append(tmp_path / f"run{index}.json")
        paths[-1].write_text(json.dumps(document))
    db = str(tmp_path / "h.sqlite")
    assert main(["history", "add", *map(str, paths), "--db", db]) == 0
    return db, paths


def test_detect_names_a_move_most_configurations_share_and_fails_no_gate(tmp_path, capsys):
    """Every configuration 1.4x slower from the fourth of seven runs: the machine or the build, which
    opperf cannot tell apart; no configuration's step, no failed gate, and a note that says so."""

    def slower_from_the_fourth(document, index):
        for record in document["results"]:
            for phase in ("forward", "backward"):
                if record.get(phase) and index >= 3:
                    record[phase]["samples_s"] = [s * 1.4 for s in record[phase]["samples_s"]]

    db, paths = _daily_runs(tmp_path, 7, slower_from_the_fourth)
    capsys.readouterr()
    assert main(["history", "detect", "--db", db, "--fail-on", "regression"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("0 steps in ")
    assert f"note: from run 2026-11-04T00:00:00 ({paths[3]}) most configurations moved x1.4 together" in err
    # the dashboard says it too: it showed "0 at a regressed level" and nothing of the move
    assert main(["publish", "--db", db, "--output-file", str(tmp_path / "board"), "--quiet"]) == 0
    for page in ("index.html", "regressions.html"):
        assert "most configurations moved x1.4 together" in (tmp_path / "board" / page).read_text()


@pytest.mark.parametrize("changed", [1, 2])
def test_a_store_of_few_configurations_calls_their_own_step(changed):
    """One configuration 1.5x slower from run 4 of 8, in a store of one or two: the median of so few
    is no machine factor (with one series the factor was the step itself, and a nightly gate over one
    operator could never fire; with two, the unchanged one read a 1.22x factor against it)."""
    from opperf.verdicts.history.steps import MIN_FACTOR_OPERATORS, factorless_runs, judge

    levels = [[1e-3 * (1.5 if i == 0 and run >= 4 else 1.0) for run in range(8)] for i in range(changed)]
    series = _series_of(levels, 0.01, 11)
    judged = judge(series, [None] * changed, 0.05, 0.05)
    assert [(s.index, round(s.ratio, 1)) for s in judged[0]] == [(4, 1.5)]
    assert all(steps == [] for steps in judged[1:])
    assert changed < MIN_FACTOR_OPERATORS and factorless_runs(series) == list(range(8))


@pytest.mark.parametrize("operators", [1, 6])
def test_one_operators_configurations_count_once_for_the_machine_factor(operators):
    """One operator in three shapes, forward and backward (six series), 1.5x slower from run 4 of 8:
    counted per series, the six made the factor and no step was called. Per operator they are one,
    below the five a factor needs; beside five unchanged operators they move the factor not at all."""
    from opperf.verdicts.history.steps import judge

    changed = [[1e-3 * (1.5 if run >= 4 else 1.0) for run in range(8)] for _ in range(6)]
    unchanged = [[1e-3 for _ in range(8)] for _ in range(operators - 1)]
    series = _series_of([*changed, *unchanged], 0.01, 17)
    names = ["slowed"] * 6 + [f"other{i}" for i in range(len(unchanged))]
    judged = judge(series, [None] * len(series), 0.05, 0.05, names)
    assert [[(s.index, round(s.ratio, 1)) for s in steps] for steps in judged[:6]] == [[(4, 1.5)]] * 6
    assert all(steps == [] for steps in judged[6:])


def test_detect_over_one_configuration_fires_the_gate_and_says_why_no_factor(tmp_path, capsys):
    """A nightly job tracking one configuration: its regression exits 1, and the note says its runs
    are judged as measured."""

    def one_configuration_slower_from_the_fourth(document, index):
        document["results"] = [r for r in document["results"] if r.get("forward")][:1]
        record = document["results"][0]
        record["backward"] = None
        factor = 1.5 if index >= 3 else 1.0
        record["forward"]["samples_s"] = [s * factor for s in record["forward"]["samples_s"]]

    db, _ = _daily_runs(tmp_path, 6, one_configuration_slower_from_the_fourth)
    capsys.readouterr()
    assert main(["history", "detect", "--db", db, "--fail-on", "regression"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("1 step in 1 series; 1 configuration at a regressed level"), err
    assert "note: 6 runs of 6 measured fewer than 5 operators" in err


def test_show_tells_a_stage_apart_and_takes_the_name_labels_print(tmp_path, capsys):
    """Eager and compile series of one configuration are two labels, not one title printed twice;
    ``--op`` takes the operator's name as labels print it (``mx.nd.exp``) as well as its registry name."""
    document = json.loads((DATA / "mxnet_run1.json").read_text())
    exp = [r for r in document["results"] if r["op"] == "exp"]
    document["results"] += [{**copy.deepcopy(r), "stage": "compile"} for r in exp]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    db = str(tmp_path / "history.sqlite")
    assert main(["history", "add", str(path), "--db", db]) == 0
    capsys.readouterr()
    assert main(["history", "show", "--db", db, "--op", "mx.nd.exp", "--inputs", "10000x100"]) == 0
    labels = [line for line in capsys.readouterr().out.splitlines() if line.startswith("mx.nd.exp(")]
    assert sorted(labels) == sorted(
        f"mx.nd.exp(data=10000x100){stage} {phase}"
        for stage in ("", " [compile]")
        for phase in ("forward", "backward")
    )
