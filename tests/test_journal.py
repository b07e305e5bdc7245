"""The sweep journal: resume after a real SIGKILL, torn lines, refused settings, Ctrl-C."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opperf.cli import main
from opperf.results.document import record
from opperf.results.measurement import BenchmarkSpec, Measurement, Status, TensorSpec, freeze_inputs
from opperf.results.options import RunOptions
from opperf.sweep.checkpoint import FORMAT_VERSION, JournalWriter, check_settings, load_journal
from opperf.utils.errors import OpperfError

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ("--categories", "unary,rounding", "--runs", "3", "--warmup", "1", "--quiet")


def _sweep(output: Path, *extra: str) -> subprocess.Popen:
    command = [sys.executable, str(ROOT / "opperf.py"), *SWEEP, "--output-file", str(output), *extra]
    return subprocess.Popen(command, stderr=subprocess.PIPE, text=True)


def _journal_lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _stop_after(process: subprocess.Popen, journal: Path, operators: int, sig: int) -> None:
    deadline = time.monotonic() + 120
    while _journal_lines(journal) < 1 + operators and time.monotonic() < deadline:
        assert process.poll() is None, "the sweep ended before it could be stopped"
        time.sleep(0.05)
    process.send_signal(sig)


@pytest.mark.slow
def test_resume_after_sigkill_reruns_at_most_the_operator_in_flight(tmp_path):
    output = tmp_path / "r.json"
    journal = Path(f"{output}.journal.jsonl")
    process = _sweep(output)
    _stop_after(process, journal, operators=5, sig=signal.SIGKILL)
    process.wait()
    finished = {json.loads(line)["op"] for line in journal.read_text().splitlines()[1:]}
    assert not output.exists()

    resumed = _sweep(output, "--resume")
    _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    document = json.loads(output.read_text())
    measured = {r["op"] for r in document["results"]}
    assert f"({len(finished)} from the journal)" in err
    assert finished < measured
    assert document["coverage"]["operators"] == len(measured) == 47  # unary 41 + rounding 6
    assert not journal.exists()


@pytest.mark.slow
def test_interrupt_writes_what_finished_and_keeps_the_journal(tmp_path):
    output = tmp_path / "r.json"
    journal = Path(f"{output}.journal.jsonl")
    process = _sweep(output)
    _stop_after(process, journal, operators=3, sig=signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "--resume" in err
    document = json.loads(output.read_text())
    assert document["environment"]["interrupted"] is True
    assert 3 <= document["coverage"]["operators"] < 47
    assert journal.exists()


SETTINGS = {"dtype": "float32", "runs": 3}


def test_journal_round_trip_and_torn_last_line(tmp_path):
    path = tmp_path / "j.jsonl"
    writer = JournalWriter(str(path), SETTINGS, append=False)
    writer.add("exp", [_measurement("exp")])
    writer.add("log", [_measurement("log")])
    writer.close()
    with open(path, "a", encoding="utf-8") as journal:
        journal.write('{"op": "sqrt", "records": [{"trunc')  # a kill in mid-write
    loaded = load_journal(str(path))
    assert loaded.settings == SETTINGS
    assert list(loaded.finished) == ["exp", "log"]
    assert loaded.finished["exp"] == (_measurement("exp"),)


def test_resume_with_other_settings_is_refused(tmp_path):
    path = tmp_path / "j.jsonl"
    JournalWriter(str(path), SETTINGS, append=False).close()
    with pytest.raises(OpperfError, match="runs: journal 3, now 25"):
        check_settings(str(path), load_journal(str(path)), {"dtype": "float32", "runs": 25})


def test_missing_journal_means_a_fresh_sweep(tmp_path):
    assert load_journal(str(tmp_path / "none.jsonl")) is None


def test_foreign_file_is_not_taken_for_a_journal(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"something": "else"}\n')
    with pytest.raises(OpperfError, match="not an opperf sweep journal"):
        load_journal(str(path))
    os.unlink(path)


def test_records_round_trip_for_every_input_kind():
    from opperf.results.document import measurement_from_record, record
    from opperf.results.measurement import Alias

    inputs = {
        "data": (TensorSpec((4, 2)), TensorSpec((4, 2), dtype="float16")),
        "weight": TensorSpec((3,)),
        "grad": TensorSpec((8, 3), storage="row_sparse", density=0.25),
        "out": Alias("data", 2, 1),
        "kernel": (3, 3),
        "mode": "max",
        "scale": 0.5,
    }
    spec = BenchmarkSpec("mx.np", "_npi_add", freeze_inputs(inputs), function="add", category="numpy")
    measurement = Measurement(spec, Status.OK, forward=(1e-3,), backward=(2e-3,), memory_peak_bytes=8)
    assert record(measurement_from_record(record(measurement))) == record(measurement)


def _journal_with(tmp_path, *lines: bytes, newline_at_end: bool = True) -> str:
    path = tmp_path / "r.json.journal.jsonl"
    header = json.dumps({"journal": FORMAT_VERSION, "settings": {"dtype": "float32"}}).encode()
    entry = json.dumps({"op": "exp", "records": [record(_measurement("exp"))]}).encode()
    later = json.dumps({"op": "log", "records": [record(_measurement("log"))]}).encode()
    body = [header, *(entry if line == b"EXP" else later if line == b"LOG" else line for line in lines)]
    path.write_bytes(b"\n".join(body) + (b"\n" if newline_at_end else b""))
    return str(path)


def _measurement(op: str) -> Measurement:
    """A measurement as a sweep makes it: with its options validated (the timer and mode resolved),
    which is what a journal keeps."""
    options = RunOptions().validated()
    inputs = freeze_inputs({"data": TensorSpec((2, 2))})
    spec = BenchmarkSpec("mx.nd", op, inputs, options, category="unary")
    return Measurement(spec, Status.OK, forward=(1e-3,))


SHAPELESS = b'{"framework": "mxnet", "namespace": "mx.nd", "op": "sqrt", "inputs": [], "status": "ok"}'
"""A record whose inputs are a list: JSON, but no record a results file holds."""

ANOTHERS = json.dumps({"op": "sqrt", "records": [record(_measurement("dot"))]}).encode()
"""A line of sqrt holding dot's records: resumed, a sweep of sqrt wrote dot's and never measured sqrt."""


@pytest.mark.parametrize(
    "damage",
    [
        b'{"op": "exp", "recor',
        b"garbage",
        b'{"hello": 1}',
        b"\xff\xfe not utf-8",
        b'{"op": "sqrt", "records": [' + SHAPELESS + b"]}",
        b'{"op": 7, "records": []}',
        b"[1, 2]",
        ANOTHERS,
        b'{"op": "sqrt", "records": [], "n": ' + b"9" * 5000 + b"}",  # too long for Python to read
        b"[" * 200_000 + b"]" * 200_000,
    ],
)
def test_a_damaged_line_in_the_middle_is_skipped_and_counted_and_later_lines_kept(tmp_path, damage):
    journal = load_journal(_journal_with(tmp_path, b"EXP", damage, b"LOG"))
    assert set(journal.finished) == {"exp", "log"} and journal.damaged == 1 and not journal.torn


def test_a_torn_last_line_is_cut_before_the_next_entry_is_appended(tmp_path):
    path = _journal_with(tmp_path, b"EXP", b'{"op": "log", "rec', newline_at_end=False)
    assert load_journal(path).torn
    writer = JournalWriter(path, {"dtype": "float32"}, append=True)
    writer.add("log", [_measurement("log")])
    writer.close()
    journal = load_journal(path)
    assert set(journal.finished) == {"exp", "log"} and journal.damaged == 0 and not journal.torn


@pytest.mark.parametrize("header", [b'{"hello": 1}', b"\xff", b""])
def test_a_file_that_is_no_journal_is_refused_with_the_way_out(tmp_path, header):
    path = tmp_path / "j.jsonl"
    path.write_bytes(header + b"\n")
    with pytest.raises(OpperfError, match="not an opperf sweep journal.*--fresh"):
        load_journal(str(path))


@pytest.mark.parametrize("append", [True, False])
def test_two_sweeps_cannot_share_a_journal_and_the_refused_one_leaves_it_as_it_was(tmp_path, append):
    """The second writer (resuming it, or starting afresh) is refused before it empties or cuts
    the journal the first is writing, a torn last line included."""
    path = str(tmp_path / "j.jsonl")
    first = JournalWriter(path, {"dtype": "float32"}, append=False)
    first.write({"op": "exp", "records": []})
    first._file.write(b'{"op": "lo')  # the first sweep is mid-line
    written = Path(path).read_bytes()
    with pytest.raises(OpperfError, match="another sweep is writing"):
        JournalWriter(path, {"dtype": "float32"}, append=append)
    assert Path(path).read_bytes() == written
    first.close()


def test_a_journal_left_behind_is_neither_overwritten_nor_mixed(tmp_path, capsys):
    output = tmp_path / "r.json"
    Path(f"{output}.journal.jsonl").write_text("left by an interrupted sweep\n")
    arguments = ["--ops", "exp", "--runs", "2", "--warmup", "0", "--quiet", "--output-file", str(output)]
    assert main(arguments) == 2
    assert "continue it with --resume, or discard it with --fresh" in capsys.readouterr().err
    assert main([*arguments, "--resume", "--fresh"]) == 2
    assert main([*arguments, "--fresh"]) == 0 and output.exists()


@pytest.mark.parametrize("there", ["link to a file", "dangling link", "fifo", "folder"])
@pytest.mark.parametrize("append", [True, False])
def test_a_journal_path_that_is_no_file_of_its_own_is_refused_and_left_alone(tmp_path, there, append):
    """A symbolic link at the journal's path (another user's, in a shared folder) had ``--fresh`` empty
    and overwrite the file it named, and a plain run create a file where it pointed; a FIFO blocked
    the job forever; a folder gave a traceback."""
    from opperf.utils.files import UnwritableError

    path, victim = tmp_path / "x.json.journal.jsonl", tmp_path / "victim.txt"
    if there == "link to a file":
        victim.write_text("precious")
        path.symlink_to(victim)
    elif there == "dangling link":
        path.symlink_to(victim)
    elif there == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with pytest.raises(UnwritableError):
        JournalWriter(str(path), {"dtype": "float32"}, append=append)
    assert (victim.read_text() == "precious") if there == "link to a file" else not victim.exists()


def test_a_lock_path_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    from opperf.utils.files import UnwritableError, claimed

    os.mkfifo(tmp_path / "x.json.lock")
    with pytest.raises(UnwritableError, match="it is a FIFO"), claimed(str(tmp_path / "x.json")):
        pass


def test_resume_without_a_journal_says_it_starts_from_the_beginning(tmp_path, capsys):
    """--resume where no journal is (a first run, a journal removed): it went on as a fresh run and said
    nothing, so a user expecting to continue could not tell."""
    from opperf.cli import main

    output = tmp_path / "r.json"
    argv = ["--ops", "exp", "--runs", "2", "--warmup", "0", "--no-isolation", "--quiet"]
    assert main([*argv, "--output-file", str(output), "--resume"]) == 0
    assert f"note: --resume: no journal at {output}.journal.jsonl; the sweep starts from the beginning" in (
        capsys.readouterr().err
    )


@pytest.mark.slow
def test_resume_by_another_selection_or_build_is_refused_and_the_journal_kept(tmp_path, capsys):
    """A journal resumed with other ``--ops`` would leave its operators out of the report, then be
    removed; one resumed by another build of the framework (another interpreter, an upgrade) would
    mix its measurements under the new build's name. Both are refused, naming what differs."""
    output = tmp_path / "r.json"
    journal = Path(f"{output}.journal.jsonl")
    process = _sweep(output)
    _stop_after(process, journal, operators=2, sig=signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    kept = journal.read_text()
    resumed = [*SWEEP, "--output-file", str(output), "--resume"]

    assert main([*resumed, "--ops", "relu"]) == 2
    message = capsys.readouterr().err
    assert message.startswith("error: cannot resume") and "ops: journal None, now ['relu']" in message
    assert journal.read_text() == kept

    header, *lines = kept.splitlines()
    settings = json.loads(header)
    settings["settings"]["build"]["framework_version"] = "1.8.0"
    journal.write_text("\n".join([json.dumps(settings), *lines]) + "\n")
    assert main(resumed) == 2
    assert "framework_version" in capsys.readouterr().err and journal.exists()


@pytest.mark.parametrize("named", ["journal", "lock"])
def test_an_output_that_names_the_journal_is_refused_before_anything_runs(tmp_path, capsys, named):
    """``--json-file OUT.journal.jsonl`` was written, then removed with the journal: exit 0, no file."""
    output = tmp_path / "r.md"
    path = f"{output}.journal.jsonl" + (".lock" if named == "lock" else "")
    assert main(["--ops", "exp", "--quiet", "--output-file", str(output), "--json-file", path]) == 2
    assert "--json-file" in capsys.readouterr().err
    assert not output.exists() and not Path(path).exists()


def test_a_line_whose_records_say_other_options_than_the_journal_is_damaged(tmp_path):
    """A line edited to float64 records in a float32 sweep's journal was resumed into a report whose
    environment says float32: it is a damaged line, and its operator is measured again."""
    from dataclasses import replace

    path = tmp_path / "j.jsonl"
    settings = RunOptions().validated().settings()
    writer = JournalWriter(str(path), settings, append=False)
    writer.add("exp", [_measurement("exp")])
    other = _measurement("log")
    writer.add(
        "log",
        [replace(other, spec=replace(other.spec, options=replace(other.spec.options, dtype="float64")))],
    )
    writer.close()
    loaded = load_journal(str(path))
    assert list(loaded.finished) == ["exp"] and loaded.damaged == 1
