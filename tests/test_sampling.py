"""The sampling plans, driven by scripted pass times and a fake clock: deterministic."""

import pytest

from opperf.measure.sampling import (
    MIN_RUNS,
    SETTLE_WINDOW,
    WARMUP_SHARE,
    SamplingPlan,
    StopReason,
    has_settled,
    sample,
)
from opperf.utils.load import CpuSnapshot


class FakeClock:
    """A clock that advances only when a pass 'runs'."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def scripted(clock: FakeClock, times, backward_ratio: float | None = 2.0):
    """Pass functions returning ``times`` in turn (repeating the last), advancing the clock."""
    state = {"i": 0}

    def next_time() -> float:
        t = times[min(state["i"], len(times) - 1)]
        state["i"] += 1
        clock.now += t * (1 + (backward_ratio or 0))
        return t

    def run_pass() -> float:
        return next_time()

    def measure_pass():
        t = next_time()
        return t, (t * backward_ratio if backward_ratio is not None else None)

    return run_pass, measure_pass


def test_fixed_counts_run_exactly_as_asked():
    clock = FakeClock()
    run_pass, measure_pass = scripted(clock, [1e-3])
    result = sample(run_pass, measure_pass, SamplingPlan(warmup=3, runs=7), clock)
    assert result.warmup_runs == 3
    assert len(result.forward) == 7 and len(result.backward) == 7
    assert result.stop_reason is StopReason.FIXED and result.met_target is None


def test_steady_times_stop_at_the_minimum_once_precise():
    clock = FakeClock()
    run_pass, measure_pass = scripted(clock, [1e-3])
    plan = SamplingPlan(min_runs=5)
    result = sample(run_pass, measure_pass, plan, clock)
    assert result.warmup_runs == SETTLE_WINDOW  # identical times settle at once
    assert len(result.forward) == 5
    assert result.stop_reason is StopReason.PRECISE and result.met_target is True


def test_warm_up_continues_until_times_settle():
    clock = FakeClock()
    # A slow first pass (allocation, JIT) then steady ones.
    run_pass, measure_pass = scripted(clock, [5e-3, 3e-3, 1e-3, 1e-3, 1e-3])
    result = sample(run_pass, measure_pass, SamplingPlan(), clock)
    assert result.warmup_runs == 5


def test_noisy_times_run_until_the_budget_is_spent():
    clock = FakeClock()
    noisy = [1e-3, 2e-3, 0.5e-3, 3e-3] * 1000
    run_pass, measure_pass = scripted(clock, noisy)
    plan = SamplingPlan(budget_s=0.5, warmup=2)
    result = sample(run_pass, measure_pass, plan, clock)
    assert result.stop_reason is StopReason.BUDGET and result.met_target is False
    # Stops at the first pass past the budget: at most one pass (6 ms with backward) over.
    assert 0.5 <= clock.now <= 0.5 + 2 * 3e-3 * 3


def test_sample_cap_bounds_cheap_noisy_operators():
    clock = FakeClock()
    run_pass, measure_pass = scripted(clock, [1e-6, 3e-6] * 10000)
    result = sample(run_pass, measure_pass, SamplingPlan(warmup=0, max_runs=50), clock)
    assert result.stop_reason is StopReason.CAP and len(result.forward) == 50


def test_warm_up_never_exceeds_its_share_of_the_budget():
    clock = FakeClock()
    never_settles = [1e-3, 5e-3] * 1000
    run_pass, measure_pass = scripted(clock, never_settles, backward_ratio=None)
    plan = SamplingPlan(budget_s=0.2, max_warmup=10_000)
    result = sample(run_pass, measure_pass, plan, clock)
    assert result.backward is None
    warm_up_time = sum(never_settles[: result.warmup_runs])
    assert warm_up_time <= 0.2 * WARMUP_SHARE + 5e-3


def test_settling_needs_a_full_window_of_agreeing_times():
    assert not has_settled([1.0, 1.0])
    assert has_settled([3.0, 1.0, 1.05, 1.1])
    assert not has_settled([1.0, 1.0, 1.5])


@pytest.mark.parametrize(
    "plan",
    [SamplingPlan(runs=0), SamplingPlan(warmup=-1), SamplingPlan(target=0), SamplingPlan(budget_s=0)],
)
def test_nonsensical_plans_are_refused(plan):
    with pytest.raises(ValueError):
        plan.validated()


def test_a_lower_minimum_stops_on_the_budget_but_precision_is_judged_from_five_samples():
    """A round of an A/B job takes its share of the minimum (here 1): a steady 1 ms operator still
    takes the five samples precision is judged from, and a 40 ms one stops on the budget after one
    sample, short of its target (one sample's interval is no interval)."""
    clock = FakeClock()
    run_pass, measure_pass = scripted(clock, [1e-3])
    quick = sample(run_pass, measure_pass, SamplingPlan(min_runs=1), clock)
    assert len(quick.forward) == 5 and quick.stop_reason is StopReason.PRECISE and quick.met_target
    clock = FakeClock()
    run_pass, measure_pass = scripted(clock, [40e-3])
    slow = sample(run_pass, measure_pass, SamplingPlan(min_runs=1, budget_s=0.05, max_warmup=0), clock)
    assert slow.warmup_runs == 0
    assert len(slow.forward) == 1 and slow.stop_reason is StopReason.BUDGET and slow.met_target is False


def test_passes_run_before_sampling_take_the_place_of_as_many_fixed_warm_up_passes():
    clock = FakeClock()
    run_pass, measure_pass = scripted(clock, [1e-3])
    ran = []

    def counted() -> float:
        ran.append(1)
        return run_pass()

    result = sample(counted, measure_pass, SamplingPlan(warmup=3, runs=4), clock, warmed=(5e-3,))
    assert (len(ran), result.warmup_runs, len(result.forward)) == (2, 3, 4)
    none_asked = sample(counted, measure_pass, SamplingPlan(warmup=0, runs=4), clock, warmed=(5e-3,))
    assert none_asked.warmup_runs == 1  # it ran: the samples do not start cold
    assert len(ran) == 2


def test_a_pass_run_before_sampling_opens_the_settle_window_and_costs_no_budget():
    clock = FakeClock()
    run_pass, measure_pass = scripted(clock, [1e-3])
    plan = SamplingPlan(budget_s=1.0)
    assert sample(run_pass, measure_pass, plan, clock, warmed=(1e-3,)).warmup_runs == SETTLE_WINDOW
    clock = FakeClock()  # a slow first pass: the window needs three passes after it
    run_pass, measure_pass = scripted(clock, [1e-3])
    assert sample(run_pass, measure_pass, plan, clock, warmed=(50e-3,)).warmup_runs == SETTLE_WINDOW + 1
    noisy = [1e-3, 2e-3] * 1000  # never settles, never precise: both phases spend their budget
    runs = {}
    for warmed in ((), (50e-3,)):
        clock = FakeClock()
        result = sample(*scripted(clock, noisy), plan, clock, warmed=warmed)
        assert result.stop_reason is StopReason.BUDGET
        runs[warmed] = len(result.forward)
    assert runs[(50e-3,)] >= runs[()]  # no fewer samples for the pass that ran before


def test_long_passes_get_the_minimum_samples_with_the_budget_extension_said():
    # 70 ms a pass, noisy: the 0.25 s budget holds 3 passes; the minimum of 10 is taken anyway and
    # the record says the budget was extended for it.
    clock = FakeClock()
    run_pass, measure_pass = scripted(clock, [70e-3, 90e-3, 60e-3] * 100, backward_ratio=None)
    result = sample(run_pass, measure_pass, SamplingPlan(budget_s=0.25, warmup=1), clock)
    assert len(result.forward) == MIN_RUNS == 10
    assert result.stop_reason is StopReason.EXTENDED and result.met_target is False


def loaded_meter(clock: FakeClock, stretches):
    """A load meter whose other processes hold one core during each (start, end) stretch of the
    clock: what ``opperf.utils.load.snapshot`` reads from /proc/stat."""

    def meter() -> CpuSnapshot:
        others = sum(max(0.0, min(clock.now, end) - start) for start, end in stretches if clock.now > start)
        return CpuSnapshot(wall_s=clock.now, machine_busy_s=others, own_s=0.0)

    return meter


def test_samples_a_stretch_of_load_inflated_are_measured_again():
    """Passes 3-6 of a 70 ms configuration ran while another process held a core, at twice their
    time: they are taken again once the stretch is over, and the samples are the quiet passes."""
    clock = FakeClock()
    times = [70e-3] * 4 + [140e-3] * 4 + [70e-3] * 100  # the warm-up pass, then passes 0-2 quiet
    run_pass, measure_pass = scripted(clock, times, backward_ratio=None)
    meter = loaded_meter(clock, [(0.28, 0.84)])
    result = sample(run_pass, measure_pass, SamplingPlan(budget_s=0.25, warmup=1), clock, meter=meter)
    assert result.retaken == 4 and not result.load_dominated
    assert result.forward == (70e-3,) * MIN_RUNS
    assert result.kept == (0, 1, 2, 10, 11, 12, 13, 7, 8, 9)


def test_a_retake_never_judges_precision_from_fewer_samples_than_without_one():
    """Three samples of a minimum of three, one of them retaken: short of the five precision is
    judged from, with the retake as without it."""
    clock = FakeClock()
    times = [100e-3] * 3 + [200e-3] + [100e-3] * 10  # the warm-up pass, then the second sample inflated
    run_pass, measure_pass = scripted(clock, times, backward_ratio=None)
    plan = SamplingPlan(budget_s=0.2, warmup=1, min_runs=3)
    retaken = sample(run_pass, measure_pass, plan, clock, meter=loaded_meter(clock, [(0.25, 0.45)]))
    assert retaken.retaken == 1 and len(retaken.forward) == 3 and retaken.met_target is False


def test_a_configuration_inflated_throughout_says_so():
    """From its fourth pass on, every pass runs at twice its time under load: the retakes find no
    quiet stretch, and the record says the load dominated it."""
    clock = FakeClock()
    run_pass, measure_pass = scripted(clock, [70e-3] * 4 + [140e-3] * 100, backward_ratio=None)
    meter = loaded_meter(clock, [(0.28, 100.0)])
    result = sample(run_pass, measure_pass, SamplingPlan(budget_s=0.25, warmup=1), clock, meter=meter)
    assert result.retaken == MIN_RUNS // 2 and result.load_dominated


def test_steady_load_that_inflates_nothing_is_not_retaken():
    """A machine busy throughout at an even pace slows every pass alike: no sample stands out, and
    none is taken again (the record's competing load says the machine was busy)."""
    clock = FakeClock()
    run_pass, measure_pass = scripted(clock, [70e-3, 72e-3, 69e-3] * 40, backward_ratio=None)
    meter = loaded_meter(clock, [(0.0, 100.0)])
    result = sample(run_pass, measure_pass, SamplingPlan(budget_s=0.25, warmup=1), clock, meter=meter)
    assert result.retaken == 0 and not result.load_dominated and result.kept is None
