"""Optional dependencies of the report writers: imported on use, and named with the extra that
installs them when they are missing (an ``error:`` line with the fix, exit 2, never a traceback)."""

from __future__ import annotations

import importlib
from types import ModuleType

from opperf.utils.errors import OpperfError


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """``module`` imported, or OpperfError naming the extra that installs it: ``require("openpyxl",
    "xlsx", "--output-format xlsx")``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise OpperfError(
            f"{purpose} needs {module.split('.')[0]}, which is not installed; "
            f"install it with: pip install 'opperf[{extra}]'"
        ) from None
