"""The sweep journal: resume after a real SIGKILL, torn lines, refused settings, Ctrl-C."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opperf.checkpoint import JournalWriter, check_settings, load_journal
from opperf.errors import OpperfError
from opperf.results import BenchmarkSpec, Measurement, Status, TensorSpec, freeze_inputs

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


def _measurement(op):
    spec = BenchmarkSpec("mx.nd", op, freeze_inputs({"data": TensorSpec((2, 2))}), category="unary")
    return Measurement(spec, Status.OK, forward=(1e-3, 2e-3), memory_peak_bytes=16)


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
    from opperf.report.document import measurement_from_record, record
    from opperf.results import Alias

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
