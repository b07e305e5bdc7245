"""The same operator across mx.nd, mx.np/mx.npx and torch, on one input configuration."""

import math

import pytest

from opperf import run_benchmark_operator
from opperf.cli import main
from opperf.measure.benchmark import RunOptions
from opperf.operators.counterparts import Counterpart
from opperf.verdicts.compare.calls import counterpart, translate
from opperf.verdicts.compare.comparison import compare

QUICK = RunOptions(warmup=1, runs=2, threads=1)
NAMESPACES = ("mx.nd", "mx.np", "torch")


def test_tensors_translate_by_position_and_attributes_by_the_mapping():
    pooling = counterpart("Pooling", "torch")
    configuration = {"data": (2, 3, 8, 8), "kernel": (2, 2), "pad": (1, 1), "pool_type": "avg"}
    assert pooling.function_name(configuration) == "avg_pool2d"
    assert translate(configuration, ["data"], ["input"], pooling) == {
        "input": (2, 3, 8, 8),
        "kernel_size": (2, 2),
        "padding": (1, 1),
    }
    assert counterpart("FullyConnected", "mx.np") == Counterpart("mx.npx", "fully_connected")
    assert counterpart("exp", "mx.np").name == "exp"  # matched by name


@pytest.mark.parametrize(
    ("name", "configuration"),
    [
        ("add", {"lhs": (16, 16), "rhs": (16, 16)}),
        ("FullyConnected", {"data": (4, 8), "weight": (6, 8), "bias": (6,), "num_hidden": 6}),
        (
            "Convolution",
            {"data": (2, 3, 8, 8), "weight": (4, 3, 3, 3), "bias": (4,), "kernel": (3, 3), "num_filter": 4},
        ),
        (
            "BatchNorm",
            {"data": (2, 3, 4, 4), "gamma": (3,), "beta": (3,), "moving_mean": (3,), "moving_var": (3,)},
        ),
    ],
)
def test_matched_operators_run_in_every_namespace_with_backward(name, configuration):
    (row,) = compare(name, [configuration], NAMESPACES, QUICK, rounds=2)
    assert not row.problems
    for namespace, measurement in row.measurements.items():
        assert measurement.status.value == "ok", (namespace, measurement.reason)
        assert measurement.forward and measurement.backward, (namespace, measurement.backward_reason)
    assert row.measurements["torch"].spec.framework == "torch"


def test_a_configuration_without_counterpart_is_reported_not_raised():
    (row,) = compare(
        "Pooling", [{"data": (2, 3, 8, 8), "kernel": (2, 2), "pool_type": "sum"}], NAMESPACES, QUICK, 2
    )
    assert row.measurements["torch"] is None and "sum" in row.problems["torch"]
    assert row.measurements["mx.nd"].status.value == "ok"


@pytest.mark.slow
def test_run_benchmark_operator_compares_with_torch():
    results = run_benchmark_operator(name="add", namespaces=NAMESPACES, size=(16, 16), warmup=1, runs=2)
    assert [set(r["add"][0]["inputs"]) for r in results] == [{"lhs", "rhs"}, {"x1", "x2"}, {"input", "other"}]


def test_cli_comparison_table(tmp_path):
    output = tmp_path / "compare.md"
    # Three rounds: each waits for a fresh MXNet and a fresh PyTorch worker (``sweep --compare`` takes the
    # default twenty, and is run in test_compare_output).
    flags = ["compare", "mx.nd,torch", "--ops", "exp", "--warmup", "1", "--runs", "2", "--threads", "1"]
    flags += ["--rounds", "3"]
    status = main([*flags, "--output-file", str(output)])
    text = output.read_text()
    assert status == 0
    assert "mx.nd fwd ms" in text and "fwd vs mx.nd" in text and "bwd vs mx.nd" in text
    table = text.split("## Notes")[0]
    assert len([line for line in table.splitlines() if line.startswith("| exp ")]) == 3  # a row per shape


def _rounds(seconds: list[float]) -> tuple:
    from opperf.results.measurement import BenchmarkSpec, Measurement, Status

    spec = BenchmarkSpec("mx.nd", "exp", ())
    return tuple(Measurement(spec=spec, status=Status.OK, forward=(t, t * 1.01, t * 1.02)) for t in seconds)


