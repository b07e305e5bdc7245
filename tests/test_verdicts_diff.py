"""``opperf diff`` on small real result files (tests/data/verdicts: four repeated MXNet sweeps of a
few operators, trimmed to 11 records), the other side derived by transforming copies.

The stored sweeps ran on a busy machine, so most records carry ``busy_machine`` or ``imprecise``;
``quiet`` clears those flags where a test is about the statistics rather than the doubt rules.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from documents import another_run

from opperf.cli.diff import add_arguments, run
from opperf.results.load import read_side
from opperf.utils.errors import OpperfError
from opperf.verdicts.decide import Verdict
from opperf.verdicts.diff import diff

DATA = Path(__file__).parent / "data" / "verdicts"
SLOWED = Path(__file__).parent / "data" / "verdicts3"
"""Three MXNet sweeps a side, taken back to back (`benchmarks.regression_detection --scenarios
power-diff`), the new side with a 25% slowdown injected into ``INJECTED``; 40 configurations kept,
at most 40 samples a phase."""
INJECTED = {"exp", "log", "sqrt", "broadcast_add", "broadcast_mul", "dot", "FullyConnected", "Convolution"}
INJECTED |= {"Pooling", "softmax"}


def sweep(number: int) -> dict:
    return json.loads((DATA / f"mxnet_run{number}.json").read_text())


def quiet(document: dict) -> dict:
    document = copy.deepcopy(document)
    for record in document["results"]:
        record["competing_load"] = 0.0
        record["sampling"]["met_target"] = True
    return document


def record(document: dict, op: str, index: int = 0) -> dict:
    return [r for r in document["results"] if r["op"] == op][index]


def write(folder: Path, name: str, document: dict) -> str:
    path = folder / name
    path.write_text(json.dumps(document))
    return str(path)


def arguments(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def scale(entry: dict, factor: float) -> None:
    for phase in ("forward", "backward"):
        if entry[phase]:
            entry[phase]["samples_s"] = [s * factor for s in entry[phase]["samples_s"]]


def transformed(document: dict) -> dict:
    """The new side: one row of each kind of change."""
    document = copy.deepcopy(document)
    scale(record(document, "exp"), 1.5)
    scale(record(document, "sum", 1), 0.6)
    failing = record(document, "softmax")
    failing.update(status="failed", reason="boom", forward=None, backward=None)
    record(document, "relu")["dtype"] = "float64"
    record(document, "broadcast_add")["competing_load"] = 1.0
    document["results"] = [r for r in document["results"] if r["op"] != "Pooling"]
    return document


def based(document: dict) -> dict:
    """The base side: a record that failed there (fixed in new), one absent there (new in new)."""
    document = copy.deepcopy(document)
    failed = record(document, "sqrt", 1)
    failed.update(status="crashed", reason="signal 11", forward=None, backward=None)
    document["results"] = [
        r for r in document["results"] if not (r["op"] == "dot" and "transpose_a" in r["inputs"])
    ]
    return document


@pytest.fixture
def sides(tmp_path: Path) -> tuple[str, str]:
    runs = [quiet(sweep(1)), quiet(sweep(2))]
    base = ",".join(write(tmp_path, f"base{i}.json", based(d)) for i, d in enumerate(runs))
    new = ",".join(write(tmp_path, f"new{i}.json", transformed(d)) for i, d in enumerate(runs))
    return base, new


def verdicts_by_op(base: str, new: str) -> dict[tuple[str, str, str], str]:
    result = diff(read_side(base.split(",")), read_side(new.split(",")), threshold=0.05, alpha=0.05)
    return {(r.key.op, r.key.inputs, r.phase): r.verdict for r in result.rows}, result


def test_every_verdict(sides):
    found, result = verdicts_by_op(*sides)
    by_op: dict[str, set[Verdict]] = {}
    for (op, inputs, _), verdict in found.items():
        by_op.setdefault(op if op not in ("sum", "sqrt", "dot") else f"{op}{inputs}", set()).add(verdict)
    exp, sum_large = '{"data":{"shape":[10000,100]}}', 'sum{"data":{"shape":[10000,100]}}'
    assert found["exp", exp, "backward"] is Verdict.SLOWER
    assert found["sum", exp, "backward"] is Verdict.FASTER
    # The forward phases moved as much, but their own runs cannot resolve it: criterion (a).
    assert found["exp", exp, "forward"] is Verdict.INCONCLUSIVE
    assert by_op[sum_large] == {Verdict.FASTER, Verdict.INCONCLUSIVE}
    assert by_op["softmax"] == {Verdict.NEWLY_FAILING}
    assert by_op['sqrt{"data":{"shape":[10000,100]}}'] == {Verdict.FIXED}
    assert by_op["relu"] == {Verdict.INCOMPARABLE}
    assert by_op["broadcast_add"] == {Verdict.INCONCLUSIVE}
    assert by_op["Pooling"] == {Verdict.GONE}
    assert by_op['dot{"lhs":{"shape":[256,1024]},"rhs":{"shape":[1024,256]},"transpose_a":false}'] == {
        Verdict.NEW
    }
    assert by_op['sqrt{"data":{"shape":[1024,1024]}}'] == {Verdict.SAME}
    assert not result.summary.indicative
    relu = next(r for r in result.rows if r.key.op == "relu")
    assert "dtype 'float32' -> 'float64'" in relu.reason
    busy = next(r for r in result.rows if r.key.op == "broadcast_add")
    assert "busy machine (new)" in busy.reason
    slower = next(r for r in result.rows if r.verdict is Verdict.SLOWER)
    assert slower.ratio == pytest.approx(1.5)
    assert slower.q <= 0.05 and slower.ratio_low > 1.05


def test_single_run_per_side_is_indicative(tmp_path):
    base = write(tmp_path, "base.json", quiet(sweep(1)))
    new = write(tmp_path, "new.json", transformed(quiet(sweep(1))))
    result = diff(read_side([base]), read_side([new]), threshold=0.05, alpha=0.05)
    assert result.summary.indicative
    assert all(row.indicative for row in result.rows)
    # Copies: no run-to-run noise to estimate, so no timing row can be called either way.
    assert {r.verdict for r in result.rows if r.ratio is not None} == {Verdict.INCONCLUSIVE}


@pytest.mark.parametrize(("base", "new"), [((1,), (2,)), ((1, 2), (3, 4)), ((1, 3), (2, 4))])
def test_a_over_a_calls_nothing_changed(tmp_path, base, new):
    """Real repeated sweeps of the same operators: no row slower or faster, as stored (most rows
    busy) and with the doubt flags cleared (the statistics alone)."""
    for prepare in (lambda d: d, quiet):
        paths = [[write(tmp_path, f"s{n}.json", prepare(sweep(n))) for n in side] for side in (base, new)]
        result = diff(read_side(paths[0]), read_side(paths[1]), threshold=0.05, alpha=0.05)
        verdicts = {row.verdict for row in result.rows}
        assert not verdicts & {Verdict.SLOWER, Verdict.FASTER}, result.summary
        assert len(result.rows) >= 20


def test_summary_machine_factor_and_geomean(tmp_path):
    slow = copy.deepcopy(quiet(sweep(1)))
    for entry in slow["results"]:
        scale(entry, 1.3)
    base = write(tmp_path, "base.json", quiet(sweep(1)))
    new = write(tmp_path, "new.json", slow)
    result = diff(read_side([base]), read_side([new]), threshold=0.05, alpha=0.05)
    assert result.summary.machine_factor == pytest.approx(1.3)
    assert result.summary.geomean == pytest.approx(1.3)
    assert result.summary.machine_shift


def test_too_few_rows_to_weigh_the_machine_factor_are_judged_as_measured_and_say_so(tmp_path, capsys):
    """Five records, every one 1.3x slower: too few rows to take the median ratio for the machine's,
    so the rows are called, and the report says that, not that they were left inconclusive."""
    documents = []
    for factor, number in ((1.0, 1), (1.3, 2)):
        document = quiet(sweep(number))
        document["results"] = document["results"][:5]
        for entry in document["results"]:
            scale(entry, factor)
        documents.append(write(tmp_path, f"{number}.json", document))
    result = diff(read_side(documents[:1]), read_side(documents[1:]), threshold=0.05, alpha=0.05)
    assert not result.summary.machine_shift and result.summary.unweighed_shift
    assert run(arguments(*documents)) == 0
    out = capsys.readouterr().out
    assert "too few to take it for the machine's change" in out and "are inconclusive then" not in out


def test_exit_codes_and_formats(sides, tmp_path, capsys):
    base, new = sides
    assert run(arguments(base, new)) == 1  # a slower and a newly failing row
    out = capsys.readouterr().out
    assert "## Slower (1)" in out and "## Newly failing (2)" in out and "## Faster (1)" in out
    assert "rows are the same within the threshold (not listed)" in out
    assert run(arguments(base, new, "--fail-on", "never")) == 0
    assert run(arguments(base, new, "--fail-on", "any-change")) == 1
    unchanged = write(tmp_path, "same.json", quiet(sweep(1)))
    again = write(tmp_path, "same_again.json", another_run(quiet(sweep(1))))
    assert run(arguments(unchanged, again, "--output-format", "json")) == 0
    capsys.readouterr()
    report, document = tmp_path / "d.csv", tmp_path / "d.json"
    assert run(arguments(base, new, "--output-file", str(report), "--json-file", str(document))) == 1
    assert report.read_text().startswith("framework,namespace,op,inputs,")
    data = json.loads(document.read_text())
    row = next(r for r in data["rows"] if r["verdict"] == "slower")
    assert {"op", "inputs", "dtype", "mode", "stage", "phase", "ratio", "p", "q", "indicative"} <= row.keys()
    assert row["ratio"] == 1.5 and len(repr(row["base"]["median_s"])) < 12
    assert data["summary"]["counts"]["slower"] == 1 and data["summary"]["runs"] == {"base": 2, "new": 2}
    with pytest.raises(OpperfError, match="contradicts"):
        run(arguments(base, new, "--output-format", "md", "--output-file", str(tmp_path / "x.json")))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"schema_version": 99, "results": []}', "schema_version 99"),
        ('{"schema_version": 1}', "environment is missing"),
        ('{"schema_version": 1, "environment": {}}', "results is missing or not a list"),
        ('{"schema_version": 1, "environment": {}, "results": [{"op": "exp"}]}', "record 1: no field"),
    ],
)
def test_malformed_files_name_the_file(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    good = write(tmp_path, "good.json", sweep(1))
    with pytest.raises(OpperfError, match=message) as error:
        run(arguments(good, str(bad)))
    assert str(bad) in str(error.value)


def test_a_record_whose_threads_is_a_list_is_refused_by_name(tmp_path):
    """A record measures one thread count (the environment's sweep factor may list several)."""
    document = sweep(2)
    document["results"][0]["threads"] = [1, 2]
    bad = write(tmp_path, "bad.json", document)
    with pytest.raises(OpperfError, match=r"threads is \[1, 2\]; expected a non-negative integer or null"):
        run(arguments(write(tmp_path, "good.json", sweep(1)), bad))


def test_samples_too_large_for_statistics_are_refused_by_name(tmp_path):
    """1e308 s is finite, but its statistics overflow: refused as the file check refuses NaN."""
    document = sweep(2)
    document["results"][0]["forward"]["samples_s"] = [1e308] * 3
    bad = write(tmp_path, "bad.json", document)
    with pytest.raises(
        OpperfError, match=r"forward\.samples_s is .*expected a non-empty list of seconds from 0"
    ):
        run(arguments(write(tmp_path, "good.json", sweep(1)), bad))


def test_missing_and_mismatched_files(tmp_path):
    good = write(tmp_path, "good.json", sweep(1))
    with pytest.raises(OpperfError, match="missing.json: no such file"):
        run(arguments(good, str(tmp_path / "missing.json")))
    other = copy.deepcopy(sweep(2))
    for entry in other["results"]:
        entry["dtype"] = "float64"
    odd = write(tmp_path, "odd.json", other)
    with pytest.raises(OpperfError, match="odd.json: dtype differ"):
        run(arguments(f"{good},{odd}", write(tmp_path, "good_again.json", sweep(1))))
    renamed = copy.deepcopy(sweep(2))
    for entry in renamed["results"]:
        entry["op"] = "x" + entry["op"]
    with pytest.raises(OpperfError, match="share no operator configuration"):
        run(arguments(good, write(tmp_path, "renamed.json", renamed)))


@pytest.mark.parametrize("zeroed", ["base", "new"])
def test_a_median_of_0_s_is_inconclusive_and_no_crash(tmp_path, capsys, zeroed):
    """A phase whose timer read 0 s in most passes has no ratio: its row is inconclusive, says why,
    and the diff goes on (exit 0), on either side."""
    documents = {"base": quiet(sweep(1)), "new": quiet(sweep(2))}
    record(documents[zeroed], "exp")["forward"]["samples_s"] = [0.0, 0.0, 1e-6]
    base, new = (write(tmp_path, f"{name}.json", documents[name]) for name in ("base", "new"))
    assert run(arguments(base, new)) == 0
    out = capsys.readouterr().out
    assert "median is 0 s" in out
    rows = diff(read_side([base]), read_side([new]), 0.05, 0.05).rows
    zero = [row for row in rows if row.reason and "median is 0 s" in row.reason]
    assert [(row.key.op, row.phase, row.verdict, row.ratio) for row in zero] == [
        ("exp", "forward", Verdict.INCONCLUSIVE, None)
    ]


def test_three_sweeps_a_side_find_a_slowdown_and_call_nothing_else():
    """Rows of three runs a side are tested on their own scale: most injected rows above 100 us
    are called slower, no other row either way; two runs a side keep the raw null's caution, and
    call no other row either."""
    for runs in (3, 2):
        base, new = ([str(SLOWED / f"{side}{n}.json") for n in range(runs)] for side in ("b", "n"))
        rows = diff(read_side(base), read_side(new), threshold=0.05, alpha=0.05).rows
        injected = [r for r in rows if r.key.op in INJECTED and min(r.base.median, r.new.median) > 1e-4]
        others = [r for r in rows if r.key.op not in INJECTED]
        assert len(injected) >= 20 and len(others) >= 50
        assert not any(r.verdict in (Verdict.SLOWER, Verdict.FASTER) for r in others)
        slower = sum(r.verdict is Verdict.SLOWER for r in injected)
        if runs == 3:
            assert slower >= 0.9 * len(injected)


def test_separate_sweeps_whose_sides_ran_at_different_speeds_call_no_row(tmp_path, capsys):
    """The new side's sweeps 1.12x slower throughout (another machine, a slow stretch): its rows of
    separate sweeps are inconclusive and say why, the injected slowdown included, where otherwise
    they would be judged against the shift."""
    base = [str(SLOWED / f"b{n}.json") for n in range(3)]
    new = []
    for n in range(3):
        document = json.loads((SLOWED / f"n{n}.json").read_text())
        for entry in document["results"]:
            if entry["status"] == "ok":
                scale(entry, 1.12)
        new.append(write(tmp_path, f"n{n}.json", document))
    result = diff(read_side(base), read_side(new), threshold=0.05, alpha=0.05)
    assert result.summary.machine_shift and result.summary.machine_factor > 1.1
    timed = [r for r in result.rows if r.ratio is not None]
    assert len(timed) >= 70 and all(r.verdict is Verdict.INCONCLUSIVE for r in timed)
    assert all("separate sweeps cannot tell" in r.reason for r in timed)
    assert run(arguments(",".join(base), ",".join(new), "--fail-on", "regression")) == 0
    assert "Rows of separate sweeps are inconclusive" in capsys.readouterr().out


def test_a_record_of_a_framework_without_a_native_profiler_that_says_native_was_timed_by_python():
    """Before each framework declared its timers, JAX's records said ``profiler: native`` (the native
    sampler fell back to Python's on every row): they pair with the records that say ``python``."""
    from opperf.results.key import record_key

    record = {"framework": "jax", "namespace": "jax.numpy", "op": "exp", "inputs": {}, "profiler": "native"}
    assert record_key(record).profiler == "python"
    assert record_key({**record, "profiler": "python"}) == record_key(record)
    assert record_key({**record, "framework": "mxnet", "namespace": "mx.nd"}).profiler == "native"


def test_the_row_key_holds_every_option_that_changes_a_figure():
    """Rows are kept apart by every option marked keyed (``RunOptions``), with the stage and the
    variant: an option that changes timings (the cache mode, an L2 flush) and were missing here would
    let ``diff`` and ``history`` compare rows of both settings as one."""
    from opperf.results.key import SETTINGS, record_key
    from opperf.results.options import KEYED

    assert set(SETTINGS) == {*KEYED, "stage", "variant"} - {"framework"}
    record = {"framework": "torch", "namespace": "torch", "op": "exp", "inputs": {"input": {"shape": [8]}}}
    hot, cold = (record_key({**record, "cache": cache}) for cache in ("hot", "cold"))
    assert hot.identity == cold.identity and hot != cold and hot.differing(cold) == ("cache",)


_NEW_KEYED_OPTION = """
import json, sys
from opperf.results import options
if sys.argv[1] == "keyed":
    options.KEYED = (*options.KEYED, "fill")  # what marking a new RunOptions field keyed does to KEYED
from opperf.cli import main
base, new, db, out = sys.argv[2:6]
diff_status = main(["diff", base, new, "--output-file", out, "--allow-different-machines"])
for path in (base, new):
    assert main(["history", "add", "--db", db, path]) == 0
from opperf.verdicts.history.store import History
with History(db) as store:
    series = store.series()
print(json.dumps({"diff": diff_status, "series": len(series)}))
"""


def test_a_new_keyed_option_keeps_rows_apart_in_diff_and_history_with_nothing_else_changed(tmp_path):
    """Issue 29's check: files differing only in a new option (``fill``, made up here: zeros against
    ones). Marked keyed (its name in ``KEYED``, as a ``RunOptions`` field marked keyed puts it) and
    with no other change, ``diff`` pairs no row across the two settings and ``history`` keeps each
    setting a series of its own; not keyed, the same files pair and share their series."""
    data = Path(__file__).parent / "data" / "verdicts"
    paths = []
    for name, fill in (("mxnet_run1.json", "zeros"), ("mxnet_run2.json", "ones")):
        document = json.loads((data / name).read_text())
        for record in document["results"]:
            record["fill"] = fill
        paths.append(tmp_path / f"{fill}.json")
        paths[-1].write_text(json.dumps(document))
    found = {}
    for mode in ("keyed", "not"):
        out, db = tmp_path / f"{mode}.json", tmp_path / f"{mode}.sqlite"
        done = subprocess.run(
            [sys.executable, "-c", _NEW_KEYED_OPTION, mode, *map(str, paths), str(db), str(out)],
            capture_output=True, text=True, check=True, cwd=tmp_path,
        )  # fmt: skip
        series = json.loads(done.stdout.strip().splitlines()[-1])["series"]
        found[mode] = ({row["verdict"] for row in json.loads(out.read_text())["rows"]}, series)
    (keyed, keyed_series), (plain, plain_series) = found["keyed"], found["not"]
    assert keyed <= {"new", "gone", "incomparable"}, keyed
    assert plain & {"same", "slower", "faster", "inconclusive"}, plain
    assert keyed_series == 2 * plain_series
