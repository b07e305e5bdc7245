"""Sequential rounds of an A/B job (``opperf.sequential``): which configurations get another round,
by hand-made rounds and in a real job, reconstructed from its file."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping

import pytest

from opperf.ab import CONFIGURATION_BUDGETS, Build, ab_document, run_ab
from opperf.options import RunOptions
from opperf.report.json_report import render_json
from opperf.results import BenchmarkSpec, Measurement, Status, TensorSpec, freeze_inputs
from opperf.sequential import RoundBook, Schedule, decided
from opperf.sweep import SweepConfig
from opperf.verdicts.diff import diff, diff_ab
from opperf.verdicts.load import canonical_inputs, read_ab


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


def test_a_configuration_whose_rounds_spent_the_schedules_sampling_gets_no_further_round():
    """Of four configurations left undecided after three rounds, the one whose rounds each spent
    1 s of sampling a side (6 s in all) stops at a limit of 5 s; those that spent 0.5 s a round
    (3 s) go on, and with no limit all four do."""
    quiet, noisy = [_spec(s) for s in range(1, 31)], [_spec(s) for s in range(31, 35)]
    costly, *cheap = noisy
    book = _book(quiet, noisy, [], 3, {costly: 1.0, **{spec: 0.5 for spec in cheap}})
    assert book.undecided(Schedule(3, 12, max_sampling_s=5.0), [*quiet, *noisy]) == cheap
    assert book.undecided(Schedule(3, 12), [*quiet, *noisy]) == noisy
    assert Schedule(3, 12, max_sampling_s=5.0).describe()["max_sampling_s"] == 5.0


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
    configuration got round j (j >= 2) exactly when the diff of rounds 0..j-1 (what the job saw)
    left a row of it undecided."""
    options = RunOptions(threads=1, warmup=1, runs=3)
    config = SweepConfig(options=options, ops=("exp",))
    result = run_ab(config, {"base": Build(), "new": Build()}, rounds=4, min_rounds=2)
    assert result.schedule.max_sampling_s == CONFIGURATION_BUDGETS * options.budget_s == 1.0
    path = tmp_path / "ab.json"
    path.write_text(render_json(ab_document(result, {})))
    document = json.loads(path.read_text())
    assert document["ab"]["schedule"]["min_rounds"] == 2 and document["ab"]["schedule"]["max_rounds"] == 4
    got: dict[tuple[str, str], int] = {}
    for record in document["results"]:
        if record["side"] == "base":
            name = (record["op"], canonical_inputs(record["inputs"]))
            got[name] = max(got.get(name, 0), record["round"] + 1)
    assert set(document["ab"]["schedule"]["rounds_run"]) == {str(k) for k in got.values()}
    for look in range(2, 4):
        early = {**document, "results": [r for r in document["results"] if r["round"] < look]}
        early_path = tmp_path / f"look{look}.json"
        early_path.write_text(json.dumps(early))
        rows = diff_ab(read_ab(str(early_path)), 0.05, 0.05).rows
        open_now = {(row.key.op, row.key.inputs) for row in rows if not decided(row, result.schedule)}
        for name, rounds in got.items():
            if rounds >= look:  # it was still running at this look
                assert (rounds > look) == (name in open_now), (name, look, rounds)
