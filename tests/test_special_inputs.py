"""Operators that need more than dense tensors through their front end: sparse storage, in-place
writes, auxiliary inputs, no outputs. Each runs for real on the small profile."""

import mxnet as mx
import numpy as np
import pytest

from opperf.benchmark import RunOptions
from opperf.frameworks.mxnet.arrays import host_values, make_array
from opperf.results import Status, TensorSpec
from opperf.rules.profiles import SMALL
from opperf.sweep import SweepConfig, run_sweep


def _sweep(*ops: str):
    config = SweepConfig(options=RunOptions(warmup=1, runs=2), profile=SMALL, ops=ops, isolate=False)
    return run_sweep(config).measurements


def test_csr_keeps_the_density_of_elements():
    spec = TensorSpec((200, 200), storage="csr", density=0.1)
    values = host_values(spec, "float32", np.random.default_rng(0))
    assert 0.08 < np.count_nonzero(values) / values.size < 0.12
    array = make_array(spec, "float32", mx.cpu(), "nd", np.random.default_rng(0))
    assert array.stype == "csr"


def test_row_sparse_keeps_the_density_of_whole_rows():
    spec = TensorSpec((400, 8), storage="row_sparse", density=0.25)
    values = host_values(spec, "float32", np.random.default_rng(0))
    nonzero_rows = np.count_nonzero(values.any(axis=1))
    assert np.count_nonzero(values) == nonzero_rows * 8
    assert 0.2 < nonzero_rows / 400 < 0.3
    assert make_array(spec, "float32", mx.cpu(), "nd", np.random.default_rng(0)).stype == "row_sparse"


def test_sorted_unique_ids_ascend_without_repeats_within_range():
    spec = TensorSpec((50,), dtype="int64", low=10, high=70, structure="sorted_unique")
    ids = host_values(spec, "float32", np.random.default_rng(0))
    assert ids.dtype == np.int64
    assert np.all(np.diff(ids) > 0) and ids[0] >= 10 and ids[-1] < 70


@pytest.mark.parametrize(
    "op",
    [
        "_square_sum",  # row_sparse input
        "_contrib_getnnz",  # CSR input
        "_contrib_dgl_subgraph",  # a CSR graph then vertex lists, all positional
        "_contrib_dgl_csr_neighbor_non_uniform_sample",
        "_sparse_adagrad_update",  # sparse, and must write its weight in place
        "_scatter_set_nd",  # must write in place
        "_set_value",  # fills its out= array
        "_zeros_without_dtype",  # called through the C API
    ],
)
def test_operator_runs_forward(op):
    measurements = _sweep(op)
    assert measurements and all(m.status is Status.OK for m in measurements), measurements[0].reason
    assert all(m.forward and min(m.forward) > 0 for m in measurements)


def test_auxiliary_inputs_are_passed_and_backward_runs():
    (batch_norm,) = _sweep("BatchNorm_v1")
    assert batch_norm.status is Status.OK, batch_norm.reason
    assert batch_norm.backward and batch_norm.backward_reason is None
    assert set(batch_norm.spec.describe_inputs()) >= {"moving_mean", "moving_var"}


def test_operator_without_outputs_runs_unrecorded():
    measurements = _sweep("reset_arrays")
    assert all(m.status is Status.OK for m in measurements)
    assert all(m.backward is None and "no outputs" in m.backward_reason for m in measurements)
