"""Work counts against hand computation, and against the output shapes MXNet really produces."""

from __future__ import annotations

import math

import mxnet as mx
import numpy as np
import pytest

from opperf.frameworks.mxnet.arrays import flatten_outputs
from opperf.frameworks.mxnet.invoke import direct_call
from opperf.frameworks.mxnet.work import COUNTERS as MXNET_COUNTERS
from opperf.measure.roofline.peaks import MachinePeaks
from opperf.measure.roofline.work import (
    Bound,
    Rates,
    Work,
    achieved,
    count_work,
    fraction_of_peak,
)
from opperf.operators.rules import inputs_for
from opperf.operators.rules.profiles import SMALL
from opperf.results.measurement import BenchmarkSpec, TensorSpec, freeze_inputs
from opperf.results.options import RunOptions

T = TensorSpec
F32 = 4
MiB = 2**20


def spec(op: str, framework: str = "mxnet", dtype: str = "float32", **inputs: object) -> BenchmarkSpec:
    return BenchmarkSpec("mx.nd", op, freeze_inputs(inputs), RunOptions(framework=framework, dtype=dtype))


def torch_spec(op: str, **inputs: object) -> BenchmarkSpec:
    return spec(op, framework="torch", **inputs)


# Element-wise, broadcast and scalar operators.


@pytest.mark.parametrize("op", ["broadcast_add", "elemwise_add", "_npi_add", "add"])
def test_add_reads_two_inputs_writes_one_output(op):
    work = count_work(spec(op, lhs=T((1024, 1024)), rhs=T((1024, 1024))))
    assert work == Work(bytes_moved=3 * 4 * MiB, flops=2**20)


def test_broadcast_output_has_the_broadcast_shape():
    work = count_work(spec("broadcast_mul", lhs=T((10000, 1)), rhs=T((10000, 100))))
    assert work == Work(bytes_moved=F32 * (10000 + 10000 * 100 + 10000 * 100), flops=10000 * 100)


def test_shapes_that_do_not_broadcast_are_not_counted():
    assert count_work(spec("broadcast_add", lhs=T((3, 4)), rhs=T((5, 4)))) is None


@pytest.mark.parametrize(("op", "argument"), [("exp", "data"), ("_npi_exp", "x")])
def test_unary_takes_its_element_size_from_the_run_dtype(op, argument):
    work = count_work(spec(op, dtype="float64", **{argument: T((1000,))}))
    assert work == Work(bytes_moved=2 * 1000 * 8, flops=1000)


def test_a_tensors_own_dtype_overrides_the_runs():
    work = count_work(
        spec("_npi_add", dtype="float64", lhs=T((100,), dtype="int32"), rhs=T((100,), dtype="int32"))
    )
    assert work == Work(bytes_moved=3 * 100 * 4, flops=100)


def test_composite_functions_count_each_operation():
    assert count_work(spec("sigmoid", data=T((1000,)))).flops == 4 * 1000
    assert count_work(spec("rsqrt", data=T((1000,)))).flops == 2 * 1000
    assert count_work(spec("Activation", data=T((1000,)), act_type="softrelu")).flops == 3 * 1000
    assert count_work(spec("Activation", data=T((1000,)), act_type="mish")) is None


def test_numpy_comparisons_write_booleans():
    work = count_work(spec("_npi_less", lhs=T((1000,)), rhs=T((1000,))))
    assert work == Work(bytes_moved=2 * 1000 * F32 + 1000 * 1, flops=1000)


def test_scalar_operators_read_only_the_tensor():
    work = count_work(spec("_plus_scalar", data=T((1024, 1024)), scalar=2.0))
    assert work == Work(bytes_moved=2 * 4 * MiB, flops=2**20)


# Reductions.


def test_sum_over_an_axis():
    # (1024, 256) -> (256,): the input read once, 256 sums written, one add per input element.
    work = count_work(spec("sum", data=T((1024, 256)), axis=0))
    assert work == Work(bytes_moved=F32 * (1024 * 256 + 256), flops=1024 * 256)


@pytest.mark.parametrize(
    ("arguments", "outputs"),
    [
        ({}, 1),
        ({"axis": 1, "keepdims": True}, 4 * 6),
        ({"axis": (0, -1)}, 5),
        ({"axis": 0, "exclude": True}, 4),
    ],
)
def test_reduction_output_size_follows_axis_keepdims_exclude(arguments, outputs):
    work = count_work(spec("max", data=T((4, 5, 6)), **arguments))
    assert work == Work(bytes_moved=F32 * (4 * 5 * 6 + outputs), flops=4 * 5 * 6)


