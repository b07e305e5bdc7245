from itertools import count

from opperf.measure.timing import PythonTimer


def test_python_timer_uses_injected_clock_and_synchronises():
    ticks = count(start=1_000, step=250_000)  # each clock read advances 250 µs
    synchronised = []
    timer = PythonTimer(synchronize=lambda: synchronised.append(True), clock=lambda: next(ticks))
    timed = timer.time(lambda: "outputs")
    assert timed.outputs == "outputs"
    assert timed.seconds == 250e-6
    # Once before starting the clock (pending work is not charged) and once before stopping it.
    assert len(synchronised) == 2
