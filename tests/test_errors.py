"""Bad input raises OpperfError naming the problem and the fix, never a deep MXNet traceback."""

import mxnet as mx
import pytest
from markers import cpu_only_build

from opperf import OpperfError, run_benchmark_operator, run_performance_test
from opperf.measure.benchmark import RunOptions, benchmark
from opperf.results.measurement import Status


def test_unknown_operator_suggests_close_names():
    with pytest.raises(OpperfError, match="did you mean .*broadcast_add"):
        run_benchmark_operator(name="broadcast_ad")


def test_input_name_the_operator_does_not_take():
    with pytest.raises(OpperfError, match="takes no argument 'lsh'.*did you mean lhs"):
        run_performance_test(mx.nd.add, inputs=[{"lsh": (4, 4), "rhs": (4, 4)}])


def test_input_name_rejected_for_registry_operator():
    with pytest.raises(OpperfError, match="Convolution takes no argument 'kernal'"):
        run_performance_test(mx.nd.Convolution, inputs=[{"data": (1, 1, 4, 4), "kernal": (3, 3)}])


@pytest.mark.parametrize("shape", [(4, -1), (4, 2.5), "4x4"])
def test_malformed_shape(shape):
    with pytest.raises(OpperfError, match="malformed shape"):
        run_performance_test(mx.nd.exp, inputs=[{"data": shape}])


def test_unknown_dtype():
    with pytest.raises(OpperfError, match="unknown dtype 'float33'.*float32"):
        run_performance_test(mx.nd.exp, inputs=[{"data": (4,)}], dtype="float33")


@cpu_only_build
def test_gpu_without_cuda_build():
    with pytest.raises(OpperfError, match="no CUDA support.*--ctx cpu"):
        run_performance_test(mx.nd.exp, inputs=[{"data": (4,)}], ctx="gpu(0)")


def test_malformed_device():
    with pytest.raises(OpperfError, match="malformed device 'gpu-zero'"):
        run_performance_test(mx.nd.exp, inputs=[{"data": (4,)}], ctx="gpu-zero")


@pytest.mark.parametrize(("field", "value"), [("runs", 0), ("warmup", -1)])
def test_run_counts(field, value):
    with pytest.raises(OpperfError, match=f"{field}: must be at least"):
        run_performance_test(mx.nd.exp, inputs=[{"data": (4,)}], **{field: value})


def test_unknown_profiler():
    with pytest.raises(OpperfError, match="unknown profiler 'gprof'"):
        run_performance_test(mx.nd.exp, inputs=[{"data": (4,)}], profiler="gprof")


def test_shape_too_large_for_memory_is_skipped_with_reason():
    (m,) = benchmark(mx.nd.exp, [{"data": (2**40,)}], RunOptions(warmup=0, runs=1))
    assert m.status is Status.SKIPPED
    assert "GiB" in m.reason and "smaller shapes" in m.reason


def test_empty_inputs():
    with pytest.raises(OpperfError, match="inputs is empty"):
        run_performance_test(mx.nd.exp, inputs=[])


def test_non_callables_are_refused():
    with pytest.raises(OpperfError, match="ops must be operators"):
        run_performance_test("add", inputs=[{"lhs": (4,), "rhs": (4,)}])


def test_numpy_integer_dimensions_are_accepted_and_negative_ones_refused():
    import numpy as np

    (entry,) = run_performance_test(
        mx.nd.exp, inputs=[{"data": (np.int64(4), np.int32(2))}], warmup=0, runs=1
    )
    assert entry["exp"][0]["inputs"]["data"] == (4, 2)
    with pytest.raises(OpperfError, match="malformed shape"):
        run_performance_test(mx.nd.exp, inputs=[{"data": (4, -2)}])


def test_an_unknown_namespace_is_refused():
    from opperf import run_benchmark_operator

    with pytest.raises(OpperfError, match="unknown namespace 'mx.foo'"):
        run_benchmark_operator("add", namespaces=("mx.nd", "mx.foo"))