def test_numpy_reduction_and_norm():
    assert count_work(spec("_np_sum", a=T((8, 8)), axis=1)) == Work(F32 * (64 + 8), 64)
    assert count_work(spec("norm", data=T((8, 8)))) == Work(F32 * (64 + 1), 2 * 64)


def test_reduction_axes_the_spec_leaves_open_need_the_measured_output():
    empty_axis = spec("sum", data=T((8, 8)), axis=())  # every axis in MXNet's legacy API, none in NumPy's
    assert count_work(empty_axis) is None
    assert count_work(empty_axis, output_shapes=((1,),)) == Work(F32 * (64 + 1), 64)
    assert count_work(spec("sum", data=T((8, 8)), axis=2)) is None


# Matrix products and dense layers.


def test_dot():
    work = count_work(spec("dot", lhs=T((1024, 256)), rhs=T((256, 512))))
    assert work == Work(bytes_moved=F32 * (1024 * 256 + 256 * 512 + 1024 * 512), flops=2 * 1024 * 512 * 256)


def test_dot_transposes_and_rejects_mismatched_inner_sizes():
    transposed_a = count_work(spec("dot", lhs=T((256, 1024)), rhs=T((256, 512)), transpose_a=True))
    assert transposed_a.flops == 2 * 1024 * 512 * 256
    transposed_b = count_work(spec("dot", lhs=T((64, 32)), rhs=T((16, 32)), transpose_b=True))
    assert transposed_b == Work(F32 * (64 * 32 + 16 * 32 + 64 * 16), 2 * 64 * 16 * 32)
    assert count_work(spec("dot", lhs=T((64, 32)), rhs=T((16, 32)))) is None


def test_batch_dot():
    work = count_work(spec("batch_dot", lhs=T((32, 64, 16)), rhs=T((32, 16, 8))))
    assert work == Work(F32 * 32 * (64 * 16 + 16 * 8 + 64 * 8), 2 * 32 * 64 * 8 * 16)


def test_matmul_broadcasts_batches_and_promotes_vectors():
    # (4, 1, 8, 16) x (3, 16, 2): a (4, 3) batch of (8, 16) x (16, 2) products.
    work = count_work(spec("_npi_matmul", a=T((4, 1, 8, 16)), b=T((3, 16, 2))))
    assert work == Work(F32 * (4 * 8 * 16 + 3 * 16 * 2 + 4 * 3 * 8 * 2), 2 * 12 * 8 * 2 * 16)
    vector = count_work(spec("_npi_matmul", a=T((16,)), b=T((16, 5))))
    assert vector == Work(F32 * (16 + 16 * 5 + 5), 2 * 5 * 16)


def test_linalg_gemm_reads_c():
    n = 64
    gemm = count_work(spec("_linalg_gemm", A=T((n, n)), B=T((n, n)), C=T((n, n))))
    assert gemm == Work(F32 * 4 * n * n, 2 * n**3)
    assert count_work(spec("_linalg_gemm2", A=T((n, n)), B=T((n, n)))) == Work(F32 * 3 * n * n, 2 * n**3)


def test_fully_connected_with_bias():
    # Batch 32, 256 -> 256: 2 * 32 * 256 * 256 multiply-add FLOPs and 32 * 256 bias adds.
    inputs = {"data": T((32, 256)), "weight": T((256, 256)), "bias": T((256,)), "num_hidden": 256}
    work = count_work(spec("FullyConnected", **inputs))
    assert work == Work(
        bytes_moved=F32 * (32 * 256 + 256 * 256 + 256 + 32 * 256), flops=2 * 32 * 256 * 256 + 32 * 256
    )
    unbiased = count_work(spec("FullyConnected", **inputs, no_bias=True))
    assert unbiased == Work(F32 * (32 * 256 + 256 * 256 + 32 * 256), 2 * 32 * 256 * 256)


def test_fully_connected_flattens_and_checks_the_weight():
    images = {"data": T((8, 4, 5, 5)), "weight": T((10, 100)), "bias": T((10,)), "num_hidden": 10}
    assert count_work(spec("FullyConnected", **images)).flops == 2 * 8 * 100 * 10 + 8 * 10
    assert count_work(spec("FullyConnected", **{**images, "weight": T((10, 99))})) is None


