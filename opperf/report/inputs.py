"""The files ``opperf report`` reads, told apart by their version field: results files
(``schema_version``, a sweep) and diff files (``diff_format_version``, from ``opperf diff``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from opperf.errors import OpperfError
from opperf.report.diff_rows import DIFF_FORMAT_KEY, DiffFile, diff_file
from opperf.report.document import SchemaError, check_document
from opperf.report.rows import ResultRow, ResultsFile, results_file

_FIX = (
    "pass JSON results files (`opperf --output-format json`) "
    "or diff files (`opperf diff --output-format json`)"
)


@dataclass(frozen=True)
class ReportInputs:
    """What one report shows: results files and diff files, in the order given."""

    results: tuple[ResultsFile, ...]
    diffs: tuple[DiffFile, ...]

    @property
    def rows(self) -> tuple[ResultRow, ...]:
        return tuple(row for file in self.results for row in file.rows)


def read_inputs(paths: list[str]) -> ReportInputs:
    """Each path read and sorted into results or diffs; OpperfError naming the file otherwise."""
    results, diffs = [], []
    for path in paths:
        document = _json(path)
        if isinstance(document, dict) and DIFF_FORMAT_KEY in document:
            diffs.append(diff_file(document, path))
            continue
        try:
            results.append(results_file(check_document(document), path))
        except SchemaError as error:
            raise OpperfError(f"{path}: {error}; {_FIX}") from None
        except (KeyError, TypeError, ValueError) as error:
            raise OpperfError(f"{path}: a record lacks {error}; {_FIX}") from None
    return ReportInputs(tuple(results), tuple(diffs))


def _json(path: str) -> object:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise OpperfError(f"{path}: no such file; {_FIX}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise OpperfError(f"{path}: not a readable JSON file ({error}); {_FIX}") from None
