"""One operator across namespaces (``mx.nd``, ``mx.np``/``mx.npx``, ``torch``), on one input configuration.

Operators are matched by name where the namespaces agree, and where they do not by what each
framework lists (``frameworks/<name>/compare.py``: ``FullyConnected`` is
``torch.nn.functional.linear``). A configuration is
stated once, in the first namespace's argument names; each other namespace gets it translated: tensors
by position (``lhs``, ``rhs`` become ``x1``, ``x2`` and ``input``, ``other``), attributes by the
mapping's renames (``pad`` becomes ``padding``), attributes a namespace infers from the tensors
(``num_filter``) dropped.
"""

from __future__ import annotations

import inspect
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from opperf.frameworks import FRAMEWORKS, describe, framework_module, framework_of_namespace, get_backend
from opperf.measure.benchmark import RunOptions, holds_tensors, signature_of, specs_of
from opperf.operators.counterparts import Counterpart
from opperf.operators.info import OpInfo
from opperf.operators.rules import inputs_for
from opperf.operators.rules.profiles import STANDARD, SizeProfile
from opperf.results.measurement import BenchmarkSpec, Measurement, Status, TensorSpec
from opperf.utils.errors import OpperfError, suggest
from opperf.utils.markdown_table import markdown_table
from opperf.utils.words import counted
from opperf.verdicts.ab.job import in_round_order, round_options
from opperf.verdicts.compare.measuring import Measurer, in_process
from opperf.verdicts.compare.namespaces import Versus, no_work_note, versus
from opperf.verdicts.diff import DEFAULT_ALPHA, DEFAULT_THRESHOLD


def counterpart(name: str, namespace: str) -> Counterpart:
    """How ``name`` (an ``mx.nd`` operator) is called in ``namespace``: as its framework lists it
    (``frameworks/<name>/compare.py``), else by the name itself with that framework's renames."""
    calls = framework_module(framework_of_namespace(namespace), "compare")
    listed = calls.COUNTERPARTS.get(name)
    if listed is not None and calls.answers(listed, namespace):
        return cast(Counterpart, listed)
    return Counterpart(namespace, name, renames=calls.DEFAULT_RENAMES)


OUTPUT = "out"
"""The argument NumPy-style functions write their result to: an output, never an input to translate."""


def tensor_order(function: Callable[..., object], framework: str) -> list[str]:
    """The tensor arguments of ``function`` in the order it takes them (``out`` not among them)."""
    info = get_backend(framework).identify(function).info
    if info is not None:
        return [a.name for a in info.arguments if a.is_tensor and a.name != OUTPUT]
    tensors = signature_of(function, None).tensors
    return [name for name in parameter_names(function) if name in tensors and name != OUTPUT]


KEYWORD_REST = (inspect.Parameter.VAR_KEYWORD,)
"""A ``**kwargs``: it names no argument of its own."""
VARIABLE = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
"""``*args`` and ``**kwargs``: a call names neither."""