# Convolution and pooling.

CONV = {"data": T((32, 16, 32, 32)), "weight": T((32, 16, 3, 3)), "bias": T((32,)), "kernel": (3, 3)}


def test_convolution_3x3_stride_1_no_padding():
    # 32 x 32 -> 30 x 30; per output element 16 * 9 multiply-adds and one bias add.
    work = count_work(spec("Convolution", **CONV, num_filter=32))
    outputs = 32 * 32 * 30 * 30
    assert work == Work(
        bytes_moved=F32 * (32 * 16 * 32 * 32 + 32 * 16 * 9 + 32 + outputs),
        flops=2 * outputs * 16 * 9 + outputs,
    )


@pytest.mark.parametrize(
    ("arguments", "side"), [({"pad": (1, 1)}, 32), ({"stride": (2, 2)}, 15), ({"dilate": (2, 2)}, 28)]
)
def test_convolution_output_size(arguments, side):
    work = count_work(spec("Convolution", **CONV, **arguments))
    assert work.flops == (2 * 16 * 9 + 1) * 32 * 32 * side * side


def test_grouped_and_3d_convolution():
    grouped = {**CONV, "weight": T((32, 8, 3, 3)), "num_group": 2, "no_bias": True}
    assert count_work(spec("Convolution", **grouped)).flops == 2 * 32 * 32 * 8 * 9 * 30 * 30
    volume = {"data": T((2, 4, 8, 8, 8)), "weight": T((6, 4, 3, 3, 3)), "kernel": (3, 3, 3), "no_bias": True}
    assert count_work(spec("Convolution", **volume)).flops == 2 * 2 * 6 * 4 * 27 * 6**3


def test_convolution_with_inconsistent_weight_is_not_counted():
    assert count_work(spec("Convolution", **{**CONV, "weight": T((32, 16, 5, 5))})) is None
    assert count_work(spec("Convolution", **CONV, layout="NHWC")) is None


def test_deconvolution_scatters_each_input_and_has_no_bias_by_default():
    # 8 x 8 -> (8 - 1) + 3 = 10 x 10; each of 2 * 4 * 64 inputs meets 8 * 9 weights.
    inputs = {"data": T((2, 4, 8, 8)), "weight": T((4, 8, 3, 3)), "bias": T((8,)), "kernel": (3, 3)}
    work = count_work(spec("Deconvolution", **inputs, num_filter=8))
    assert work == Work(F32 * (2 * 4 * 64 + 4 * 8 * 9 + 2 * 8 * 10 * 10), 2 * 2 * 4 * 64 * 8 * 9)


def test_max_pooling_2x2_stride_2():
    work = count_work(spec("Pooling", data=T((32, 16, 32, 32)), kernel=(2, 2), stride=(2, 2)))
    inputs, outputs = 32 * 16 * 32 * 32, 32 * 16 * 16 * 16
    assert work == Work(bytes_moved=F32 * (inputs + outputs), flops=4 * outputs)


def test_global_and_full_convention_pooling():
    pooled = count_work(spec("Pooling", data=T((2, 3, 7, 7)), global_pool=True, kernel=(1, 1)))
    assert pooled == Work(F32 * (2 * 3 * 49 + 2 * 3), 2 * 3 * 49)
    # 7 wide, kernel 2, stride 2: 3 windows rounding down, 4 rounding up.
    full = count_work(spec("Pooling", data=T((1, 1, 7)), kernel=(2,), stride=(2,), pooling_convention="full"))
    assert full.flops == 2 * 4


def test_pooling_the_counter_does_not_model_needs_the_measured_output():
    same = spec("Pooling", data=T((1, 1, 7, 7)), kernel=(2, 2), stride=(2, 2), pooling_convention="same")
    assert count_work(same) is None
    assert count_work(same, output_shapes=((1, 1, 4, 4),)) == Work(F32 * (49 + 16), 4 * 16)
    assert count_work(spec("Pooling", data=T((1, 1, 8, 8)), kernel=(2, 2), pool_type="lp")) is None


# Softmax and normalisation.


