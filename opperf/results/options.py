"""How each benchmark runs, and what a sweep varies: every option is stated once, here, at its level.

``RunOptions`` are what one measurement runs with (the framework, device, dtype, one thread count,
the sampling plan, how inputs are drawn); a ``BenchmarkSpec`` carries them. ``SweepFactors`` are what a
sweep (and an A/B job) varies over an operator's configurations: thread counts, stages, drawn shapes,
in-place forms; each multiplies its rows, and never reaches a spec.

A field carries its default, and in its metadata (``Option``) its command-line flag, help text, parser
and check, and whether it is part of each results record (``keyed``: a figure changes when it does, so
diff, history and merge match on it). Everything else is derived from these tables: the command line's
flags, validation, the records' fields and their reading back, the sweep's settings that a journal
must match, and the environment a results file records. Adding an option is a field here, its use
where it acts, and a test.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import Field, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, cast

from opperf.frameworks import DEFAULT_FRAMEWORK
from opperf.measure.sampling import DEFAULT_BUDGET_S, DEFAULT_TARGET, MOST_SAMPLES, SamplingPlan
from opperf.measure.stages import STAGES, check_stages, parse_stages
from opperf.results.draws import CONTIGUOUS, LAYOUTS, UNIFORM_POSITIVE, check_distribution, parse_distribution
from opperf.utils.cache import CACHE_MODES
from opperf.utils.devices import CPU, Device
from opperf.utils.errors import OpperfError

if TYPE_CHECKING:
    from opperf.frameworks import Backend

PROFILERS = ("native", "python")
MODES = ("inference", "training")
DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "uint8", "int32", "int64")
"""The dtypes opperf generates inputs in."""


@dataclass(frozen=True)
class Option:
    """What the command line and the results file need to know of a run option.

    ``parse`` turns flag text into the value (raising ValueError with the reason); ``check`` raises
    ValueError for a value the option does not take, from the command line or the Python API alike.
    ``switch`` makes the flag one that stores the opposite of the default (``--no-backward``,
    ``--in-place``).
    ``choices`` returns the accepted values where they are a closed set.
    """

    flag: str
    help: str
    parse: Callable[[str], object] | None = None
    check: Callable[[object], None] | None = None
    choices: Callable[[], Sequence[str]] | None = None
    keyed: bool = False
    switch: bool = False
    metavar: str | None = None


def option(default: object, **settings: Any) -> Any:
    """An option field (of ``RunOptions`` or ``SweepFactors``) with its default and its ``Option``."""
    return field(default=default, metadata={"option": Option(**settings)})


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"expected an integer, got {text!r}") from None


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"expected a number, got {text!r}") from None


def _device(text: str) -> Device:
    """A device as typed, read (``Device.parse``); an empty one (an unset CI variable) names none, and
    is refused."""
    if not text.strip():
        raise ValueError("an empty device names none; use cpu or gpu(N), or leave the flag out")
    try:
        return Device.parse(text)
    except OpperfError as error:
        raise ValueError(str(error)) from None


def _a_device(value: object) -> None:
    if not isinstance(value, Device):
        raise ValueError(f"must be a Device (or its text, cpu or gpu(N)), got {value!r}")


def _count(minimum: int, optional: bool = True, most: int | None = None) -> Callable[[object], None]:
    """A check of whole numbers of at least ``minimum`` and at most ``most`` (or None, meaning the
    default, if ``optional``)."""

    def check(value: object) -> None:
        if value is None and optional:
            return
        if not isinstance(value, int) or isinstance(value, bool):
            allowed = "an integer" + (" or None" if optional else "")
            raise ValueError(f"must be {allowed}, got {value!r}")
        if value < minimum:
            raise ValueError(f"must be at least {minimum}, got {value}")
        if most is not None and value > most:
            raise ValueError(f"must be at most {most:,}, got {value:,}")

    return check


def _finite_positive(below_one: bool = False) -> Callable[[object], None]:
    def check(value: object) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"must be a finite number, got {value!r}")
        if value <= 0 or (below_one and value >= 1):
            raise ValueError(
                f"must be {'strictly between 0 and 1' if below_one else 'positive'}, got {value:g}"
            )

    return check


def _one_of(
    values: Callable[[], Sequence[str]], what: str, optional: bool = False
) -> Callable[[object], None]:
    def check(value: object) -> None:
        if value not in values() and not (optional and value is None):
            raise ValueError(f"unknown {what} {value!r}; choose one of: {', '.join(values())}")

    return check


def _frameworks() -> Sequence[str]:
    from opperf.frameworks import FRAMEWORKS

    return tuple(FRAMEWORKS)


THREADS_HELP = (
    "intra-op threads of the framework, set as each framework sets them (docs/command-line.md), recorded "
    "in the results; compare frameworks on the same count (default: the framework's own)"
)
"""What ``--threads`` is, whether one count (``RunOptions.threads``) or a sweep's factor."""

AUTO_THREADS = "auto"
"""``--threads auto``: 1, 2, 4, ... up to the CPUs this process may use."""


ThreadSetting = int | tuple[int, ...] | str | None
"""A sweep's ``--threads``: one count, a list of counts, ``auto``, or None (the framework's own)."""


def _thread_setting(text: str) -> ThreadSetting:
    """``4`` as 4, ``1,2`` as (1, 2) (sorted, each once), ``auto`` as itself."""
    if text.strip().lower() == AUTO_THREADS:
        return AUTO_THREADS
    counts = sorted({_integer(part.strip()) for part in text.split(",")})
    return counts[0] if len(counts) == 1 and "," not in text else tuple(counts)


OVERSUBSCRIPTION_LIMIT = 4
"""Thread counts above this many times the usable CPUs are refused: such threads only take turns."""


def _check_thread_count(value: Any) -> None:
    """One thread count (or None, the framework's own): what one measurement runs with."""
    if value == AUTO_THREADS or isinstance(value, tuple):
        raise ValueError(
            "takes one thread count; several (or auto) are a sweep's factor: opperf sweep --threads 1,2"
        )
    _check_threads(value)


def _check_threads(value: Any) -> None:
    if value == AUTO_THREADS:
        return
    if isinstance(value, tuple):
        if not value:
            raise ValueError("must list at least one thread count")
        for count in value:
            _count(1, optional=False)(count)
        _check_oversubscription(max(value))
        return
    _count(1)(value)
    if value is not None:
        _check_oversubscription(value)


def _check_oversubscription(count: int) -> None:
    from opperf.utils.affinity import available_cpus

    usable = len(available_cpus())
    if count > OVERSUBSCRIPTION_LIMIT * usable:
        raise ValueError(
            f"{count} threads is far beyond the {usable} CPUs this process may use: threads beyond them "
            f"only take turns; choose at most {OVERSUBSCRIPTION_LIMIT * usable} ({usable} runs one per CPU)"
        )


def thread_counts(setting: ThreadSetting, usable: int) -> tuple[int | None, ...]:
    """The thread counts a ``--threads`` setting asks for, with ``usable`` CPUs: one count (or None, the
    framework's own), a list's counts, or for auto the powers of two below ``usable`` and ``usable``."""
    if setting == AUTO_THREADS:
        counts = {1 << power for power in range(usable.bit_length()) if 1 << power <= usable}
        return tuple(sorted(counts | {usable}))
    if isinstance(setting, tuple):
        return setting
    return (cast("int | None", setting),)


def is_thread_factor(setting: object) -> bool:
    """Whether a ``--threads`` setting makes threads a factor (a list or auto) rather than one count."""
    return setting == AUTO_THREADS or isinstance(setting, tuple)


def _shape_modes() -> Sequence[str]:
    from opperf.operators.rules.fuzz import SHAPE_MODES

    return SHAPE_MODES


def _flag(value: object) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"must be True or False, got {value!r}")


class _Declared:
    """What both levels of options share: each field an option (``option``), from which the flags, the
    checks and the settings a file records are derived."""

    @classmethod
    def declared(cls, name: str) -> Option:
        """Option ``name``'s declaration."""
        return next(item for item in fields(cast(Any, cls)) if item.name == name).metadata["option"]

    def check_each(self) -> None:
        """Raise OpperfError naming the first option whose value its check refuses."""
        for item in fields(cast(Any, self)):
            check = item.metadata["option"].check
            if check is not None:
                try:
                    check(getattr(self, item.name))
                except ValueError as error:
                    raise OpperfError(f"{item.name}: {error}") from None

    def settings(self) -> dict[str, object]:
        """Every option by name: what a journal must match to be resumed, and what the environment of
        a results file records."""
        return {item.name: _plain(getattr(self, item.name)) for item in fields(cast(Any, self))}

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser, leaving_out: Sequence[str] = ()) -> None:
        """One flag per option (but those named in ``leaving_out``), with its default in the help text."""
        for item in fields(cast(Any, cls)):
            if item.name not in leaving_out:
                _add_flag(parser, item)

    @classmethod
    def from_arguments(cls, arguments: argparse.Namespace, **overrides: object) -> Any:
        """The options the parsed flags give; ``overrides`` (the device a framework defaults to) win."""
        values = {
            item.name: getattr(arguments, item.name)
            for item in fields(cast(Any, cls))
            if hasattr(arguments, item.name)
        }
        values = {name: value for name, value in values.items() if value is not None or name != "device"}
        return cls(**{**values, **overrides})


def _add_flag(parser: argparse.ArgumentParser, item: Field) -> None:
    spec: Option = item.metadata["option"]
    if spec.switch:
        action = "store_false" if item.default else "store_true"
        parser.add_argument(spec.flag, dest=item.name, action=action, help=spec.help)
        return
    default = None if item.name == "device" else item.default
    shown_default = ",".join(item.default) if isinstance(item.default, tuple) else item.default
    shown = f" (default: {shown_default})" if item.default is not None and item.name != "device" else ""
    parser.add_argument(
        spec.flag,
        dest=item.name,
        default=default,
        action=_Noted,
        type=_argparse_type(spec) if spec.parse else None,  # type: ignore[arg-type]  # None: no conversion
        choices=spec.choices() if spec.choices else None,
        metavar=spec.metavar,
        help=spec.help + shown,
    )


@dataclass(frozen=True)
class RunOptions(_Declared):
    """How one measurement runs (what a ``BenchmarkSpec`` carries). ``warmup`` and ``runs`` of None
    (the default) mean adaptive: warm up until pass times settle, then measure until the median is
    known within ``target_precision`` (relative, at 95% confidence) or ``budget_s`` is spent; numbers
    mean exactly that many passes, as in the original opperf."""

    framework: str = option(
        DEFAULT_FRAMEWORK,
        flag="--framework",
        help="whose operators to benchmark",
        check=_one_of(_frameworks, "framework"),
        choices=_frameworks,
        keyed=True,
    )
    device: Device = option(
        CPU,
        flag="--ctx",
        help="device: cpu or gpu(N), which is cuda:N for PyTorch (default: gpu(0) where the framework "
        "sees a GPU, else cpu)",
        parse=_device,
        check=_a_device,
        keyed=True,
    )
    dtype: str = option(
        "float32",
        flag="--dtype",
        help="tensor dtype",
        check=_one_of(lambda: DTYPES, "dtype"),
        choices=lambda: DTYPES,
        keyed=True,
    )
    run_backward: bool = option(
        True,
        flag="--no-backward",
        help="measure the forward pass only",
        switch=True,
        check=_flag,
        keyed=True,
    )
    mode: str | None = option(
        None,
        flag="--mode",
        help="autograd mode of forward passes: training (Dropout drops, BatchNorm uses batch statistics, "
        "MKL-DNN writes its backward workspace) or inference (default: training with backward, inference "
        "with --no-backward, as upstream opperf)",
        check=_one_of(lambda: MODES, "mode", optional=True),
        choices=lambda: MODES,
        keyed=True,
    )
    profiler: str | None = option(
        None,
        flag="--profiler",
        help="native: the framework's profiler (operator time); python: perf_counter around each "
        "synchronised call (default: native where the framework has a per-operator profiler, MXNet "
        "and PyTorch; python for JAX)",
        check=_one_of(lambda: PROFILERS, "profiler", optional=True),
        choices=lambda: PROFILERS,
        keyed=True,
    )
    cache: str = option(
        "hot",
        flag="--cache",
        help="hot: passes reuse one input set, cached as in a training loop; cold: passes rotate through "
        "input sets together twice the last-level cache (on a GPU: its L2 is flushed before each timed "
        "call), so memory-bound operators are timed at memory bandwidth",
        check=_one_of(lambda: CACHE_MODES, "cache mode"),
        choices=lambda: CACHE_MODES,
        keyed=True,
    )
    threads: int | None = option(
        None,
        flag="--threads",
        help=THREADS_HELP,
        parse=_integer,
        check=_check_thread_count,
        keyed=True,
        metavar="N",
    )
    warmup: int | None = option(
        None,
        flag="--warmup",
        help="exactly this many unmeasured passes first (default: adaptive, until pass times settle)",
        parse=_integer,
        check=_count(0),
    )
    runs: int | None = option(
        None,
        flag="--runs",
        help="exactly this many measured passes per input (default: adaptive, until the median is "
        "within --target-precision or --budget is spent)",
        parse=_integer,
        check=_count(1, most=MOST_SAMPLES),
    )
    target_precision: float = option(
        DEFAULT_TARGET,
        flag="--target-precision",
        help="adaptive sampling stops once the median's 95%% confidence interval is within this fraction "
        "of it",
        parse=_number,
        check=_finite_positive(below_one=True),
    )
    budget_s: float = option(
        DEFAULT_BUDGET_S,
        flag="--budget",
        help="seconds of warm-up and measurement per input configuration in adaptive sampling",
        parse=_number,
        check=_finite_positive(),
    )
    seed: int = option(
        0, flag="--seed", help="seed of the generated inputs", parse=_integer, check=_count(0, optional=False)
    )
    values: str = option(
        UNIFORM_POSITIVE,
        flag="--values",
        help="how the values of floating-point inputs are distributed: uniform-positive ([0.1, 1)), "
        "normal, uniform ([-1, 1), or uniform:LOW,HIGH), with-zeros (a quarter zero), with-nan-inf "
        "(5%% each of NaN, +inf, -inf) or subnormal; ranges a rule chose (an operator's domain), indices "
        "(normal concentrates them) and integers stay valid; opperf explain OP --values shows which",
        parse=parse_distribution,
        check=check_distribution,
        keyed=True,
        metavar="|".join(("uniform-positive", "normal", "uniform[:LOW,HIGH]", "with-zeros", "...")),
    )
    layout: str = option(
        CONTIGUOUS,
        flag="--layout",
        help="memory layout of dense inputs where the framework has one (PyTorch): contiguous, "
        "transposed (column-major over the last two axes), strided (every second element of a wider "
        "tensor) or channels-last (rank 4 and 5)",
        check=_one_of(lambda: tuple(LAYOUTS), "layout"),
        choices=lambda: tuple(LAYOUTS),
        keyed=True,
    )

    def __post_init__(self) -> None:
        """A device given as its text (the Python API, a record) is read here, once."""
        if isinstance(self.device, str):
            object.__setattr__(self, "device", Device.parse(self.device))

    @property
    def plan(self) -> SamplingPlan:
        return SamplingPlan(
            warmup=self.warmup, runs=self.runs, target=self.target_precision, budget_s=self.budget_s
        )

    def validated(self, backend: Backend | None = None) -> RunOptions:
        """These options, each checked, with the device normalised by ``backend`` when given; raises
        OpperfError naming the bad value and what it takes."""
        self.check_each()
        resolved = self.mode or ("training" if self.run_backward else "inference")
        if resolved == "inference" and self.run_backward:
            raise OpperfError(
                "mode inference times forward passes only; add --no-backward (run_backward=False) "
                "or choose --mode training"
            )
        resolved_options = replace(self, mode=resolved, profiler=self._resolved_profiler())
        self._check_layout()
        if backend is None:
            return resolved_options
        missing = backend.missing_dtypes.get(self.dtype)
        if missing is not None:
            raise OpperfError(f"dtype {self.dtype}: {missing}")
        return replace(resolved_options, device=backend.normalize_device(self.device))

    def replacing(self, settings: Mapping[str, object]) -> RunOptions:
        """These options with ``settings`` (options by name) instead; check them with ``validated``."""
        return replace(self, **cast("dict[str, Any]", settings))

    @property
    def profiler_in_effect(self) -> str:
        """The timer asked for, else the framework's own (its per-operator profiler where it has one)."""
        from opperf.frameworks import describe

        return self.profiler or describe(self.framework).profilers[0]

    def _resolved_profiler(self) -> str:
        """The timer asked for, else the framework's own; OpperfError for one it does not have."""
        from opperf.frameworks import describe

        declared = describe(self.framework)
        if self.profiler is None:
            return self.profiler_in_effect
        if self.profiler not in declared.profilers:
            raise OpperfError(
                f"profiler {self.profiler}: {declared.profiler_note or f'{declared.display_name} has none'}"
                f"; leave --profiler out ({declared.display_name} is timed by {declared.profilers[0]})"
            )
        return self.profiler

    def _check_layout(self) -> None:
        """Refuse a layout the framework's tensors cannot take, saying why and which they can."""
        from opperf.frameworks import FRAMEWORKS, describe

        declared = describe(self.framework)
        if self.layout == CONTIGUOUS or self.layout in declared.layouts:
            return
        having = [name for name in FRAMEWORKS if self.layout in describe(name).layouts]
        why = declared.layout_note or f"{declared.display_name} has no {self.layout} layout"
        where = f"--framework {' or '.join(having)} has it" if having else "no framework has it"
        raise OpperfError(f"layout {self.layout}: {why}; leave --layout out ({where})")

    def keyed(self) -> dict[str, object]:
        """The options each results record carries: those a figure depends on (the timer as it was
        in effect, where the framework's own was taken)."""
        keyed = {name: getattr(self, name) for name in KEYED}
        return keyed | {"device": str(self.device), "profiler": self.profiler_in_effect}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> RunOptions:
        """The options a results record carries (the others at their defaults)."""
        return cls(**{name: record[name] for name in KEYED if name in record})  # the device is parsed


@dataclass(frozen=True)
class SweepFactors(_Declared):
    """What a sweep (or an A/B job) varies over each operator configuration, beside the options one
    measurement runs with: thread counts, stages, drawn shapes, in-place forms. Each multiplies an
    operator's rows (a record per thread count, per stage, per drawn shape, per form); none reaches a
    ``BenchmarkSpec``, which carries what one measurement needs (one thread count, its stage)."""

    thread_counts: tuple[int, ...] | str | None = option(
        None,
        flag="--threads",
        help=f"{THREADS_HELP}. A list (1,2) or auto (1, 2, 4, ... up to the usable CPUs) makes it a "
        "factor of a sweep: each count gets its own pinned workers, interleaved per operator, and the "
        "report a scaling table",
        parse=_thread_setting,
        check=_check_threads,
        metavar="N|N,M,...|auto",
    )
    stages: tuple[str, ...] = option(
        ("eager",),
        flag="--stages",
        help=f"comma-separated stages each input configuration runs in, one record each: {', '.join(STAGES)} "
        "(graph: MXNet's hybridized CachedOp, torch.jit for PyTorch; compile: torch.compile, jax.jit; "
        "cudagraph: 20 calls captured in a CUDA graph, replayed, divided: PyTorch on a GPU); the capture "
        "or compile time is recorded once as compile_s and each stage's outputs are checked against eager; "
        "fused: the fusion backends of fused patterns (category fused), each proved from its graph; other "
        "operators take the other stages named, and a selection of none is refused",
        parse=parse_stages,
        check=check_stages,
        metavar="STAGES",
    )
    shapes: str = option(
        "standard",
        flag="--shapes",
        help="standard: the size profile's shapes; fuzz: --fuzz-count shapes per operator, drawn from "
        "--seed and the operator's name (log-uniform element counts from latency- to bandwidth-bound, "
        "singleton and broadcast dimensions, non-contiguous PyTorch inputs); skewed: as fuzz, with one "
        "dimension holding nearly all elements",
        check=_one_of(_shape_modes, "shape mode"),
        choices=_shape_modes,
    )
    fuzz_count: int = option(
        5,
        flag="--fuzz-count",
        help="input configurations per operator with --shapes fuzz or skewed",
        parse=_integer,
        check=_count(1, optional=False),
    )
    in_place: bool = option(
        False,
        flag="--in-place",
        help="also measure each operator's in-place form where the framework has one, as the variant "
        "in-place beside its row: PyTorch's abs_, add_ (the overwritten input copied back after each "
        "pass, outside its timing, so values do not drift), MXNet's out= writes into an array of the "
        "output's shape; forward only",
        switch=True,
        check=_flag,
    )

    @classmethod
    def split_threads(cls, setting: ThreadSetting) -> tuple[int | None, tuple[int, ...] | str | None]:
        """A sweep's ``--threads`` as (the one count each measurement runs with, the counts that are a
        factor): ``4`` is (4, None), ``1,2`` is (None, (1, 2)), ``auto`` is (None, auto)."""
        if is_thread_factor(setting):
            return None, cast("tuple[int, ...] | str", setting)
        return cast("int | None", setting), None

    def validated(self, framework: str) -> SweepFactors:
        """These factors, each checked: stages of which the framework runs none, and ``--in-place`` for
        a framework without in-place forms, refused; OpperfError naming the bad value."""
        from opperf.frameworks import describe
        from opperf.frameworks.contract import CAPABILITY_NAMES

        self.check_each()
        if self.thread_counts is not None and not is_thread_factor(self.thread_counts):
            raise OpperfError(
                f"thread_counts: must list thread counts or be auto, got {self.thread_counts!r}; one count "
                "is a run option (RunOptions(threads=N))"
            )
        declared = describe(framework)
        if not set(self.stages) & set(declared.stages):
            raise OpperfError(
                f"--stages {','.join(self.stages)}: {declared.display_name} runs none of them; it runs "
                f"{', '.join(declared.stages)}"
            )
        if self.in_place and not declared.can("in_place"):
            raise OpperfError(
                f"--in-place: {declared.display_name} has no {CAPABILITY_NAMES['in_place']}"
                f"{f' ({declared.in_place_note})' if declared.in_place_note else ''}; leave --in-place out"
            )
        return self


