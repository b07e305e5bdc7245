"""A real headless browser for the report tests; tests that need one skip, saying why, without it."""

from __future__ import annotations

import shutil
import subprocess

import pytest

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")

needs_browser = pytest.mark.skipif(BROWSER is None, reason="no Chromium installed (apt-get install chromium)")


def chromium(url: str, *flags: str) -> subprocess.CompletedProcess:
    """Headless Chromium on ``url`` with ``flags`` (``--dump-dom``, ``--screenshot=...``), its console
    on stderr."""
    return subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0", *flags, url],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
