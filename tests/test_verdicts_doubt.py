"""Which rows the doubt flags keep from being called, by hand: separate sweeps drop a row whose
side is mostly short of its precision target or ran on a busy machine; paired rounds never (their
rounds' agreement is what the row's test weighs)."""

from __future__ import annotations

import pytest

from opperf.verdicts.diff import Side, doubt


def _side(runs: int, imprecise: int = 0, busy: int = 0) -> Side:
    medians = tuple(1e-3 for _ in range(runs))
    return Side(
        median=1e-3,
        low=0.99e-3,
        high=1.01e-3,
        run_medians=medians,
        precision=0.01,
        noisy=False,
        imprecise=imprecise > 0,
        busy=busy > 0,
        imprecise_runs=imprecise,
    )


@pytest.mark.parametrize(
    ("runs", "imprecise", "callable_row"),
    [
        (1, 0, True),
        (1, 1, False),
        (2, 1, False),
        (2, 2, False),
        (3, 1, True),
        (3, 2, True),
        (3, 3, True),
        (5, 3, True),
    ],
)
def test_imprecise_runs_disqualify_only_sides_of_one_or_two_sweeps(runs, imprecise, callable_row):
    """Half or more of one or two runs short of their precision target hold a row back; three runs
    and more are their own precision, whatever their targets."""
    clean = _side(runs)
    reason = doubt(clean, _side(runs, imprecise=imprecise))
    assert (reason is None) is callable_row
    if not callable_row:
        assert reason == "short of its precision target (new)"
    assert (doubt(_side(runs, imprecise=imprecise), clean) is None) is callable_row


def test_a_busy_run_disqualifies_a_sweep_but_busy_rounds_never_a_pair():
    assert doubt(_side(3, busy=1), _side(3)) == "busy machine (base)"
    assert doubt(_side(3, busy=1), _side(3), rounds=True) is None
    assert doubt(_side(6, busy=6), _side(6, busy=6), rounds=True) is None


def test_rounds_never_need_their_precision_target():
    assert doubt(_side(3, imprecise=3), _side(3, imprecise=3), rounds=True) is None
    both = doubt(_side(2, imprecise=1, busy=1), _side(1, imprecise=1))
    assert (
        both
        == "busy machine (base), short of its precision target (base), short of its precision target (new)"
    )
    assert doubt(_side(3, imprecise=2, busy=1), _side(1, imprecise=1)) == (
        "busy machine (base), short of its precision target (new)"
    )