def parameter_names(function: Callable[..., object], leaving_out: tuple[object, ...] = ()) -> list[str]:
    """``function``'s parameters in order, but those of the kinds ``leaving_out`` (``KEYWORD_REST``,
    ``VARIABLE``); none where it has no signature (a NumPy ufunc that ``mx.np`` exposes)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.kind not in leaving_out]


def translate(
    configuration: Mapping[str, Any],
    source_tensors: Sequence[str],
    target_tensors: Sequence[str],
    target: Counterpart,
) -> dict[str, object]:
    """``configuration`` in the target's argument names: tensors by position, attributes renamed.
    A value that holds tensors is a tensor wherever the source's signature did not say so (a Python
    wrapper whose documentation names another argument)."""
    source_tensors = [*source_tensors] + [
        name for name, value in configuration.items() if name not in source_tensors and holds_tensors(value)
    ]
    translated: dict[str, Any] = {}
    for name, value in configuration.items():
        if name in target.drop:
            continue
        if name in target.renames:
            translated[target.renames[name]] = value
        elif name in source_tensors and not isinstance(value, float):  # a number goes by its name
            position = source_tensors.index(name)
            if position >= len(target_tensors):
                raise OpperfError(f"{target.namespace} takes no tensor in the place of {name!r}")
            translated[target_tensors[position]] = value
        else:
            translated[name] = value
    translated = {**target.extra, **translated}
    return target.adapt(configuration, translated) if target.adapt else translated


COMPARE_THREADS = 1
"""Intra-op threads of every namespace in a comparison unless ``--threads`` says otherwise: one count
for all, whatever the import order, and one that a core shared with other processes does not collapse
(PyTorch with as many threads as cores ran a (1024, 1024) ``add`` 47x slower here: 7.7 ms, against
0.16 ms on one)."""


def check_namespaces(namespaces: Sequence[str]) -> None:
    """Raise OpperfError naming the first namespace opperf knows no function in, with those it knows."""
    for namespace in namespaces:
        if not get_backend(framework_of_namespace(namespace)).namespace_names(namespace):
            known = "; ".join(describe(name).namespaces for name in FRAMEWORKS)
            raise OpperfError(f"unknown namespace {namespace!r}; use one of {known}")


def check_operators(names: Sequence[str], namespace: str) -> None:
    """Raise OpperfError naming the first of ``names`` that ``namespace`` has no function of, before
    anything runs (a comparison that stopped at it would lose what it measured before)."""
    for name in names:
        function_in(namespace, name)


def function_in(namespace: str, name: str) -> Callable[..., object]:
    """The function ``name`` of ``namespace``; OpperfError naming the closest names where it has none."""
    backend = get_backend(framework_of_namespace(namespace))
    function = backend.lookup(namespace, name)
    if function is None:
        raise OpperfError(
            f"no operator {name!r} in {namespace}{suggest(name, backend.namespace_names(namespace))}"
        )
    return function


def check_devices(namespaces: Sequence[str], options: RunOptions) -> None:
    """Raise OpperfError, before anything runs, when a framework of the comparison lacks the device
    (``cpu(5)``, a GPU the build or machine has not): otherwise every record would fail with it."""
    for framework in dict.fromkeys(framework_of_namespace(namespace) for namespace in namespaces):
        options.validated(get_backend(framework))


def comparison_options(options: RunOptions) -> RunOptions:
    """``options`` with the thread count every namespace of a comparison runs with made explicit."""
    return replace(options, threads=COMPARE_THREADS if options.threads is None else options.threads)


COMPARE_ROUNDS = 20
"""The most rounds a comparison measures a configuration in (``--rounds``): the namespaces take turns
in each, so every other namespace is a paired A/B job's new side against the first
(``verdicts.compare.namespaces``). Only an unsettled configuration gets past ``COMPARE_MIN_ROUNDS``.
With at most 10, six runs of mx.nd against mx.np (add, exp, sum, dot, softmax; load 0.3-1.0) left
5 of 22 rows without one verdict in all runs but one, each a row near 1 whose interval reached just
past the band at 10 rounds; with at most 20 (five runs, load 1.0-1.2), 1 of 22 (softmax (1024, 1024)
forward, whose rounds scatter: ``namespaces.ROUNDS_SCATTER``). Replayed from five comparisons of 40
rounds under load (``ROUNDS_SCATTER``), at most 30 or 40 rounds kept every row's verdict in 4 of 5
runs with a probability of 0.81 and 0.85, against 0.77 at 20, for 19% and 37% more rounds."""
COMPARE_MIN_ROUNDS = 3
"""The rounds every configuration gets; then another while a verdict of it is unsettled
(``Versus.settled``), up to ``COMPARE_ROUNDS``. With five fixed rounds, 3 of 22 rows of ``mx.nd``
against ``mx.np`` (add, exp, sum, dot, softmax) changed verdict from run to run, each a ratio within
2% of 1 whose interval reached just past the 5% band in some runs: more rounds narrow such an
interval; rows already ``same`` or clearly changed need none."""
ROUND_BUDGET_SHARE = 5
"""A round gets 1/ROUND_BUDGET_SHARE of ``--budget`` (1/rounds when fewer): a configuration settled
in three rounds costs three fifths of a sweep's budget a namespace, one that takes ten twice it."""


