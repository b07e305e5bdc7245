"""Refused before anything runs, or carried on with a note: thread counts far beyond the CPUs, a malformed
OPPERF_MEMORY_LIMIT, an unwritable peaks cache; what the report header, the progress bar and a stopping
sweep say."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opperf import OpperfError, RunOptions
from opperf.cli import main
from opperf.cli.progress import SweepBar
from opperf.measure.roofline.peaks import MachinePeaks, load_peaks
from opperf.results.options import OVERSUBSCRIPTION_LIMIT
from opperf.sweep.run import SweepConfig, run_sweep
from opperf.utils.affinity import available_cpus

ROOT = Path(__file__).resolve().parents[1]
USABLE = len(available_cpus())
TOO_MANY = OVERSUBSCRIPTION_LIMIT * USABLE + 1
QUICK = ["--runs", "1", "--warmup", "0", "--no-backward", "--threads", "1"]


@pytest.mark.parametrize(
    "threads", [str(TOO_MANY), f"1,{TOO_MANY}", str(TOO_MANY * 100)], ids=["just-over", "in-a-list", "far"]
)
def test_threads_far_beyond_the_usable_cpus_are_refused_naming_them(threads, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--ops", "exp", "--threads", threads, "--output-file", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and f"the {USABLE} CPUs this process may use" in err
    assert not list(tmp_path.iterdir())


def test_threads_far_beyond_the_cpus_are_refused_by_the_api_too():
    with pytest.raises(OpperfError, match=f"{TOO_MANY} threads is far beyond"):
        RunOptions(threads=TOO_MANY).validated()
    assert (
        RunOptions(threads=OVERSUBSCRIPTION_LIMIT * USABLE).validated().threads
        == OVERSUBSCRIPTION_LIMIT * USABLE
    )


@pytest.mark.parametrize("value", ["banana", "0", "-1", "4XB", "1e9", "12 parsecs"])
def test_a_malformed_memory_limit_is_refused_before_the_journal_opens(value, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPPERF_MEMORY_LIMIT", value)
    output = tmp_path / "r.json"
    assert main(["--ops", "exp", *QUICK, "--output-file", str(output)]) == 2
    assert f"OPPERF_MEMORY_LIMIT={value!r} is not a memory size" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # neither the journal nor a report


def _peaks() -> MachinePeaks:
    return MachinePeaks(1e10, 1e11, "2026-01-01T00:00:00+00:00", "given by the test")


@pytest.mark.parametrize("kind", ["under-a-file", "cache-file-is-a-folder", "read-only-filesystem"])
def test_an_unwritable_peaks_cache_is_noted_once_and_the_peaks_are_used(kind, tmp_path, capsys):
    if kind == "under-a-file":
        (tmp_path / "file").write_text("")
        cache = tmp_path / "file" / "opperf"
    elif kind == "cache-file-is-a-folder":
        cache = tmp_path / "opperf"
        (cache / "peaks.json").mkdir(parents=True)
        (cache / "peaks.json" / "keep").write_text("")
    else:
        cache = Path("/proc/opperf-test-cache")
    first = load_peaks(cache, calibrate=_peaks)
    second = load_peaks(cache, calibrate=_peaks)
    assert first == second == _peaks()
    err = capsys.readouterr().err
    assert err.count("note: cannot write the machine-peaks cache") == 1 and "XDG_CACHE_HOME" in err


@pytest.mark.slow
def test_a_sweep_with_an_unwritable_cache_home_finishes(tmp_path):
    (tmp_path / "file").write_text("")
    output = tmp_path / "r.json"
    command = [sys.executable, str(ROOT / "opperf.py"), "--ops", "exp", *QUICK, "--output-file", str(output)]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        env={"XDG_CACHE_HOME": str(tmp_path / "file"), "PATH": ""},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "note: cannot write the machine-peaks cache" in done.stderr and "Traceback" not in done.stderr
    assert json.loads(output.read_text())["environment"]["machine_peaks"]["bandwidth_bytes_per_s"] > 0


def test_the_markdown_header_leaves_out_settings_that_do_not_apply(tmp_path):
    output = tmp_path / "r.md"
    assert main(["--ops", "exp", *QUICK, "--no-isolation", "--output-file", str(output)]) == 0
    header = output.read_text().split("\n## ")[0]
    assert "None" not in header and "{" not in header
    assert "- **framework_settings**: engine=" in header and "- **threads**: 1" in header
    assert "warmup" in header  # fixed counts given: shown


def test_progress_names_the_operator_running_then_the_one_finished(capsys):
    calls = []
    config = SweepConfig(
        options=RunOptions(runs=1, warmup=0, run_backward=False), ops=("exp", "log"), isolate=False
    )
    run_sweep(
        config, progress=lambda done, total, op, results: calls.append((done, total, op, tuple(results)))
    )
    assert [(done, op.name, bool(results)) for done, _, op, results in calls] == [
        (0, "exp", False),
        (1, "exp", True),
        (1, "log", False),
        (2, "log", True),
    ]
    bar = SweepBar()
    labels = []
    for done, total, op, results in calls:
        bar(done, total, op, results)
        labels.append(bar.label)
    bar.close()
    assert labels == ["running exp", "last: exp ok", "running log; last: exp ok", "last: log ok"]


@pytest.mark.slow
def test_ctrl_c_says_what_it_waits_for_and_more_ctrl_c_still_write_the_report(tmp_path):
    output = tmp_path / "r.json"
    journal = Path(f"{output}.journal.jsonl")
    # exp finishes in a moment; Pooling's configurations take seconds, so the stop finds it in flight.
    command = [sys.executable, str(ROOT / "opperf.py"), "--ops", "exp,Pooling,Convolution", "--threads", "1",
               "--quiet", "--output-file", str(output)]  # fmt: skip
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while (
        not (journal.exists() and len(journal.read_text().splitlines()) > 1) and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    while process.poll() is None and time.monotonic() < deadline:  # Ctrl-C held down
        process.send_signal(signal.SIGINT)
        time.sleep(0.02)
    err = process.stderr.read()
    # 130, or killed by SIGINT itself when one lands while the interpreter shuts down, after the report
    # is written (Python restores the default handler then): a shell reads 130 either way.
    assert process.returncode in (130, -signal.SIGINT), err
    assert "Traceback" not in err and "before anything was written" not in err
    waiting = next(line for line in err.splitlines() if line.startswith("stopping: "))
    assert "is abandoned; waiting up to 5 s for its worker to exit" in waiting
    assert err.count("already stopping") == 1
    document = json.loads(output.read_text())
    assert document["environment"]["interrupted"] is True and document["coverage"]["operators"] >= 1
    abandoned = waiting.split()[1]
    assert abandoned in ("Pooling", "Convolution")
    assert abandoned not in {record["op"] for record in document["results"]}
