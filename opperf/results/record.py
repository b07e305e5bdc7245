"""One record of a results file, typed once: what every reader compares, judges and shows.

``read_record`` turns a record (checked by the schema where its file was read) into a ``Record``: its
row key (``opperf.results.key``), status and reason, per phase the median of its samples with the
median's 95% interval (computed from the raw samples, as ``diff`` and ``history`` judge them), and what
reports show of it (function, inputs as text, memory, doubt flags, roofline, stage figures, tags).
``diff``, ``ab`` and ``history`` read runs of them (``opperf.results.load``); the HTML and xlsx reports
and comparisons read files of them (``opperf.results.rows``); the Markdown, CSV and HUD writers read
a document's. Settings other helpers add to records
(``threads``, ``stage``, ``compile_s``, ``stage_check``, ``tags``) are read where present; a long-tail
record's tags come from the catalogue (``opperf.operators.longtail``) where it carries none.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from opperf.measure.stages import StageCheck
from opperf.operators import longtail
from opperf.results.inputs import describe_inputs
from opperf.results.key import Key, record_key
from opperf.results.measurement import SEVERITY
from opperf.utils.errors import OpperfError
from opperf.utils.load import BUSY_THRESHOLD
from opperf.utils.stats import summarize

PHASES = ("forward", "backward")
_REQUIRED = ("framework", "namespace", "op", "inputs", "status")
FIX = "pass JSON result files written by `opperf --output-format json` or `--json-file`"
"""What to do about a results file opperf cannot read, for the messages that name one."""


@dataclass(frozen=True)
class Phase:
    """One phase of one record: the median of its samples and the median's 95% interval (seconds),
    whether the samples were noisy (IQR over 10% of the median) and their IQR over the median, the
    fastest sample (``fastest``; None: the median stands in), which a paired round of an A/B job
    compares, the timer's tick where the samples show one (``tick``: 1 us for MXNet's profiler; None
    when all samples are equal or they are not whole numbers of their smallest gap), and the samples."""

    median: float
    low: float
    high: float
    noisy: bool
    fastest: float | None = None
    tick: float | None = None
    iqr_ratio: float | None = None
    samples: tuple[float, ...] = ()

    @property
    def paired_figure(self) -> float:
        """What a paired round compares: its fastest pass, or the median where there is none (or
        it is 0). Other processes only ever add time to a pass, so a round's fastest pass carries
        the least of the load it met; measured here, ratios of rounds' fastest passes found more of
        a 10% slowdown than ratios of their medians (32 against 25 of 43 rows, and 50 against 40
        of 58) with no more false calls (docs/diff-and-ab.md, Interleaved A/B)."""
        return self.fastest if self.fastest is not None and self.fastest > 0 else self.median

    @property
    def relative_precision(self) -> float:
        return (self.high - self.low) / (2 * self.median) if self.median > 0 else float("inf")


@dataclass(frozen=True)
class Tensor:
    """A tensor input as reports show it: its shape, and whether it is a strided view (``--layout``)."""

    shape: tuple[int, ...]
    strided: bool = False

    @property
    def elements(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class Record:
    """One record: its row key, status, reason and measured phases; what the doubt flags a verdict
    weighs come from (``imprecise``, ``busy``); and what reports show of it, with the file it came
    from (``source``)."""

    key: Key
    status: str
    reason: str | None
    phases: Mapping[str, Phase]
    met_target: bool | None = None
    """Whether sampling met its precision target (None: the plan had none, or it did not sample)."""
    competing_load: float | None = None
    """Cores other processes used while it was measured."""
    source: str = ""
    function: str = ""
    category: str = "misc"
    inputs: str = ""
    """The inputs as reports show them (``opperf.results.inputs``); the key holds them as JSON."""
    tensors: tuple[Tensor, ...] = ()
    """The tensor inputs in argument order, a list's members in turn."""
    memory_bytes: int | None = None
    flags: tuple[str, ...] = ()
    flops: float | None = None
    bytes_moved: float | None = None
    gflop_per_s: float | None = None
    gb_per_s: float | None = None
    of_roof: float | None = None
    bound: str | None = None
    compile_s: float | None = None
    stage_check: StageCheck | None = None
    backward_reason: str | None = None
    tags: tuple[str, ...] = field(default=())
    timer: str | None = None
    """What timed it: ``device``, ``profiler`` or ``host`` on a GPU; None where the file does not say."""
    host_medians: Mapping[str, float] = field(default_factory=dict)
    """Per phase, the median of synchronised host calls beside a GPU's device time."""
    warmup_runs: int | None = None
    stop_reason: str | None = None

    @property
    def imprecise(self) -> bool:
        """Sampling stopped short of its precision target."""
        return self.met_target is False

    @property
    def busy(self) -> bool:
        """Other processes used more than a quarter of a core while it was measured."""
        return self.competing_load is not None and self.competing_load > BUSY_THRESHOLD

    @property
    def framework(self) -> str:
        return self.key.framework

    @property
    def profiler(self) -> str:
        return str(self.key.profiler)

    @property
    def namespace(self) -> str:
        return self.key.namespace

    @property
    def op(self) -> str:
        return self.key.op

    @property
    def dtype(self) -> str | None:
        return cast("str | None", self.key.dtype)

    @property
    def threads(self) -> int | None:
        return cast("int | None", self.key.threads)

    @property
    def stage(self) -> str:
        return self.key.stage

    @property
    def variant(self) -> str:
        return self.key.variant

    @property
    def forward(self) -> Phase | None:
        return self.phases.get("forward")

    @property
    def backward(self) -> Phase | None:
        return self.phases.get("backward")

    @property
    def forward_median(self) -> float | None:
        """The forward median in seconds; None where the forward pass was not measured."""
        return self.forward.median if self.forward else None

    @property
    def run_form(self) -> str:
        """The stage, with the fused variant where there is one: ``eager``, ``graph``,
        ``fused: onednn``."""
        return f"{self.stage}: {self.variant}" if self.variant else self.stage

    @property
    def tensor_shapes(self) -> tuple[tuple[int, ...], ...]:
        """The tensor inputs' shapes in argument order (what a comparison across namespaces matches
        on, since argument names differ: ``lhs`` in mx.nd is ``x1`` in mx.np and ``input`` in torch)."""
        return tuple(tensor.shape for tensor in self.tensors)

    @property
    def stage_agrees(self) -> bool | None:
        """Whether the stage's outputs agreed with eager's; None where they were not compared."""
        return self.stage_check.agrees if self.stage_check else None

    @property
    def intensity(self) -> float | None:
        """Arithmetic intensity, FLOP per byte moved (None when either is not counted)."""
        if not self.flops or not self.bytes_moved:
            return None
        return self.flops / self.bytes_moved

    @property
    def short_function(self) -> str:
        """The function's name without its namespace: ``add`` for ``mx.np.add``."""
        prefix = f"{self.namespace}."
        return self.function[len(prefix) :] if self.function.startswith(prefix) else self.function

    @property
    def label(self) -> str:
        """``function(inputs)``, then the framework where the name does not say it (long-tail
        operators are ``opperf.operators.longtail.*`` in both), a stage other than eager and a fused
        variant."""
        notes = [self.framework] if not self.namespace.startswith(("mx", self.framework)) else []
        notes += [self.stage] if self.stage != "eager" else []
        notes += [self.variant] if self.variant else []
        return f"{self.function}({self.inputs})" + (f" [{', '.join(notes)}]" if notes else "")

    def setting_free_key(self, setting: str) -> tuple[object, ...]:
        """What identifies this configuration apart from ``setting`` (threads, stage): rows equal on
        it differ only in that setting (a fused pattern's variant goes with its stage)."""
        others = {"threads": self.threads, "stage": (self.stage, self.variant)}
        others.pop(setting)
        return (self.framework, self.namespace, self.op, self.inputs, self.dtype, *others.values())