@dataclass(frozen=True)
class Row:
    """One input configuration of one operator, measured in each namespace (None where it failed to
    map): ``rounds`` holds each round's measurement, ``measurements`` their samples together."""

    operator: str
    configuration: Mapping[str, Any]
    measurements: Mapping[str, Measurement | None]
    problems: Mapping[str, str]
    rounds: Mapping[str, tuple[Measurement, ...]] = field(default_factory=dict)


def compare(
    name: str,
    configurations: Sequence[Mapping[str, Any]],
    namespaces: Sequence[str] = ("mx.nd", "mx.np", "torch"),
    options: RunOptions | None = None,
    rounds: int = COMPARE_ROUNDS,
    min_rounds: int = COMPARE_MIN_ROUNDS,
    measure: Measurer = in_process,
) -> list[Row]:
    """Benchmark ``name`` (as called in the first namespace) with each configuration in every
    namespace (``compare_operators``, for one operator)."""
    return compare_operators({name: configurations}, namespaces, options, rounds, min_rounds, measure)


def compare_operators(
    operators: Mapping[str, Sequence[Mapping[str, Any]]],
    namespaces: Sequence[str] = ("mx.nd", "mx.np", "torch"),
    options: RunOptions | None = None,
    rounds: int = COMPARE_ROUNDS,
    min_rounds: int = COMPARE_MIN_ROUNDS,
    measure: Measurer = in_process,
    progress: Callable[[int, int], None] | None = None,
) -> list[Row]:
    """Benchmark each operator (as called in the first namespace) with each of its configurations in
    every namespace, in rounds: a round is a pass over the configurations still unsettled, in the
    order given in round 0 and in one shuffled per round after it (``ab.job.in_round_order``), each
    configuration measured in every namespace in turn (the first goes first in even rounds, last in
    odd ones: what runs first meets the machine in another state). Every configuration gets
    ``min_rounds`` rounds, then another while a verdict of it is unsettled, up to ``rounds``.
    ``measure`` says where a round runs (``opperf.verdicts.compare.measuring``: here, or in fresh
    workers each round); ``progress`` is told each round's index and how many configurations it
    measures.

    A namespace with no counterpart, or whose counterpart cannot take a configuration, gets no
    measurement for it and the problem is recorded; an unknown operator in the first namespace raises.
    """
    if rounds < 1:
        raise OpperfError(f"a comparison takes at least one round, got {rounds}")
    options = comparison_options(options or RunOptions())
    check_namespaces(namespaces)
    share = round_options(options, min(rounds, ROUND_BUDGET_SHARE)) if rounds > 1 else options
    pending = []
    first = namespaces[0]
    for name, configurations in operators.items():
        source_tensors = tensor_order(function_in(first, name), framework_of_namespace(first))
        for configuration in configurations:
            calls, problems = _calls(name, configuration, namespaces, source_tensors, share)
            pending.append(_Pending(name, dict(configuration), calls, problems))
    active = list(pending)
    for index in range(rounds):
        if not active:
            break
        if progress is not None:
            progress(index, len(active))
        measure.start_round(index)
        for unsettled in in_round_order(active, index):
            unsettled.measure_round(index, measure)
        if index + 1 >= min(min_rounds, rounds):
            active = [found for found in active if not _settled(found.measured, namespaces)]
    return [found.row(namespaces) for found in pending]


