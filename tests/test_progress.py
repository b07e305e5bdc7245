"""Progress on a terminal: shown where stderr is a terminal (a real pseudo-terminal here), never
under ``--quiet`` or in a pipe, and cleared before the closing summary."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from opperf.cli import main
from opperf.cli.progress import Stages

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data" / "verdicts"


def _on_a_terminal(command: list[str], cwd: Path) -> tuple[int, str]:
    """Run ``command`` with its stderr on a pseudo-terminal; its exit status and what it wrote there."""
    leader, follower = os.openpty()
    process = subprocess.Popen(
        command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=follower
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return process.wait(timeout=60), b"".join(chunks).decode(errors="replace")


@pytest.fixture
def history(tmp_path: Path) -> Path:
    db = tmp_path / "history.sqlite"
    for name in ("mxnet_run1.json", "mxnet_run2.json"):
        assert main(["history", "add", str(DATA / name), "--db", str(db)]) == 0
    return db


@pytest.mark.parametrize("quiet", [False, True])
def test_publish_shows_its_files_on_a_terminal_unless_quiet(tmp_path, history, quiet):
    command = [sys.executable, str(ROOT / "opperf.py"), "publish", "--db", str(history), "--out", "site"]
    status, shown = _on_a_terminal([*command, *(["--quiet"] if quiet else [])], tmp_path)
    assert status == 0 and (tmp_path / "site" / "index.html").exists(), shown
    assert ("publish:" in shown and " files" in shown) != quiet, shown
    after_the_bar = shown.replace("\r\n", "\n").rsplit("\r", 1)[-1]
    assert after_the_bar.startswith("dashboard: site/index.html"), shown


def test_stages_replace_each_other_and_clear_the_line(capsys):
    stages = Stages("model", shown=True)
    stages("loading resnet18")
    stages("profiling 10 passes of resnet18")
    stages.close()
    written = capsys.readouterr().err
    assert written.count("\r\x1b[K") == 3 and written.endswith("\r\x1b[K")
    assert (
        "model: loading resnet18 ..." in written and "model: profiling 10 passes of resnet18 ..." in written
    )
    hidden = Stages("model", shown=False)
    hidden("loading resnet18")
    hidden.close()
    assert capsys.readouterr().err == ""


def test_capture_names_its_stages_on_a_terminal_and_clears_them(tmp_path):
    """A user's model (``module:callable``, imported from the working directory as a user runs it)."""
    command = [sys.executable, str(ROOT / "opperf.py"), "capture", "--framework", "torch", "--model",
               "tests.tiny_user_model:tiny", "--output-file", str(tmp_path / "c.jsonl")]  # fmt: skip
    status, shown = _on_a_terminal(command, ROOT)
    assert status == 0, shown
    assert "capture: loading tests.tiny_user_model:tiny ..." in shown, shown
    assert "capture: running tests.tiny_user_model:tiny once (inference), recording its operators" in shown
    after_the_line = shown.replace("\r\n", "\n").rsplit("\r\x1b[K", 1)[-1]
    assert after_the_line.endswith(f"written to {tmp_path / 'c.jsonl'}\n"), shown
