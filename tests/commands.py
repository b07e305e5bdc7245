"""Running opperf's command line as users do: a separate process, in a folder of the test's own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_opperf(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python opperf.py ARGUMENTS`` in ``cwd``, its output captured as text, its status not checked."""
    return subprocess.run(
        [sys.executable, str(ROOT / "opperf.py"), *arguments],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )
