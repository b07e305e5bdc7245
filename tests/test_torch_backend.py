"""The PyTorch backend against real PyTorch: registry, entry points, measurements, errors."""

import math
import os
import subprocess
import sys

import pytest

from opperf.frameworks import get_backend
from opperf.measure.benchmark import RunOptions, benchmark
from opperf.measure.harness import harness_overhead, measure
from opperf.operators.info import ArgKind
from opperf.operators.rules.profiles import SMALL
from opperf.results.measurement import Status
from opperf.sweep.run import SweepConfig, run_sweep, select_operators
from opperf.utils.errors import OpperfError

torch = pytest.importorskip("torch")

from opperf.frameworks.torch import devices  # noqa: E402
from opperf.frameworks.torch.registry import fold_name, load_registry  # noqa: E402
from opperf.frameworks.torch.schema import argument_kind, functional_overload, read_overload  # noqa: E402
from opperf.utils.devices import CPU, Device  # noqa: E402

FLOAT32 = 4
OPPERF = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "opperf.py")
QUICK = {"framework": "torch", "warmup": 1, "runs": 3}


@pytest.fixture(scope="module")
def backend():
    backend = get_backend("torch")
    backend.set_threads(1)
    return backend


@pytest.fixture(scope="module")
def registry():
    return load_registry()


def _schema(name: str, overload: str = ""):
    return next(
        s
        for s in torch._C._jit_get_all_schemas()
        if s.name == f"aten::{name}" and s.overload_name == overload
    )


def _positive_finite(samples) -> bool:
    return bool(samples) and all(s > 0 and math.isfinite(s) for s in samples)


@pytest.mark.parametrize(
    ("name", "text", "kind"),
    [
        ("input", "Tensor", ArgKind.TENSOR),
        ("bias", "Tensor?", ArgKind.TENSOR),
        ("tensors", "Tensor[]", ArgKind.TENSOR_LIST),
        ("indices", "Tensor?[]", ArgKind.TENSOR_LIST),
        ("groups", "SymInt", ArgKind.INT),
        ("stride", "SymInt[2]", ArgKind.INT_TUPLE),
        ("size", "SymInt[]", ArgKind.SHAPE),
        ("dim", "int[1]?", ArgKind.INT_TUPLE),
        ("alpha", "Scalar", ArgKind.FLOAT),
        ("eps", "float", ArgKind.FLOAT),
        ("keepdim", "bool", ArgKind.BOOL),
        ("reduce", "str", ArgKind.STRING),
        ("dtype", "ScalarType?", ArgKind.OTHER),
        ("generator", "Generator?", ArgKind.OTHER),
    ],
)
def test_argument_kinds_follow_the_schema_type(name, text, kind):
    assert argument_kind(name, text) is kind


def test_schema_arguments_keep_types_defaults_and_optionality():
    conv = {a.name: a for a in read_overload(_schema("conv2d")).arguments}
    assert conv["input"].required and conv["input"].kind is ArgKind.TENSOR
    assert conv["bias"].type_string == "Tensor?" and conv["bias"].nullable and not conv["bias"].required
    assert conv["stride"].type_string == "SymInt[2]" and conv["stride"].default == (1, 1)
    assert not conv["groups"].required and conv["groups"].default == 1
    summed = {a.name: a for a in read_overload(_schema("sum", "dim_IntList")).arguments}
    assert summed["dim"].type_string == "int[1]?" and summed["dim"].required  # no default: pass None
    add = read_overload(_schema("add", "Tensor"))
    assert [a.name for a in add.arguments if a.keyword_only] == ["alpha"]


def test_the_functional_overload_is_chosen_over_in_place_and_out_variants():
    overloads = [
        read_overload(s) for s in torch._C._jit_get_all_schemas() if s.name in ("aten::add", "aten::add_")
    ]
    chosen = functional_overload(overloads, "add")
    assert (chosen.name, chosen.overload_name) == ("add", "Tensor")
    assert not chosen.mutable and not chosen.writes_out