@dataclass(frozen=True)
class _Pending:
    """A configuration of an operator while its rounds are measured: what each namespace calls, the
    problems of those that cannot, and each namespace's rounds so far (filled in as they come)."""

    operator: str
    configuration: Mapping[str, Any]
    calls: Mapping[str, tuple[Callable[..., object], BenchmarkSpec]]
    problems: dict[str, str]
    measured: dict[str, list[Measurement]] = field(default_factory=dict)

    def measure_round(self, index: int, measure: Measurer) -> None:
        """Round ``index`` in each namespace that can still take it: one with a problem, or whose
        measurement failed, crashed or timed out in an earlier round, is not run again."""
        for namespace in self.calls if index % 2 == 0 else reversed(list(self.calls)):
            if namespace in self.problems or _failed(self.measured.get(namespace)):
                continue
            function, spec = self.calls[namespace]
            try:
                self.measured.setdefault(namespace, []).append(measure(namespace, spec, function, index))
            except OpperfError as error:
                self.problems[namespace] = str(error)
                self.measured.pop(namespace, None)

    def row(self, namespaces: Sequence[str]) -> Row:
        measurements = {ns: _together(self.measured.get(ns)) for ns in namespaces}
        rounds = {ns: tuple(found) for ns, found in self.measured.items()}
        return Row(self.operator, self.configuration, measurements, dict(self.problems), rounds)


def _calls(
    name: str,
    configuration: Mapping[str, Any],
    namespaces: Sequence[str],
    source_tensors: Sequence[str],
    options: RunOptions,
) -> tuple[dict[str, tuple[Callable[..., object], BenchmarkSpec]], dict[str, str]]:
    """What each namespace calls for ``name`` with ``configuration`` (its tensors named as in the
    first namespace, ``source_tensors``), and why those that cannot."""
    first, calls, problems = namespaces[0], {}, {}
    for namespace in namespaces:
        try:
            calls[namespace] = _call_in(name, namespace, configuration, source_tensors, options, first)
        except OpperfError as error:
            problems[namespace] = str(error)
    return calls, problems


def _failed(rounds: Sequence[Measurement] | None) -> bool:
    return any(m.status is not Status.OK for m in rounds or ())


def _settled(measured: Mapping[str, Sequence[Measurement]], namespaces: Sequence[str]) -> bool:
    """Whether every verdict of a configuration's rounds so far is settled (``Versus.settled``)."""
    present = [ns for ns in namespaces if ns in measured]
    if len(present) < 2:
        return True
    found = versus([measured], present, DEFAULT_THRESHOLD, DEFAULT_ALPHA)
    return all(found_versus.settled(DEFAULT_ALPHA, DEFAULT_THRESHOLD) for found_versus in found.values())


def _together(rounds: Sequence[Measurement] | None) -> Measurement | None:
    """A namespace's rounds as one measurement: every round's samples together (the first round
    that did not measure, where one did not)."""
    if not rounds:
        return None
    failed = next((m for m in rounds if m.status is not Status.OK), None)
    if failed is not None:
        return failed
    backward = tuple(s for m in rounds for s in m.backward or ()) or None
    return replace(rounds[0], forward=tuple(s for m in rounds for s in m.forward or ()), backward=backward)