def test_each_namespace_gets_a_ratio_interval_and_verdict_against_the_first():
    """Five rounds each: twice the time in every round is slower; within 1% round by round, same; a
    namespace measured in one round only gets no interval (no estimate of the rounds' noise)."""
    from opperf.verdicts.compare.namespaces import versus

    base = [1e-3 * f for f in (1.0, 1.01, 0.99, 1.0, 1.02)]
    configurations = [
        {"mx.nd": _rounds(base), "mx.np": _rounds([2 * t for t in base]),
         "torch": _rounds([t * 1.003 for t in base])},
        {"mx.nd": _rounds(base[:1]), "mx.np": _rounds(base[:1]), "torch": _rounds(base[:1])},
    ]  # fmt: skip
    found = versus(configurations, ["mx.nd", "mx.np", "torch"], 0.05, 0.05)
    slower, same = found[0, "mx.np", "forward"], found[0, "torch", "forward"]
    assert slower.verdict.value == "slower" and slower.ratio == pytest.approx(2.0) and slower.low > 1.9
    assert same.verdict.value == "same" and same.low > 0.95 and same.high < 1.05
    single = found[1, "mx.np", "forward"]
    assert single.verdict.value == "inconclusive" and single.low is None
    assert (0, "mx.np", "backward") not in found  # neither side measured it


def test_a_namespace_whose_passes_read_0_s_gets_no_ratio_on_either_side():
    """A timer that read 0 s for a namespace's passes leaves its row without a ratio, whichever side
    it is on (the other namespace's or the first's), as a phase one side did not measure."""
    from opperf.verdicts.compare.namespaces import versus

    base, zero = [1e-3] * 3, [0.0] * 3
    for first, other in ((base, zero), (zero, base)):
        rounds = {"mx.nd": _rounds(first), "mx.np": _rounds(other), "torch": _rounds(base)}
        found = versus([rounds], ["mx.nd", "mx.np", "torch"], 0.05, 0.05)
        assert (0, "mx.np", "forward") not in found
        assert ((0, "torch", "forward") in found) is (first is base)


def test_a_phase_one_namespace_does_no_work_in_is_noted():
    from opperf.verdicts.compare.namespaces import no_work_note

    note = no_work_note({"mx.nd": 0.94e-3, "torch": 5e-6}, "backward")
    assert note.startswith(
        "torch's backward takes 0.005 ms against mx.nd's 0.94 ms: it likely computes nothing"
    )
    assert no_work_note({"mx.nd": 0.94e-3, "torch": 0.5e-3}, "backward") is None
    assert no_work_note({"mx.nd": 9e-6, "torch": 5e-6}, "forward") is None


def test_a_configurations_rounds_settle_when_every_verdict_is_same_called_or_below_the_tick():
    """Five rounds: twice the time is called far inside the level and within 1% is same, both
    settled; rounds that scatter by 20% leave an unsettled inconclusive verdict; a 4 us operator on
    a 1 us timer is inconclusive below its resolution, and settled."""
    from opperf.verdicts.compare.comparison import _settled
    from opperf.verdicts.compare.namespaces import versus

    base = [1e-3 * f for f in (1.0, 1.01, 0.99, 1.0, 1.02)]
    scattered = [t * f for t, f in zip(base, (1.2, 0.85, 1.15, 0.8, 1.1), strict=True)]
    assert _settled({"mx.nd": _rounds(base), "mx.np": _rounds([2 * t for t in base])}, ["mx.nd", "mx.np"])
    assert _settled({"mx.nd": _rounds(base), "mx.np": _rounds([t * 1.003 for t in base])}, ["mx.nd", "mx.np"])
    assert not _settled({"mx.nd": _rounds(base), "mx.np": _rounds(scattered)}, ["mx.nd", "mx.np"])
    ticks = {"mx.nd": _ticks([4, 4, 5, 4, 4]), "mx.np": _ticks([5, 4, 4, 5, 5])}
    (found,) = versus([ticks], ["mx.nd", "mx.np"], 0.05, 0.05).values()
    assert found.verdict.value == "inconclusive" and found.below_resolution and found.settled(0.05, 0.05)
    assert _settled(ticks, ["mx.nd", "mx.np"]) and _settled({"mx.nd": _rounds(base)}, ["mx.nd", "mx.np"])


def _ticks(micros: list[int]) -> tuple:
    """Rounds of a fast operator timed in whole microseconds: each round's five passes ``m`` or
    ``m + 1`` us."""
    from opperf.results.measurement import BenchmarkSpec, Measurement, Status

    spec = BenchmarkSpec("mx.nd", "exp", ())
    return tuple(
        Measurement(spec=spec, status=Status.OK, forward=tuple(k * 1e-6 for k in (m, m + 1, m, m, m + 1)))
        for m in micros
    )


def test_a_flag_shows_where_half_or_more_of_a_sides_rounds_carry_it():
    """Ten rounds a side: a busy machine in three of them is the rounds' disagreement, not a flag;
    in five of either side's, the row is flagged busy (any round's flag flagged every row)."""
    from dataclasses import replace

    from opperf.verdicts.compare.namespaces import versus

    def busy_in(count: int) -> tuple:
        steady = _rounds([1e-3] * 10)
        return tuple(replace(m, competing_load=0.9 if i < count else 0.0) for i, m in enumerate(steady))

    minority = {"mx.nd": busy_in(3), "mx.np": busy_in(0)}
    half = {"mx.nd": busy_in(0), "mx.np": busy_in(5)}
    found = versus([minority, half], ["mx.nd", "mx.np"], 0.05, 0.05)
    assert found[0, "mx.np", "forward"].flags == ()
    assert found[1, "mx.np", "forward"].flags == ("busy",)


def test_compare_takes_its_minimum_rounds_and_more_only_while_unsettled():
    (row,) = compare("exp", [{"data": (64, 64)}], ("mx.nd", "mx.np"), QUICK, rounds=6, min_rounds=3)
    taken = len(row.rounds["mx.nd"])
    assert 3 <= taken <= 6 and len(row.rounds["mx.np"]) == taken
    from opperf.verdicts.compare.comparison import _settled

    shorter = {ns: found[: taken - 1] for ns, found in row.rounds.items()}
    assert taken == 3 or not _settled(shorter, ("mx.nd", "mx.np"))
    assert taken == 6 or _settled(row.rounds, ("mx.nd", "mx.np"))


def test_rows_alike_at_a_timer_coarser_than_the_threshold_are_never_same():
    """Two namespaces that read the same 9-10 us in every round, on a 1 us timer: a tick is more
    than the threshold, so the verdict is ``inconclusive`` and says why, run after run (it was
    ``same`` in some runs and not in others)."""
    import random

    from opperf.verdicts.compare.namespaces import versus

    draw = random.Random(3)
    steady = [  # rows of 1 ms whose rounds agree within 1%: the rounds' variance prior
        {
            "mx.nd": _rounds([1e-3] * 8),
            "mx.np": _rounds([1e-3 * math.exp(draw.gauss(0, 0.005)) for _ in range(8)]),
        }
        for _ in range(30)
    ]
    alike = {"mx.nd": _ticks([9] * 8), "mx.np": _ticks([9] * 8)}
    found = versus([*steady, alike], ["mx.nd", "mx.np"], 0.05, 0.05)
    assert {found[i, "mx.np", "forward"].verdict.value for i in range(30)} == {"same"}
    quantised = found[30, "mx.np", "forward"]
    assert quantised.verdict.value == "inconclusive" and quantised.below_resolution
    assert "coarser than the threshold" in quantised.reason and "so it cannot say same" in quantised.reason


def test_rows_whose_rounds_scatter_beyond_the_threshold_are_never_same():
    """Twenty rounds whose ratios lie 6% either side of 1.0, a robust spread of 9% (a bimodal row, as softmax
    (1024, 1024) was), beside rows whose rounds agree within 0.5%: their mean's interval fits the 5%
    band, but the verdict is ``inconclusive`` and says why."""
    import random

    from opperf.verdicts.compare.namespaces import round_spread, versus

    draw = random.Random(3)
    steady = [
        {
            "mx.nd": _rounds([1e-3] * 20),
            "mx.np": _rounds([1e-3 * math.exp(draw.gauss(0, 0.005)) for _ in range(20)]),
        }
        for _ in range(30)
    ]
    scatter = [0.06 * (-1) ** i for i in range(20)]
    wide = {"mx.nd": _rounds([1e-3] * 20), "mx.np": _rounds([1e-3 * math.exp(s) for s in scatter])}
    found = versus([*steady, wide], ["mx.nd", "mx.np"], 0.05, 0.05)
    assert {found[i, "mx.np", "forward"].verdict.value for i in range(30)} == {"same"}
    scattered = found[30, "mx.np", "forward"]
    assert scattered.low > 1 / 1.05 and scattered.high < 1.05  # the interval alone would say same
    assert scattered.verdict.value == "inconclusive" and "scatter by 9%" in scattered.reason
    assert round_spread(scatter) == pytest.approx(0.06 * 1.4826)
    assert round_spread([0.3, 0.0]) == 0.0  # two rounds give no spread


def test_a_same_near_the_band_edge_is_not_settled_until_its_99_percent_interval_fits():
    """Six rounds 2.5% either side of 1.0, beside rows 1% apart: ``same`` (its 95% interval
    0.955-1.047 fits the 5% band), but widened to 99% it does not, so the configuration gets more
    rounds; at 1% either side it settles."""
    from opperf.verdicts.compare.namespaces import versus

    def rounds(spread: float) -> dict:
        factors = (1, -1, 0.5, -0.5, 1, -1)
        return {
            "mx.nd": _rounds([1e-3] * 6),
            "mx.np": _rounds([1e-3 * math.exp(spread * f) for f in factors]),
        }

    found = versus([*(rounds(0.01) for _ in range(10)), rounds(0.025)], ["mx.nd", "mx.np"], 0.05, 0.05)
    edge, steady = found[10, "mx.np", "forward"], found[0, "mx.np", "forward"]
    assert edge.verdict.value == "same" and edge.low > 1 / 1.05 and edge.high < 1.05
    assert not edge.settled(0.05, 0.05)
    assert steady.verdict.value == "same" and steady.settled(0.05, 0.05)


def test_a_wrapper_no_rule_fits_takes_its_counterparts_rules_in_its_own_names():
    # mx.np.hstack(arrays) calls an operator taking *data; jnp.hstack(tup) is a registered operator
    # whose rules fit once its argument takes mx.np's name at the same position.
    from opperf.results.measurement import TensorSpec
    from opperf.verdicts.compare.selection import configurations

    found = configurations("hstack", ("mx.np", "jnp", "torch"))
    assert found and all(set(c) == {"arrays"} for c in found)
    assert all(isinstance(t, TensorSpec) for c in found for t in c["arrays"])
    # A NumPy ufunc mx.np exposes has no signature: the counterpart's names (x1, x2) stay.
    assert all({"x1", "x2"} <= set(c) for c in configurations("float_power", ("mx.np", "jnp")))


def test_numpy_style_functions_compare_in_mx_np_jnp_and_torch():
    # allclose is NumPy's own function that mx.np exposes: called by keyword, MXNet's dispatch found
    # no context; clip's bounds are numbers where jnp takes arrays; swapaxes' axes are named otherwise
    # in torch.
    # In workers: JAX's thread count is fixed when its backend starts, which another test in this
    # process may have done. One comparison of all five: its round starts one worker a framework.
    from opperf.verdicts.compare.comparison import compare_operators
    from opperf.verdicts.compare.measuring import InWorkers
    from opperf.verdicts.compare.selection import configurations

    namespaces = ("mx.np", "jnp", "torch")
    names = ("hstack", "float_power", "allclose", "clip", "swapaxes")
    operators = {name: configurations(name, namespaces)[:1] for name in names}
    with InWorkers(timeout_s=120, affinity="none", threads=1) as measure:
        rows = compare_operators(operators, namespaces, QUICK, rounds=1, measure=measure).rows
    assert [row.operator for row in rows] == list(names)
    for row in rows:
        assert not row.problems, (row.operator, row.problems)
        for namespace, measurement in row.measurements.items():
            assert measurement.status.value == "ok", (row.operator, namespace, measurement.reason)


