"""The files ``opperf report`` reads, told apart by their fields: results files (``schema_version``,
a sweep), diff files (``diff_format_version``, from ``opperf diff``) and model reports (``opperf
model --json-file``: ``in_model_total_s``, ``operators``, ``configurations``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from opperf.configs import FORMAT as CONFIGS_FORMAT
from opperf.errors import OpperfError
from opperf.model_report import ModelReport, from_json, is_model_report
from opperf.report.diff_rows import DIFF_FORMAT_KEY, DiffFile, diff_file
from opperf.report.document import SchemaError, check_document
from opperf.report.rows import ResultRow, ResultsFile, results_file

_FIX = (
    "pass JSON results files (`opperf --output-format json`), diff files "
    "(`opperf diff --output-format json`) or model reports (`opperf model --json-file`)"
)


@dataclass(frozen=True)
class ModelFile:
    """One model report (``opperf model --json-file``) and the path it was read from."""

    path: str
    report: ModelReport


@dataclass(frozen=True)
class ReportInputs:
    """What one report shows: results files, diff files and model reports, in the order given."""

    results: tuple[ResultsFile, ...]
    diffs: tuple[DiffFile, ...]
    models: tuple[ModelFile, ...] = ()

    @property
    def rows(self) -> tuple[ResultRow, ...]:
        return tuple(row for file in self.results for row in file.rows)


def read_inputs(paths: list[str]) -> ReportInputs:
    """Each path read and sorted into results or diffs; OpperfError naming the file otherwise."""
    results, diffs, models = [], [], []
    for path in paths:
        document = _json(path)
        if isinstance(document, dict) and DIFF_FORMAT_KEY in document:
            diffs.append(diff_file(document, path))
            continue
        if is_model_report(document):
            try:
                models.append(ModelFile(path, from_json(document)))
            except (KeyError, TypeError, ValueError) as error:
                raise OpperfError(f"{path}: a model report that lacks {error}; {_FIX}") from None
            continue
        try:
            results.append(results_file(check_document(document), path))
        except SchemaError as error:
            raise OpperfError(f"{path}: {error}; {_FIX}") from None
        except (KeyError, TypeError, ValueError) as error:
            raise OpperfError(f"{path}: a record lacks {error}; {_FIX}") from None
    return ReportInputs(tuple(results), tuple(diffs), tuple(models))


def _json(path: str) -> object:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise OpperfError(f"{path}: no such file; {_FIX}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise OpperfError(f"{path}: not a readable JSON file ({error}); {_FIX}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        if _configs_header(text):
            raise OpperfError(
                f"{path}: a configs file (`opperf capture`), which holds configurations, not timings; "
                f"measure them with `opperf sweep --configs {path} --output-file results.json` and "
                "report that file"
            ) from None
        raise OpperfError(f"{path}: not a readable JSON file ({error}); {_FIX}") from None


def _configs_header(text: str) -> bool:
    """Whether ``text``'s first line is a configs file's header (JSON Lines, ``opperf.configs``)."""
    try:
        header = json.loads(text.split("\n", 1)[0])
    except json.JSONDecodeError:
        return False
    return isinstance(header, dict) and header.get("format") == CONFIGS_FORMAT