def test_softmax():
    assert count_work(spec("softmax", data=T((128, 256)))) == Work(2 * F32 * 128 * 256, 5 * 128 * 256)
    assert count_work(spec("log_softmax", data=T((128, 256)), axis=0)).flops == 5 * 128 * 256
    masked = spec("softmax", data=T((4, 8)), length=T((4,), dtype="int32"), use_length=True)
    assert count_work(masked) is None


def test_batch_norm_computes_statistics_in_training_mode():
    n = 32 * 16 * 32 * 32
    channel = T((16,))
    inputs = {"data": T((32, 16, 32, 32)), "gamma": channel, "beta": channel}
    inputs |= {"moving_mean": channel, "moving_var": channel}
    assert count_work(spec("BatchNorm", **inputs)) == Work(F32 * (2 * n + 4 * 16), 8 * n)
    assert count_work(spec("BatchNorm", **inputs, use_global_stats=True)).flops == 4 * n


def test_layer_and_group_norm():
    n = 32 * 32 * 256
    layer = count_work(spec("LayerNorm", data=T((32, 32, 256)), gamma=T((256,)), beta=T((256,))))
    assert layer == Work(F32 * (2 * n + 2 * 256), 8 * n)
    group = count_work(spec("GroupNorm", data=T((2, 4, 8, 8)), gamma=T((2,)), beta=T((2,)), num_groups=2))
    assert group.flops == 8 * 2 * 4 * 64


# What is not counted, and measured output shapes.


@pytest.mark.parametrize(
    "benchmark",
    [
        spec("topk", data=T((64, 64)), k=5),
        spec("Embedding", data=T((4, 8)), weight=T((100, 16)), input_dim=100, output_dim=16),
        spec("Concat", data=(T((4, 4)), T((4, 4))), dim=1),
        spec("add", framework="jax", lhs=T((4,)), rhs=T((4,))),
        spec("exp", data=T((16, 8), storage="csr", density=0.1)),
        spec("exp", data=np.ones((4, 4))),
        spec("exp", dtype="complex64", data=T((4,))),
    ],
    ids=["no counter", "embedding", "tensor list", "unknown framework", "sparse", "given array", "dtype"],
)
def test_uncountable(benchmark):
    assert count_work(benchmark) is None


def test_measured_output_shapes_set_the_bytes_written():
    work = count_work(spec("exp", data=T((10,))), output_shapes=((10,), (10,)))
    assert work == Work(F32 * 30, 10)


# PyTorch names.


def test_torch_elementwise_and_reduction():
    assert count_work(torch_spec("add", input=T((1024, 1024)), other=T((1024, 1024)))) == Work(
        3 * 4 * MiB, 2**20
    )
    assert count_work(torch_spec("mul", input=T((100,)), other=2.0)) == Work(F32 * 200, 100)
    reduced = count_work(torch_spec("sum", input=T((8, 16)), dim=(1,), keepdim=True))
    assert reduced == Work(F32 * (128 + 8), 128)


def test_torch_matrix_products():
    assert count_work(torch_spec("mm", input=T((8, 4)), mat2=T((4, 2)))).flops == 2 * 8 * 2 * 4
    assert count_work(torch_spec("matmul", input=T((3, 8, 4)), other=T((4, 2)))).flops == 2 * 3 * 8 * 2 * 4
    linear = count_work(torch_spec("linear", input=T((32, 256)), weight=T((128, 256)), bias=T((128,))))
    assert linear == Work(F32 * (32 * 256 + 128 * 256 + 128 + 32 * 128), 2 * 32 * 256 * 128 + 32 * 128)


def test_torch_convolution_and_pooling():
    conv = {"input": T((2, 3, 16, 16)), "weight": T((8, 3, 3, 3)), "bias": T((8,))}
    strided = count_work(torch_spec("conv2d", **conv, stride=2, padding=1))  # 16 -> 8
    assert strided.flops == (2 * 3 * 9 + 1) * 2 * 8 * 8 * 8
    same = count_work(torch_spec("conv2d", **conv, padding="same"))
    assert same.flops == (2 * 3 * 9 + 1) * 2 * 8 * 16 * 16
    # 8 -> 2 * 7 + 3 - 2 + 1 = 16; each of 2 * 4 * 64 inputs meets 3 * 9 weights.
    transposed = {"input": T((2, 4, 8, 8)), "weight": T((4, 3, 3, 3)), "stride": 2, "padding": 1}
    upsampled = count_work(torch_spec("conv_transpose2d", **transposed, output_padding=1))
    assert upsampled == Work(F32 * (2 * 4 * 64 + 4 * 3 * 9 + 2 * 3 * 16 * 16), 2 * 2 * 4 * 64 * 3 * 9)
    pooled = count_work(torch_spec("max_pool2d", input=T((2, 3, 16, 16)), kernel_size=2))  # stride = kernel
    assert pooled == Work(F32 * (2 * 3 * 256 + 2 * 3 * 64), 4 * 2 * 3 * 64)
    # 5 wide, kernel 2, stride 2, padding 1, rounding up: a 4th window would start in the padding.
    ceil = count_work(torch_spec("max_pool1d", input=T((1, 1, 5)), kernel_size=2, padding=1, ceil_mode=True))
    assert ceil.flops == 2 * 3


