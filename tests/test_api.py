"""The upstream opperf usecases (README usecases 2-6), run for real on small shapes."""

import mxnet as mx
import numpy as np
import pytest
from mxnet import nd

from opperf import OpperfError, run_benchmark_operator, run_performance_test
from opperf.nd_operations.nn_conv_operators import run_pooling_operators_benchmarks
from opperf.operators.rules.profiles import SMALL
from opperf.utils import benchmark_utils

SHAPE = {"lhs": (64, 64), "rhs": (64, 64)}


def test_importable_from_upstream_path():
    assert benchmark_utils.run_performance_test is run_performance_test


def test_usecase3_single_operator_result_shape():
    (result,) = run_performance_test(
        nd.add, run_backward=True, dtype="float32", ctx=mx.cpu(), inputs=[SHAPE], warmup=1, runs=3
    )
    (record,) = result["add"]
    assert record["inputs"] == {"lhs": (64, 64), "rhs": (64, 64)}
    assert record["avg_time_forward_add"] > 0
    assert record["avg_time_backward_add"] > 0
    assert record["max_storage_mem_alloc_cpu/0"] == pytest.approx(64 * 64 * 4 / 1000, rel=1e-3)


def test_usecase4_list_of_operators_and_python_timer():
    results = run_performance_test(
        [nd.add, nd.subtract],
        inputs=[SHAPE, {"lhs": (8, 1), "rhs": (8, 8)}],
        warmup=1,
        runs=2,
        profiler="python",
    )
    assert [list(r) for r in results] == [["add"], ["subtract"]]
    for result in results:
        (records,) = result.values()
        assert len(records) == 2  # both input configurations kept, none overwritten


def test_namespaces_stay_apart_in_upstream_shape():
    results = run_performance_test(
        [nd.add, mx.np.add], inputs=[{"lhs": (4, 4), "rhs": (4, 4)}], warmup=0, runs=1
    )
    assert len(results) == 2 and all(list(r) == ["add"] for r in results)


def test_usecase5_internal_operator_with_given_arrays(capfd):
    data = nd.array([1, 2])
    out = nd.empty(shape=data.shape, ctx=mx.cpu())
    (result,) = run_performance_test(
        mx.nd._internal._copyto, inputs=[{"data": data, "out": out}], warmup=1, runs=2
    )
    (record,) = result["_copyto"]
    assert record["avg_time_forward__copyto"] > 0
    assert "avg_time_backward__copyto" not in record
    assert (out.asnumpy() == [1, 2]).all()
    printed = capfd.readouterr()
    assert "infer_shape error" not in printed.out + printed.err  # MXNet's print when inference fails


def test_usecase6_nd_against_np():
    results = run_benchmark_operator(name="add", run_backward=True, warmup=1, runs=2)
    assert len(results) == 2
    nd_record, np_record = (r["add"][0] for r in results)
    assert set(nd_record["inputs"]) == {"lhs", "rhs"}
    assert set(np_record["inputs"]) == {"x1", "x2"}
    assert nd_record["avg_time_backward_add"] > 0 and np_record["avg_time_backward_add"] > 0


def test_usecase6_measures_each_namespace_once_with_the_runs_asked_for(monkeypatch):
    """Upstream's ``runs=2`` is two passes of each namespace: one measurement each, not a
    comparison's rounds of them (twenty rounds of two, before)."""
    from opperf.measure import harness

    measured = []
    real = harness.measure

    def counting(session, spec, function):
        found = real(session, spec, function)
        measured.append((spec.namespace, len(found.forward or ())))
        return found

    monkeypatch.setattr(harness, "measure", counting)
    run_benchmark_operator(name="exp", size=(64, 64), warmup=1, runs=2)
    assert sorted(measured) == [("mx.nd", 2), ("mx.np", 2)]


def test_usecase6_additional_inputs():
    results = run_benchmark_operator(
        name="pick", size=(128, 128), additional_inputs={"index": (128, 1)}, warmup=1, runs=2
    )
    assert results[0]["pick"][0]["inputs"] == {"data": (128, 128), "index": (128, 1)}
    assert results[0]["pick"][0]["avg_time_forward_pick"] > 0


def test_wrapper_parameters_documented_as_scalars_stay_scalars():
    (result,) = run_benchmark_operator(
        name="tile", namespaces=("mx.np",), additional_inputs={"reps": (2, 2)}, size=(8, 8), warmup=0, runs=1
    )
    (record,) = result["tile"]
    assert record["inputs"] == {"A": (8, 8), "reps": (2, 2)}
    assert record["avg_time_forward_tile"] > 0