def _call_in(
    name: str,
    namespace: str,
    configuration: Mapping[str, Any],
    source_tensors: Sequence[str],
    options: RunOptions,
    first: str,
) -> tuple[Callable[..., object], BenchmarkSpec]:
    """What ``namespace`` calls for ``name``, and the spec of calling it with ``configuration`` (as it
    is in the ``first`` namespace, whose names it is stated in)."""
    # the first namespace calls the function by the name it is compared under, whatever other
    # namespaces list for that name (torch.transpose, not the permute NumPy's transpose maps to)
    target = Counterpart(namespace, name) if namespace == first else counterpart(name, namespace)
    function_name = target.function_name(configuration)
    framework = framework_of_namespace(namespace)
    backend = get_backend(framework)
    function = backend.lookup(target.namespace, function_name)
    if function is None:
        raise OpperfError(f"no counterpart of {name!r} in {namespace} ({target.namespace}.{function_name})")
    if namespace == first:
        inputs = dict(configuration)
    else:
        # a function whose signature says nothing of its tensors (``torch.unique``) takes them first
        named = parameter_names(function, leaving_out=VARIABLE)
        tensors = tensor_order(function, framework) or named[: len(source_tensors)]
        inputs = translate(configuration, source_tensors, tensors, target)
    run_options = replace(options, framework=framework).validated(backend)
    (spec,) = specs_of(function, inputs, run_options)
    if backend.lookup(spec.namespace, spec.function or spec.op) is not function:
        # named where the framework defines it (``mx.np.allclose`` is MXNet's ``mx.nd`` function):
        # the record and a worker name it as the comparison calls it
        spec = replace(spec, namespace=target.namespace, function=function_name)
    return function, spec


def forward_ratio(row: Row, namespace: str, first: str) -> float | None:
    """``namespace``'s forward median over ``first``'s, or None where either has none."""
    forward = _median(row.measurements.get(namespace), "forward")
    base = _median(row.measurements.get(first), "forward")
    return forward / base if forward and base else None


def verdicts(rows: Sequence[Row], namespaces: Sequence[str]) -> dict[tuple[int, str, str], Versus]:
    """Every other namespace against the first, per row and phase (``verdicts.namespaces``), at
    ``opperf diff``'s default threshold and FDR level."""
    return versus([row.rounds for row in rows], namespaces, DEFAULT_THRESHOLD, DEFAULT_ALPHA)


def _versus_cell(found: Versus | None) -> str:
    if found is None:
        return "—"
    interval = f" ({found.low:.2f}-{found.high:.2f})" if found.low is not None else ""
    return f"{found.ratio:.2f}{interval} {found.verdict.value}"


def table_rows(rows: Sequence[Row], namespaces: Sequence[str]) -> list[list[str]]:
    """Per row: operator, inputs, then each namespace's forward and backward medians (ms), and for
    each namespace after the first its ratios against the first, with their intervals and verdicts."""
    found = verdicts(rows, namespaces)
    rendered = []
    for index, row in enumerate(rows):
        cells = [row.operator, _inputs(row.configuration)]
        for namespace in namespaces:
            measurement = row.measurements.get(namespace)
            cells += [_ms(_median(measurement, "forward")), _ms(_median(measurement, "backward"))]
            if namespace != namespaces[0]:
                cells += [
                    _versus_cell(found.get((index, namespace, phase))) for phase in ("forward", "backward")
                ]
        rendered.append(cells)
    return rendered


def table_headers(namespaces: Sequence[str]) -> list[str]:
    headers = ["operator", "inputs"]
    for namespace in namespaces:
        headers += [f"{namespace} fwd ms", f"{namespace} bwd ms"]
        if namespace != namespaces[0]:
            headers += [f"fwd vs {namespaces[0]}", f"bwd vs {namespaces[0]}"]
    return headers


def notes(rows: Sequence[Row], namespaces: Sequence[str]) -> list[list[str]]:
    """What a reader of the table should know of a row: why a verdict is inconclusive (with the doubt
    flags half or more of a side's rounds carried), and a phase one namespace likely does no work in."""
    found = verdicts(rows, namespaces)
    listed = []
    for index, row in enumerate(rows):
        for phase in ("forward", "backward"):
            medians = {ns: m for ns in namespaces if (m := _median(row.measurements.get(ns), phase))}
            said = [no_work_note(medians, phase)] if len(medians) > 1 else []
            for namespace in namespaces[1:]:
                verdict = found.get((index, namespace, phase))
                if verdict is not None and verdict.reason:
                    flags = f" (flags: {', '.join(verdict.flags)})" if verdict.flags else ""
                    said.append(f"{namespace} inconclusive: {verdict.reason}{flags}")
            listed += [[row.operator, _inputs(row.configuration), phase, note] for note in said if note]
    return listed


