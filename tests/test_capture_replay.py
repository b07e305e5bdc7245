"""Captured configurations replayed through the normal sweep, and ``opperf model``'s report."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opperf.cli import main

FAST = ["--warmup", "1", "--runs", "2", "--no-backward", "--threads", "1", "--quiet"]


def _captured(path) -> list[tuple[str, str]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted((c["op"], json.dumps(c["inputs"], sort_keys=True)) for c in lines[1:])


def _recorded(path) -> list[tuple[str, str]]:
    document = json.loads(path.read_text())
    assert {r["status"] for r in document["results"]} == {"ok"}
    return sorted((r["op"], json.dumps(r["inputs"], sort_keys=True)) for r in document["results"])


@pytest.mark.parametrize(
    ("framework", "model", "shape"),
    [("mxnet", "resnet18_v1", "1,3,16,16"), ("torch", "transformer", "1,4,16")],
)
def test_replay_round_trip(tmp_path, framework, model, shape):
    """capture -> sweep --configs -> the records' inputs are exactly the captured ones."""
    captured, results = tmp_path / "c.jsonl", tmp_path / "r.json"
    assert (
        main(
            [
                "capture",
                "--framework",
                framework,
                "--model",
                model,
                "--input-shape",
                shape,
                "--output",
                str(captured),
            ]
        )
        == 0
    )
    argv = [
        "sweep",
        "--framework",
        framework,
        "--configs",
        str(captured),
        "--output-file",
        str(results),
        *FAST,
    ]
    assert main(argv) == 0
    assert _recorded(results) == _captured(captured)


@pytest.mark.slow
def test_results_file_replays_as_configs_and_samples_are_seeded(tmp_path):
    captured, first, again = tmp_path / "c.jsonl", tmp_path / "r1.json", tmp_path / "r2.json"
    capture = ["capture", "--framework", "torch", "--model", "resnet18", "--input-shape", "1,3,16,16"]
    assert main([*capture, "--output", str(captured)]) == 0
    sweep = ["sweep", "--framework", "torch", *FAST]
    assert (
        main([*sweep, "--configs", str(captured), "--configs-sample", "5", "--output-file", str(first)]) == 0
    )
    sampled = _recorded(first)
    assert len(sampled) == 5 and set(sampled) <= set(_captured(captured))
    assert main([*sweep, "--configs", str(first), "--output-file", str(again)]) == 0
    assert _recorded(again) == sampled


@pytest.mark.slow
def test_model_report_shares_and_totals(tmp_path):
    markdown, report = tmp_path / "m.md", tmp_path / "m.json"
    argv = [
        "model",
        "--framework",
        "torch",
        "--model",
        "resnet18",
        "--input-shape",
        "1,3,32,32",
        "--passes",
        "3",
    ]
    assert main([*argv, "--output-file", str(markdown), "--json-file", str(report)]) == 0
    document = json.loads(report.read_text())
    operators = document["operators"]
    assert sum(o["in_model_share"] for o in operators) == pytest.approx(1.0)
    assert sum(o["standalone_share"] for o in operators) == pytest.approx(1.0)
    assert sum(o["calls"] for o in operators) == 68
    assert sum(o["configurations"] for o in operators) == 28
    assert document["in_model_total_s"] == pytest.approx(sum(o["in_model_s"] for o in operators))
    assert document["in_model_total_s"] > 0 and document["end_to_end_s"] > 0
    assert all(c["status"] == "ok" for c in document["configurations"])
    text = markdown.read_text()
    assert (
        "| convolution" in text
        and "of the profiled passes' end-to-end time" in text
        and "x their in-model total" in text
    )


def _workers(pid: int) -> list[int]:
    """The live benchmark workers ``pid`` started."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                command = Path(f"/proc/{entry}/cmdline").read_bytes()
                if int(fields[1]) == pid and fields[0] != "Z" and b"opperf.measure.worker" in command:
                    found.append(int(entry))
    return found


@pytest.mark.slow
def test_ctrl_c_while_a_model_replays_writes_no_report_and_says_so(tmp_path):
    """The report of a replay cut short would leave operators out of every share: none is written,
    and the exit status is the signal's (130), not 0."""
    markdown = tmp_path / "m.md"
    script = Path(__file__).resolve().parent.parent / "opperf.py"
    argv = ["model", "--framework", "mxnet", "--model", "resnet18_v1", "--input-shape", "1,3,32,32"]
    process = subprocess.Popen(
        [sys.executable, str(script), *argv, "--passes", "2", "--output-file", str(markdown)],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not _workers(process.pid) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # a worker runs only while the model's configurations replay
    time.sleep(0.5)  # into the replay (the worker's first request measures the harness itself)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert err.startswith("error: interrupted (SIGINT) ") and err.count("\n") == 1, err
    assert "after replaying" in err or "before anything was written" in err
    assert not markdown.exists()