def test_torch_normalization_needs_its_mode():
    inputs = {"input": T((4, 8, 16)), "weight": T((8,)), "bias": T((8,))}
    inputs |= {"running_mean": T((8,)), "running_var": T((8,))}
    assert count_work(torch_spec("batch_norm", **inputs, training=True)).flops == 8 * 4 * 8 * 16
    assert count_work(torch_spec("batch_norm", **inputs, training=False)).flops == 4 * 4 * 8 * 16
    assert count_work(torch_spec("batch_norm", **inputs)) is None
    assert count_work(torch_spec("softmax", input=T((4, 8)), dim=1)) == Work(F32 * 64, 5 * 32)


# Every counted MXNet operator, on the inputs the rules really give it, against MXNet's outputs.

FRONT_END_NAMES = frozenset(
    {
        "add",
        "subtract",
        "multiply",
        "divide",
        "true_divide",
        "maximum",
        "minimum",
        "power",
        "matmul",
        "gemm",
        "gemm2",
    }
)
"""Table names the typed API records for Python front ends; every other name is registered."""


def test_counted_names_are_registered(registry):
    registered = {name for op in registry.values() for name in op.all_names}
    assert set(MXNET_COUNTERS) - registered == FRONT_END_NAMES


def test_counts_agree_with_the_output_shapes_mxnet_produces(backend, registry):
    checked = 0
    for op in (registry[name] for name in sorted(MXNET_COUNTERS) if name in registry):
        for rule_inputs in inputs_for(op, SMALL):
            inputs = backend.applicable_inputs(op, rule_inputs)
            benchmark = BenchmarkSpec(op.namespaces[0], op.name, freeze_inputs(inputs))
            if any(isinstance(v, TensorSpec) and v.storage != "default" for v in inputs.values()):
                assert count_work(benchmark) is None
                continue
            arrays = {
                name: mx.nd.ones(value.shape, dtype=value.dtype or "float32")
                if isinstance(value, TensorSpec)
                else value
                for name, value in inputs.items()
            }
            outputs = tuple(tuple(o.shape) for o in flatten_outputs(direct_call(op.name)(**arrays)))
            work = count_work(benchmark)
            assert work is not None, benchmark
            assert work == count_work(benchmark, output_shapes=outputs), benchmark
            checked += 1
    assert checked > 300


# Rates and peaks.


def test_achieved_rates():
    assert achieved(Work(bytes_moved=2 * 10**9, flops=4 * 10**9), 2.0) == Rates(gb_per_s=1.0, gflop_per_s=2.0)
    for seconds in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError):
            achieved(Work(1, 1), seconds)


PEAKS = MachinePeaks(bandwidth_bytes_per_s=10e9, gemm_flops_per_s=100e9, measured_at="", method="")
"""A machine whose ridge point is 10 FLOPs per byte."""


def test_low_intensity_operators_are_memory_bound():
    fractions = fraction_of_peak(Rates(gb_per_s=8.0, gflop_per_s=0.5), PEAKS)
    assert fractions.bound is Bound.MEMORY
    assert (fractions.bandwidth, fractions.compute, fractions.of_roof) == pytest.approx((0.8, 0.005, 0.8))


def test_high_intensity_operators_are_compute_bound():
    fractions = fraction_of_peak(Rates(gb_per_s=1.0, gflop_per_s=60.0), PEAKS)
    assert fractions.bound is Bound.COMPUTE
    assert fractions.of_roof == pytest.approx(0.6)
    assert fractions.describe() == {"bandwidth": 0.1, "compute": 0.6, "bound": "compute", "of_roof": 0.6}