def _median(measurement: Measurement | None, phase: str) -> float | None:
    samples = getattr(measurement, phase, None) if measurement is not None else None
    return statistics.median(samples) if samples else None


def _ms(seconds: float | None) -> str:
    return f"{seconds * 1e3:.4f}" if seconds is not None else "—"


def _inputs(configuration: Mapping[str, Any]) -> str:
    def show(value: object) -> str:
        if isinstance(value, TensorSpec):
            return "x".join(map(str, value.shape))
        if isinstance(value, tuple) and value and all(isinstance(v, int) for v in value):
            return "x".join(map(str, value))
        if isinstance(value, tuple) and value and all(isinstance(v, TensorSpec) for v in value):
            return "[" + ", ".join(show(v) for v in value) + "]"
        return str(value)

    return ", ".join(f"{name}={show(value)}" for name, value in configuration.items())


DEFAULT_OPERATORS = (
    "add", "multiply", "exp", "sum", "dot", "softmax",
    "Convolution", "Pooling", "FullyConnected", "BatchNorm",
)  # fmt: skip
"""What ``--compare`` runs when no operators are named: the common layers and element-wise basics."""


COMMON = "common"
"""What ``--ops`` takes for every function all the namespaces have (``common_functions``)."""


def common_functions(namespaces: Sequence[str]) -> tuple[str, ...]:
    """The public functions of the first namespace that every other namespace has a counterpart of
    (by name, or as its framework lists it) and that some namespace registers as an operator, in
    name order: ``compare mx.np,jnp,torch --ops common``."""
    first = namespaces[0]
    backend = get_backend(framework_of_namespace(first))
    return tuple(
        name
        for name in sorted(backend.namespace_names(first))
        if not name.startswith("_")
        and callable(backend.lookup(first, name))
        and all(_has_counterpart(name, namespace) for namespace in namespaces[1:])
        and any(_registered_info(name, namespace) is not None for namespace in namespaces)
    )


def _counterpart_function(name: str, namespace: str) -> Callable[..., object] | None:
    """What ``namespace`` calls for ``name`` where the configuration does not choose it; None where
    it has no such function. OpperfError where the configuration chooses (``Pooling``: max pooling
    has a counterpart, global pooling none)."""
    target = counterpart(name, namespace)
    return get_backend(framework_of_namespace(namespace)).lookup(target.namespace, target.function_name({}))


def _registered_info(name: str, namespace: str) -> OpInfo | None:
    """The registry record of ``name``'s counterpart in ``namespace``; None where it is none: a
    function no framework registers computes nothing on arrays (``set_printoptions``, ``torch.save``)."""
    try:
        function = _counterpart_function(name, namespace)
    except OpperfError:
        return None
    backend = get_backend(framework_of_namespace(namespace))
    return backend.identify(function).info if function is not None else None


def _has_counterpart(name: str, namespace: str) -> bool:
    try:
        return _counterpart_function(name, namespace) is not None
    except OpperfError:  # it has one for some configurations
        return True


