"""A stop that arrives while opperf is still starting (imports, reading flags, starting the first
worker) ends it with a line saying so and the signal's shell status: never a KeyboardInterrupt
traceback, never a silent death by SIGTERM (status -15)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ["--ops", "exp", "--runs", "2", "--warmup", "0", "--threads", "1", "--quiet"]


@pytest.mark.parametrize(
    ("delay", "sig"),
    [
        (0.2, signal.SIGINT),  # the interpreter is importing opperf
        (0.2, signal.SIGTERM),
        (0.4, signal.SIGHUP),
        (0.4, signal.SIGTERM),
        (1.5, signal.SIGINT),  # reading flags, importing the framework, starting the worker
        (1.5, signal.SIGTERM),
    ],
)
def test_a_stop_while_starting_exits_with_its_status_and_a_line(tmp_path, delay, sig):
    command = [sys.executable, str(ROOT / "opperf.py"), *SWEEP, "--output-file", str(tmp_path / "r.json")]
    process = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    time.sleep(delay)
    process.send_signal(sig)
    out, err = process.communicate(timeout=120)
    if process.returncode == 0:
        # Finished first, or (seen once in ~30 runs on a loaded machine) the stop was raised inside a
        # finalizer, where Python reports and drops it: a known limit of stopping by exception.
        pytest.skip(f"the sweep ran to its end despite {sig.name} at {delay} s")
    if "init_import_site" in err:  # a loaded machine: the interpreter had not reached opperf yet
        pytest.skip(f"the interpreter was still starting itself after {delay} s")
    assert process.returncode == 128 + sig, err
    assert "Traceback" not in out + err and f"interrupted ({sig.name})" in err


@pytest.mark.parametrize("command", ["list", "list --framework torch", "explain Convolution"])
def test_a_reader_that_leaves_early_gets_no_traceback(command):
    # ``| head -1`` closes the pipe after one line; opperf stops quietly with SIGPIPE's status (or 0,
    # where its whole output fitted in the pipe before head left).
    line = f"{sys.executable} {ROOT / 'opperf.py'} {command} | head -1; exit ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=120, check=False)
    assert done.stderr == "" and len(done.stdout.splitlines()) == 1
    assert done.returncode in (0, 128 + signal.SIGPIPE)
