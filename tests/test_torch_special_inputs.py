"""PyTorch operators that take more than dense strided tensors: CSC, MKL-DNN, per-channel quantized,
FBGEMM-packed, nested and non-contiguous inputs. The storages are checked on real tensors, and each
operator they unlock runs through the sweep on the small profile."""

import pytest

from opperf.measure.benchmark import RunOptions
from opperf.operators.rules.profiles import SMALL
from opperf.results.measurement import Status, TensorSpec
from opperf.sweep.run import SweepConfig, run_sweep

torch = pytest.importorskip("torch")

from opperf.frameworks.torch.tensors import make_tensor  # noqa: E402


def _make(spec: TensorSpec, dtype: str = "float32"):
    return make_tensor(spec, dtype, "cpu", torch.Generator().manual_seed(0))


def test_csc_keeps_the_density_of_elements():
    tensor = _make(TensorSpec((200, 200), storage="csc", density=0.1))
    assert tensor.layout == torch.sparse_csc
    assert 0.08 < tensor.values().numel() / 200**2 < 0.12


def test_row_sparse_keeps_the_density_of_whole_rows():
    tensor = _make(TensorSpec((400, 8), storage="row_sparse", density=0.25)).coalesce()
    rows = tensor.indices()[0].unique()
    assert tensor.values().numel() == rows.numel() * 8
    assert 0.2 < rows.numel() / 400 < 0.3


def test_per_channel_quantization_is_along_dimension_zero():
    tensor = _make(TensorSpec((6, 4), dtype="quint8", storage="per_channel"))
    assert tensor.qscheme() == torch.per_channel_affine and tensor.q_per_channel_axis() == 0
    assert tensor.q_per_channel_scales().shape == (6,)


def test_mkldnn_and_packed_weights_are_opaque_forms_of_the_values():
    assert _make(TensorSpec((2, 3, 4, 4), storage="mkldnn")).layout == torch._mkldnn
    weight = TensorSpec((8, 8), storage="fbgemm_packed")
    packed = _make(weight)
    assert packed.dtype == torch.uint8  # a blob FBGEMM's product reads
    dense = _make(TensorSpec((8, 8)))
    assert torch.allclose(
        torch.fbgemm_linear_fp16_weight(dense, packed, torch.zeros(8)), dense @ dense.t(), atol=1e-2
    )


def test_nested_rows_grow_evenly_to_the_full_width():
    tensor = _make(TensorSpec((5, 9), storage="nested"))
    assert [component.numel() for component in tensor.unbind()] == [1, 3, 5, 7, 9]
    assert tensor.to_padded_tensor(0.0).shape == (5, 9)


def test_sliced_is_a_non_contiguous_view_of_the_same_values():
    sliced = _make(TensorSpec((6, 1), storage="sliced"))
    assert not sliced.is_contiguous()
    assert torch.equal(sliced, _make(TensorSpec((6, 1))))


# Operators the storages above (and corrected shapes) let run: all of them on CPU, with the native
# profiler recording their kernel.
UNLOCKED = (
    "q_per_channel_axis",
    "q_per_channel_scales",
    "q_per_channel_zero_points",
    "empty_quantized",
    "fbgemm_linear_fp16_weight",
    "fbgemm_linear_fp16_weight_fp32_activation",
    "fbgemm_linear_int8_weight",
    "fbgemm_linear_int8_weight_fp32_activation",
    "quantized_lstm_cell",
    "quantized_gru_cell",
    "quantized_rnn_tanh_cell",
    "quantized_rnn_relu_cell",
    "mkldnn_max_pool2d",
    "mkldnn_max_pool3d",
    "mkldnn_adaptive_avg_pool2d",
    "ccol_indices",
    "ccol_indices_copy",
    "row_indices",
    "row_indices_copy",
    "to_padded_tensor",
    "conj",
    "contiguous",
    "copy",
    "diagflat",
    "smm",
    "sspaddmm",
)


@pytest.fixture(scope="module")
def unlocked():
    options = RunOptions(framework="torch", warmup=1, runs=2, threads=1)
    config = SweepConfig(options=options, profile=SMALL, ops=UNLOCKED, isolate=False)
    return run_sweep(config).measurements


@pytest.mark.parametrize("op", UNLOCKED)
def test_operator_runs_and_its_kernel_is_timed(unlocked, op):
    measurements = [m for m in unlocked if m.spec.op == op]
    assert measurements
    for m in measurements:
        assert m.status is Status.OK, m.reason
        assert m.forward and min(m.forward) > 0
        assert any(name.startswith("aten::") for name in m.profiled_ops), m.profiled_ops


def test_differentiable_special_inputs_get_a_backward(unlocked):
    for op in ("mkldnn_max_pool2d", "to_padded_tensor", "contiguous", "diagflat"):
        (m,) = [m for m in unlocked if m.spec.op == op][:1]
        assert m.backward and min(m.backward) > 0, (op, m.backward_reason)
