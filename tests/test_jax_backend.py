"""The JAX backend against real JAX: its registry, inputs, calls, measurements (eager and jit, with
backward through ``jax.vjp``), refusals, and a sweep through workers."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from interpreters import script, without_site_packages

from opperf.frameworks import get_backend
from opperf.measure.harness import harness_overhead, measure
from opperf.measure.memory import input_bytes
from opperf.operators.info import ArgKind
from opperf.operators.rules import inputs_for, replay_refusal
from opperf.operators.rules.generic import NoRuleError
from opperf.operators.rules.profiles import SMALL, STANDARD
from opperf.results.measurement import BenchmarkSpec, Status, TensorSpec, freeze_inputs
from opperf.results.options import RunOptions
from opperf.sweep.run import _spec
from opperf.utils.cache import input_sets, last_level_cache_bytes
from opperf.utils.errors import OpperfError

jax = pytest.importorskip("jax")

from opperf.frameworks.jax.calls import arrange  # noqa: E402
from opperf.frameworks.jax.profiling import NO_NATIVE_TIMER  # noqa: E402
from opperf.frameworks.jax.registry import NOT_OPERATORS, load_registry  # noqa: E402
from opperf.frameworks.jax.rules.skips import SKIP_REASONS  # noqa: E402
from opperf.frameworks.jax.signatures import arguments  # noqa: E402
from opperf.utils.devices import CPU  # noqa: E402

OPPERF = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "opperf.py")
QUICK = RunOptions(framework="jax", device="cpu(0)", profiler="python", warmup=1, runs=3)


@pytest.fixture(scope="module")
def backend():
    backend = get_backend("jax")
    backend.set_threads(None)
    return backend


@pytest.fixture(scope="module")
def registry():
    return load_registry()


def _measured(backend, registry, name: str, options: RunOptions = QUICK, index: int = 0, **stage):
    op = registry.by_name[name]
    configuration = inputs_for(op, SMALL, "cpu")[index]
    return measure(backend.session, _spec(op, options, configuration, **stage))


def test_the_registry_holds_each_function_once_under_its_namespace_name(registry):
    assert len(registry.operators) > 500
    exp, lax_exp = registry.by_name["exp"], registry.by_name["lax.exp"]
    assert exp is not lax_exp  # two functions: jnp.exp promotes dtypes, lax.exp does not
    assert (exp.namespaces, exp.function_name, lax_exp.namespaces) == (("jax.numpy",), "exp", ("jax.lax",))
    assert registry.by_name["max"] is registry.by_name["amax"]  # one function, two names
    assert registry.by_name["nn.swish"] is registry.by_name["nn.silu"]
    assert exp.framework == "jax" and exp.category == "unary"
    assert registry.by_name["add"].category == "binary_broadcast"
    assert registry.by_name["lax.conv_general_dilated"].category == "convolution"
    names = set(registry.registered_names)
    assert {"can_cast", "set_printoptions", "load"} <= names
    assert not set(NOT_OPERATORS) & set(registry.by_name)


def test_arguments_come_from_signatures_with_annotations_or_names():
    import jax.lax
    import jax.numpy

    summed = {a.name: a for a in arguments(jax.numpy.sum)}
    assert summed["a"].kind is ArgKind.TENSOR and summed["a"].required
    assert summed["axis"].kind is ArgKind.INT and not summed["axis"].required
    assert summed["keepdims"].default is False
    stacked = {a.name: a for a in arguments(jax.numpy.concatenate)}
    assert stacked["arrays"].kind is ArgKind.TENSOR_LIST
    assert {a.name: a.kind for a in arguments(jax.lax.transpose)}["permutation"] is ArgKind.SHAPE
    spread = arguments(jax.numpy.broadcast_arrays)[0]
    assert spread.kind is ArgKind.TENSOR_LIST and spread.required and spread.type_string.startswith("*")
    assert not any(a.required for a in arguments(jax.numpy.piecewise) if a.type_string.startswith("*"))


def test_evaluated_annotations_read_as_their_source_spells_them():
    """JAX 0.10 evaluates some annotations (``lexsort``): its ``keys`` stay a list of arrays, not one
    array of as many keys as rows (a sort on 1,024 keys that XLA took over 60 s to compile)."""
    import collections.abc
    import typing

    import numpy as np

    def lexsort(keys, axis=-1):
        return keys

    array_like = typing.Union[jax.Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]  # noqa: UP007
    lexsort.__annotations__ = {
        "keys": jax.Array | np.ndarray | collections.abc.Sequence[array_like],
        "axis": int,
    }
    keys, axis = arguments(lexsort)
    assert keys.type_string == "Array | np.ndarray | Sequence[ArrayLike]" and keys.kind is ArgKind.TENSOR_LIST
    assert (axis.type_string, axis.kind) == ("int", ArgKind.INT)


def test_every_operator_has_inputs_or_a_stated_reason(registry):
    missing = {}
    for op in registry.operators:
        try:
            inputs_for(op, STANDARD, "cpu")
        except NoRuleError as error:
            missing[op.name] = str(error)
    assert set(missing) == set(SKIP_REASONS)
    assert all(reason == SKIP_REASONS[name] for name, reason in missing.items())


def test_a_call_passes_leading_arguments_by_position_and_spreads_args():
    import jax.numpy as jnp

    def is_array(value):
        return isinstance(value, jax.Array) or (isinstance(value, list) and value and is_array(value[0]))

    ones = jnp.ones((2, 3))
    call = arrange("sum", jnp.sum, {"a": ones, "axis": 0}, is_array)
    assert (call.array_names, call.keyword_from) == (("a",), 2)
    assert call().shape == (3,)
    spread = arrange("broadcast_arrays", jnp.broadcast_arrays, {"args": [ones, ones[:1]]}, is_array)
    assert [a.shape for a in spread()] == [(2, 3), (2, 3)]
    keyword = arrange("clip", jnp.clip, {"x": ones, "max": 0.5}, is_array)
    assert float(keyword().max()) == 0.5


def _clip(arr=None, /, min=None, max=None):  # JAX 0.10.2 jnp.clip (x in 0.4.30)
    return {"arr": arr, "min": min, "max": max}


def _left_shift(x, y, /):  # JAX 0.10's jnp.left_shift (x1, x2 in 0.4.30)
    return {"x": x, "y": y}


def _beta(a, b):  # JAX 0.10's special.beta (*args in 0.4.30)
    return {"a": a, "b": b}


def _mask_indices(n, mask_func, k=0, *, size=None):  # JAX 0.10's (*args, **kwargs in 0.4.30)
    return {"n": n, "mask_func": mask_func}


def _random_gamma_grad(*args):  # JAX 0.10's lax.random_gamma_grad ((a, x) in 0.4.30)
    return {"args": len(args), "a": args[0], "x": args[1]}


@pytest.mark.parametrize(
    ("name", "function", "given"),
    [
        ("clip", _clip, {"arr": (1024, 1024), "min": 0.2, "max": 0.8}),
        ("left_shift", _left_shift, {"x": (1024, 1024), "y": (1024, 1024)}),
        ("special.beta", _beta, {"a": (1024, 1024), "b": (1024, 1024)}),
        ("mask_indices", _mask_indices, {"n": 1024, "mask_func": "_triu"}),  # the session's body
        ("lax.random_gamma_grad", _random_gamma_grad, {"args": 2, "a": (1024, 1024), "x": (1024, 1024)}),
    ],
)
def test_an_override_written_for_jax_0_4_fits_a_newer_signature(registry, name, function, given):
    """A sweep may run newer JAX in its own interpreter: an override naming a positional parameter as
    0.4.30 does, or giving ``*args``, reaches the function under the names its signature has."""
    from opperf.frameworks.jax.rules import inputs_for as jax_inputs_for

    op = replace(registry.by_name[name], arguments=arguments(function))
    configuration = jax_inputs_for(op, STANDARD, "cpu")[0]
    call = arrange(name, function, configuration, lambda value: isinstance(value, TensorSpec))
    bound = call()
    named = {key: getattr(value, "shape", getattr(value, "__name__", value)) for key, value in bound.items()}
    assert named == given
    assert jax_inputs_for(registry.by_name[name], STANDARD, "cpu")[0].keys() != configuration.keys()


def test_overrides_fit_the_pinned_jaxs_signatures_as_written(registry):
    """On the JAX the overrides were written for, fitting changes nothing: each names its operator's
    own parameters (a binary operator keeps the profile's broadcast pairs)."""
    from opperf.frameworks.jax.rules.derived import fit_to_signature
    from opperf.frameworks.jax.rules.overrides import OVERRIDES
    from opperf.operators.rules.generic import RuleContext

    checked = 0
    for name, override in OVERRIDES.items():
        op = registry.by_name.get(name)
        if op is None:  # an operator of a newer JAX
            continue
        for shape, pair in zip(STANDARD.shapes, STANDARD.broadcast_pairs, strict=True):
            given = override(RuleContext(op=op, shape=shape, pair=pair))
            assert fit_to_signature(op, given) == given, name
        checked += 1
    assert checked > 150
    gamma = inputs_for(registry.by_name["lax.random_gamma_grad"], STANDARD, "cpu")
    assert [(c["a"].shape, c["x"].shape) for c in gamma] == list(STANDARD.broadcast_pairs)


def test_eager_forward_and_backward_through_vjp(backend, registry):
    measured = _measured(backend, registry, "exp")
    assert measured.status is Status.OK, measured.reason
    assert min(measured.forward) > 0 and min(measured.backward) > 0
    assert measured.spec.options.profiler == "python"
    assert measured.memory_peak_bytes and measured.memory_peak_bytes >= 16 * 16 * 4


def test_jax_is_timed_by_python_and_refuses_the_native_profiler(backend, registry):
    """JAX has no per-operator profiler: a run takes the Python timer without a word on every row,
    ``--profiler native`` is refused up front, and a spec that asks for it anyway is timed by Python
    with the reason."""
    assert RunOptions(framework="jax").validated().profiler == "python"
    assert RunOptions(framework="mxnet").validated().profiler == "native"
    with pytest.raises(OpperfError, match="profiler native: JAX has no per-operator profiler"):
        RunOptions(framework="jax", profiler="native").validated()
    quiet = _measured(backend, registry, "exp", RunOptions(framework="jax", warmup=1, runs=3).validated())
    assert quiet.status is Status.OK and quiet.reason is None and quiet.spec.options.profiler == "python"
    asked = RunOptions(framework="jax", warmup=1, runs=3, profiler="native")
    measured = _measured(backend, registry, "exp", asked)
    assert measured.status is Status.OK
    assert measured.spec.options.profiler == "python"  # the row key says which timer timed it
    assert NO_NATIVE_TIMER in measured.reason
    assert harness_overhead(backend.session, "native", CPU) > 0


def test_jit_is_the_compile_stage_with_its_compile_time_and_check(backend, registry):
    measured = _measured(backend, registry, "nn.softmax", stage="compile")
    assert measured.status is Status.OK, measured.reason
    assert measured.compile_s and measured.compile_s > 0
    assert measured.stage_check is not None and measured.stage_check.agrees
    assert measured.backward is not None
    refused = _measured(backend, registry, "exp", stage="graph")
    assert refused.status is Status.SKIPPED and "no graph stage" in refused.reason


def test_the_compile_stage_compiles_its_call_once_whatever_the_input_sets(backend, registry):
    # --cache cold rotates input sets (64 of a (256, 256) array here): each set compiled its own
    # executable inside compile_s, which read 64 compiles (0.8 s for exp, against 0.01 s).
    from jax._src import monitoring  # unregistering a listener has no public name

    options = replace(QUICK, cache="cold", run_backward=False)
    spec = _spec(registry.by_name["exp"], options, {"x": TensorSpec((256, 256))}, stage="compile")
    assert input_sets("cold", input_bytes(spec), last_level_cache_bytes()) >= 16
    compiles = []

    def count(event, seconds, **_):
        if event == "/jax/core/compile/backend_compile_duration":
            compiles.append(seconds)

    jax.monitoring.register_event_duration_secs_listener(count)
    try:
        measured = measure(backend.session, spec)
    finally:
        monitoring._unregister_event_duration_listener_by_callback(count)
    assert measured.status is Status.OK and measured.compile_s is not None
    assert len(compiles) < 8, compiles


def test_an_operator_jax_cannot_differentiate_is_measured_forward_with_the_reason(backend, registry):
    measured = _measured(backend, registry, "nextafter")
    assert measured.status is Status.OK and measured.backward is None
    assert "Differentiation rule for 'nextafter' not implemented" in measured.backward_reason
    integers = _measured(backend, registry, "bitwise_and")
    assert integers.backward_reason == "no floating-point array input to differentiate"


def test_a_pass_too_large_is_refused_from_xla_memory_analysis_before_inputs_exist(backend):
    vector = TensorSpec((2**14,))
    spec = BenchmarkSpec("jax.numpy", "outer", freeze_inputs({"a": vector, "b": vector}), options=QUICK)
    measured = measure(backend.session, spec)
    assert measured.status is Status.SKIPPED
    assert re.search(r"a pass would allocate 1\.\d+ GiB \(XLA's memory analysis\)", measured.reason)


def test_a_configuration_named_as_another_jax_names_it_is_fitted_to_this_ones_signature(backend):
    """An A/B job makes its configurations once, from the base side's JAX: ``clip``'s array is ``x``
    in 0.4.30 and ``arr`` in 0.10, and every record of the side whose name differed failed (the diff
    called them newly failing). The call is fitted; the record keeps the configuration's names."""
    inputs = freeze_inputs({"arr": TensorSpec((64, 64)), "min": 0.2, "max": 0.8})
    spec = BenchmarkSpec("jax.numpy", "clip", inputs, options=QUICK)
    measured = measure(backend.session, spec)
    assert measured.status is Status.OK, measured.reason
    assert [name for name, _ in measured.spec.inputs] == ["arr", "min", "max"]


def test_operators_taking_functions_get_named_bodies(backend, registry):
    for name in ("lax.scan", "lax.reduce_window", "lax.fori_loop", "lax.associative_scan"):
        measured = _measured(backend, registry, name)
        assert measured.status is Status.OK, (name, measured.reason)


def test_a_configs_file_cannot_name_a_function_of_its_own(registry):
    op = registry.by_name["lax.map"]
    swept = inputs_for(op, STANDARD, "cpu")[0]
    hostile = freeze_inputs({**swept, "f": "os.system"})
    assert "f" in replay_refusal(op, hostile, STANDARD, "cpu")
    assert replay_refusal(op, freeze_inputs(swept), STANDARD, "cpu") is None


def test_the_roofline_counts_what_xla_compiled_and_falls_back_where_it_cannot():
    # cumsum down the rows: the unoptimised program counts 1.07e9 FLOPs, the compiled one 3.5e7;
    # matmul is a library call the compiled program cannot count (-1): 2 n^3 from the unoptimised.
    from opperf.frameworks.jax.profiling import analyse

    matrix = jax.ShapeDtypeStruct((1024, 1024), "float32")

    def abstract(value):
        return isinstance(value, jax.ShapeDtypeStruct)

    cumsum = analyse(arrange("cumsum", jax.numpy.cumsum, {"a": matrix, "axis": 0}, abstract), (True,))
    assert cumsum.work is not None and cumsum.work.flops < 1e8 and cumsum.work.bytes_moved == 8 * 2**20
    matmul = analyse(arrange("matmul", jax.numpy.matmul, {"a": matrix, "b": matrix}, abstract), (True, True))
    assert matmul.work is not None and matmul.work.flops == 2 * 1024**3
    # inv is LAPACK's LU factorisation and two solves, which both programs call and XLA cannot count:
    # its total read 197,646 FLOPs (-1 a call) of some 4e7. No count is better than that one.
    small = jax.ShapeDtypeStruct((256, 256), "float32")
    assert analyse(arrange("linalg.inv", jax.numpy.linalg.inv, {"a": small}, abstract), (True,)).work is None


def test_the_memory_of_a_pass_without_a_backward_pass_is_the_forward_passs():
    # argmax takes a float array but has no floating-point output, so it has no backward pass; the
    # whole pass compiled with one counted the zero gradient of its input (4 MiB).
    from opperf.frameworks.jax.profiling import analyse

    matrix = jax.ShapeDtypeStruct((1024, 1024), "float32")
    call = arrange("argmax", jax.numpy.argmax, {"a": matrix, "axis": 1}, lambda v: v is matrix)
    analysis = analyse(call, (True,))
    assert analysis.pass_bytes is not None and analysis.pass_bytes < 2**16


def test_the_analysis_reads_the_same_without_llvm_optimisation(monkeypatch):
    # ANALYSIS_OPTIONS skip LLVM's optimisation to compile faster; the analyses read the HLO program
    # and its buffers, so memory and work must come out as at XLA's default level (a scan, a fused
    # softmax with its backward pass, a library call).
    from opperf.frameworks.jax import profiling

    matrix = jax.ShapeDtypeStruct((1024, 1024), "float32")

    def abstract(value):
        return isinstance(value, jax.ShapeDtypeStruct)

    calls = [
        (arrange("cumsum", jax.numpy.cumsum, {"a": matrix, "axis": 0}, abstract), (True,)),
        (arrange("softmax", jax.nn.softmax, {"x": matrix}, abstract), (True,)),
        (arrange("matmul", jax.numpy.matmul, {"a": matrix, "b": matrix}, abstract), (True, True)),
    ]
    fast = [profiling.analyse(call, differentiable) for call, differentiable in calls]
    monkeypatch.setattr(profiling, "ANALYSIS_OPTIONS", {})
    default = [profiling.analyse(call, differentiable) for call, differentiable in calls]
    assert fast == default and all(a.pass_bytes and a.work for a in fast)


def test_a_convolutions_dimension_numbers_from_a_file_are_checked_as_text(registry):
    op = registry.by_name["lax.conv_general_dilated"]
    captured = {
        "lhs": TensorSpec((2, 8, 8, 3)), "rhs": TensorSpec((3, 3, 3, 4)), "window_strides": (1, 1),
        "padding": ((1, 1), (1, 1)), "dimension_numbers": ("NHWC", "HWIO", "NHWC"),
    }  # fmt: skip
    assert replay_refusal(op, freeze_inputs(captured), STANDARD, "cpu") is None
    for hostile in (("NHWC", "HWIO", "\x1b[2J"), ("NHWC", "HWIO", "N" * 300)):
        refusal = replay_refusal(
            op, freeze_inputs({**captured, "dimension_numbers": hostile}), STANDARD, "cpu"
        )
        assert refusal is not None and "dimension_numbers" in refusal


def _threads_after_a_product(threads: str) -> tuple[str, int, int]:
    """In a fresh process: the thread count set, the CPUs the process may use after, and how many
    threads it runs once JAX has computed a matrix product (XLA's pool among them)."""
    code = (
        "import os\nfrom opperf.frameworks import get_backend\n"
        f"count = get_backend('jax').set_threads({threads})\n"
        "import jax, jax.numpy as jnp\n"
        "x = jnp.ones((512, 512)); (x @ x).block_until_ready()\n"
        "print(count, len(os.sched_getaffinity(0)), len(os.listdir('/proc/self/task')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, cpus, tasks = done.stdout.split()
    return count, int(cpus), int(tasks)


def test_threads_size_xla_pool_and_the_process_keeps_its_cpus(backend):
    """XLA sizes its CPU pool by the process's CPUs when it starts: the backend starts on as many as
    threads are asked for, and the process gets every CPU back."""
    cpus = len(os.sched_getaffinity(0))
    with pytest.raises(OpperfError, match="one thread per CPU it may use"):
        backend.set_threads(cpus + 1)
    if cpus < 2:
        pytest.skip("one CPU: every thread count is the whole machine")
    one = _threads_after_a_product("1")
    every = _threads_after_a_product("None")
    assert one[:2] == ("1", cpus) and every[:2] == (str(cpus), cpus)
    assert one[2] < every[2]  # a smaller pool


def test_missing_64_bit_dtypes_are_refused_with_what_to_do():
    completed = subprocess.run(
        [sys.executable, OPPERF, "--framework", "jax", "--ops", "exp", "--dtype", "float64"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert completed.returncode == 2
    assert "jax_enable_x64" in completed.stderr and "Traceback" not in completed.stderr
    assert "set JAX_ENABLE_X64=1" in completed.stderr


def test_64_bit_dtypes_run_where_jax_enable_x64_is_set(tmp_path):
    """The refusal said "unless jax_enable_x64 is set", and went on refusing where it was."""
    out = tmp_path / "x64.json"
    completed = subprocess.run(
        [sys.executable, OPPERF, "--framework", "jax", "--ops", "exp", "--dtype", "float64", "--runs", "2",
         "--warmup", "0", "--quiet", "--output-file", str(out)],
        capture_output=True, text=True, timeout=300, check=False, env={**os.environ, "JAX_ENABLE_X64": "1"},
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    document = json.loads(out.read_text())
    assert document["environment"]["framework_settings"]["x64"] is True
    assert {r["dtype"] for r in document["results"]} == {"float64"}


def test_a_sweep_through_workers_writes_jax_records(tmp_path):
    out = tmp_path / "jax.json"
    completed = subprocess.run(
        [sys.executable, OPPERF, "--framework", "jax", "--ops", "exp,lax.dot_general,special.erf,nn.relu",
         "--warmup", "1", "--runs", "3", "--json-file", str(out),
         "--output-file", str(tmp_path / "jax.md")],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    document = json.loads(out.read_text())
    assert document["environment"]["framework"] == "jax"
    assert document["environment"]["jax_version"] == jax.__version__
    records = document["results"]
    assert {r["op"] for r in records} == {"exp", "lax.dot_general", "special.erf", "nn.relu"}
    assert all(r["status"] == "ok" for r in records), [r["reason"] for r in records]
    # The roofline's work from XLA's cost analysis: exp is one transcendental an element, and moves
    # its input and output once.
    for record in (r for r in records if r["op"] == "exp"):
        elements = math.prod(record["inputs"]["x"]["shape"])
        assert record["roofline"]["flops"] == elements and record["roofline"]["bytes"] == 8 * elements
    assert all(r["roofline"]["flops"] > 0 for r in records if r["op"] == "lax.dot_general")


@pytest.fixture
def other_interpreter(tmp_path):
    """Another interpreter with this one's packages: a venv of the same base Python whose
    site-packages points at this environment's (a stand-in for a JAX venv with numpy 2)."""
    import site
    import sysconfig

    base = os.path.realpath(sys.executable)
    root = tmp_path / "venv"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").symlink_to(base)
    (root / "pyvenv.cfg").write_text(
        f"home = {os.path.dirname(base)}\ninclude-system-site-packages = false\n"
    )
    packages = root / os.path.relpath(sysconfig.get_path("purelib"), sys.prefix)
    packages.mkdir(parents=True)
    (packages / "main.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return str(root / "bin" / "python")


def test_workers_run_in_the_interpreter_the_setting_names(tmp_path, other_interpreter):
    """The sweep's process never imports JAX: a worker in the other interpreter describes the registry
    and measures, and the environment says which interpreter that was."""
    out = tmp_path / "remote.json"
    driver = (
        "import sys\nfrom opperf.cli import main\n"
        f"code = main(['--framework', 'jax', '--ops', 'exp,lax.scan', '--warmup', '1', '--runs', '3', "
        f"'--json-file', {str(out)!r}, '--output-file', {str(tmp_path / 'remote.md')!r}])\n"
        "print(code, 'jax' in sys.modules)\n"
    )
    environment = {**os.environ, "OPPERF_JAX_PYTHON": other_interpreter}
    done = subprocess.run(
        [sys.executable, "-c", driver],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert done.stdout.split()[-2:] == ["0", "False"], done.stderr
    document = json.loads(out.read_text())
    assert document["environment"]["worker_python"] == other_interpreter
    assert {r["status"] for r in document["results"]} == {"ok"}


def test_what_needs_the_framework_here_is_refused_when_it_runs_elsewhere(tmp_path, other_interpreter):
    environment = {**os.environ, "OPPERF_JAX_PYTHON": other_interpreter}
    refused = subprocess.run(
        [sys.executable, OPPERF, "--framework", "jax", "--ops", "exp", "--no-isolation"],
        env=environment, capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert [p.name for p in tmp_path.iterdir()] == ["venv"]  # refused before the journal opens
    assert refused.returncode == 2 and "OPPERF_JAX_PYTHON" in refused.stderr
    assert "Traceback" not in refused.stderr
    environment["OPPERF_JAX_PYTHON"] = "/nonexistent/python"
    missing = subprocess.run(
        [sys.executable, OPPERF, "--framework", "jax", "--ops", "exp"],
        env=environment, capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: OPPERF_JAX_PYTHON=/nonexistent/python is no executable file")
    bare = without_site_packages(tmp_path / "python")  # no numpy
    environment["OPPERF_JAX_PYTHON"] = bare
    without = subprocess.run(
        [sys.executable, OPPERF, "--framework", "jax", "--ops", "exp"],
        env=environment, capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert without.returncode == 2 and without.stderr.count("\n") == 1
    assert (
        f"{bare} cannot run opperf's jax worker (ModuleNotFoundError: No module named 'numpy'); install numpy"
        in (without.stderr)
    )


@pytest.mark.parametrize(("chosen", "expected"), [(None, "false"), ("true", "true")])
def test_jax_takes_a_gpus_memory_as_needed_unless_the_user_chose(chosen, expected):
    """Each process that starts JAX's GPU backend takes 75% of the GPU by default, and a sweep starts
    several: the backend sets JAX's setting before anything starts it, in every process that builds
    it (workers too), and records it; a user's own choice stands."""
    environment = {k: v for k, v in os.environ.items() if k != "XLA_PYTHON_CLIENT_PREALLOCATE"}
    if chosen is not None:
        environment["XLA_PYTHON_CLIENT_PREALLOCATE"] = chosen
    script = (
        "import os\n"
        "from opperf.frameworks import get_backend\n"
        "backend = get_backend('jax')\n"
        "print(os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'], "
        "backend.environment()['framework_settings']['xla_python_client_preallocate'])\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True, timeout=120,
        check=True,
    )  # fmt: skip
    assert found.stdout.split() == [expected, expected]


def test_a_folder_the_user_names_for_jax_keeps_the_programs_for_the_next_run(tmp_path, monkeypatch):
    """With ``JAX_COMPILATION_CACHE_DIR`` set, the workers keep what they compile there, not in the
    runner's folder, and a later runner's workers compile nothing it holds; the records say so."""
    import jaxlib

    from opperf.measure.isolation import IsolatedRunner

    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path))
    spec = BenchmarkSpec("jax.numpy", "exp", freeze_inputs({"x": TensorSpec((64, 64))}), options=QUICK)
    with IsolatedRunner("jax", timeout_s=120) as runner:
        (first,) = runner.run([spec])
        assert first.status is Status.OK
        assert runner.compiled_folder is not None and os.listdir(runner.compiled_folder) == []
    (build,) = os.listdir(tmp_path)  # this JAX build's part of the folder
    assert build.startswith(f"jaxlib-{jaxlib.__version__}-")
    kept = set(os.listdir(tmp_path / build))
    assert kept  # outlives the runner
    with IsolatedRunner("jax", timeout_s=120) as runner:
        (again,) = runner.run([spec])
    assert again.status is Status.OK and set(os.listdir(tmp_path / build)) == kept
    environment = get_backend("jax").environment()
    assert environment["jax_compilation_cache_dir"] == str(tmp_path / build)
    assert "jax_compilation_cache_dir" not in environment["framework_settings"]  # shards may differ


def test_a_sweep_without_workers_keeps_programs_in_the_builds_part_of_the_users_folder(tmp_path):
    """``--no-isolation`` compiles in opperf's own process: with the user's folder named, what JAX
    keeps goes to the build's part of it, not the folder's root, which any build would read."""
    import jaxlib

    environment = {**os.environ, "JAX_COMPILATION_CACHE_DIR": str(tmp_path),
                   "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0"}  # fmt: skip
    command = [sys.executable, OPPERF, "--framework", "jax", "--ops", "exp", "--no-isolation",
               "--runs", "2", "--quiet", "--output-file", str(tmp_path.parent / "out.json")]  # fmt: skip
    subprocess.run(command, cwd=tmp_path.parent, env=environment, check=True, capture_output=True, timeout=99)
    (build,) = os.listdir(tmp_path)
    assert build.startswith(f"jaxlib-{jaxlib.__version__}-") and os.listdir(tmp_path / build)


def test_each_jax_build_keeps_its_programs_apart(tmp_path):
    """JAX's key holds jaxlib's version string, not its build: a rebuilt library of the same version
    (an A/B job's new side) gets a folder of its own."""
    from opperf.frameworks.jax.compiled import build_folder

    package, plugin = tmp_path / "jaxlib", tmp_path / "jax_cuda12_plugin"
    (package / "mlir").mkdir(parents=True)
    plugin.mkdir()
    library, nested, compiler = package / "xla_extension.so", package / "mlir" / "_mlir.so", plugin / "xla.so"
    for path in (library, nested, compiler):
        path.write_bytes(b"base build")
    (package / "version.py").write_text("__version__ = '0.4.30'")
    packages = [str(package), str(plugin)]
    base = build_folder("/cache", packages, "0.4.30")
    assert base.startswith("/cache/jaxlib-0.4.30-") and base == build_folder("/cache", packages, "0.4.30")
    seen = {base}
    for path in (library, nested, compiler):  # jaxlib, a library within it, the GPU plugin's compiler
        path.write_bytes(b"the new build")
        rebuilt = build_folder("/cache", packages, "0.4.30")
        assert rebuilt not in seen
        seen.add(rebuilt)
    os.utime(compiler, ns=(0, 0))  # the same bytes rebuilt: only the time tells
    assert build_folder("/cache", packages, "0.4.30") not in seen


def test_a_runners_workers_share_what_jax_compiled_and_the_compile_stage_compiles_afresh():
    """A fresh worker of the same runner finds every program the one before it compiled (it adds none
    to the runner's folder); a ``compile`` stage record compiles its call past that folder (neither
    read nor written: its seconds are a compile's); the folder goes with the runner."""
    from dataclasses import replace

    from opperf.measure.isolation import IsolatedRunner

    spec = BenchmarkSpec("jax.numpy", "exp", freeze_inputs({"x": TensorSpec((64, 64))}), options=QUICK)
    runner = IsolatedRunner("jax", timeout_s=120)
    try:
        (first,) = runner.run([spec])
        folder = runner.compiled_folder
        kept = set(os.listdir(folder))
        assert first.status is Status.OK and kept
        runner.retire_worker()
        (again,) = runner.run([spec])
        assert again.status is Status.OK and set(os.listdir(folder)) == kept
        (compiled,) = runner.run([replace(spec, stage="compile")])
        assert compiled.status is Status.OK and compiled.compile_s > 0
        assert set(os.listdir(folder)) == kept
    finally:
        runner.close()
    assert runner.compiled_folder is None and not os.path.exists(folder)


def test_the_cpu_roof_probe_runs_on_the_cpu_whatever_platform_jax_is_told():
    """Where JAX has CUDA its arrays go to the GPU by default: the probe of the CPU's roof starts the
    CPU backend alone (here JAX told to take CUDA, which this machine lacks, would fail to start)."""
    from opperf.utils.child import opperf_command

    command = opperf_command("opperf.frameworks.jax.peaks", "64", "2")
    environment = {**os.environ, "JAX_PLATFORMS": "cuda"}
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=120, check=True)
    reading = json.loads(done.stdout.strip().splitlines()[-1])
    assert reading["method"].endswith("(jit, cpu)") and reading["gemm_flops_per_s"] > 0


SWEEP = ("--framework", "jax", "--ops", "exp", "--output-file", "out.json")
LISTING = ("list", "--framework", "jax")


@pytest.mark.parametrize(
    ("variable", "value", "problem", "commands"),
    [
        # a backend JAX cannot start: refused where it would run (listing the registry needs none)
        ("JAX_PLATFORMS", "tpu", "RuntimeError: Unable to initialize backend 'tpu'", (SWEEP,)),
        # settings JAX refuses as it is imported: refused by every command
        ("JAX_COMPILATION_CACHE_MAX_SIZE", "banana", 'Invalid value "banana" for JAX flag', (SWEEP, LISTING)),
        ("JAX_ENABLE_X64", "banana", "invalid truth value 'banana'", (SWEEP, LISTING)),
        # a flag XLA does not know ends the process with a fatal log line (exit 134, no word of ours)
        ("XLA_FLAGS", "--xla_bogus_flag=1", "(it kills the process: Unknown flags in XLA_FLAGS", (SWEEP,)),
    ],
)
def test_a_jax_that_cannot_start_here_is_refused_before_anything_runs(
    tmp_path, variable, value, problem, commands
):
    """A setting JAX reads from the environment and refuses: one line naming it, exit 2, before a
    worker measures anything (every configuration failed, then the report was lost to a traceback)."""
    environment = {**os.environ, variable: value}
    for command in commands:
        found = subprocess.run(
            [sys.executable, str(Path(__file__).resolve().parents[1] / "opperf.py"), *command],
            capture_output=True, text=True, cwd=tmp_path, env=environment, check=False,
        )  # fmt: skip
        assert found.returncode == 2, found.stderr
        assert found.stderr.startswith("error: JAX fails to start here (") and found.stderr.count("\n") == 1
        assert problem in found.stderr and not list(tmp_path.iterdir())


@pytest.mark.parametrize("named", ["{file}", "{file}/below"])
def test_a_compiled_programs_folder_that_cannot_be_one_is_refused(tmp_path, monkeypatch, named):
    """A file, or a path under one, holds no programs: JAX would keep none there and say nothing."""
    from opperf.cli import main
    from opperf.frameworks.jax.compiled import USER_FOLDER, user_folder
    from opperf.utils.errors import OpperfError

    (tmp_path / "file").write_text("")
    monkeypatch.setenv(USER_FOLDER, named.format(file=tmp_path / "file"))
    with pytest.raises(
        OpperfError, match=f"is no folder opperf can keep compiled programs in \\({tmp_path}/file is a file"
    ):
        user_folder()
    assert main(["list", "--framework", "jax", "--ops", "exp"]) == 0  # listing compiles nothing
    monkeypatch.setenv(USER_FOLDER, "relative")
    monkeypatch.chdir(tmp_path)
    assert user_folder().startswith(f"{tmp_path}/relative/jaxlib-")


def test_a_wrapper_that_runs_python_without_exec_is_told_so(tmp_path):
    """Its worker is the wrapper's child, not opperf's, and leaves at once: the message says why."""
    wrapper = script(tmp_path / "python", f'{sys.executable} "$@"')
    refused = subprocess.run(
        [sys.executable, OPPERF, "--framework", "jax", "--ops", "exp", "--output-file", "out.json"],
        env={**os.environ, "OPPERF_JAX_PYTHON": wrapper},
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "a wrapper script must exec Python, not run it" in refused.stderr


def test_explain_refuses_a_dtype_the_sweep_refuses(capsys):
    """explain listed float64 configurations of a JAX operator that a sweep refuses to run."""
    from opperf.cli import main

    assert main(["explain", "exp", "--framework", "jax", "--dtype", "float64"]) == 2
    assert capsys.readouterr().err.startswith("error: dtype float64: JAX runs without 64-bit types")


@pytest.mark.parametrize("placement", [["--affinity", "none"], ["--no-isolation"]])
def test_a_jax_thread_count_is_set_before_jax_starts_whatever_the_placement(tmp_path, placement):
    """The sweep started JAX's CPU backend (asking its environment) before setting --threads 1, then
    refused it as "already runs here with 2 threads"; only the default pinning escaped."""
    out = tmp_path / "t.json"
    completed = subprocess.run(
        [sys.executable, OPPERF, "--framework", "jax", "--ops", "exp", "--threads", "1", *placement,
         "--no-backward", "--runs", "2", "--warmup", "0", "--quiet", "--output-file", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    assert {r["threads"] for r in json.loads(out.read_text())["results"]} == {1}


def test_compare_sets_each_frameworks_threads_first_and_refuses_what_jax_cannot_take(tmp_path):
    """compare --no-isolation failed every jnp row ("already runs here"), exit 0; --threads 3 on two
    CPUs crashed every jnp worker, exit 0."""
    quick = ["--ops", "exp", "--rounds", "1", "--budget", "0.02", "--quiet"]
    done = subprocess.run(
        [sys.executable, OPPERF, "compare", "jnp,lax", *quick, "--no-isolation",
         "--output-file", str(tmp_path / "c.md")],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Not compared" not in (tmp_path / "c.md").read_text()
    cpus = len(os.sched_getaffinity(0))
    refused = subprocess.run(
        [sys.executable, OPPERF, "compare", "jnp,torch", *quick, "--threads", str(cpus + 1)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert refused.returncode == 2 and refused.stderr.startswith(
        f"error: --threads {cpus + 1}: JAX runs one thread"
    )


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="JAX starts with one thread on one CPU")
def test_commands_whose_workers_measure_take_a_thread_count_jax_already_running_here_lacks(tmp_path):
    """One process that had started JAX with every CPU (an earlier command or API call in it) refused
    ``compare --threads 1`` and ``sweep --threads 1`` ("already runs here with 2 threads"), though their
    workers set the count as they start; measuring here, the refusal stands."""
    driver = f"""
import jax.numpy, sys
from opperf.cli import main
jax.numpy.add(1, 1)  # JAX's CPU backend starts here with every CPU
quick = ["--budget", "0.02", "--threads", "1", "--quiet"]
print(main(["compare", "jnp,lax", "--ops", "exp", "--rounds", "1", *quick,
            "--output-file", {str(tmp_path / "c.md")!r}]))
print(main(["--framework", "jax", "--ops", "exp", "--no-backward", "--runs", "2", *quick,
            "--output-file", {str(tmp_path / "s.json")!r}]))
print(main(["compare", "jnp,lax", "--ops", "exp", "--rounds", "1", *quick, "--no-isolation"]))
"""
    done = subprocess.run(
        [sys.executable, "-c", driver], cwd=os.path.dirname(OPPERF), capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "0", "2"], done.stdout + done.stderr
    assert "Not compared" not in (tmp_path / "c.md").read_text()
    assert {r["threads"] for r in json.loads((tmp_path / "s.json").read_text())["results"]} == {1}
    assert "error: --threads 1: JAX's CPU backend already runs in this process with" in done.stderr