def read_record(
    record: object, where: str, source: str = "", catalogue_tags: Mapping[str, tuple[str, ...]] | None = None
) -> Record:
    """``record`` (found at ``where``, in file ``source``) as a Record; OpperfError naming where for a
    record no reader could use. ``catalogue_tags`` (operator name to tags) supplies the tags of a
    long-tail record that carries none."""
    if not isinstance(record, dict) or any(name not in record for name in _REQUIRED):
        raise OpperfError(f"{where} lacks one of {', '.join(_REQUIRED)}; {FIX}")
    status = record["status"]
    if status not in SEVERITY:
        raise OpperfError(f"{where} has status {status!r}, not one of {', '.join(SEVERITY)}; {FIX}")
    phases = {}
    if status == "ok":
        for phase in PHASES:
            measured = phase_of(record.get(phase), f"{where} {phase}")
            if measured is not None:
                phases[phase] = measured
    sampling = record.get("sampling") or {}
    roofline = record.get("roofline") or {}
    fractions = roofline.get("fraction_of_peak") or {}
    tags = record.get("tags") or ()
    if not tags and record.get("category") == longtail.CATEGORY:
        tags = (catalogue_tags or {}).get(str(record["op"]), ())
    check = record.get("stage_check")
    inputs = record["inputs"] if isinstance(record["inputs"], dict) else {}
    return Record(
        key=record_key(record),
        status=status,
        reason=record.get("reason"),
        phases=phases,
        met_target=sampling.get("met_target"),
        competing_load=record.get("competing_load"),
        source=source,
        function=str(record.get("function") or f"{record['namespace']}.{record['op']}"),
        category=str(record.get("category", "misc")),
        inputs=describe_inputs(inputs),
        tensors=_tensors(inputs),
        memory_bytes=record.get("memory_peak_bytes"),
        flags=tuple(record.get("flags") or ()),
        flops=roofline.get("flops"),
        bytes_moved=roofline.get("bytes"),
        gflop_per_s=roofline.get("gflop_per_s"),
        gb_per_s=roofline.get("gb_per_s"),
        of_roof=fractions.get("of_roof"),
        bound=fractions.get("bound"),
        compile_s=record.get("compile_s"),
        stage_check=_stage_check(check, where),
        backward_reason=record.get("backward_reason"),
        tags=tuple(tags) if isinstance(tags, (list, tuple)) else (str(tags),),
        timer=record.get("timer"),
        host_medians={
            phase: block["median_s"]
            for phase, block in (record.get("host_latency") or {}).items()
            if isinstance(block, dict) and block.get("median_s") is not None
        },
        warmup_runs=sampling.get("warmup_runs"),
        stop_reason=sampling.get("stop_reason"),
    )


