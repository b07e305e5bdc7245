"""Sequential rounds of an A/B job (``opperf.verdicts.ab.sequential``): which configurations get another
round,
by hand-made rounds and in a real job, reconstructed from its file."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping

import pytest

from opperf.report.json_report import render_json
from opperf.results.key import canonical_inputs
from opperf.results.load import read_ab
from opperf.results.measurement import BenchmarkSpec, Measurement, Status, TensorSpec, freeze_inputs
from opperf.results.options import RunOptions
from opperf.sweep.run import SweepConfig
from opperf.verdicts.ab.job import Build, ab_document, run_ab
from opperf.verdicts.ab.sequential import (
    EXTRA_SHARE,
    RoundBook,
    Schedule,
    beyond_band,
    changed_every_round,
    decided,
)
from opperf.verdicts.diff import diff, diff_ab


def _spec(size: int) -> BenchmarkSpec:
    return BenchmarkSpec("mx.nd", "exp", freeze_inputs({"data": TensorSpec((size, 8))}), RunOptions(runs=5))


def _measured(spec: BenchmarkSpec, seconds: float, sampling_s: float | None = None) -> Measurement:
    """Five passes around ``seconds`` (0.1% apart), the fastest ``seconds``."""
    forward = tuple(seconds * (1 + 0.001 * k) for k in range(5))
    return Measurement(spec, Status.OK, forward=forward, sampling_s=sampling_s)


def _book(
    quiet: list[BenchmarkSpec],
    noisy: list[BenchmarkSpec],
    slowed: list[BenchmarkSpec],
    rounds: int,
    sampling_s: Mapping[BenchmarkSpec, float] | None = None,
):
    """Rounds whose log ratios new/base are within 0.5% of 1 (quiet), scattered by 25% (noisy), or
    1.3 within 0.5% (slowed); every round also moves both sides alike (the machine). Each side's
    round of a configuration spent ``sampling_s`` of it sampling (none where not given)."""
    generator = random.Random(7)
    book = RoundBook()
    for index in range(rounds):
        machine = math.exp(generator.gauss(0, 0.2))
        for group, centre, spread in ((quiet, 1.0, 0.005), (noisy, 1.0, 0.25), (slowed, 1.3, 0.005)):
            for spec in group:
                base = 1e-3 * machine
                ratio = centre * math.exp(generator.uniform(-spread, spread))
                spent = (sampling_s or {}).get(spec)
                book.add(index, "base", _measured(spec, base, spent))
                book.add(index, "new", _measured(spec, base * ratio, spent))
    return book


def test_only_undecided_configurations_get_another_round():
    """After three rounds, 30 configurations whose rounds agree within 0.5% are ``same`` and 4
    that agree on a 30% slowdown are called at the stopping level: both stop; the 4 whose rounds
    scatter by 25% get another round, and after 12 rounds nothing is left undecided that was decided
    before (a row stopped as same is within the threshold, so its rounds can never be called)."""
    quiet, noisy, slowed = (
        [_spec(s) for s in range(1, 31)],
        [_spec(s) for s in range(31, 35)],
        [_spec(s) for s in range(35, 39)],
    )
    schedule = Schedule(min_rounds=3, max_rounds=12)
    book = _book(quiet, noisy, slowed, 3)
    assert book.undecided(schedule, [*quiet, *noisy, *slowed]) == noisy
    rows = diff(book.runs("base"), book.runs("new"), 0.05, 0.05, paired=True).rows
    verdicts = {json.loads(row.key.inputs)["data"]["shape"][0]: row.verdict.value for row in rows}
    assert {verdicts[size] for size in range(1, 31)} == {"same"}
    assert {verdicts[size] for size in range(35, 39)} == {"slower"}
    assert {verdicts[size] for size in range(31, 35)} == {"inconclusive"}


def test_every_active_configuration_gets_a_round_while_the_sides_share_none():
    """Rounds that cannot be diffed yet (the base side measured one configuration, the new side
    another) leave every active configuration open, cheapest first within the budget."""
    first, second = _spec(1), _spec(2)
    book = RoundBook()
    for index in range(2):
        book.add(index, "base", _measured(first, 1e-3))
        book.add(index, "new", _measured(second, 1e-3))
    assert book.undecided(Schedule(min_rounds=2, max_rounds=5), [first, second]) == [first, second]


def test_the_rounds_after_the_minimum_go_to_undecided_configurations_within_the_jobs_budget():
    """Three rounds cost 33 s of sampling: 30 settled configurations at 0.1 s a side and round,
    three undecided ones at 0.5 s and one at 1 s (rounds of 1 s and 2 s, both sides). A budget of a
    fifth of that (6.6 s, 1.65 s a configuration undecided) buys the three cheap rounds and not the
    costly one, though 3.6 s would be left for it; half (16.5 s), or no limit, buys all four; a
    twentieth (1.65 s, 0.41 s each) none."""
    quiet, noisy = [_spec(s) for s in range(1, 31)], [_spec(s) for s in range(31, 35)]
    costly, *cheap = noisy
    book = _book(
        quiet, noisy, [], 3, {costly: 1.0, **{spec: 0.5 for spec in cheap}, **dict.fromkeys(quiet, 0.1)}
    )
    assert book.round_cost(costly) == 2.0 and book.budget_left(
        Schedule(3, 12, extra_share=0.2)
    ) == pytest.approx(6.6)
    equal = {"promising_shares": 1.0}  # every undecided configuration held to an equal share
    assert book.undecided(Schedule(3, 12, extra_share=0.2, **equal), [*quiet, *noisy]) == cheap
    assert book.undecided(Schedule(3, 12, extra_share=0.5, **equal), [*quiet, *noisy]) == noisy
    assert book.undecided(Schedule(3, 12, extra_share=None, **equal), [*quiet, *noisy]) == noisy
    assert book.undecided(Schedule(3, 12, extra_share=0.05, **equal), [*quiet, *noisy]) == []
    assert Schedule(3, 12, extra_share=0.2).describe()["extra_share"] == 0.2


def test_a_row_beyond_the_band_goes_before_the_rows_near_one_and_may_cost_more_than_a_share():
    """Two undecided configurations: one whose rounds scatter around 1 (cheap), one whose rounds
    scatter around 1.3 (costly: 0.4 s a side and round, more than an equal share of the budget). The
    one beyond the band gets its round first, up to ``promising_shares`` shares; held to one share,
    only the cheap one gets a round."""
    near, beyond = _spec(1), _spec(2)
    book = RoundBook()
    generator = random.Random(11)
    for index in range(2):
        for spec, factor, spent in ((near, 1.0, 0.1), (beyond, 1.3, 0.4)):
            for side, scale in (("base", 1.0), ("new", factor * math.exp(generator.uniform(-0.2, 0.2)))):
                forward = tuple(1e-3 * scale * math.exp(generator.uniform(0, 0.6)) for _ in range(5))
                book.add(index, side, Measurement(spec, Status.OK, forward=forward, sampling_s=spent))
    found = diff(book.runs("base"), book.runs("new"), 0.05, 0.05, paired=True).rows
    rows = {json.loads(row.key.inputs)["data"]["shape"][0]: row for row in found}
    assert all(not decided(row, Schedule(2, 10)) for row in rows.values()), [r.verdict for r in rows.values()]
    assert beyond_band(rows[2], 0.05) and not changed_every_round(rows[2])
    budget = {"extra_share": 1.2 / 2.0}  # 1.2 s left, 0.6 s a configuration; rounds of 0.2 and 0.8 s
    assert set(book.undecided(Schedule(2, 10, **budget), [near, beyond])) >= {beyond}
    assert book.undecided(Schedule(2, 10, promising_shares=1.0, **budget), [near, beyond]) == [near]


def test_a_change_beyond_twice_in_every_round_is_first_in_line():
    """Of two undecided configurations, one slowed 3x in both its rounds (its passes too scattered
    for a call) costs more a round than the other and than an equal share of the budget: with the
    budget for its round alone, it gets it."""
    steady, doubled = _spec(1), _spec(2)
    book = RoundBook()
    generator = random.Random(5)
    for index in range(2):
        for spec, factor, spent in ((steady, 1.0, 0.1), (doubled, 3.0, 0.4)):
            for side, scale in (("base", 1.0), ("new", factor)):
                forward = tuple(1e-3 * scale * math.exp(generator.uniform(0, 1.5)) for _ in range(5))
                book.add(index, side, Measurement(spec, Status.OK, forward=forward, sampling_s=spent))
    found = diff(book.runs("base"), book.runs("new"), 0.05, 0.05, paired=True).rows
    rows = {json.loads(row.key.inputs)["data"]["shape"][0]: row for row in found}
    assert all(not decided(row, Schedule(2, 10)) for row in rows.values()), [r.verdict for r in rows.values()]
    assert {size: changed_every_round(row) for size, row in rows.items()} == {1: False, 2: True}
    assert book.undecided(Schedule(2, 10, extra_share=0.8 / 2.0), [steady, doubled]) == [doubled]


def test_rows_below_the_timers_resolution_stop_after_the_minimum():
    """A 10 us operator timed in whole microseconds reads 9, 10 or 11 us a round: one tick is 10%
    of its time, more than the 5% threshold, so its rows stop after the minimum rounds,
    inconclusive with the tick as the reason; rows scattered as widely at 1 ms go on."""
    generator = random.Random(3)
    coarse, fine = [_spec(s) for s in range(1, 5)], [_spec(s) for s in range(5, 25)]
    book = RoundBook()
    for index in range(3):
        for spec in coarse:
            for side in ("base", "new"):
                micros = 10 + generator.choice((-1, 0, 1))
                forward = tuple(1e-6 * (micros + k % 2) for k in range(5))  # whole microseconds
                book.add(index, side, Measurement(spec, Status.OK, forward=forward))
        for spec in fine:
            base = 1e-3
            book.add(index, "base", _measured(spec, base))
            book.add(index, "new", _measured(spec, base * math.exp(generator.uniform(-0.1, 0.1))))
    schedule = Schedule(min_rounds=3, max_rounds=10)
    rows = diff(book.runs("base"), book.runs("new"), 0.05, 0.05, paired=True).rows
    coarse_rows = [row for row in rows if json.loads(row.key.inputs)["data"]["shape"][0] < 5]
    assert coarse_rows and all(row.verdict.value in ("inconclusive", "same") for row in coarse_rows)
    assert all(decided(row, schedule) for row in coarse_rows)
    inconclusive = [row for row in coarse_rows if row.verdict.value == "inconclusive"]
    assert inconclusive and all("one tick of the timer (1 us)" in row.reason for row in inconclusive)
    assert set(book.undecided(schedule, [*coarse, *fine])) <= set(fine)


def test_the_schedule_looks_between_the_minimum_and_the_maximum():
    schedule = Schedule(min_rounds=3, max_rounds=5)
    assert [schedule.looks_after(done) for done in range(1, 6)] == [False, False, True, True, False]
    assert not Schedule(4, 4).looks_after(4) and not Schedule(4, 4).adaptive


@pytest.mark.slow
def test_a_real_job_gives_another_round_exactly_to_what_its_file_leaves_undecided(tmp_path):
    """An A/A job of real MXNet workers, two to four rounds: reading its own file back, each
    configuration got round j (j >= 2) only when the diff of rounds 0..j-1 (what the job saw) left
    a row of it undecided, and every such configuration got it unless its round cost more than the
    job's budget left after those that did."""
    options = RunOptions(threads=1, warmup=1, runs=3)
    config = SweepConfig(options=options, ops=("exp",))
    result = run_ab(config, {"base": Build(), "new": Build()}, rounds=4, min_rounds=2)
    assert result.schedule.extra_share == EXTRA_SHARE
    path = tmp_path / "ab.json"
    path.write_text(render_json(ab_document(result, {})))
    document = json.loads(path.read_text())
    assert document["ab"]["schedule"]["min_rounds"] == 2 and document["ab"]["schedule"]["max_rounds"] == 4
    got: dict[tuple[str, str], int] = {}
    spent: dict[tuple[tuple[str, str], int], float] = {}
    for record in document["results"]:
        name = (record["op"], canonical_inputs(record["inputs"]))
        got[name] = max(got.get(name, 0), record["round"] + 1)
        spent[name, record["round"]] = spent.get((name, record["round"]), 0.0) + record["sampling"]["seconds"]
    minimum = sum(seconds for (_, index), seconds in spent.items() if index < 2)
    assert set(document["ab"]["schedule"]["rounds_run"]) == {str(k) for k in got.values()}
    for look in range(2, 4):
        early = {**document, "results": [r for r in document["results"] if r["round"] < look]}
        early_path = tmp_path / f"look{look}.json"
        early_path.write_text(json.dumps(early))
        rows = diff_ab(read_ab(str(early_path)), 0.05, 0.05).rows
        open_now = {(row.key.op, row.key.inputs) for row in rows if not decided(row, result.schedule)}
        running = {name for name, rounds in got.items() if rounds >= look}
        continued = {name for name in running if got[name] > look}
        assert continued <= open_now, (look, continued - open_now)
        left = EXTRA_SHARE * minimum - sum(s for (_, index), s in spent.items() if 2 <= index < look)
        left -= sum(spent[name, look - 1] for name in continued)
        assert all(spent[name, look - 1] > left for name in (running & open_now) - continued), look