def configurations(
    name: str, namespaces: Sequence[str], profile: SizeProfile = STANDARD
) -> list[dict[str, Any]]:
    """Input configurations for ``name`` in the first namespace's argument names: the registry's rules
    when it is a registered operator there; otherwise the first rules whose configurations the
    function takes (each required argument given, none it lacks): those of the registry operator a
    Python wrapper calls (``mx.np.add`` calls ``_npi_add(lhs, rhs)``: its tensors renamed as the
    wrapper names them, ``x1``, ``x2``), then those of the function's counterpart in each other
    namespace where that is a registered operator (``jnp.hstack``'s rules for ``mx.np.hstack``, whose
    called operator takes ``*data``: tensors by position, other arguments by name); else every
    required tensor argument with the profile's first shape."""
    first = namespaces[0]
    framework = framework_of_namespace(first)
    backend = get_backend(framework)
    function = function_in(first, name)
    info = backend.identify(function).info
    if info is not None:
        return [backend.applicable_inputs(info, inputs) for inputs in inputs_for(info, profile)]
    signature = signature_of(function, None)
    tensors = tensor_order(function, framework)
    candidates = [_called_configurations(framework, first, name, tensors, profile)]
    candidates += [_counterpart_configurations(name, other, function, profile) for other in namespaces[1:]]
    for found in candidates:
        fitting = [configuration for configuration in found if _fits(configuration, function)]
        if fitting:
            return fitting
    return [{argument: profile.shapes[0] for argument in sorted(signature.tensors & signature.required)}]


def _fits(configuration: Mapping[str, Any], function: Callable[..., object]) -> bool:
    """Whether ``function`` takes ``configuration``: every required argument, none it lacks, a
    ``**kwargs`` taking none besides its named ones (``mx.np.meshgrid(*xi, **kwargs)`` is given
    ``xi``, not ``a`` and ``newshape``); a function without a signature takes any."""
    signature = signature_of(function, None)
    given = set(configuration)
    if not signature.required <= given:
        return False
    if signature.accepted is not None:
        return given <= signature.accepted
    named = set(parameter_names(function, leaving_out=KEYWORD_REST))
    return not named or given <= named


def _called_configurations(
    framework: str, namespace: str, name: str, wrapper_tensors: Sequence[str], profile: SizeProfile
) -> list[dict[str, Any]]:
    """The rules of the registry operator a Python wrapper calls, its tensors named as the wrapper's."""
    called = _called_operator(framework, namespace, name)
    if called is None:
        return []
    backend = get_backend(framework)
    operator = [a.name for a in called.arguments if a.is_tensor]
    renames = dict(zip(operator, wrapper_tensors, strict=False))
    return [
        {renames.get(key, key): value for key, value in backend.applicable_inputs(called, inputs).items()}
        for inputs in inputs_for(called, profile)
    ]


def _counterpart_configurations(
    name: str, namespace: str, function: Callable[..., object], profile: SizeProfile
) -> list[dict[str, Any]]:
    """The rules of ``name``'s counterpart in ``namespace`` where it is a registered operator, in
    ``function``'s argument names: an argument ``function`` has by the same name keeps it, another goes
    to ``function``'s parameter at its position (``jnp.hstack(tup)`` to ``mx.np.hstack(arrays)``); a
    configuration with an argument that has neither is left out."""
    info = _registered_info(name, namespace)
    if info is None:
        return []
    backend = get_backend(framework_of_namespace(namespace))
    theirs = [a.name for a in info.arguments]
    mine = parameter_names(function, leaving_out=KEYWORD_REST) or theirs  # no signature: NumPy's
    translated = []
    for inputs in inputs_for(info, profile):
        configuration: dict[str, Any] = {}
        for argument, value in backend.applicable_inputs(info, inputs).items():
            position = theirs.index(argument) if argument in theirs else len(mine)
            renamed = argument if argument in mine else mine[position] if position < len(mine) else None
            if renamed is None or renamed in configuration:
                break
            configuration[renamed] = value
        else:
            translated.append(configuration)
    return translated


def _called_operator(framework: str, namespace: str, name: str) -> OpInfo | None:
    """The registry operator a Python wrapper calls (``mx.np.exp`` calls ``_npi_exp``), or None where
    it calls several: its rules give the configurations, in its own argument names."""
    called = framework_module(framework, "namespaces").called_operator(namespace, name)
    return next((op for op in get_backend(framework).operators() if called in op.all_names), None)


