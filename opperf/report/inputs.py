"""The files ``opperf report`` reads, told apart by their fields: results files (``schema_version``,
a sweep), diff files (``diff_format_version``, from ``opperf diff``) and model reports (``opperf
model --json-file``: ``in_model_total_s``, ``operators``, ``configurations``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from opperf.report.diff_rows import DIFF_FORMAT_KEY, DiffFile, diff_file
from opperf.results.document import SchemaError, check_document, is_ab, read_json
from opperf.results.load import records_by_key
from opperf.results.model_report import ModelReport, ModelReportError, from_json, is_model_report
from opperf.results.record import Record
from opperf.results.rows import ResultsFile, results_file
from opperf.utils.errors import OpperfError

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
    def rows(self) -> tuple[Record, ...]:
        return tuple(row for file in self.results for row in file.rows)


def read_inputs(paths: list[str]) -> ReportInputs:
    """Each path read and sorted into results, diffs or model reports; an A/B file (``opperf ab``)
    becomes the diff of its two sides, as ``opperf diff AB.json`` gives it. OpperfError naming the
    file otherwise."""
    results, diffs, models = [], [], []
    for path in paths:
        document = read_json(path, _FIX)
        if isinstance(document, dict) and DIFF_FORMAT_KEY in document:
            diffs.append(diff_file(document, path))
            continue
        if is_model_report(document):
            try:
                models.append(ModelFile(path, from_json(document)))
            except ModelReportError as error:
                raise OpperfError(f"{path}: a model report that {error}; {_FIX}") from None
            continue
        try:
            document = check_document(document)
        except SchemaError as error:
            raise OpperfError(f"{path}: {error}; {_FIX}") from None
        if is_ab(document):
            diffs.append(_ab_view(path))
        else:
            records_by_key(
                path, cast("list[object]", document["results"])
            )  # read as diff reads it: no repeats
            results.append(results_file(document, path))
    return ReportInputs(tuple(results), tuple(diffs), tuple(models))


def _ab_view(path: str) -> DiffFile:
    """An A/B file shown as the diff of its sides, at the diff's default threshold and FDR level."""
    from opperf.results.load import read_ab
    from opperf.verdicts.decide import DEFAULT_ALPHA, DEFAULT_THRESHOLD
    from opperf.verdicts.diff import diff_ab
    from opperf.verdicts.document import diff_document

    verdicts = diff_ab(read_ab(path), threshold=DEFAULT_THRESHOLD, alpha=DEFAULT_ALPHA)
    return diff_file(diff_document(verdicts), path)
