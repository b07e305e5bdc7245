"""The GPU checks, as one script for a lent GPU machine (a few minutes; every phase bounded):

    python3 -m benchmarks.gpu --out DIR [--device 'gpu(0)'] [--seconds 480]

Phases, each writing under DIR and a line to DIR/summary.txt; one that fails or runs out of time
leaves the others' results:

- ``events``: the profiler's raw events of one marked exp call, forward and backward, by activity
  (what device time is read from; a record of it if the tests fail).
- ``tests``: ``tests/test_gpu.py`` (device time against the PyTorch profiler, faults, memory).
- ``fidelity``: a sweep of 12 operators (``OPS``), then an independent loop per record: the PyTorch
  profiler's own kernel totals per call (target: opperf's device time within 10%) and a synchronised
  wall-clock loop (target: host latency within 1.2x); and the sweep's harness efficiency (target 0.6).
- ``aa``: an A/A ``ab`` over the same operators (target: none called, at least 50% ``same``).
- ``tf32``: ``ab`` of ``mm`` (and bmm, addmm, matmul, linear) with TF32 matrix products on the new side
  (``TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1``; target: called ``faster``).
- ``devices``: a sweep of the same operators with ``--devices`` naming every visible GPU, a worker
  each (target: every record ok, each GPU's operators in ``device_workers``, each operator once).
- ``registry``: the whole aten registry as two shards at once on the one GPU (target: no failure for
  memory the other sweep holds, none not the operator's own).
- ``jax``: JAX with CUDA (issue 30): ``tests/test_jax_gpu.py`` (a record against a plain blocked loop,
  two sweeps sharing the GPU), a sweep of ``JAX_OPS`` on the device with a plain loop per record
  (target: within 1.2x), and ``compare jnp,torch`` over a few functions on the device.
- ``sweep`` (only when ``--phases`` names it): the whole registry in one sweep (target: at most 6
  minutes, at least 95% of operators ok, harness efficiency at least 0.6).

On a CPU (``--device cpu``) the same script checks itself before a GPU's time is spent on it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPS = "conv2d,max_pool2d,softmax,layer_norm,matmul,add,exp,sum,batch_norm,relu,linear,embedding"
JAX_OPS = (
    "lax.conv_general_dilated,nn.softmax,nn.standardize,matmul,add,exp,sum,nn.relu,take,cumsum,tanh,"
    "lax.dot_general"
)
JAX_COMPARED = "exp,add,matmul,tanh,sum"
TF32 = "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1"
SHARES = {
    "events": 0.03,
    "tests": 0.10,
    "fidelity": 0.12,
    "aa": 0.20,
    "tf32": 0.08,
    "devices": 0.03,
    "registry": 0.24,
    "jax": 0.20,
}
"""Each phase's share of ``--seconds``; what a phase leaves unused goes to the ones after it."""
OTHER_SHARES = {"sweep": 0.5}
"""Phases run only when ``--phases`` names them (``sweep``: the whole registry in one sweep, which
with the others does not fit one lent GPU's 15 minutes)."""