def _stage_check(block: object, where: str) -> StageCheck | None:
    """A record's ``stage_check`` block as a StageCheck (None where it has none); OpperfError naming
    ``where`` for a block that does not say whether the outputs agreed."""
    if not block:
        return None
    if not isinstance(block, dict) or not isinstance(block.get("agrees"), bool):
        raise OpperfError(f"{where} stage_check does not say whether the outputs agreed (agrees); {FIX}")
    return StageCheck.from_json(block)


def read_records(document: Mapping[str, Any], path: str = "") -> tuple[Record, ...]:
    """Every record of a results document (read from ``path``), each named by its place where it
    cannot be read; a long-tail record without tags takes the catalogue's."""
    tags = {name: op.tags for name, op in longtail.by_name().items()}
    prefix = f"{path}: " if path else ""
    return tuple(
        read_record(record, f"{prefix}results[{index}]", path, tags)
        for index, record in enumerate(document.get("results") or ())
    )


def phase_of(block: object, where: str) -> Phase | None:
    """A phase's timing block as a Phase, from its samples; OpperfError naming ``where`` for a block
    without them."""
    if block is None:
        return None
    samples = block.get("samples_s") if isinstance(block, dict) else None
    if not isinstance(samples, list) or not samples or not all(isinstance(s, (int, float)) for s in samples):
        raise OpperfError(f"{where} has no list of samples_s; {FIX}")
    summary = summarize(samples)
    return Phase(
        median=summary.median,
        low=summary.median_low,
        high=summary.median_high,
        noisy=summary.noisy,
        fastest=min(samples),
        tick=timer_tick(samples),
        iqr_ratio=summary.relative_iqr if math.isfinite(summary.relative_iqr) else None,
        samples=tuple(samples),
    )


def _tensors(inputs: Mapping[str, Any]) -> tuple[Tensor, ...]:
    """The tensor inputs in argument order, a list's members in turn."""
    found = []
    for value in inputs.values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and "shape" in item:
                found.append(Tensor(tuple(item["shape"]), item.get("storage") == "sliced"))
    return tuple(found)


def smallest_gap(samples: Sequence[float]) -> float | None:
    """The smallest difference between two distinct samples; None when all are equal."""
    distinct = sorted(set(samples))
    return min((b - a for a, b in itertools.pairwise(distinct)), default=None)


def timer_tick(samples: Sequence[float]) -> float | None:
    """The timer's tick where the samples show one: their smallest gap, if there are at least
    ``TICK_SAMPLES`` samples and every one is a whole number of it (MXNet's profiler counts whole
    microseconds); None when all are equal or the gap is just the distance between a few passes
    (two passes of a 12 ms convolution 1.2 ms apart are no 1.2 ms timer, nor are two of 546 and
    585 us a 39 us one, which an A/B round of a 550 us operator read here)."""
    gap = smallest_gap(samples)
    if gap is None or len(samples) < TICK_SAMPLES:
        return None
    whole = all(abs(s / gap - round(s / gap)) <= TICK_TOLERANCE * max(1.0, s / gap) for s in samples)
    return gap if whole else None


TICK_SAMPLES = 5
"""The fewest samples whose smallest gap can show a tick (a sweep's and a round's fewest judged)."""
TICK_TOLERANCE = 1e-6
"""How far (relative) from a whole number of ticks a sample may be, for floating-point rounding."""
