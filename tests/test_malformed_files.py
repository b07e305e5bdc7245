"""Result and diff files from elsewhere that no reader can use: every command that reads them (merge,
diff, report, history add) says so in one line, exit 2, naming the file (and the record and field),
never with a traceback: exit 1 means "regression" to a CI gate."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
from documents import another_run

from opperf.cli import main
from opperf.measure.sampling import MOST_SAMPLES
from opperf.results.migrations import CURRENT
from opperf.utils.reading import MOST_BYTES

GOLDEN = Path(__file__).parent / "golden" / "results_v1.json"
BASE = json.loads(GOLDEN.read_text())


def _changed(change) -> str:
    document = copy.deepcopy(BASE)
    change(document)
    return json.dumps(document)


def _record(**fields) -> str:
    return _changed(lambda d: d["results"][1].update(fields))


def _timing(**fields) -> str:
    return _changed(lambda d: d["results"][1]["forward"].update(fields))


MALFORMED = {
    "truncated": (json.dumps(BASE)[:900], "not valid JSON"),
    "empty": ("", "not valid JSON"),
    "not text": (b"\xff\xfe\x00\x01", "cannot be read as JSON text"),
    "nested too deep": ("[" * 100_000 + "]" * 100_000, "nested too deep"),
    # Python refuses to read an integer of over 4,300 digits: a traceback and exit 1 in diff
    "a number too long": (
        json.dumps(BASE).replace("{", '{"big": ' + "9" * 5000 + ", ", 1),
        "a number too long",
    ),
    "a list": ("[]", "holds no JSON object"),
    "newer version": (
        _changed(lambda d: d.update(schema_version=CURRENT + 1)),
        f"schema_version {CURRENT + 1}",
    ),
    "version as text": (_changed(lambda d: d.update(schema_version="1")), "schema_version '1'"),
    "version as true": (_changed(lambda d: d.update(schema_version=True)), "schema_version True"),
    "results an object": (_changed(lambda d: d.update(results={})), "results is missing or not a list"),
    "no environment": (_changed(lambda d: d.pop("environment")), "environment is missing"),
    "environment a list": (_changed(lambda d: d.update(environment=[])), "environment is missing"),
    "wall seconds as text": (
        _changed(lambda d: d["environment"].update(wall_seconds="long")),
        "environment.wall_seconds is 'long'",
    ),
    "record a string": (
        _changed(lambda d: d["results"].__setitem__(1, "x")),
        "results record 2: not an object",
    ),
    "record without op": (_changed(lambda d: d["results"][1].pop("op")), "results record 2: no field 'op'"),
    "op a number": (_record(op=5), "results record 2: op is 5; expected text"),
    "inputs as text": (_record(inputs="x"), "inputs is 'x'; expected an object"),
    "tensor shape as text": (_record(inputs={"data": {"shape": "abc"}}), "inputs.data: a tensor's shape"),
    "unknown status": (_record(status="weird"), "status is 'weird'; expected one of ok"),
    "forward a list": (_record(forward=[1, 2]), "forward is [1, 2]; expected an object or null"),
    "samples as text": (_timing(samples_s=["a"]), "forward.samples_s is ['a']"),
    "no samples": (_timing(samples_s=[]), "forward.samples_s is []"),
    "negative samples": (_timing(samples_s=[-1.0]), "forward.samples_s is [-1.0]"),
    "median as text": (_timing(median_s="fast"), "forward.median_s is 'fast'"),
    "memory as text": (_record(memory_peak_bytes="lots"), "memory_peak_bytes is 'lots'"),
    "sampling as text": (_record(sampling="x"), "sampling is 'x'"),
    "flags as text": (_record(flags="noisy"), "flags is 'noisy'; expected a list of text"),
    "threads as a float": (_record(threads=1.5), "threads is 1.5"),
    # blocks the report reads: each crashed it (exit 1) once diff or history had let it in
    "roofline fraction as text": (
        _record(roofline={"bytes": 8, "flops": 8, "fraction_of_peak": "x"}),
        "roofline.fraction_of_peak is 'x'",
    ),
    "roofline bytes as text": (_record(roofline={"bytes": "x"}), "roofline.bytes is 'x'"),
    "of the roof as text": (
        _record(roofline={"fraction_of_peak": {"of_roof": "x"}}),
        "roofline.fraction_of_peak.of_roof is 'x'",
    ),
    "peaks as text": (_changed(lambda d: d["environment"].update(machine_peaks="x")), "machine_peaks is 'x'"),
    "a peak as text": (
        _changed(lambda d: d["environment"].update(machine_peaks={"bandwidth_bytes_per_s": "x"})),
        "machine_peaks.bandwidth_bytes_per_s is 'x'",
    ),
    "too many samples": (_timing(samples_s=[1e-3] * (MOST_SAMPLES + 1)), "samples_s holds 100,001 samples"),
    # not files to read: a FIFO blocked every reader forever; /dev/zero filled memory until killed
    "a FIFO without a writer": (os.mkfifo, "not valid JSON"),
    "a device": (lambda path: path.symlink_to("/dev/zero"), "it is no regular file (a character device)"),
    "too large": (lambda path: os.truncate(path.touch() or path, MOST_BYTES + 1), "more than opperf reads"),
}

COMMANDS = {
    "merge": lambda bad, good, out: ["merge", bad, good, "--output-file", str(out / "m.json")],
    "diff base": lambda bad, good, out: ["diff", bad, good],
    "diff new": lambda bad, good, out: ["diff", good, bad],
    "report": lambda bad, good, out: ["report", bad, "--html", str(out / "r.html")],
    "history add": lambda bad, good, out: ["history", "add", good, bad, "--db", str(out / "h.sqlite")],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_results_file_is_one_line_and_exit_2(tmp_path, capsys, case, command):
    content, message = MALFORMED[case]
    bad = tmp_path / "bad.json"
    if callable(content):
        content(bad)
    elif isinstance(content, bytes):
        bad.write_bytes(content)
    else:
        bad.write_text(content)
    assert main(COMMANDS[command](str(bad), str(GOLDEN), tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}: ") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "h.sqlite").exists() or command != "history add"  # nothing added before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(rows={}), "summary is no object or rows no list"),
        (lambda d: d["rows"].append("x"), "not an object"),
        (lambda d: d["rows"][0].update(op=None), "op is None; expected text"),
        (lambda d: d["rows"][0].update(ratio="2x"), "ratio is '2x'; expected a number"),
        (lambda d: d["rows"][0].update(ratio_ci95=[1]), "ratio_ci95 is [1]"),
        (lambda d: d["rows"][0].update(base=[]), "base is []"),
        (lambda d: d["summary"].update(threshold="5%"), "threshold is '5%'"),
        (lambda d: d.update(diff_format_version=99), "a diff file of format version 99, which this opperf"),
        (lambda d: d.update(diff_format_version="1"), "a diff file of format version '1'"),
        (lambda d: d["summary"].update(geomean_ratio="x"), "summary's geomean_ratio is 'x', not a number"),
        (lambda d: d["summary"].update(counts=[["slower", 1]]), "summary's counts is [['slower', 1]]"),
    ],
)
def test_a_malformed_diff_file_in_report_is_one_line_and_exit_2(tmp_path, capsys, change, message):
    diff = tmp_path / "diff.json"
    assert main(["diff", str(GOLDEN), str(GOLDEN), "--output-file", str(diff)]) == 2  # same file: refused
    capsys.readouterr()
    second = tmp_path / "second.json"
    second.write_text(json.dumps(another_run(json.loads(GOLDEN.read_text()))))
    assert main(["diff", str(GOLDEN), str(second), "--output-file", str(diff)]) == 0
    document = json.loads(diff.read_text())
    change(document)
    diff.write_text(json.dumps(document))
    assert main(["report", str(diff), "--html", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {diff}: ") and message in err and err.count("\n") == 1


def _model_report() -> dict:
    from opperf.results.model_report import ConfigurationRow, ModelReport, OperatorRow

    inputs = {"input": {"shape": [1, 8], "dtype": "float32"}}
    return ModelReport(
        framework="torch", model="mlp", input_shape=(1, 8), mode="inference",
        operators=(OperatorRow("addmm", 1, 2, 2e-3, 1.0, 1e-3, 1.0),),
        configurations=(ConfigurationRow("addmm", inputs, 2, 5e-4, "ok"),),
        end_to_end_s=3e-3, profiled_wall_s=3e-3, profiled_by="profiler", captured_by="capture",
    ).to_json()  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["operators"][0].update(in_model_s="fast"),
            'operators[0].in_model_s "fast", where it takes',
        ),
        (lambda d: d.update(end_to_end_s=None), "end_to_end_s null, where it takes seconds"),
        (lambda d: d.update(input_shape=5), "input_shape 5, where it takes a list of integers"),
        (
            lambda d: d["configurations"][0].update(inputs=[1]),
            "configurations[0].inputs [1], where it takes an",
        ),
        (lambda d: d["configurations"].append(3), "configurations[1] 3, where it takes an object"),
        (lambda d: d["operators"][0].pop("calls"), "has no operators[0].calls"),
        (lambda d: d.pop("operators"), "has no operators"),  # was read as a results file of no version
    ],
)
def test_a_malformed_model_report_in_report_is_one_line_and_exit_2(tmp_path, capsys, change, message):
    """A field of another kind was read as it came and failed in the page's writing: a traceback, exit 1."""
    document = _model_report()
    good = tmp_path / "good.json"
    good.write_text(json.dumps(document))
    assert main(["report", str(good), "--html", str(tmp_path / "r.html")]) == 0
    capsys.readouterr()
    change(document)
    bad = tmp_path / "model.json"
    bad.write_text(json.dumps(document))
    assert main(["report", str(bad), "--html", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}: a model report that ") and message in err and err.count("\n") == 1


def _shard(tmp_path, name: str, **environment) -> str:
    document = copy.deepcopy(BASE)
    document["environment"].update(environment)
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        ({"shard": "0/4"}, {"shard": "1/4"}, "its shard is '0/4', not K/N with 1 <= K <= N"),
        ({"shard": "5/4"}, {"shard": "1/4"}, "its shard is '5/4'"),
        ({"shard": "x"}, {"shard": "1/4"}, "its shard is 'x'"),
        ({"framework_settings": {"engine": "NaiveEngine"}}, {"framework_settings": {"engine": "Threaded"}},
         "framework_settings"),
        ({"mode": "training"}, {"mode": "inference"}, "mode 'training' vs 'inference'"),
        # shards of another --ops read as a whole split that was not
        ({"selection": {"ops": ["exp", "log"]}}, {"selection": {"ops": ["exp"]}}, "selection"),
        ({"isolated": True}, {"isolated": False}, "isolated True vs False"),
        # a merged file names one machine, and diff compared it with that machine's files silently
        ({"cpu_model": "Xeon A", "fingerprint": {"cpu_model": "Xeon A"}}, {"cpu_model": "Xeon B"},
         "measured on different machines (cpu_model"),
    ],
)  # fmt: skip
def test_merge_refuses_parts_that_are_not_one_sweep(tmp_path, capsys, first, second, message):
    files = [_shard(tmp_path, "a.json", **first), _shard(tmp_path, "b.json", **second)]
    assert main(["merge", *files, "--output-file", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "m.json").exists()


def _ab_file(tmp_path) -> Path:
    """An A/B file as ``opperf ab`` writes it: two rounds of each side, new 1.5x slower."""
    records = []
    for round_index in range(2):
        for side, factor in (("base", 1.0), ("new", 1.5)):
            for record in copy.deepcopy(BASE["results"]):
                if record["forward"]:
                    record["forward"]["samples_s"] = [s * factor for s in record["forward"]["samples_s"]]
                records.append({**record, "side": side, "round": round_index, "prepared_in_round": 0})
    path = tmp_path / "ab.json"
    path.write_text(json.dumps({**BASE, "kind": "ab", "ab": {"rounds": 2}, "results": records}))
    return path


def test_report_refuses_a_file_that_repeats_a_configuration_as_diff_does(tmp_path, capsys):
    """report rendered both records of a repeated configuration, where diff, history and merge refuse
    the file (an A/B file whose kind was edited read as a sweep of its rounds)."""
    document = copy.deepcopy(BASE)
    document["results"].append(document["results"][1])
    twice = tmp_path / "twice.json"
    twice.write_text(json.dumps(document))
    assert main(["report", str(twice), "--html", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {twice}: results[{len(BASE['results'])}] repeats") and err.count("\n") == 1


def test_report_of_an_ab_file_shows_its_verdicts_not_a_sweep(tmp_path):
    ab, page = _ab_file(tmp_path), tmp_path / "r.html"
    assert main(["report", str(ab), "--html", str(page)]) == 0
    html = page.read_text()
    assert "Diff" in html and str(ab) in html
    assert "argmax_channel" in html and "1.5" in html


@pytest.mark.parametrize("command", ["merge", "history add", "diff side"])
def test_an_ab_file_where_a_sweep_is_expected_is_refused_with_the_way(tmp_path, capsys, command):
    ab = str(_ab_file(tmp_path))
    argv = {
        "merge": ["merge", ab, str(GOLDEN), "--output-file", str(tmp_path / "m.json")],
        "history add": ["history", "add", ab, "--db", str(tmp_path / "h.sqlite")],
        "diff side": ["diff", ab, str(GOLDEN)],
    }[command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {ab}: ") and "A/B file" in err and err.count("\n") == 1


def test_diff_of_a_file_with_itself_is_refused(tmp_path, capsys):
    assert main(["diff", str(GOLDEN), str(GOLDEN)]) == 2
    err = capsys.readouterr().err
    assert "both sides" in err and err.count("\n") == 1


def test_sweeps_of_two_machines_are_refused_unless_allowed_and_builds_are_named(tmp_path, capsys):
    """A diff of files from two machines compares the machines as much as the builds: refused,
    saying what differs, unless --allow-different-machines; another framework build is the usual
    point of a diff, and is named."""
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    document = json.loads(GOLDEN.read_text())
    base.write_text(json.dumps(document))
    document = another_run(document)
    document["environment"]["cpu_model"] = "Another CPU"
    new.write_text(json.dumps(document))
    assert main(["diff", str(base), str(new)]) == 2
    err = capsys.readouterr().err
    assert f'cpu_model "AMD EPYC" ({base}) vs "Another CPU" ({new})' in err or "cpu_model" in err
    assert "--allow-different-machines" in err and err.count("\n") == 1
    assert main(["diff", str(base), str(new), "--allow-different-machines"]) == 0
    assert "Measured on different machines: cpu_model" in capsys.readouterr().out
    document = json.loads(GOLDEN.read_text())
    document["environment"]["framework_build"] = "mxnet 1.9.1 (a release build)"
    base.write_text(json.dumps(document))
    document = another_run(document)
    document["environment"]["framework_build"] = "mxnet 1.9.1 (a debug build)"
    new.write_text(json.dumps(document))
    assert main(["diff", str(base), str(new)]) == 0
    assert "Framework builds differ: framework_build" in capsys.readouterr().out


def test_every_sweep_records_its_fingerprint(tmp_path):
    output = tmp_path / "r.json"
    assert (
        main(["--ops", "exp", "--runs", "2", "--warmup", "0", "--quiet", "--output-file", str(output)]) == 0
    )
    found = json.loads(output.read_text())["environment"]["fingerprint"]
    assert set(found) == {
        "cpu_model",
        "cpu_count",
        "gpus",
        "framework",
        "framework_version",
        "framework_build",
    }
    assert found["framework_build"].startswith("mxnet 1.9.1 (") and found["cpu_count"] >= 1


def test_a_results_file_through_a_pipe_is_read(tmp_path, capsys):
    """A shell's ``<(gunzip -c results.json.gz)`` is a pipe: read to its end, as a file is."""
    read, write = os.pipe()
    os.write(write, GOLDEN.read_bytes())  # smaller than the pipe's buffer
    os.close(write)
    second = tmp_path / "second.json"
    second.write_text(json.dumps(another_run(json.loads(GOLDEN.read_text()))))
    try:
        assert main(["diff", f"/dev/fd/{read}", str(second), "--output-file", str(tmp_path / "d.md")]) == 0
    finally:
        os.close(read)


def test_an_ab_file_repeating_a_configuration_is_told_what_an_ab_file_holds(tmp_path, capsys):
    """It was told to merge shards with opperf merge, which refuses A/B files."""
    ab = _ab_file(tmp_path)
    document = json.loads(ab.read_text())
    document["results"].append(document["results"][0])
    ab.write_text(json.dumps(document))
    assert main(["diff", str(ab)]) == 2
    err = capsys.readouterr().err
    assert "one record per configuration, side and round; pass one written by `opperf ab`" in err
    assert "opperf merge" not in err and err.count("\n") == 1


def _disjoint_shards(tmp_path, count: int, **environment) -> list[str]:
    """``count`` shards K/count of BASE's records, each with its own operators."""
    ops = sorted({r["op"] for r in BASE["results"]})
    paths = []
    for index in range(count):
        document = copy.deepcopy(BASE)
        document["environment"].update(shard=f"{index + 1}/{count}", **environment)
        document["results"] = [r for r in document["results"] if ops.index(r["op"]) % count == index]
        path = tmp_path / f"s{index + 1}.json"
        path.write_text(json.dumps(document))
        paths.append(str(path))
    return paths


def test_a_split_merged_in_part_is_completed_later_and_a_stopped_part_marks_the_merge(tmp_path, capsys):
    """Merging shards 1-2 of 3, then that file with shard 3: the split is whole, its parts kept (the
    partial file read as "none" and was refused, or merged with another file lost "3/3 missing"); a
    part stopped before it finished marks the merged file interrupted, whichever file comes first."""
    first, second, third = _disjoint_shards(tmp_path, 3)
    partial, whole = tmp_path / "p12.json", tmp_path / "whole.json"
    assert main(["merge", first, second, "--output-file", str(partial)]) == 0
    assert "shards 3/3 are missing" in capsys.readouterr().err
    assert main(["merge", str(partial), third, "--output-file", str(whole)]) == 0
    assert "missing" not in capsys.readouterr().err
    environment = json.loads(whole.read_text())["environment"]
    assert [p["shard"] for p in environment["merged_from"]] == ["1/3", "2/3", "3/3"]
    assert environment["interrupted"] is False

    stopped = json.loads(Path(second).read_text())
    stopped["environment"].update(interrupted=True, started="2026-01-02T00:00:00+00:00")
    Path(second).write_text(json.dumps(stopped))
    for order in ([first, second, third], [second, third, first]):
        assert main(["merge", *order, "--output-file", str(whole)]) == 0
        assert f"note: {second} was stopped before finishing" in capsys.readouterr().err
        environment = json.loads(whole.read_text())["environment"]
        assert environment["interrupted"] is True and environment["started"] <= "2026-01-02T00:00:00+00:00"


def test_parts_with_different_time_limits_and_pinning_merge_each_kept(tmp_path, capsys):
    """Shards given different --timeout and --affinity measured alike: they merge, the merged file's
    limit is the longest (none where one part had none), and each part's own is in merged_from."""
    first, second, third = _disjoint_shards(tmp_path, 3)
    for path, limit, cpus in ((first, 60.0, [0]), (second, 600.0, [1]), (third, 60.0, [1])):
        document = json.loads(Path(path).read_text())
        document["environment"].update(timeout_s=limit, worker_cpus=cpus)
        Path(path).write_text(json.dumps(document))
    whole = tmp_path / "whole.json"
    assert main(["merge", first, second, third, "--output-file", str(whole)]) == 0
    environment = json.loads(whole.read_text())["environment"]
    assert environment["timeout_s"] == 600.0 and environment["worker_cpus"] is None
    parts = environment["merged_from"]
    assert [(p["timeout_s"], p["worker_cpus"]) for p in parts] == [(60.0, [0]), (600.0, [1]), (60.0, [1])]
    unlimited = json.loads(Path(third).read_text())
    unlimited["environment"]["timeout_s"] = None
    Path(third).write_text(json.dumps(unlimited))
    assert main(["merge", first, second, third, "--output-file", str(whole)]) == 0
    assert json.loads(whole.read_text())["environment"]["timeout_s"] is None


def test_merge_refuses_a_part_whose_records_contradict_its_environment(tmp_path, capsys):
    """A shard edited to float64 records under its float32 environment merged into a float32 file."""
    first, second = _disjoint_shards(tmp_path, 2)
    edited = json.loads(Path(second).read_text())
    for record in edited["results"]:
        record["dtype"] = "float64"
    Path(second).write_text(json.dumps(edited))
    assert main(["merge", first, second, "--output-file", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err
    assert f"error: {second}: its " in err and "record says dtype 'float64'" in err
    assert not (tmp_path / "m.json").exists()


def test_merge_refuses_parts_that_count_different_registries(tmp_path, capsys):
    """A part edited to 999,999 registered names made the merged file's coverage count them (max)."""
    first, second = _disjoint_shards(tmp_path, 2)
    edited = json.loads(Path(second).read_text())
    edited["coverage"]["registered"] = 999_999
    Path(second).write_text(json.dumps(edited))
    assert main(["merge", first, second, "--output-file", str(tmp_path / "m.json")]) == 2
    assert "count different registered names" in capsys.readouterr().err


def _written(tmp_path, name: str, document: dict) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


@pytest.mark.parametrize(
    "where",
    ["named twice on a side", "a copy on a side", "a copy on the other side", "a shard, merged"],
)
def test_one_run_counted_twice_is_refused(tmp_path, capsys, where):
    """A file named twice on a side, or a copy of it, was counted as two runs (the header claimed 3
    runs a side and dropped the warning that one run gives indicative verdicts); a copy on the other
    side compared a run with itself, as a shard did against the file it was merged into."""
    base = _written(tmp_path, "base.json", BASE)
    copied = _written(tmp_path, "copy.json", BASE)  # reformatted by json.dumps: the same run all the same
    new = _written(tmp_path, "new.json", another_run(BASE))
    merged = json.loads((Path(__file__).parent / "data" / "verdicts" / "mxnet_run1.json").read_text())
    shard = copy.deepcopy(merged)  # a part of a sweep, started before the merged file's first part
    shard["results"] = shard["results"][: len(shard["results"]) // 2]
    shard["environment"]["started"] = "2026-11-22T12:00:00+00:00"
    argv = {
        "named twice on a side": [f"{base},{base}", new],
        "a copy on a side": [f"{base},{copied}", new],
        "a copy on the other side": [base, copied],
        "a shard, merged": [_written(tmp_path, "shard.json", shard), _written(tmp_path, "m.json", merged)],
    }[where]
    assert main(["diff", *argv]) == 2
    err = capsys.readouterr().err
    assert (
        "repeats the measurements of" in err and "(the same file, a copy" in err and err.count("\n") == 1
    ), err
    assert main(["diff", f"{base},{new}", _written(tmp_path, "third.json", another_run(BASE, 22))]) == 0


def test_separate_runs_of_operators_a_tick_long_are_not_taken_for_copies(tmp_path):
    """Sweeps of operators a tick or two long read alike sample for sample (``shape_array`` 2, 1, 1 us
    in two ``--runs 3`` sweeps here), which read as one run counted twice."""
    ticked = copy.deepcopy(BASE)
    for record in ticked["results"]:
        for phase in ("forward", "backward"):
            if isinstance(record.get(phase), dict) and record[phase].get("samples_s"):
                record[phase]["samples_s"] = [2e-6, 1e-6, 1e-6]
    again = copy.deepcopy(ticked)
    again["environment"]["started"] = another_run(BASE)["environment"]["started"]
    assert main(["diff", _written(tmp_path, "a.json", ticked), _written(tmp_path, "b.json", again)]) == 0


def test_a_side_of_two_frameworks_is_refused(tmp_path, capsys):
    """A NEW side of one MXNet and one PyTorch sweep read as two runs, PyTorch's rows as new ones."""
    other = another_run(BASE)
    other["environment"]["framework"] = "torch"
    for record in other["results"]:
        record["framework"] = "torch"
    files = _written(tmp_path, "a.json", BASE), _written(tmp_path, "t.json", other)
    assert main(["diff", _written(tmp_path, "b.json", another_run(BASE, 22)), ",".join(files)]) == 2
    err = capsys.readouterr().err
    assert "a side mixes frameworks (framework" in err and err.count("\n") == 1, err


def test_across_a_setting_both_sides_share_is_refused_naming_the_one_that_differs(tmp_path, capsys):
    """``--across threads`` where both sides ran one thread said each verdict was that change's
    effect; the sides differed in their data's values."""
    other = another_run(BASE)
    for record in other["results"]:
        record["values"] = "normal"
    base, new = _written(tmp_path, "b.json", BASE), _written(tmp_path, "n.json", other)
    assert main(["diff", base, new, "--across", "threads"]) == 2
    err = capsys.readouterr().err
    assert "--across threads: both sides ran threads" in err and "they differ in values" in err, err


def test_an_ab_block_that_is_no_object_is_refused(tmp_path, capsys):
    document = json.loads(_ab_file(tmp_path).read_text())
    document["ab"] = [1]
    assert main(["diff", _written(tmp_path, "ab.json", document)]) == 2
    assert "ab is list, not an object" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--json-file", "d.html"], "--json-file 'd.html' names an HTML file, but what it writes is no such"),
        (["--output-format", "hud", "--output-file", "x.html"], "give it its format's extension (.json)"),
    ],
)
def test_json_written_into_a_page_is_refused(tmp_path, capsys, monkeypatch, argv, message):
    """``--json-file d.html`` wrote JSON there; a HUD file named .html was told to end in .hud."""
    monkeypatch.chdir(tmp_path)
    base, new = _written(tmp_path, "b.json", BASE), _written(tmp_path, "n.json", another_run(BASE))
    command = ["diff", base, new, *argv] if argv[0] == "--json-file" else ["--ops", "exp", *argv]
    assert main(command) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / argv[-1]).exists()


@pytest.mark.parametrize("command", ["diff", "compare"])
def test_an_output_file_of_a_format_no_report_is_written_in_is_refused(tmp_path, capsys, command):
    """Markdown was written into ``report.html`` with exit 0."""
    page = tmp_path / "report.html"
    argv = {
        "diff": ["diff", _written(tmp_path, "b.json", BASE), _written(tmp_path, "n.json", another_run(BASE))],
        "compare": ["compare", "mx.nd,mx.np", "--ops", "exp", "--rounds", "1"],
    }[command]
    assert main([*argv, "--output-file", str(page)]) == 2
    err = capsys.readouterr().err
    assert "names an HTML file, which this command does not write" in err and "--html" in err, err
    assert err.count("\n") == 1 and not page.exists()


def test_an_ab_file_without_one_side_says_so(tmp_path, capsys):
    """It named rounds of the new side that held no record and blamed the configurations."""
    document = json.loads(_ab_file(tmp_path).read_text())
    document["results"] = [r for r in document["results"] if r["side"] == "base"]
    assert main(["diff", _written(tmp_path, "ab.json", document)]) == 2
    err = capsys.readouterr().err
    assert "the A/B file holds no record of the new side" in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda ab: ab.update(interrupted="yes"), "ab.interrupted 'yes' is neither true nor false"),
        (lambda ab: ab.update(schedule={"min_rounds": "x"}), "ab.schedule.min_rounds 'x' is no count"),
        (lambda ab: ab.update(schedule={"min_rounds": -1}), "ab.schedule.min_rounds -1 is no count"),
        (lambda ab: ab.update(schedule="x"), "ab.schedule is str, not an object"),
    ],
)
def test_an_ab_file_whose_job_fields_are_damaged_is_refused(tmp_path, capsys, change, message):
    """``ab.interrupted: "yes"`` read as a finished job (its short rows judged)."""
    document = json.loads(_ab_file(tmp_path).read_text())
    change(document["ab"])
    assert main(["diff", _written(tmp_path, "ab.json", document)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda e: e.update(fingerprint="x"), "environment.fingerprint is str, not an object"),
        (
            lambda e: e["fingerprint"].update(cpu_model="Intel Xeon"),
            'environment.fingerprint.cpu_model "Intel Xeon" contradicts environment.cpu_model',
        ),
    ],
)
def test_a_fingerprint_that_is_no_object_or_contradicts_the_file_is_refused(
    tmp_path, capsys, change, message
):
    """The machine check read only the flat fields: a fingerprint naming another machine, or a
    string, passed without a word."""
    from opperf.results.environment import fingerprint

    edited = another_run(BASE)
    edited["environment"]["fingerprint"] = fingerprint(edited["environment"])
    change(edited["environment"])
    assert main(["diff", _written(tmp_path, "b.json", BASE), _written(tmp_path, "n.json", edited)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_repeats_of_a_side_that_sampled_otherwise_are_named(tmp_path, capsys):
    """A second NEW run with another seed (other input values) passed without a word."""
    other = another_run(BASE, 22)
    other["environment"]["seed"] = 7
    base = _written(tmp_path, "b.json", BASE)
    new = ",".join((_written(tmp_path, "n1.json", another_run(BASE)), _written(tmp_path, "n2.json", other)))
    assert main(["diff", base, new]) in (0, 1)
    out = capsys.readouterr().out
    assert "The runs of NEW sampled otherwise: seed 0 (" in out and "vs 7 (" in out, out