def _stop_on_sigterm() -> None:
    """SIGTERM (a device's time limit) raises SystemExit, so the ``finally`` blocks that stop the
    tests' process groups run: they live in sessions of their own, out of reach of the group's
    signal."""

    def stop(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the clean-up short
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def main() -> int:
    _stop_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", default="gpu(0)")
    parser.add_argument("--seconds", type=float, default=480.0)
    parser.add_argument("--phases", default=",".join(SHARES))
    arguments = parser.parse_args()
    arguments.out.mkdir(parents=True, exist_ok=True)
    summary = arguments.out / "summary.txt"
    deadline = time.monotonic() + arguments.seconds
    phases = arguments.phases.split(",")
    for index, phase in enumerate(phases):
        left = deadline - time.monotonic()
        shares = {**SHARES, **OTHER_SHARES}
        share = shares[phase] / sum(shares[p] for p in phases[index:])
        started = time.monotonic()
        try:
            lines = PHASES[phase](arguments.out, arguments.device, max(10.0, left * share))
        except Exception as error:  # one phase's failure leaves the others' results
            lines = [f"failed: {type(error).__name__}: {error}"]
        took = time.monotonic() - started
        text = "\n".join(f"  {line}" for line in lines)
        with summary.open("a") as handle:
            handle.write(f"[{phase}] {took:.0f} s, load {os.getloadavg()[0]:.2f}\n{text}\n")
        print(f"[{phase}] {took:.0f} s\n{text}", flush=True)
    return 0


def _opperf(arguments: list[str], seconds: float, log: Path, environment: dict | None = None) -> int:
    """Run ``opperf.py ARGUMENTS``; stopped with SIGTERM (which keeps what finished) at ``seconds``."""
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, str(ROOT / "opperf.py"), *arguments],
            stdout=output,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env={**os.environ, **(environment or {})},
        )
        try:
            return process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGTERM)
            try:
                return process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                return process.wait()


def _swept(framework: str, device: str, ops: str, results: Path, seconds: float) -> int:
    """Sweep ``ops`` of ``framework`` on ``device`` into ``results`` (its log beside it, ``.log``)."""
    arguments = ["--framework", framework, "--ctx", device, "--ops", ops, "--quiet"]
    return _opperf([*arguments, "--output-file", str(results)], seconds, results.with_suffix(".log"))


def _shapes(record: dict) -> dict:
    """The shapes of a record's tensor inputs, by name."""
    return {k: v["shape"] for k, v in record["inputs"].items() if isinstance(v, dict) and "shape" in v}


def events(out: Path, device: str, seconds: float) -> list[str]:
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    cuda = device.startswith("gpu")
    data = torch.rand(1024, 1024, device="cuda" if cuda else "cpu", requires_grad=True)
    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if cuda else [ProfilerActivity.CPU]
    with profile(activities=activities) as session:
        for _ in range(2):
            with record_function("opperf::forward"):
                result = torch.exp(data)
            with record_function("opperf::backward"):
                result.backward(torch.ones_like(result))
        if cuda:
            torch.cuda.synchronize()
    lines = []
    from opperf.frameworks.torch.profiling import activity_type

    for event in session.profiler.kineto_results.events():
        lines.append(
            f"{activity_type(event):<20} {event.device_type()!s:<16} corr {event.correlation_id():>6} "
            f"linked {event.linked_correlation_id():>6} thread {event.start_thread_id():>16} "
            f"{event.start_ns() % 10**9:>10} {event.duration_ns():>8} ns {event.name()[:70]}"
        )
    (out / "events.txt").write_text("\n".join(lines))
    kinds = Counter(line.split()[0] for line in lines)
    return [f"{len(lines)} events: {dict(kinds)}"]


def tests(out: Path, device: str, seconds: float) -> list[str]:
    return [_pytest(out / "tests.log", "tests/test_gpu.py", seconds)]


def _pytest(log: Path, tests: str, seconds: float) -> str:
    """Run the test file ``tests`` into ``log`` for at most ``seconds``, in a session of its own (a
    timeout stops the sweeps its tests start, and their workers, too); its exit status and last line."""
    with log.open("w") as output:
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", tests]
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True
        )
        try:
            status: int | str = process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            status = "timeout"
        finally:  # a timeout, Ctrl-C or SIGTERM (``_stop_on_sigterm``): nothing of it outlives us
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    return f"{tests} exit {status}: {log.read_text().strip().splitlines()[-1:]}"