class _Recording:
    """A measurer that notes (round, namespace, configuration's inputs, worker) of each measurement
    it passes on."""

    def __init__(self, inner):
        self.inner = inner
        self.seen = []

    def __call__(self, namespace, spec, function, index):
        measured = self.inner(namespace, spec, function, index)
        pid = self.inner.worker_pid(namespace) if hasattr(self.inner, "worker_pid") else None
        self.seen.append((index, namespace, str(dict(spec.inputs)), pid))
        return measured

    def start_round(self, index):
        self.inner.start_round(index)


def test_a_round_is_a_pass_over_every_operator_and_configuration_still_unsettled():
    from opperf.verdicts.compare.comparison import compare_operators
    from opperf.verdicts.compare.measuring import in_process

    operators = {"exp": [{"data": (32, 32)}, {"data": (64, 64)}], "negative": [{"data": (32, 32)}]}
    recording = _Recording(in_process)
    namespaces = ("mx.nd", "mx.np")
    rows = compare_operators(operators, namespaces, QUICK, rounds=2, min_rounds=2, measure=recording).rows
    assert [(row.operator, dict(row.configuration)) for row in rows] == [
        ("exp", {"data": (32, 32)}),
        ("exp", {"data": (64, 64)}),
        ("negative", {"data": (32, 32)}),
    ]
    rounds = [index for index, *_ in recording.seen]
    assert rounds == sorted(rounds) == [0] * 6 + [1] * 6  # each round whole before the next
    # the namespaces take turns within a configuration, the first going first in even rounds
    assert [namespace for index, namespace, *_ in recording.seen if index == 1][:2] == ["mx.np", "mx.nd"]
    assert all(len(row.rounds[ns]) == 2 for row in rows for ns in ("mx.nd", "mx.np"))


def test_each_round_of_a_comparison_in_workers_runs_in_fresh_workers():
    # One worker's state outlives its configurations: measured here, softmax (10000, 100) forward read
    # mx.np 1.71x mx.nd in all 12 rounds of one run sharing a worker, and 0.98-1.02 in three others.
    from opperf.verdicts.compare.measuring import InWorkers

    with InWorkers(timeout_s=120, affinity="none", threads=1) as workers:
        recording = _Recording(workers)
        compare("exp", [{"data": (32, 32)}, {"data": (64, 64)}], ("mx.nd", "mx.np"), QUICK, 2, 2, recording)
    pids = {}
    for index, _, _, pid in recording.seen:
        assert pid is not None
        pids.setdefault(index, set()).add(pid)
    # one worker a round, which both MXNet namespaces share, and a fresh one each round
    assert all(len(found) == 1 for found in pids.values())
    assert len({found.pop() for found in pids.values()}) == len(pids) == 2


def test_a_namespace_whose_worker_dies_once_is_measured_again(tmp_path, monkeypatch):
    # Without a second try, one crash of mx.np's worker left the row without mx.np for good.
    from pathlib import Path

    from opperf.verdicts.compare.measuring import InWorkers

    marker = tmp_path / "crashed-once"
    site = Path(__file__).resolve().parents[1] / "benchmarks" / "slowdown"
    monkeypatch.setenv("PYTHONPATH", str(site))  # the workers' environment, inherited
    monkeypatch.setenv("OPPERF_TEST_CRASH_ONCE", f"exp:{marker}")
    with InWorkers(timeout_s=120, affinity="none", threads=1) as workers:
        (row,) = compare("exp", [{"data": (32, 32)}], ("mx.nd", "mx.np"), QUICK, 1, 1, workers)
    assert marker.exists() and not row.problems
    measured = [row.measurements[ns] for ns in ("mx.nd", "mx.np")]
    assert all(m.status.value == "ok" for m in measured)
    # mx.nd goes first in round 0, so its worker met the crash
    assert (measured[0].reason or "").startswith("crashed once (worker killed by SIGABRT")