GIVEN = "given_options"
"""The parsed arguments' attribute listing the options whose flags were given (``was_given``)."""


class _Noted(argparse.Action):
    """Stores an option's value, and notes that its flag was given: a value a file could otherwise
    supply (the framework of a configs file) defers to a flag the user gave."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, values)
        setattr(namespace, GIVEN, getattr(namespace, GIVEN, frozenset()) | {self.dest})


def was_given(arguments: argparse.Namespace, name: str) -> bool:
    """Whether option ``name``'s flag was on the command line (not its default)."""
    return name in getattr(arguments, GIVEN, frozenset())


def _plain(value: object) -> object:
    """A setting as JSON reads it back (a tuple as a list, a device as its text), so a resumed
    journal's settings compare equal."""
    if isinstance(value, Device):
        return str(value)
    return list(value) if isinstance(value, tuple) else value


def option_argument(parser: argparse.ArgumentParser, name: str) -> None:
    """Run option ``name``'s flag alone, as ``RunOptions.add_arguments`` makes it, for a command that
    takes a few of the options (``explain``: the dtype, values and layout it shows inputs in)."""
    item = next(item for item in fields(RunOptions) if item.name == name)
    spec = RunOptions.declared(name)
    parser.add_argument(
        spec.flag,
        dest=name,
        default=item.default,
        type=_argparse_type(spec) if spec.parse else None,  # type: ignore[arg-type]  # None: no conversion
        choices=spec.choices() if spec.choices else None,
        metavar=spec.metavar,
        help=f"{spec.help} (default: {item.default})",
    )


def parse_option(name: str, text: str) -> object:
    """Run option ``name``'s value from flag text, parsed and checked as its flag would be; raises
    ValueError with the reason."""
    return _parsed(RunOptions.declared(name), text)


def _parsed(spec: Option, text: str) -> object:
    value = spec.parse(text) if spec.parse else text
    if spec.check is not None:
        spec.check(value)
    return value


def _argparse_type(spec: Option) -> Callable[[str], object]:
    def convert(text: str) -> object:
        try:
            return _parsed(spec, text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return convert


KEYED: tuple[str, ...] = tuple(item.name for item in fields(RunOptions) if item.metadata["option"].keyed)
"""The options every results record carries, in order."""
