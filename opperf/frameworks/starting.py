"""The child that ``opperf.frameworks.start_check`` runs: import a framework and start it (``Backend.start``).

Run as ``python -m opperf.frameworks.starting FRAMEWORK``: it exits 0 where the framework starts, else
writes the error line opperf gives for it as its last line of output and exits ``start_check.FAILED``.
"""

from __future__ import annotations

import sys

from opperf.frameworks import imported_backend, not_started
from opperf.frameworks.start_check import FAILED
from opperf.utils.errors import OpperfError


def _start(framework: str) -> int:
    """Import ``framework`` and start it; where it raises, the error line opperf gives for it on stdout,
    and ``FAILED``."""
    try:
        imported_backend(framework).start()
    except OpperfError as error:  # refused as it was imported (JAX_ENABLE_X64=banana)
        print(error)
        return FAILED
    except Exception as error:
        print(not_started(framework, error))
        return FAILED
    return 0


if __name__ == "__main__":
    sys.exit(_start(sys.argv[1]))
