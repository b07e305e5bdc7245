"""SIGTERM and SIGHUP stop a sweep as Ctrl-C does: the report of what finished, the journal kept, a
message, and the signal's own exit status."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _sweep(output: Path) -> subprocess.Popen:
    command = [sys.executable, str(ROOT / "opperf.py"), "--categories", "unary,rounding", "--runs", "3",
               "--warmup", "0", "--threads", "1", "--quiet", "--output-file", str(output)]  # fmt: skip
    return subprocess.Popen(command, stderr=subprocess.PIPE, text=True)


def _wait_for_operators(journal: Path, count: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if journal.exists() and len(journal.read_text().splitlines()) > count:
            return
        time.sleep(0.1)
    raise AssertionError("the sweep journaled too few operators")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_termination_signal_writes_the_report_and_keeps_the_journal(tmp_path, sig):
    output = tmp_path / "r.json"
    journal = Path(f"{output}.journal.jsonl")
    process = _sweep(output)
    _wait_for_operators(journal, 2, process)
    process.send_signal(sig)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 128 + sig, err
    assert f"interrupted ({sig.name})" in err and "--resume" in err
    document = json.loads(output.read_text())
    assert document["environment"]["interrupted"] is True and document["coverage"]["operators"] >= 2
    assert journal.exists()


@pytest.mark.slow
def test_a_second_interrupt_still_writes_the_report(tmp_path):
    output = tmp_path / "r.json"
    journal = Path(f"{output}.journal.jsonl")
    process = _sweep(output)
    _wait_for_operators(journal, 2, process)
    process.send_signal(signal.SIGINT)
    time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert json.loads(output.read_text())["coverage"]["operators"] >= 2
    assert "before anything was written" not in err