@pytest.mark.parametrize(
    ("name", "folded"),
    [
        ("add_", "add"),
        ("_softmax", "softmax"),
        ("_log_softmax_", "log_softmax"),
        ("normal_functional", "normal"),
        ("__iand__", "__and__"),
        ("_foreach_add", "_foreach_add"),
    ],
)
def test_variants_fold_into_their_functional_operator(name, folded):
    names = frozenset({"add", "softmax", "log_softmax", "normal", "__and__", "_foreach_add", name})
    assert fold_name(name, names) == folded


def test_registry_folds_variants_and_counts_every_name(registry):
    add = registry.by_name["add"]
    assert registry.by_name["add_"] is add and "add_" in add.aliases
    assert registry.by_name["_softmax"] is registry.by_name["softmax"]
    assert add.framework == "torch" and add.category == "binary_broadcast"
    names = set(registry.registered_names)
    assert {"convolution_backward", "len", "_foreach_add"} <= names
    assert not {"convolution_backward", "len", "_foreach_add"} & set(registry.by_name)
    assert "_foreach_add" in registry.unbound  # private, with no public entry point
    assert len(registry.operators) > 700


@pytest.mark.parametrize(
    ("op", "namespace", "function"),
    [
        ("add", "torch", "add"),
        ("gelu", "torch.nn.functional", "gelu"),
        ("linalg_cholesky", "torch.linalg", "cholesky"),
        ("special_erfcx", "torch.special", "erfcx"),
        ("fft_rfft", "torch.fft", "rfft"),
        ("log_sigmoid", "torch.nn.functional", "logsigmoid"),
        ("unfold", "torch.Tensor", "unfold"),
        ("uniform", "torch.Tensor", "uniform_"),
    ],
)
def test_operators_map_to_their_public_entry_point(registry, op, namespace, function):
    info = registry.by_name[op]
    assert (info.namespaces[0], info.function_name) == (namespace, function)


def test_functions_and_methods_are_identified(backend, registry):
    assert backend.identify(torch.add) == ("torch", "add", registry.by_name["add"])
    assert backend.identify(torch.Tensor.add) == ("torch.Tensor", "add", registry.by_name["add"])
    namespace, name, info = backend.identify(torch.nn.functional.relu)
    assert (namespace, name, info.name) == ("torch.nn.functional", "relu", "relu")
    assert backend.identify(torch.linalg.inv).info is registry.by_name["linalg_inv"]
    assert backend.identify(_positive_finite).info is None


@pytest.mark.parametrize("profiler", ["native", "python"])
def test_forward_and_backward_samples(backend, profiler):
    (m,) = benchmark(
        torch.add, [{"input": (64, 64), "other": (64, 64)}], RunOptions(profiler=profiler, **QUICK)
    )
    assert m.status is Status.OK, m.reason
    assert len(m.forward) == 3 and _positive_finite(m.forward)
    assert len(m.backward) == 3 and _positive_finite(m.backward)
    assert m.backward_reason is None
    assert m.memory_peak_bytes >= 64 * 64 * FLOAT32
    if profiler == "native":
        assert m.profiled_ops == ("aten::add",)  # the forward call's: AddBackward0 is the backward's


def test_raw_profiler_events_give_each_marker_the_work_the_event_tree_gives(backend):
    """Samples are read from the profiler's raw events, not its (slow) FunctionEvent tree: both must
    find the same operators, with the same times, under every forward and backward marker."""
    from torch.profiler import record_function

    from opperf.frameworks.torch import profiling

    data = torch.rand(64, 16, requires_grad=True)
    with profiling._session(on_gpu=False, memory=False) as session:
        torch.corrcoef(data)  # unmarked work, as warm-up passes leave, belongs to no marker
        for _ in range(5):
            with record_function(profiling.FORWARD_MARK):
                outputs = torch.corrcoef(data)
            seeds = torch.ones_like(outputs)
            with record_function(profiling.BACKWARD_MARK):
                torch.autograd.grad(outputs, (data,), seeds)
    raw = profiling._cpu_marked_work(profiling.raw_events(session.profiler.kineto_results.events()))
    tree = session.events()
    for mark in profiling.MARKS:
        expected = [
            [(c.name, c.cpu_time_total * 1e-6) for c in e.cpu_children] for e in tree if e.name == mark
        ]
        found = [[(w.name, w.seconds) for w in work] for work in raw[mark]]
        assert len(found) == 5 and [[n for n, _ in w] for w in found] == [[n for n, _ in w] for w in expected]
        flat = [t for w in found for _, t in w]
        assert flat == pytest.approx([t for w in expected for _, t in w], rel=1e-9)
    assert [w.name for w in raw[profiling.FORWARD_MARK][0]] == ["aten::corrcoef"]


