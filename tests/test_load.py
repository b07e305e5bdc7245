"""Other processes' CPU use, from the machine's and this process's CPU clocks."""

import subprocess
import sys
import time

from opperf.utils.load import CpuSnapshot, competing_load, snapshot


def test_competing_load_is_machine_busy_time_less_our_own():
    before = CpuSnapshot(wall_s=10.0, machine_busy_s=100.0, own_s=5.0)
    after = CpuSnapshot(wall_s=12.0, machine_busy_s=103.0, own_s=6.0)
    # 3 s of the machine's busy time in 2 s of wall time, 1 s of it ours: one core's worth by others
    # (less the counters' tick resolution, a few hundredths of a second).
    assert 0.97 <= competing_load(before, after) < 1.0


def test_a_tick_of_others_in_a_short_window_is_not_a_busy_machine():
    # /proc/stat and os.times advance in whole 10 ms ticks: a 15 ms measurement on an idle machine
    # can read one tick that is not ours (0.67 cores' worth), which flagged a sixth of a quiet
    # sweep's records busy; such a reading is within the counters' resolution.
    before = CpuSnapshot(wall_s=10.0, machine_busy_s=100.0, own_s=5.0)
    after = CpuSnapshot(wall_s=10.015, machine_busy_s=100.02, own_s=5.01)
    assert competing_load(before, after) == 0.0


def test_unknown_machine_time_gives_no_figure():
    before = CpuSnapshot(wall_s=0.0, machine_busy_s=None, own_s=0.0)
    assert competing_load(before, CpuSnapshot(1.0, None, 0.5)) is None


def test_a_busy_child_process_shows_as_competing_load():
    spin = "import time\nend = time.monotonic() + 1.0\nwhile time.monotonic() < end: pass"
    child = subprocess.Popen([sys.executable, "-c", spin])
    time.sleep(0.2)  # let the interpreter start
    before = snapshot()
    time.sleep(0.5)
    after = snapshot()
    child.wait()
    assert competing_load(before, after) >= 0.5
