"""Messages between a sweep and its workers as plain values (``opperf.measure.wire``): every kind
of message comes back equal, numpy scalars arrive as Python numbers, arrays and unknown types are
refused, and a real worker answers through it."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from opperf.measure.messages import BuildDescription, DeviceFault, OverheadProbe, Round, RoundMeasured
from opperf.measure.sampling import SamplingPlan, StopReason
from opperf.measure.stages import StageCheck
from opperf.measure.wire import WireError, decode, encode
from opperf.results.measurement import Alias, BenchmarkSpec, DeviceWork, Measurement, Status, TensorSpec
from opperf.results.options import RunOptions
from opperf.utils.gpu_state import GpuReading, GpuState

SPEC = BenchmarkSpec(
    "torch",
    "conv2d",
    (
        ("input", TensorSpec((8, 3, 32, 32), dtype="float16", low=-1.0, high=1.0)),
        ("weight", TensorSpec((16, 3, 3, 3))),
        ("tensors", (TensorSpec((2,)), TensorSpec((3,)))),
        ("padding", (1, 1)),
        ("alias", Alias("input")),
        ("mode", "bilinear"),
    ),
    RunOptions(framework="torch", threads=2, cache="cold"),
    category="convolution",
    stage="graph",
)
READING = GpuReading(1980, 2619, 301.5, 61, ("sw_power_cap",))
MEASURED = Measurement(
    spec=SPEC,
    status=Status.OK,
    forward=(1e-5, 1.2e-5, float("inf")),
    backward=None,
    profiled_ops=("aten::conv2d",),
    stop_reason=StopReason.PRECISE,
    met_target=True,
    stage_check=StageCheck(True, 0.0, graph_ops=("conv",), fused=False),
    timer="device",
    device_work=(DeviceWork("forward", "kernel", "sm90_xmma", 1.0, 4.5e-6),),
    gpu_state=GpuState(READING, READING, 1755),
)


@pytest.mark.parametrize(
    "message",
    [
        "ready",
        None,
        SPEC,
        MEASURED,
        [SPEC, SPEC],
        OverheadProbe("native", "cpu(0)"),
        Round(SPEC, 3, SamplingPlan(warmup=None, runs=None, target=0.02, budget_s=0.05)),
        RoundMeasured(MEASURED, 1),
        DeviceFault(RoundMeasured(MEASURED, 0)),
        BuildDescription("/usr/bin/python3", "2.13.0", ("add", "exp")),
        2.5e-6,
    ],
    ids=lambda m: type(m).__name__,
)
def test_every_kind_of_message_comes_back_equal(message):
    back = decode(encode(message))
    assert back == message
    assert type(back) is type(message)


def test_a_message_is_plain_json_and_numpy_scalars_arrive_as_python_numbers():
    payload = encode((np.float64(1.5), np.int64(3), np.bool_(True), float("nan")))
    assert "numpy" not in payload.decode()
    json.loads(payload)  # plain JSON (NaN as JSON's extension, as Python writes it)
    values = decode(payload)
    assert values[:3] == (1.5, 3, True) and math.isnan(values[3])
    assert [type(v) for v in values] == [float, int, bool, float]


def test_arrays_and_unknown_types_are_refused():
    with pytest.raises(WireError, match="ndarray cannot cross"):
        encode({"data": np.zeros(3)})
    with pytest.raises(WireError, match="names no known type"):
        decode(b'{"$type": "os.system", "fields": {}}')
    with pytest.raises(WireError, match="not a message"):
        decode(b"\x80\x04pickle")