def test_profiler_sessions_print_nothing():
    """kineto's per-session lines (profiler_start, profiler_stop) are silenced at their source; what
    else the process writes to stderr still gets there."""
    script = (
        "import sys, torch; from opperf import RunOptions, benchmark; "
        "benchmark(torch.exp, [{'input': (8, 8)}], RunOptions(framework='torch', warmup=1, runs=3)); "
        "print('still heard', file=sys.stderr)"
    )
    environment = {k: v for k, v in os.environ.items() if k != "KINETO_LOG_LEVEL"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    command = [sys.executable, "-c", script]
    done = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=root, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "still heard"


def test_a_configuration_that_would_allocate_a_huge_tensor_is_skipped_before_allocating_it(backend):
    """vander of 20,000 values makes a 1.5 GiB matrix from 80 kB: refused from shape inference, so
    the process never holds it; corrcoef refuses in the middle of its composite (at its ``mm``)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    vander, corrcoef, exp = (
        benchmark(torch.vander, [{"x": (20000,)}], RunOptions(**QUICK))
        + benchmark(torch.corrcoef, [{"input": (20000, 1)}], RunOptions(**QUICK))
        + benchmark(torch.exp, [{"input": (64, 64)}], RunOptions(**QUICK))
    )
    assert vander.status is Status.SKIPPED and "aten::" in vander.reason and "1,526 MiB" in vander.reason
    assert corrcoef.status is Status.SKIPPED and "aten::mm" in corrcoef.reason
    assert exp.status is Status.OK
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 256 * 1024


def test_the_size_limit_lets_inputs_views_and_in_place_results_through():
    from opperf.frameworks.torch.profiling import SizeLimit

    data = torch.rand(64, 64)  # 16 KiB
    with SizeLimit(8 * 1024) as limit:
        data.t().add_(1)
        data.view(-1)[:8]
        data.sum()
    assert limit.refusal is None
    with SizeLimit(8 * 1024) as limit:  # sparse tensors have no single storage to size: unchecked
        sparse = data.to_sparse()
        sparse.coalesce().values()
    assert limit.refusal is None
    with SizeLimit(8 * 1024) as limit:
        data.exp()
        data.sum()  # never runs: the pass ended at exp
    assert limit.refusal.startswith("aten::exp would allocate a tensor of 0 MiB")


def test_what_profiled_passes_leave_on_the_heap_is_given_back(backend):
    """Under the profiler, freed tensors' memory stays on glibc's heap, cut up by the profiler's own
    records; ``release_free_memory`` (run before each configuration) returns it."""
    from torch.profiler import record_function

    from opperf.frameworks.torch import profiling
    from opperf.measure.memory import release_free_memory

    def resident_bytes() -> int:
        with open("/proc/self/statm", encoding="utf-8") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    data = torch.rand(1024, 1024, requires_grad=True)
    seeds = torch.ones(1024, 1024)
    release_free_memory()
    before = resident_bytes()
    with profiling._session(on_gpu=False, memory=False):
        for _ in range(300):
            with record_function(profiling.FORWARD_MARK):
                outputs = data.arcsin()
            with record_function(profiling.BACKWARD_MARK):
                torch.autograd.grad(outputs, (data,), seeds)
    del outputs
    grown = resident_bytes() - before
    release_free_memory()
    kept = resident_bytes() - before
    assert grown > 64 * 2**20 and kept < grown / 4


def test_an_integer_output_has_no_backward(backend):
    (m,) = benchmark(torch.argmax, [{"input": (16, 16)}], RunOptions(**QUICK))
    assert m.status is Status.OK, m.reason
    assert m.backward is None and "grad_fn" in m.backward_reason
    assert m.memory_peak_bytes == 8  # one int64 index


def test_no_backward_when_not_requested(backend):
    (m,) = benchmark(torch.exp, [{"input": (16, 16)}], RunOptions(run_backward=False, **QUICK))
    assert m.backward is None and m.backward_reason == "backward not requested"


def test_memory_is_the_outputs_size_and_scales_with_it(backend):
    small, large = benchmark(
        torch.exp, [{"input": (32, 32)}, {"input": (128, 128)}], RunOptions(run_backward=False, **QUICK)
    )
    assert small.memory_peak_bytes == 32 * 32 * FLOAT32
    assert large.memory_peak_bytes == 16 * small.memory_peak_bytes


def test_inputs_autograd_refuses_take_no_gradient(backend, registry):
    """batch_norm's running statistics cannot require grad; the other inputs still get a backward."""
    from opperf.sweep.run import specs_for

    config = SweepConfig(options=RunOptions(**QUICK), profile=SMALL)
    (spec,) = specs_for(registry.by_name["batch_norm"], config, backend)
    m = measure(backend.session, spec)
    assert m.status is Status.OK, m.reason
    assert m.backward_reason is None and _positive_finite(m.backward)


def test_metadata_queries_are_timed_by_the_python_timer_and_say_so(backend):
    (m,) = benchmark(torch.Tensor.dim, [{"self": (4, 4)}], RunOptions(**QUICK))
    assert m.status is Status.OK and m.spec.options.profiler == "python"
    assert "timed by the python timer instead" in m.reason and _positive_finite(m.forward)


def test_failures_are_results(backend):
    (m,) = benchmark(torch.mm, [{"input": (4, 5), "mat2": (4, 5)}], RunOptions(**QUICK))
    assert m.status is Status.FAILED and "RuntimeError" in m.reason


@pytest.mark.skipif(torch.cuda.is_available(), reason="expects a machine without CUDA")
@pytest.mark.parametrize("device", ["gpu(0)", "cuda:0"])
def test_a_gpu_without_cuda_is_refused_with_the_fix(backend, device):
    with pytest.raises(OpperfError, match=r"no CUDA.*--ctx cpu|sees no CUDA device.*--ctx cpu"):
        backend.normalize_device(Device.parse(device))


def test_device_names(backend):
    assert backend.normalize_device(Device.parse("cpu")) == backend.normalize_device(CPU) == CPU
    assert Device.parse("cuda:1") == Device.parse("gpu(1)") == Device("gpu", 1)
    assert devices.torch_device(CPU).type == "cpu"
    with pytest.raises(OpperfError, match="malformed device"):
        Device.parse("tpu")


def test_an_unknown_operator_is_refused_with_suggestions(backend):
    with pytest.raises(OpperfError, match="did you mean add"):
        select_operators(backend, ["addd"], [])
    from opperf.frameworks.torch.namespaces import resolve

    with pytest.raises(OpperfError, match=r"torch\.addd; did you mean add"):
        resolve("torch", "addd")


def test_an_operator_without_inputs_is_recorded_as_skipped():
    config = SweepConfig(
        options=RunOptions(**QUICK), profile=SMALL, ops=("record_stream", "abs"), isolate=False
    )
    by_op = {m.spec.op: m for m in run_sweep(config).measurements}
    assert by_op["record_stream"].status is Status.SKIPPED and "stream" in by_op["record_stream"].reason
    assert by_op["abs"].status is Status.OK


def test_threads_are_set_and_recorded(backend):
    assert backend.set_threads(1) == 1 == backend.set_threads(None)
    environment = backend.environment()
    assert environment["num_threads"] == 1 and environment["torch_version"] == torch.__version__


def test_harness_overhead_is_small_and_positive(backend):
    for profiler in ("native", "python"):
        overhead = harness_overhead(backend.session, profiler, CPU)
        assert 0 < overhead < 1e-3


@pytest.mark.slow
def test_a_sweep_of_whole_categories_runs_every_operator():
    config = SweepConfig(
        options=RunOptions(**QUICK), profile=SMALL, categories=("pooling", "rnn", "loss"), timeout_s=120
    )
    result = run_sweep(config)
    statuses = {m.spec.op: m.status for m in result.measurements}
    failed = {op for op, status in statuses.items() if status not in (Status.OK, Status.SKIPPED)}
    assert not failed


def test_sweeps_record_the_peak_resident_memory_of_the_process_that_measured():
    from opperf.measure.memory import peak_rss_bytes

    config = SweepConfig(options=RunOptions(**QUICK), profile=SMALL, ops=("exp",), isolate=False)
    environment = run_sweep(config).environment
    assert 50 * 2**20 < environment.worker_peak_rss_bytes <= peak_rss_bytes()


def test_cold_cache_rotates_input_sets(backend):
    options = RunOptions(cache="cold", **QUICK)
    (m,) = benchmark(torch.mul, [{"input": (64, 64), "other": (64, 64)}], options)
    assert m.status is Status.OK, m.reason
    assert _positive_finite(m.forward) and _positive_finite(m.backward)


@pytest.mark.parametrize(
    ("op", "category"),
    [
        ("conv2d", "convolution"),
        ("conv_transpose2d", "transpose_convolution"),
        ("max_pool2d", "pooling"),
        ("lstm", "rnn"),
        ("batch_norm", "normalization"),
        ("relu", "activation"),
        ("nll_loss", "loss"),
        ("embedding", "nn_basic"),
        ("mm", "gemm"),
        ("linalg_qr", "linalg"),
        ("fft_rfft", "fft"),
        ("randn", "random_sampling"),
        ("zeros", "creation"),
        ("sum", "reduction"),
        ("argsort", "sorting_searching"),
        ("gather", "indexing"),
        ("add", "binary_broadcast"),
        ("exp", "unary"),
    ],
)
def test_categories(registry, op, category):
    assert registry.by_name[op].category == category


def test_categories_mxnet_lacks_are_named():
    from opperf.frameworks.mxnet import categories as mxnet_categories
    from opperf.frameworks.torch import categories as torch_categories

    torch_only = set(torch_categories.CATEGORY_NAMES) - set(mxnet_categories.CATEGORY_NAMES)
    assert torch_only == {"creation", "normalization", "fft"}


def test_a_benchmark_too_eventful_for_one_profiler_session_rotates_sessions(backend, monkeypatch):
    """Sessions are read and replaced once they hold EVENTS_PER_SESSION events, so the profiler's
    records of an operator made of thousands of aten calls do not pile up; every pass is still timed."""
    from opperf.frameworks.torch import profiling

    opened = []
    session = profiling._session
    monkeypatch.setattr(profiling, "_session", lambda *a, **k: opened.append(1) or session(*a, **k))
    monkeypatch.setattr(profiling, "EVENTS_PER_SESSION", 30)
    options = RunOptions(framework="torch", warmup=2, runs=12, threads=1)
    (m,) = benchmark(torch.corrcoef, [{"input": (16, 8)}], options)
    assert m.status is Status.OK, m.reason
    assert len(m.forward) == len(m.backward) == 12 and _positive_finite(m.forward)
    assert len(opened) > 3  # the probe, the first session, and at least two rotations


def test_activities_read_from_names_match_those_the_profiler_states():
    """Before PyTorch 2.12 raw events do not say their activity; what opperf reads from their
    names instead agrees with what later versions state, for every host event of a marked pass."""
    from torch.profiler import record_function

    from opperf.frameworks.torch import profiling

    data = torch.rand(64, 16, requires_grad=True)
    with profiling._session(on_gpu=False, memory=False) as session:
        with record_function(profiling.FORWARD_MARK):
            outputs = torch.exp(data)
        with record_function(profiling.BACKWARD_MARK):
            outputs.backward(torch.ones_like(outputs))
    events = [
        e
        for e in session.profiler.kineto_results.events()
        if e.activity_type() in ("cpu_op", "user_annotation")
    ]
    assert {e.activity_type() for e in events} == {"cpu_op", "user_annotation"}
    stated = [e.activity_type() if e.name() in profiling.MARKS else "cpu_op" for e in events]
    assert [profiling.activity_from_name(e) for e in events] == stated


def test_device_work_is_counted_per_call_the_most_time_first_and_the_rest_summed():
    from opperf.frameworks.torch import profiling
    from opperf.frameworks.torch.profiling import Work

    calls = [
        [Work("gemm", 4e-6, "kernel", "aten::mm"), Work("Memset (Device)", 1e-6, "memset", "aten::mm")],
        [Work("gemm", 6e-6, "kernel", "aten::mm"), Work("Memset (Device)", 1e-6, "memset", "aten::mm")],
    ]
    (gemm, memset) = profiling.device_work("forward", calls)
    assert (gemm.name, gemm.kind, gemm.per_call, gemm.seconds) == ("gemm", "kernel", 1, pytest.approx(5e-6))
    assert (memset.kind, memset.per_call, memset.seconds) == ("memset", 1, pytest.approx(1e-6))
    many = [[Work(f"k{i}", (i + 1) * 1e-6, "kernel") for i in range(profiling.DEVICE_WORK_SHOWN + 3)]]
    listed = profiling.device_work("backward", many)
    assert len(listed) == profiling.DEVICE_WORK_SHOWN + 1
    assert listed[0].name == f"k{profiling.DEVICE_WORK_SHOWN + 2}"
    assert (listed[-1].kind, listed[-1].name, listed[-1].per_call) == ("other", "3 more", 3)
    assert listed[-1].seconds == pytest.approx(6e-6)


def test_a_device_timed_record_keeps_its_host_latency_and_device_work_through_the_file():
    from opperf.results.document import measurement_from_record, record
    from opperf.results.measurement import BenchmarkSpec, DeviceWork, Measurement, TensorSpec, freeze_inputs
    from opperf.results.schema import record_problem

    spec = BenchmarkSpec("torch", "exp", freeze_inputs({"input": TensorSpec((8, 8))}), RunOptions(**QUICK))
    measured = Measurement(
        spec=spec,
        status=Status.OK,
        forward=(2.2e-6, 2.3e-6),
        timer="device",
        host_forward=(2.7e-5, 2.6e-5, 2.8e-5),
        device_work=(DeviceWork("forward", "kernel", "vectorized_elementwise_kernel", 1.0, 2.25e-6),),
    )
    written = record(measured)
    assert record_problem(written) is None
    assert written["timer"] == "device" and written["host_latency"]["forward"]["n"] == 3
    read = measurement_from_record(written)
    assert record(read) == written
    assert (read.timer, read.host_forward, read.device_work) == (
        "device",
        measured.host_forward,
        measured.device_work,
    )
    broken = {**written, "device_work": [{"phase": "sideways"}]}
    assert "device_work" in record_problem(broken)


def test_bfloat16_inputs_are_bfloat16_and_their_bytes_are_two_each(tmp_path):
    """``--dtype bfloat16`` (PyTorch; the dtype GPUs train in): the tensors are bfloat16, and the
    roofline counts two bytes an element."""
    import json

    output = tmp_path / "bf16.json"
    completed = subprocess.run(
        [
            *(sys.executable, OPPERF, "--framework", "torch", "--ops", "exp,mm", "--dtype", "bfloat16"),
            *("--quiet", "--no-isolation", "--output-file", str(output)),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    records = json.loads(output.read_text())["results"]
    assert {r["dtype"] for r in records} == {"bfloat16"} and all(r["status"] == "ok" for r in records)
    exp = next(r for r in records if r["op"] == "exp" and r["inputs"]["input"]["shape"] == [1024, 1024])
    assert exp["roofline"]["bytes"] == 2 * 1024 * 1024 * 2  # read once, written once, 2 bytes each


def test_mxnet_refuses_bfloat16_in_one_line_before_anything_runs(tmp_path):
    completed = subprocess.run(
        [sys.executable, OPPERF, "--ops", "exp", "--dtype", "bfloat16", "--output-file", "unused.json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert completed.returncode == 2
    assert completed.stderr.strip() == (
        "error: dtype bfloat16: MXNet 1.9.1 has no bfloat16 NDArray (only oneDNN's internal one); use "
        "--framework torch, or float16"
    )
    assert not (tmp_path / "unused.json").exists()
