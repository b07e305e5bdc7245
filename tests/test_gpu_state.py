"""GPU state through NVML: what a record keeps, when it is flagged, and a machine without NVML."""

import pytest

from opperf.measure.roofline.assessment import Calibration, flags
from opperf.results.document import measurement_from_record, record
from opperf.results.measurement import (
    BenchmarkSpec,
    Measurement,
    RunOptions,
    Status,
    TensorSpec,
    freeze_inputs,
)
from opperf.results.schema import record_problem
from opperf.utils import gpu_state
from opperf.utils.devices import CPU, Device
from opperf.utils.gpu_state import GpuReading, GpuState

IDLE = GpuReading(345, 1593, 70.5, 31, ("gpu_idle",))
BOOSTED = GpuReading(1980, 2619, 310.0, 44, ())


def _measured(state: GpuState | None) -> Measurement:
    spec = BenchmarkSpec(
        "torch", "exp", freeze_inputs({"input": TensorSpec((8, 8))}), RunOptions(framework="torch")
    )
    return Measurement(spec=spec, status=Status.OK, forward=(2.2e-6, 2.3e-6), timer="device", gpu_state=state)


@pytest.mark.parametrize(
    ("before", "after", "default", "low"),
    [
        (BOOSTED, BOOSTED, 1980, False),
        (IDLE, BOOSTED, 1980, True),  # a clock that had not risen when sampling began
        (BOOSTED, GpuReading(1400, 2619, 700.0, 80, ("sw_power_cap",)), 1980, True),
        (IDLE, IDLE, None, False),  # no default clock known: nothing to judge against
    ],
)
def test_a_clock_below_three_quarters_of_the_default_is_flagged_low_clock(before, after, default, low):
    state = GpuState(before, after, default)
    assert state.low_clock is low
    assert ("low_clock" in flags(_measured(state), Calibration())) is low


def test_the_state_is_kept_through_the_results_file():
    written = record(_measured(GpuState(IDLE, BOOSTED, 1980)))
    assert record_problem(written) is None
    assert written["gpu_state"]["before"]["throttle_reasons"] == ["gpu_idle"]
    assert measurement_from_record(written).gpu_state == GpuState(IDLE, BOOSTED, 1980)
    broken = {**written, "gpu_state": {"before": {"sm_clock_mhz": -1}, "after": {}}}
    assert "gpu_state" in record_problem(broken)


def test_nothing_is_read_on_a_cpu_and_a_gpu_without_nvml_says_why():
    assert gpu_state.read(CPU) is None and gpu_state.unavailable(CPU) is None
    assert gpu_state.state(CPU, None, None) is None
    reading = gpu_state.read(Device("gpu"))
    why = gpu_state.unavailable(Device("gpu"))
    if reading is None:  # this machine: no NVIDIA driver (or no nvidia-ml-py)
        assert why.startswith(("NVML cannot start", "nvidia-ml-py is not installed"))
    else:
        assert why is None and reading.sm_clock_mhz > 0


def test_without_nvml_or_on_a_cpu_no_memory_holders_are_named():
    """The fit check names the processes holding a GPU's memory where NVML can say; here (no
    driver) and on a CPU it adds nothing."""
    import os

    assert gpu_state.memory_holders(CPU, os.getpid()) is None
    if gpu_state.unavailable(Device("gpu")) is not None:
        assert gpu_state.memory_holders(Device("gpu"), os.getpid()) is None


def test_the_gpu_cuda_sees_is_read_where_nvml_counts_it():
    """NVML counts every GPU; CUDA only those CUDA_VISIBLE_DEVICES lists, in its order. A worker of
    ``sweep --devices 0,2`` on the second GPU sees it as device 0: its state is read from NVML's 2."""
    assert gpu_state.nvml_gpu(0, {}) == 0 and gpu_state.nvml_gpu(3, {}) == 3
    assert gpu_state.nvml_gpu(0, {"CUDA_VISIBLE_DEVICES": "2"}) == 2
    assert gpu_state.nvml_gpu(1, {"CUDA_VISIBLE_DEVICES": "3, 1"}) == 1
    assert gpu_state.nvml_gpu(0, {"CUDA_VISIBLE_DEVICES": "GPU-8f6d"}) == "GPU-8f6d"
    assert gpu_state.nvml_gpu(1, {"CUDA_VISIBLE_DEVICES": "2"}) is None
    assert gpu_state.nvml_gpu(0, {"CUDA_VISIBLE_DEVICES": ""}) is None