def comparison_document(
    rows: Sequence[Row], namespaces: Sequence[str], options: RunOptions, command_line: Sequence[str]
) -> dict[str, object]:
    """The comparison as a results document: every measurement a record (with its namespace and
    function), and ``comparison.rows`` pairing them per operator and configuration, with each
    namespace's record index (None where it was not measured), forward ratio and problem."""
    from opperf.results.document import SCHEMA_VERSION, record

    records: list[dict[str, Any]] = []
    paired = []
    found = verdicts(rows, namespaces)
    for index, row in enumerate(rows):
        indices: dict[str, int | None] = {}
        for namespace in namespaces:
            measurement = row.measurements.get(namespace)
            indices[namespace] = None if measurement is None else len(records)
            if measurement is not None:
                records.append(record(measurement))
        ratios = {ns: forward_ratio(row, ns, namespaces[0]) for ns in namespaces}
        paired.append(
            {
                "operator": row.operator,
                "inputs": _inputs(row.configuration),
                "records": indices,
                "rounds": {ns: len(found) for ns, found in row.rounds.items()},
                "forward_ratio": {ns: round(r, 4) if r is not None else None for ns, r in ratios.items()},
                "versus": {
                    ns: {
                        phase: _versus_dict(found.get((index, ns, phase)))
                        for phase in ("forward", "backward")
                    }
                    for ns in namespaces[1:]
                },
                "problems": dict(row.problems),
            }
        )
    frameworks = dict.fromkeys(framework_of_namespace(namespace) for namespace in namespaces)
    environment = {
        "namespaces": list(namespaces),
        "threads": options.threads,
        "device": str(options.device),
        "dtype": options.dtype,
        "profiler": options.profiler,
        "profilers": {name: replace(options, framework=name).profiler_in_effect for name in frameworks},
        "frameworks": {name: get_backend(name).environment() for name in frameworks},
        "command_line": list(command_line),
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "environment": environment,
        "results": records,
        "comparison": {"namespaces": list(namespaces), "threads": options.threads, "rows": paired},
    }


def _versus_dict(found: Versus | None) -> dict[str, object] | None:
    if found is None:
        return None
    return {
        "ratio": round(found.ratio, 4),
        "ratio_ci95": [round(found.low, 4), round(cast(float, found.high), 4)]
        if found.low is not None
        else None,
        "verdict": found.verdict.value,
        "reason": found.reason,
        "flags": list(found.flags),
    }


def render_markdown(rows: Sequence[Row], namespaces: Sequence[str], threads: int | None = None) -> str:
    """The comparison as a Markdown table, then what could not be compared and why."""
    threads_note = f" Every namespace ran with {counted(threads, 'intra-op thread')}." if threads else ""
    lines = [
        f"# {' vs '.join(namespaces)}",
        "",
        f"Median forward and backward times over each configuration's rounds, the namespaces taking turns; "
        f"each namespace against {namespaces[0]}: the ratio of the rounds' fastest passes, its 95% interval "
        "and verdict, as opperf diff decides (slower: that namespace is slower)." + threads_note,
        "",
        markdown_table(table_rows(rows, namespaces), headers=table_headers(namespaces)),
        "",
    ]
    problems = [
        [row.operator, _inputs(row.configuration), namespace, problem]
        for row in rows
        for namespace, problem in row.problems.items()
    ]
    failures = [
        [row.operator, _inputs(row.configuration), namespace, f"{m.status.value}: {m.reason}"]
        for row in rows
        for namespace, m in row.measurements.items()
        if m is not None and m.forward is None
    ]
    listed = notes(rows, namespaces)
    if listed:
        lines += ["## Notes", "", markdown_table(listed, headers=("operator", "inputs", "phase", "note")), ""]
    if problems or failures:
        headers = ("operator", "inputs", "namespace", "why not compared")
        lines += [
            "## Not compared",
            "",
            markdown_table(problems + failures, headers=headers),
            "",
        ]
    return "\n".join(lines) + "\n"
