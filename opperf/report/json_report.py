"""JSON rendering of the results document."""

from __future__ import annotations

import json
from typing import Any

from opperf.results.document import check_document


def render_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=1, sort_keys=False, allow_nan=False) + "\n"


def load_json(text: str) -> dict[str, object]:
    """Parse a results file, refusing versions this opperf does not know."""
    return check_document(json.loads(text))
