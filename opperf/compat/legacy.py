"""The result shape upstream opperf users' scripts read, rendered from Measurements.

Per operator, one entry per input configuration: ``inputs``, ``avg_time_forward_<op>`` and
``avg_time_backward_<op>`` in milliseconds (means, as upstream), ``max_storage_mem_alloc_<device>`` in
kilobytes (the true peak), and -- beyond upstream -- the function measured (``mx.np.add``) and the
status and the reason when not ok.
"""

from __future__ import annotations

from typing import Any

from opperf.results.measurement import Measurement, Status, TensorSpec, is_given_array, is_tensor_list

MS = 1e3
KB = 1e-3


def legacy_inputs(measurement: Measurement) -> dict[str, object]:
    """Inputs as upstream showed them: tensor shapes as tuples, scalar values as given."""

    def show(value: object) -> object:
        if isinstance(value, TensorSpec):
            return value.shape
        if is_tensor_list(value):
            return [v.shape for v in value]
        if is_given_array(value):
            return f"<{type(value).__name__} {'x'.join(map(str, value.shape))} given>"
        return value

    return {name: show(value) for name, value in measurement.spec.inputs}


def legacy_record(measurement: Measurement) -> dict[str, object]:
    op = measurement.spec.op
    options = measurement.spec.options
    device = f"{options.device.kind}/{options.device.index}"
    spec = measurement.spec
    record: dict[str, Any] = {
        "inputs": legacy_inputs(measurement),
        # Beyond upstream: which function this is (mx.nd.add and mx.np.add both key their list "add").
        "function": f"{spec.namespace}.{spec.function or op}",
    }
    forward, backward = measurement.forward_summary, measurement.backward_summary
    if forward is not None:
        record[f"avg_time_forward_{op}"] = round(forward.mean * MS, 4)
    if backward is not None:
        record[f"avg_time_backward_{op}"] = round(backward.mean * MS, 4)
    if measurement.memory_peak_bytes is not None:
        record[f"max_storage_mem_alloc_{device}"] = round(measurement.memory_peak_bytes * KB, 4)
    if measurement.status is not Status.OK:
        record["status"] = measurement.status.value
        record["reason"] = measurement.reason
    return record


def legacy_results(measurements: list[Measurement]) -> list[dict[str, list[dict[str, Any]]]]:
    """``[{op: [record per input configuration]}]``, one dict per operator and namespace, in first-seen
    order: ``mx.nd.add`` and ``mx.np.add`` stay apart."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for measurement in measurements:
        key = (measurement.spec.namespace, measurement.spec.op)
        grouped.setdefault(key, []).append(legacy_record(measurement))
    return [{op: records} for (_, op), records in grouped.items()]