def fidelity(out: Path, device: str, seconds: float) -> list[str]:
    results = out / "ops.json"
    code = _swept("torch", device, OPS, results, seconds * 0.6)
    document = json.loads(results.read_text())
    records = [r for r in document["results"] if r["status"] == "ok" and r.get("forward")]
    lines = [f"sweep exit {code}: {len(records)} of {len(document['results'])} records ok"]
    sampling = sum((r.get("sampling") or {}).get("seconds") or 0 for r in document["results"])
    wall = document["environment"].get("wall_seconds")
    if wall:
        lines.append(f"harness efficiency {sampling / wall:.2f} (sampling {sampling:.1f} s of {wall:.1f} s)")
    device_ratios, host_ratios = [], []
    for record in records:
        try:
            kernel_s, loop_s = _independent(record, device)
        except Exception as error:
            lines.append(f"{record['op']}: could not rebuild: {type(error).__name__}: {str(error)[:100]}")
            continue
        median = record["forward"]["median_s"]
        host = ((record.get("host_latency") or {}).get("forward") or {}).get("median_s")
        device_ratio = median / kernel_s if kernel_s else float("nan")
        host_ratio = host / loop_s if host else float("nan")
        device_ratios.append(device_ratio)
        host_ratios.append(host_ratio)
        kernels = [
            f"{w['name'][:40]}x{w['per_call']:g}"
            for w in record.get("device_work", [])
            if w["phase"] == "forward"
        ]
        lines.append(
            f"{record['op']:<11} {json.dumps(_shapes(record))[:44]:<44} timer {record.get('timer')}: "
            f"{median * 1e6:9.2f} us, profiler loop {kernel_s * 1e6:9.2f} us ({device_ratio:.3f}); "
            f"host {host * 1e6 if host else float('nan'):8.2f} us, synchronised loop {loop_s * 1e6:8.2f} us "
            f"({host_ratio:.3f}); {', '.join(kernels)[:120]}"
        )
    within = sum(abs(r - 1) <= 0.10 for r in device_ratios)
    host_within = sum(1 / 1.2 <= r <= 1.2 for r in host_ratios)
    lines.append(f"device time within 10% of the profiler loop: {within} of {len(device_ratios)}")
    lines.append(f"host latency within 1.2x of the synchronised loop: {host_within} of {len(host_ratios)}")
    return lines