def test_wrapper_tensor_lists():
    (result,) = run_benchmark_operator(name="stack", namespaces=("mx.np",), size=(8, 8), warmup=0, runs=1)
    (record,) = result["stack"]
    assert record["inputs"] == {"arrays": [(8, 8), (8, 8)]}
    assert record["avg_time_forward_stack"] > 0


def test_usecase2_category_runner_keeps_every_configuration():
    results = run_pooling_operators_benchmarks(warmup=0, runs=1, profile=SMALL)
    pooling = results["Pooling"]
    assert len(pooling) == 12
    assert all(r["avg_time_forward_Pooling"] > 0 for r in pooling)
    assert len({str(r["inputs"]) for r in pooling}) == 12


@pytest.mark.parametrize("spelling", ["gpu(1)", "gpu1", "gpu:1", "cuda:1", "cuda(1)", " GPU( 1 ) "])
def test_device_spellings_users_type_are_read_alike(spelling):
    from opperf.utils.devices import Device

    assert Device.parse(spelling) == Device("gpu", 1) and str(Device.parse(spelling)) == "gpu(1)"


@pytest.mark.parametrize("framework", ["mxnet", "torch"])
def test_a_cpu_index_beyond_zero_is_refused_before_the_framework_sees_it(framework):
    from opperf.frameworks import get_backend
    from opperf.utils.devices import Device

    with pytest.raises(OpperfError, match="the CPU is one device"):
        get_backend(framework).normalize_device(Device.parse("cpu(5)"))


@pytest.mark.parametrize(
    ("inputs", "options", "message"),
    [
        (
            [{"data": (4, 4)}],
            {"runs": 2},
            r"options must be a RunOptions, e.g. RunOptions\(runs=2\), not a dict",
        ),
        ({"data": (4, 4)}, None, "inputs must be a list of input configurations"),
        ([(4, 4)], None, "inputs must be a list of input configurations"),
    ],
)
def test_arguments_of_the_wrong_type_name_the_type_expected(inputs, options, message):
    from opperf import benchmark

    with pytest.raises(OpperfError, match=message):
        benchmark(nd.exp, inputs, options)


def test_a_callable_of_no_framework_is_named_as_itself_not_as_an_operator_of_the_framework():
    """np.exp was named mx.nd.exp (MXNet found its registry's exp by the name) and described by it;
    it runs in the framework the options name, as a caller's own function does, under its own name."""
    from opperf import RunOptions, benchmark

    (entry,) = run_performance_test(np.exp, inputs=[{"x": (4, 4)}], warmup=1, runs=2)
    assert entry["exp"][0]["function"] == "numpy.exp"
    (m,) = benchmark(lambda x: x + 1, [{"x": (4, 4)}], RunOptions(runs=2, warmup=1))
    assert (m.spec.namespace, m.spec.op, m.spec.category) == (
        __name__,
        "test_a_callable_of_no_framework_is_named_as_itself_not_as_an_operator_of_the_framework.<locals>.<lambda>",
        "custom",
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"name": "add", "additional_inputs": {"bogus": (1,)}}, "mx.nd.add: add takes no argument 'bogus'"),
        ({"name": None}, "name must be an operator's name"),
        ({"name": "__class__"}, "name must be an operator's name"),
        ({"name": "add", "namespaces": "mx.nd"}, "namespaces must list namespaces"),
        ({"name": "add", "namespaces": ()}, "namespaces must list namespaces"),
        ({"name": "add", "additional_inputs": [1, 2]}, "additional_inputs must map argument names"),
    ],
)
def test_run_benchmark_operator_refuses_what_it_cannot_measure_by_name(arguments, message):
    """A bad argument for the first namespace dropped it from the result without a word; None and a
    list raised TypeErrors; ``__class__`` measured the module's type; a string was read letter by letter."""
    with pytest.raises(OpperfError, match=message):
        run_benchmark_operator(warmup=1, runs=2, **arguments)


def test_upstream_runners_take_upstream_arguments_by_position_and_check_int64_tensor():
    from opperf.nd_operations.unary_operators import run_mx_unary_operators_benchmarks as runner

    with pytest.raises(OpperfError, match="int64_tensor must be 'on' or 'off', got 'banana'"):
        runner(int64_tensor="banana")
    with pytest.raises(OpperfError, match="int64_tensor must be 'on' or 'off'"):
        runner(mx.cpu(), "float32", "native", "maybe")
    with pytest.raises(TypeError, match="wramup"):
        runner(wramup=0)  # a misspelt keyword is Python's own error, naming it
