"""A model's operators, in-model against standalone: which operator dominates the model, and how far
replaying its captured configurations one at a time accounts for the model's time.

Framework-free: the framework's profiler gives ``InModel`` (per operator, per forward pass), a capture
gives the configurations and their call counts, a replay sweep gives each configuration's standalone
median; ``build`` joins them into a ``ModelReport``. In-model and standalone times differ for real
reasons (fusion, caches warm from the previous operator, layout conversions, dispatch): both are
shown, their ratio is a finding, not an error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard, cast

from opperf.results.configs import ConfigsFile
from opperf.results.measurement import BenchmarkSpec, Measurement, Status
from opperf.results.schema import COUNT, OBJECT, RATE, SECONDS, TEXT, Expect
from opperf.utils.stats import summarize
from opperf.utils.words import clipped


@dataclass(frozen=True)
class InModel:
    """What the framework's profiler saw of a model's forward pass, per pass: seconds and calls per
    operator (canonical registry names), the wall time of a profiled pass (the same passes, so the
    operators' share of it is not skewed by the machine's load changing in between), the end-to-end
    time of a pass without the profiler (median), how many passes were profiled, and how."""

    operator_seconds: Mapping[str, float]
    operator_calls: Mapping[str, float]
    profiled_wall_s: float
    end_to_end_s: float
    passes: int
    profiled_by: str


@dataclass(frozen=True)
class OperatorRow:
    """One operator of the model: its distinct configurations, calls per pass, in-model seconds per
    pass, and standalone seconds (each configuration's median times its calls; None unless every one
    of its configurations was measured: a sum over some would read as the operator's time)."""

    op: str
    configurations: int
    calls: int
    in_model_s: float
    in_model_share: float
    standalone_s: float | None
    standalone_share: float | None

    @property
    def ratio(self) -> float | None:
        """Standalone over in-model time: above 1, the operator runs faster inside the model."""
        if self.standalone_s is None or not self.in_model_s:
            return None
        return self.standalone_s / self.in_model_s


@dataclass(frozen=True)
class ConfigurationRow:
    """One captured configuration: its operator, inputs (as the results file writes them), calls per
    pass, standalone median and status."""

    op: str
    inputs: Mapping[str, Any]
    calls: int
    median_s: float | None
    status: str

    @property
    def total_s(self) -> float | None:
        return self.median_s * self.calls if self.median_s is not None else None


@dataclass(frozen=True)
class ModelReport:
    """The model's operator table, its configurations, and the totals they are set against."""

    framework: str
    model: str
    input_shape: tuple[int, ...]
    mode: str
    operators: tuple[OperatorRow, ...]
    configurations: tuple[ConfigurationRow, ...]
    end_to_end_s: float
    profiled_wall_s: float
    profiled_by: str
    captured_by: str

    @property
    def in_model_total_s(self) -> float:
        return sum(row.in_model_s for row in self.operators)

    @property
    def standalone_total_s(self) -> float:
        """The standalone seconds of the operators measured in full (``not_measured`` names the rest)."""
        return sum(row.standalone_s or 0.0 for row in self.operators)

    @property
    def in_model_of_measured_s(self) -> float:
        """The in-model seconds of the same operators as ``standalone_total_s``: what it compares with."""
        return sum(row.in_model_s for row in self.operators if row.standalone_s is not None)

    @property
    def not_measured(self) -> tuple[str, ...]:
        """The captured operators with a configuration the replay did not measure (failed, skipped,
        crashed): they have no standalone time and are out of its total."""
        return tuple(row.op for row in self.operators if row.configurations and row.standalone_s is None)

    @property
    def coverage(self) -> float | None:
        """The share of the profiled passes' wall time the operators account for (the rest: Python,
        dispatch, the calls capture filtered, the profiler's own cost)."""
        return self.in_model_total_s / self.profiled_wall_s if self.profiled_wall_s else None

    def to_json(self) -> dict[str, object]:
        return {
            "framework": self.framework,
            "model": self.model,
            "input_shape": list(self.input_shape),
            "mode": self.mode,
            "end_to_end_s": self.end_to_end_s,
            "profiled_wall_s": self.profiled_wall_s,
            "in_model_total_s": self.in_model_total_s,
            "standalone_total_s": self.standalone_total_s,
            "coverage": self.coverage,
            "profiled_by": self.profiled_by,
            "captured_by": self.captured_by,
            "operators": [
                {
                    "op": r.op,
                    "configurations": r.configurations,
                    "calls": r.calls,
                    "in_model_s": r.in_model_s,
                    "in_model_share": r.in_model_share,
                    "standalone_s": r.standalone_s,
                    "standalone_share": r.standalone_share,
                    "ratio": r.ratio,
                }
                for r in self.operators
            ],
            "configurations": [
                {
                    "op": c.op,
                    "inputs": dict(c.inputs),
                    "calls": c.calls,
                    "median_s": c.median_s,
                    "total_s": c.total_s,
                    "status": c.status,
                }
                for c in self.configurations
            ],
        }


MODEL_REPORT_MARK = "in_model_total_s"
"""What tells ``opperf model --json-file``'s output from a results or diff file (which never hold it):
a model report that lacks another field is then named as one, with the field it lacks."""


def is_model_report(document: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(document, dict) and MODEL_REPORT_MARK in document


class ModelReportError(ValueError):
    """A field of a model report a reader cannot use; the message names it, its value and its kind."""


LIST = Expect(lambda value: isinstance(value, list), "a list")
SHAPE = Expect(
    lambda value: isinstance(value, list)
    and all(isinstance(d, int) and not isinstance(d, bool) for d in value),
    "a list of integers",
)


def from_json(document: Mapping[str, Any]) -> ModelReport:
    """The report ``to_json`` wrote, read back (``opperf report`` and the xlsx writer read it), each
    field checked for its kind (the results schema's checks); ModelReportError naming the first that is
    missing or of another."""
    operators = _field(document, "operators", LIST, "")
    configurations = _field(document, "configurations", LIST, "")
    return ModelReport(
        framework=_field(document, "framework", TEXT, ""),
        model=_field(document, "model", TEXT, ""),
        input_shape=tuple(_field(document, "input_shape", SHAPE, "")),
        mode=_field(document, "mode", TEXT, ""),
        operators=tuple(
            OperatorRow(**_row(operators, index, "operators", OPERATOR_FIELDS))
            for index in range(len(operators))
        ),
        configurations=tuple(
            ConfigurationRow(**_row(configurations, index, "configurations", CONFIGURATION_FIELDS))
            for index in range(len(configurations))
        ),
        end_to_end_s=_field(document, "end_to_end_s", SECONDS, ""),
        profiled_wall_s=_field(document, "profiled_wall_s", SECONDS, ""),
        profiled_by=_field(document, "profiled_by", TEXT, ""),
        captured_by=_field(document, "captured_by", TEXT, ""),
    )


OPERATOR_FIELDS: Mapping[str, Expect] = {
    "op": TEXT,
    "configurations": COUNT,
    "calls": COUNT,
    "in_model_s": SECONDS,
    "in_model_share": RATE,
    "standalone_s": SECONDS.or_null,
    "standalone_share": RATE.or_null,
}
"""An operator row's fields in a model report, with what each holds."""

CONFIGURATION_FIELDS: Mapping[str, Expect] = {
    "op": TEXT,
    "inputs": OBJECT,
    "calls": COUNT,
    "median_s": SECONDS.or_null,
    "status": TEXT,
}
"""A configuration row's fields in a model report, with what each holds."""


def _row(rows: list[Any], index: int, table: str, fields: Mapping[str, Expect]) -> dict[str, Any]:
    """Row ``index`` of the report's list ``table``, each field checked for what it holds."""
    row = _field(rows, index, OBJECT, table)
    return {name: _field(row, name, expect, f"{table}[{index}].") for name, expect in fields.items()}


def _field(block: Any, name: str | int, expect: Expect, where: str) -> Any:
    """``block[name]`` where it holds what ``expect`` says; ModelReportError naming it otherwise."""
    shown = f"{where}[{name}]" if isinstance(name, int) else f"{where}{name}"
    try:
        value = block[name]
    except (KeyError, IndexError):
        raise ModelReportError(f"has no {shown}") from None
    if not expect.check(value):
        raise ModelReportError(f"has {shown} {_brief(value)}, where it takes {expect.words}")
    return value


def _brief(value: object) -> str:
    return clipped(json.dumps(value), 40)


def _key(op: str, inputs: Mapping[str, Any]) -> str:
    """A configuration's identity as text: its operator and its described inputs, in name order."""
    return json.dumps([op, inputs], sort_keys=True)


def _standalone(rows: Sequence[ConfigurationRow], op: str) -> float | None:
    """An operator's standalone seconds per pass: its configurations' medians times calls; None where
    it has none or one of them was not measured."""
    totals = [r.total_s for r in rows if r.op == op]
    return sum(cast(float, t) for t in totals) if totals and None not in totals else None


def build(configs: ConfigsFile, in_model: InModel, measurements: Sequence[Measurement]) -> ModelReport:
    """Join a capture, the in-model profile and the replay's measurements into the report."""
    measured_by_key = {_key(m.spec.op, m.spec.describe_inputs()): m for m in measurements}
    rows = []
    for c in configs.configurations:
        inputs = BenchmarkSpec("", c.op, c.inputs).describe_inputs()
        measured = measured_by_key.get(_key(c.op, inputs))
        rows.append(
            ConfigurationRow(
                op=c.op,
                inputs=inputs,
                calls=c.count,
                median_s=(
                    summarize(measured.forward).median
                    if measured is not None and measured.status is Status.OK and measured.forward
                    else None
                ),
                status=measured.status.value if measured is not None else "not measured",
            )
        )
    operators = list(dict.fromkeys([*(r.op for r in rows), *in_model.operator_seconds]))
    standalone = {op: _standalone(rows, op) for op in operators}
    in_model_total = sum(in_model.operator_seconds.values()) or 1.0
    standalone_total = sum(v for v in standalone.values() if v is not None) or 1.0
    table = [
        OperatorRow(
            op=op,
            configurations=sum(r.op == op for r in rows),
            calls=sum(r.calls for r in rows if r.op == op) or round(in_model.operator_calls.get(op, 0)),
            in_model_s=in_model.operator_seconds.get(op, 0.0),
            in_model_share=in_model.operator_seconds.get(op, 0.0) / in_model_total,
            standalone_s=standalone[op],
            standalone_share=(
                cast(float, standalone[op]) / standalone_total if standalone[op] is not None else None
            ),
        )
        for op in operators
    ]
    table.sort(key=lambda row: row.in_model_s, reverse=True)
    return ModelReport(
        framework=configs.header.framework,
        model=configs.header.model,
        input_shape=configs.header.input_shape,
        mode=configs.header.mode,
        operators=tuple(table),
        configurations=tuple(sorted(rows, key=lambda r: r.total_s or 0.0, reverse=True)),
        end_to_end_s=in_model.end_to_end_s,
        profiled_wall_s=in_model.profiled_wall_s,
        profiled_by=in_model.profiled_by,
        captured_by=configs.header.captured_by,
    )
