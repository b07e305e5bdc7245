"""Stand-in interpreters for the tests of a worker's start-up: shell scripts that run as ``python``."""

import sys
from pathlib import Path


def script(path: Path, body: str) -> str:
    """``path`` made an executable shell script running ``body``; its path, for ``--new-python`` or
    ``OPPERF_<NAME>_PYTHON``."""
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def without_site_packages(path: Path) -> str:
    """This interpreter started without its site-packages (``-S``): a Python that lacks numpy."""
    return script(path, f'exec {sys.executable} -S "$@"')