def _independent(record: dict, device: str) -> tuple[float, float]:
    """(device seconds per call from the PyTorch profiler's kernel totals, median seconds of a
    synchronised wall-clock loop) for the record's forward call, its inputs rebuilt from the record
    (requiring gradients where the record has a backward pass: its forward calls built the graph)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    cuda = device.startswith("gpu")
    where = "cuda" if cuda else "cpu"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    dtype = getattr(torch, record["dtype"])
    # A record with a backward pass timed its forward calls recording the autograd graph, as here.
    graph = bool(record.get("backward"))

    def build(value):
        if isinstance(value, dict) and "shape" in value:
            kind = value.get("dtype")
            if kind and "int" in kind:
                return torch.randint(0, 2, tuple(value["shape"]), device=where, dtype=getattr(torch, kind))
            return torch.randn(tuple(value["shape"]), device=where, dtype=dtype, requires_grad=graph)
        if isinstance(value, list) and value and isinstance(value[0], dict):
            return [build(item) for item in value]
        return value

    function = _resolve(record["function"])
    inputs = {name: build(value) for name, value in record["inputs"].items()}
    for name in ("running_mean", "running_var"):  # statistics, never differentiated
        if isinstance(inputs.get(name), torch.Tensor):
            inputs[name] = inputs[name].detach()
    with torch.enable_grad() if graph else torch.inference_mode():
        for _ in range(10):
            function(**inputs)
        sync()
        calls = 30
        activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if cuda else [ProfilerActivity.CPU]
        with profile(activities=activities) as session:
            for _ in range(calls):
                function(**inputs)
            sync()
        averages = session.key_averages()
        if cuda:  # the device's own events: an operator's entry repeats its kernels' time
            device_events = [e for e in averages if e.device_type == torch.autograd.DeviceType.CUDA]
            kernel_s = sum(e.self_device_time_total for e in device_events) * 1e-6 / calls
        else:
            kernel_s = sum(e.self_cpu_time_total for e in averages) * 1e-6 / calls
        loop = []
        for _ in range(50):
            sync()
            started = time.perf_counter()
            function(**inputs)
            sync()
            loop.append(time.perf_counter() - started)
    return kernel_s, statistics.median(loop)


def _resolve(name: str):
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            owner = getattr(owner, part)
        return owner
    raise ImportError(name)


def _ab(out: Path, name: str, device: str, seconds: float, ops: str, extra: list[str]) -> list[str]:
    job = out / f"{name}.json"
    arguments = ["ab", "--framework", "torch", "--ctx", device, "--ops", ops, "--quiet", "--fresh"]
    started = time.monotonic()
    code = _opperf([*arguments, *extra, "--output-file", str(job)], seconds * 0.85, out / f"{name}.log")
    took = time.monotonic() - started
    diff = out / f"{name}_diff.json"
    _opperf(
        ["diff", str(job), "--output-format", "json", "--output-file", str(diff)],
        120,
        out / f"{name}_diff.log",
    )
    verdicts = json.loads(diff.read_text())
    counts = {k: v for k, v in verdicts["summary"]["counts"].items() if v}
    lines = [f"ab exit {code} in {took:.0f} s; verdicts {counts}"]
    for row in verdicts["rows"]:
        if row["verdict"] != "same" or name == "tf32":
            rounds = (row.get("base") or {}).get("runs")
            lines.append(
                f"{row['op']:<11} {json.dumps(row['inputs'])[:60]:<60} {row['phase']:<8} "
                f"{row['verdict']:<12} "
                f"ratio {row.get('ratio')} {row.get('ratio_ci95')} rounds {rounds}"
            )
    return lines


def aa(out: Path, device: str, seconds: float) -> list[str]:
    return _ab(out, "aa", device, seconds, OPS, [])


def tf32(out: Path, device: str, seconds: float) -> list[str]:
    return _ab(out, "tf32", device, seconds, "mm,bmm,addmm,matmul,linear", ["--new-env", TF32])


def devices(out: Path, device: str, seconds: float) -> list[str]:
    """``OPS`` swept with a worker on every visible GPU (``--devices``)."""
    if not device.startswith(("gpu", "cuda")):
        return ["skipped: --devices places workers on GPUs"]
    import torch

    indices = ",".join(str(index) for index in range(torch.cuda.device_count()))
    path = out / "devices.json"
    arguments = ["--framework", "torch", "--ctx", device, "--ops", OPS, "--devices", indices, "--quiet"]
    code = _opperf([*arguments, "--output-file", str(path)], seconds, out / "devices.log")
    if not path.exists():
        return [f"exit {code}: no results file (see devices.log)"]
    document = json.loads(path.read_text())
    records = document["results"]
    placed = document["environment"].get("device_workers") or {}
    ok = sum(record["status"] == "ok" for record in records)
    operators = sorted({record["op"] for record in records})
    placed_once = sorted(name for names in placed.values() for name in names) == operators
    return [
        f"exit {code}: {ok} of {len(records)} records ok on GPUs {indices}; "
        f"operators per GPU {({gpu: len(names) for gpu, names in placed.items()})}; "
        f"each operator placed once: {placed_once}"
    ]


def registry(out: Path, device: str, seconds: float) -> list[str]:
    """The whole registry as two shards at once on the one GPU (they share its memory)."""
    return _registry(out, device, seconds, ("1/2", "2/2"))


def sweep(out: Path, device: str, seconds: float) -> list[str]:
    """The whole registry in one sweep (target: at most 6 minutes, at least 95% of operators ok)."""
    return _registry(out, device, seconds, (None,))


def _registry(out: Path, device: str, seconds: float, shards: tuple[str | None, ...]) -> list[str]:
    processes = []
    names = []
    for shard in shards:
        name = f"registry_{shard[0]}" if shard else "registry"
        arguments = ["--framework", "torch", "--ctx", device, "--budget", "0.05", "--quiet"]
        arguments += ["--shard", shard] if shard else []
        arguments += ["--output-file", str(out / f"{name}.json")]
        log = (out / f"{name}.log").open("w")
        command = [sys.executable, str(ROOT / "opperf.py"), *arguments]
        processes.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT))
        names.append(name)
    deadline = time.monotonic() + seconds - 20
    for process in processes:
        try:
            process.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
    lines = [f"exit codes {[p.returncode for p in processes]}"]
    operators: dict[str, str] = {}
    reasons: Counter = Counter()
    for name in names:
        path = out / f"{name}.json"
        if not path.exists():
            lines.append(f"{name}: no results file")
            continue
        document = json.loads(path.read_text())
        environment = document["environment"]
        sampling = sum((r.get("sampling") or {}).get("seconds") or 0 for r in document["results"])
        wall = environment.get("wall_seconds") or 0
        lines.append(
            f"{name}: {len(document['results'])} records, {wall} s, interrupted "
            f"{environment.get('interrupted')}, harness efficiency {sampling / wall if wall else 0:.2f}"
        )
        for record in document["results"]:
            worst = operators.get(record["op"], "ok")
            if record["status"] != "ok":
                worst = record["status"] if worst == "ok" else worst
                reasons[f"{record['status']}: {(record.get('reason') or '')[:110]}"] += 1
            operators[record["op"]] = worst
    states = Counter(operators.values())
    lines.append(
        f"operators {len(operators)}: {dict(states)}; ok {states['ok'] / max(1, len(operators)):.1%}"
    )
    lines.extend(f"{count} x {reason}" for reason, count in reasons.most_common(25))
    return lines


def jax_phase(out: Path, device: str, seconds: float) -> list[str]:
    """JAX on the device: its GPU tests, a sweep of ``JAX_OPS`` with a plain blocked loop per forward
    record, and ``compare jnp,torch`` over ``JAX_COMPARED``."""
    started = time.monotonic()
    lines = [_pytest(out / "jax_tests.log", "tests/test_jax_gpu.py", seconds * 0.5)]
    results = out / "jax.json"
    code = _swept("jax", device, JAX_OPS, results, seconds * 0.3)
    if not results.exists():
        return [*lines, f"sweep exit {code}: no results file (see jax.log)"]
    document = json.loads(results.read_text())
    records = document["results"]
    ok = [r for r in records if r["status"] == "ok" and r.get("forward")]
    settings = document["environment"].get("framework_settings") or {}
    peak = document["environment"].get("worker_peak_rss_bytes")
    lines.append(
        f"sweep exit {code}: {len(ok)} of {len(records)} records ok; XLA_PYTHON_CLIENT_PREALLOCATE "
        f"{settings.get('xla_python_client_preallocate')}; worker peak RSS {peak}"
    )
    lines += [
        f"{r['op']}: {r['status']}: {(r.get('reason') or '')[:120]}" for r in records if r["status"] != "ok"
    ]
    ratios = []
    for record in ok:
        try:
            loop_s = _jax_loop(record, device)
        except Exception as error:
            lines.append(f"{record['op']}: could not rebuild: {type(error).__name__}: {str(error)[:100]}")
            continue
        median = record["forward"]["median_s"]
        ratios.append(median / loop_s)
        lines.append(
            f"{record['op']:<24} {json.dumps(_shapes(record))[:50]:<50} {median * 1e6:9.2f} us, plain loop "
            f"{loop_s * 1e6:9.2f} us ({median / loop_s:.3f}); memory {record.get('memory_peak_bytes')}"
        )
    within = sum(1 / 1.2 <= ratio <= 1.2 for ratio in ratios)
    lines.append(f"forward median within 1.2x of a plain blocked loop: {within} of {len(ratios)}")
    compared = out / "jax_compare.json"
    left = seconds - (time.monotonic() - started)
    arguments = ["compare", "jnp,torch", "--ops", JAX_COMPARED, "--ctx", device, "--quiet"]
    code = _opperf([*arguments, "--output-file", str(compared)], max(10.0, left - 5), out / "jax_compare.log")
    if not compared.exists():
        return [*lines, f"compare exit {code}: no comparison file (see jax_compare.log)"]
    for row in json.loads(compared.read_text())["comparison"]["rows"]:
        found = (row["versus"].get("torch") or {}).get("forward") or {}
        lines.append(
            f"compare {row['operator']:<8} {row['inputs'][:40]:<40} torch/jnp forward {found.get('ratio')} "
            f"{found.get('ratio_ci95')} {found.get('verdict')}; problems {row['problems'] or 'none'}"
        )
    return lines


def _jax_loop(record: dict, device: str) -> float:
    """The median seconds of the record's forward call in a plain loop, each call blocked until its
    result is ready, its inputs rebuilt from the record on the device; where the record has a backward
    pass, each forward call is followed by the backward call of ``jax.vjp`` (untimed), as in the
    sweep's passes: on a CPU a forward call between backward ones reads slower (JAX's ``tanh`` of a
    (1024, 1024) array: 126 us against 110 us alone in a plain loop here)."""
    import inspect

    from opperf.frameworks.jax.devices import share_gpus

    share_gpus()  # before JAX's GPU backend starts here: the compare after this leaves the GPU to its workers
    import jax
    import jax.numpy as jnp
    import numpy as np

    target = jax.devices("gpu")[int(device[4:-1] or 0)] if device.startswith("gpu") else jax.devices("cpu")[0]
    generator = np.random.default_rng(0)

    def build(value):
        if isinstance(value, dict) and "shape" in value:
            kind = value.get("dtype") or record["dtype"]
            shape = tuple(value["shape"])
            if "int" in kind:
                return jax.device_put(generator.integers(0, 2, shape).astype(kind), target)
            return jax.device_put((generator.random(shape) + 0.1).astype(kind), target)
        if isinstance(value, list):  # strides, dimension numbers: JAX takes tuples
            return tuple(build(item) for item in value)
        return value

    function = _resolve(record["function"])
    inputs = {name: build(value) for name, value in record["inputs"].items()}
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        parameters = {}
    if not parameters or any(p.kind is p.VAR_POSITIONAL for p in parameters.values()):
        # ``jnp.add`` from JAX 0.5 is a ufunc object, ``(*args, out=None, where=None)``: every
        # argument goes by position, in the record's order
        by_position = list(inputs)
    else:
        by_position = [n for n, p in parameters.items() if p.kind is p.POSITIONAL_ONLY and n in inputs]

    def call_with(values: dict):
        keywords = {name: value for name, value in values.items() if name not in by_position}
        return function(*(values[name] for name in by_position), **keywords)

    between = None
    floats = [n for n, v in inputs.items() if hasattr(v, "dtype") and jnp.issubdtype(v.dtype, jnp.floating)]
    if record.get("backward") and floats:
        outputs, pullback = jax.vjp(
            lambda *arrays: call_with({**inputs, **dict(zip(floats, arrays, strict=True))}),
            *(inputs[name] for name in floats),
        )
        seed = jax.tree_util.tree_map(jnp.ones_like, outputs)
        between = lambda: jax.block_until_ready(pullback(seed))  # noqa: E731
    times = []
    for index in range(60):
        started = time.perf_counter()
        jax.block_until_ready(call_with(inputs))
        if index >= 10:
            times.append(time.perf_counter() - started)
        if between is not None:
            between()
    return statistics.median(times)


PHASES = {
    "events": events,
    "tests": tests,
    "fidelity": fidelity,
    "aa": aa,
    "tf32": tf32,
    "devices": devices,
    "registry": registry,
    "jax": jax_phase,
    "sweep": sweep,
}


if __name__ == "__main__":
    sys.exit(main())
