"""Issue 11's battery: opperf tried as a new user and as a hostile CI system would, as real processes.

    .venv/bin/python -m benchmarks.fault_battery [--jobs 3] [--only CLASS,...] [--list]

Every case runs the real command line (or a fresh interpreter for the Python API), with real signals
(``os.kill``), real damaged journal files, a real full disk (a small tmpfs, as root), real read-only
and immutable folders, a real memory cgroup where the machine has one; a case that needs what the
machine lacks says so and counts as not run. Each case is judged ``held`` or ``NOT held`` on what it
observed (exit status, messages, the files left), and the table ends with the counts per class.
Cases are small (one to a few operators, two measured passes), so the battery takes minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
FAST = ("--runs", "2", "--warmup", "0", "--threads", "1", "--quiet")
COMPARE = FAST[:-1]
"""What bounds ``compare`` (which has no progress bar to quiet)."""
TINY = ("--ops", "exp", *FAST)
"""One operator, two passes: a sweep that takes seconds."""
LONG = ("--categories", "unary,rounding", "--runs", "3", "--warmup", "0", "--threads", "1", "--quiet")
"""47 operators: long enough to interrupt part way."""
MiB = 1 << 20


@dataclass(frozen=True)
class Outcome:
    """What a case observed: whether the property held, and the evidence."""

    held: bool | None  # None: not run here (the reason is the evidence)
    evidence: str


@dataclass(frozen=True)
class Case:
    """One probe of one class of the issue."""

    cls: str
    name: str
    probe: Callable[[Path], Outcome]


@dataclass(frozen=True)
class Ran:
    """A finished process: exit status, output, wall time."""

    rc: int
    out: str
    err: str
    seconds: float

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.out + self.err

    def tail(self) -> str:
        lines = [x.strip() for x in (self.err or self.out).splitlines() if x.strip()]
        return f"rc={self.rc} {lines[-1][:110] if lines else ''}"


# --- running ---------------------------------------------------------------------------------------


def _env(folder: Path, extra: dict[str, str] | None) -> dict[str, str]:
    tmp = folder / "tmp"
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp), **(extra or {})}


def opperf_command(*args: str) -> list[str]:
    return [PYTHON, str(ROOT / "opperf.py"), *args]


def run(folder: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 240) -> Ran:
    """``python opperf.py ARGS`` in ``folder``."""
    return _run(opperf_command(*args), folder, env, timeout)


def python(folder: Path, code: str, env: dict[str, str] | None = None, timeout: float = 240) -> Ran:
    """A fresh interpreter running ``code`` in ``folder``."""
    return _run([PYTHON, "-c", textwrap.dedent(code)], folder, env, timeout)


def _run(command: list[str], folder: Path, env: dict[str, str] | None, timeout: float) -> Ran:
    started = time.monotonic()
    try:
        done = subprocess.run(
            command,
            cwd=folder,
            env=_env(folder, env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        return Ran(-999, str(expired.stdout or ""), f"hung past {timeout} s", time.monotonic() - started)
    return Ran(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def start(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """A sweep in the background, in its own session (so a group signal reaches only it and its workers)."""
    return subprocess.Popen(
        opperf_command(*args),
        cwd=folder,
        env=_env(folder, env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def finish(process: subprocess.Popen, started: float, timeout: float = 240) -> Ran:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        return Ran(-999, out, f"hung past {timeout} s; " + err, time.monotonic() - started)
    return Ran(process.returncode, out, err, time.monotonic() - started)


def journal_of(output: Path) -> Path:
    return Path(f"{output}.journal.jsonl")


def journal_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def wait_for(condition: Callable[[], bool], seconds: float, step: float = 0.02) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def cpu_seconds(pid: int) -> float:
    """The CPU time process ``pid`` has used (user and system), 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def document(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def statuses(doc: dict | None) -> Counter:
    return Counter(r["status"] for r in (doc or {}).get("results", ()))


def ops(doc: dict | None) -> set[str]:
    return {r["op"] for r in (doc or {}).get("results", ())}


# --- what a case expects ---------------------------------------------------------------------------


def refused(*args: str, says: tuple[str, ...] = (), env: dict[str, str] | None = None) -> Callable:
    """The command stops before anything runs: ``error:``, exit 2, no traceback, no journal, the words
    ``says`` in the message."""

    def probe(folder: Path) -> Outcome:
        ran = run(folder, *args, env=env)
        journals = list(folder.rglob("*.journal.jsonl"))
        missing = [w for w in says if w.lower() not in ran.err.lower()]
        held = ran.rc == 2 and "error:" in ran.err and not ran.traceback and not journals and not missing
        extra = f" missing {missing}" if missing else ""
        return Outcome(held, f"{ran.tail()}{extra}{' journal left' if journals else ''} ({ran.seconds:.1f}s)")

    return probe


def accepted(*args: str, check: Callable[[Path, Ran], str | None] = lambda f, r: None, env=None) -> Callable:
    """The command succeeds (exit 0, no traceback) and ``check`` finds no problem (it returns one)."""

    def probe(folder: Path) -> Outcome:
        ran = run(folder, *args, env=env)
        problem = None if ran.rc == 0 and not ran.traceback else "failed"
        problem = problem or check(folder, ran)
        return Outcome(
            problem is None, f"{ran.tail()}{'; ' + problem if problem else ''} ({ran.seconds:.1f}s)"
        )

    return probe


API_WRAP = """
import sys
from opperf.utils.errors import OpperfError
try:
{body}
except OpperfError as error:
    print("OPPERF-ERROR", error)
except BaseException as error:
    print("OTHER-ERROR", type(error).__name__, error)
else:
    print("NO-ERROR")
"""


def api_refuses(code: str, says: tuple[str, ...] = ()) -> Callable:
    """The Python API raises OpperfError (naming ``says``), and the interpreter survives."""

    def probe(folder: Path) -> Outcome:
        body = textwrap.indent(API_IMPORTS + textwrap.dedent(code), "    ")
        ran = python(folder, API_WRAP.format(body=body))
        last = (ran.out.strip().splitlines() or [""])[-1]
        missing = [w for w in says if w.lower() not in last.lower()]
        held = ran.rc == 0 and last.startswith("OPPERF-ERROR") and not missing
        return Outcome(
            held, f"rc={ran.rc} {last[:120] or ran.tail()}{' missing ' + str(missing) if missing else ''}"
        )

    return probe


def api_prints(code: str, expected: str, env: dict[str, str] | None = None) -> Callable:
    """The Python snippet runs (exit 0) and prints a line matching ``expected`` (a regex)."""

    def probe(folder: Path) -> Outcome:
        ran = python(folder, code, env=env)
        held = ran.rc == 0 and re.search(expected, ran.out) is not None
        last = (ran.out.strip().splitlines() or [""])[-1]
        return Outcome(held, f"rc={ran.rc} {last[:120] if ran.rc == 0 else ran.tail()}")

    return probe


# --- flag and API values ---------------------------------------------------------------------------

FLAG_VALUES = [
    ("empty --ops", ("--ops", "")),
    ("--ops of commas", ("--ops", ",,")),
    ("empty --categories", ("--categories", "")),
    ("--categories ',,'", ("--categories", ",,")),
    ("--budget nan", ("--budget", "nan", *TINY)),
    ("--budget inf", ("--budget", "inf", *TINY)),
    ("--budget -1", ("--budget", "-1", *TINY)),
    ("--budget 0", ("--budget", "0", *TINY)),
    ("--timeout nan", ("--timeout", "nan", *TINY)),
    ("--timeout inf", ("--timeout", "inf", *TINY)),
    ("--timeout -5", ("--timeout", "-5", *TINY)),
    ("--timeout 0", ("--timeout", "0", *TINY)),
    ("--seed -1", ("--seed", "-1", *TINY)),
    ("--seed nan", ("--seed", "nan", *TINY)),
    ("--threads 1000", ("--ops", "exp", "--threads", "1000")),
    ("--threads 0", ("--ops", "exp", "--threads", "0")),
    ("--threads -1", ("--ops", "exp", "--threads=-1")),
    ("--threads abc", ("--ops", "exp", "--threads", "abc")),
    ("--compare with an unknown namespace", ("--compare", "mx.foo,torch", "--ops", "exp")),
    ("compare with an unknown namespace", ("compare", "mx.nd,jax", "--ops", "exp")),
    ("--runs 0", ("--ops", "exp", "--runs", "0")),
    ("--runs -3", ("--ops", "exp", "--runs=-3")),
    ("--warmup -1", ("--ops", "exp", "--warmup=-1")),
    ("--target-precision 0", ("--ops", "exp", "--target-precision", "0")),
    ("--target-precision nan", ("--ops", "exp", "--target-precision", "nan")),
    ("--fuzz-count 0", ("--ops", "exp", "--shapes", "fuzz", "--fuzz-count", "0")),
    ("--shard 5/4", ("--ops", "exp", "--shard", "5/4")),
    ("--shard 0/4", ("--ops", "exp", "--shard", "0/4")),
    ("--shard a/b", ("--ops", "exp", "--shard", "a/b")),
    ("--fail-on bogus", ("--ops", "exp", "--fail-on", "bogus")),
    ("--dtype float128", ("--ops", "exp", "--dtype", "float128")),
    ("--framework jax", ("--ops", "exp", "--framework", "jax")),
    ("unknown operator", ("--ops", "nosuchop"), ("nosuchop",)),
    ("unknown category", ("--categories", "nosuchcat"), ("nosuchcat",)),
    ("--affinity 99", ("--ops", "exp", "--affinity", "99")),
    ("--affinity abc", ("--ops", "exp", "--affinity", "abc")),
    ("--stages bogus", ("--ops", "exp", "--stages", "bogus")),
    ("--configs absent file", ("--configs", "absent.jsonl")),
    ("--configs-sample 0", ("--ops", "exp", "--configs-sample", "0")),
    ("--mode bogus", ("--ops", "exp", "--mode", "bogus")),
    ("--output-format pdf", ("--ops", "exp", "--output-format", "pdf")),
    ("format contradicts extension", ("--ops", "exp", "--output-file", "r.md", "--output-format", "json")),
    ("--tags nosuchtag", ("--tags", "NoSuchTag")),
    ("--engine bogus", ("--ops", "exp", "--engine", "bogus")),
    ("--resume with --fresh", ("--ops", "exp", "--resume", "--fresh")),
    ("--history in an absent folder", ("--ops", "exp", "--history", "absent/h.sqlite")),
    ("unknown subcommand", ("benchmark-all",)),
    ("unknown flag", ("--ops", "exp", "--rnus", "3")),
    ("explain an unknown operator", ("explain", "nosuchop")),
    ("list an unknown category", ("list", "--categories", "nosuchcat")),
    ("diff absent files", ("diff", "absent1.json", "absent2.json")),
    ("merge absent files", ("merge", "absent1.json", "--output-file", "m.json")),
    ("history show, absent database folder", ("history", "show", "--db", "absent/h.sqlite")),
]

API_IMPORTS = """\
import mxnet as mx
from opperf import RunOptions, run_benchmark_operator, run_performance_test
from opperf import benchmark as benchmark_ops
def benchmark(options):  # mx.nd.exp on a small input, with these options
    return benchmark_ops(mx.nd.exp, [{'data': (4, 4)}], options)
"""
"""What every API case's code may use: the public functions, and ``benchmark(options)``."""

API_VALUES = [
    ("RunOptions(runs='5')", "benchmark(RunOptions(runs='5'))"),
    ("RunOptions(warmup=-1)", "benchmark(RunOptions(warmup=-1))"),
    ("RunOptions(profiler='gprof')", "benchmark(RunOptions(profiler='gprof'))"),
    ("RunOptions(dtype='float128')", "benchmark(RunOptions(dtype='float128'))"),
    ("RunOptions(budget_s=nan)", "benchmark(RunOptions(budget_s=float('nan')))"),
    ("RunOptions(threads=10000)", "benchmark(RunOptions(threads=10000))"),
    ("RunOptions(run_backward='yes')", "benchmark(RunOptions(run_backward='yes'))"),
    ("a string for an operator", "run_performance_test('add', inputs=[{'lhs': (4, 4)}])"),
    ("a number for an operator", "run_performance_test(42, inputs=[{'data': (4, 4)}])"),
    ("a negative size", "run_benchmark_operator(name='add', size=(-1, 4))"),
    ("an unknown namespace", "run_benchmark_operator(name='add', namespaces=('mx.foo',))"),
    ("an unknown operator name", "run_benchmark_operator(name='nosuchop')"),
    ("inputs not a list", "run_performance_test(mx.nd.exp, inputs='data')"),
    ("an unknown dtype", "run_performance_test(mx.nd.exp, inputs=[{'data': (4, 4)}], dtype='float128')"),
]


def flag_cases() -> list[Case]:
    cases = [
        Case("flags", name, refused(*args, says=says[0] if says else ())) for name, args, *says in FLAG_VALUES
    ]
    cases += [Case("flags", f"API: {name}", api_refuses(code)) for name, code in API_VALUES]
    cases += [
        Case("flags", "--timeout none means no limit", accepted("--timeout", "none", *TINY)),
        Case(
            "flags",
            "OPPERF_MEMORY_LIMIT=banana",
            refused(*TINY, says=("OPPERF_MEMORY_LIMIT",), env={"OPPERF_MEMORY_LIMIT": "banana"}),
        ),
        Case(
            "flags",
            "OPPERF_MEMORY_LIMIT=-1",
            refused(*TINY, says=("OPPERF_MEMORY_LIMIT",), env={"OPPERF_MEMORY_LIMIT": "-1"}),
        ),
        Case(
            "flags",
            "API: numpy integer dimensions",
            api_prints(
                "import numpy as np, mxnet as mx\nfrom opperf import run_performance_test\n"
                "inputs = [{'lhs': (np.int64(4), np.int32(4)), 'rhs': (np.int64(4), 4)}]\n"
                "r = run_performance_test(mx.nd.add, inputs=inputs, runs=2, warmup=0)\n"
                "print('OK', r[0]['add'][0]['inputs'])",
                r"OK .*\(4, 4\)",
            ),
        ),
        Case(
            "flags",
            "API: a plain benchmark",
            api_prints(
                "import mxnet as mx\nfrom opperf import RunOptions, benchmark\n"
                "options = RunOptions(runs=3, warmup=1, profiler='python')\n"
                "(m,) = benchmark(mx.nd.exp, [{'data': (64, 64)}], options)\n"
                "print('OK', m.status.value, m.forward_summary.median > 0)",
                r"OK ok True",
            ),
        ),
    ]
    return cases


# --- devices ---------------------------------------------------------------------------------------


def _gpu_count() -> int:
    try:
        return len(
            subprocess.run(
                ["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20, check=False
            ).stdout.splitlines()
        )
    except (OSError, subprocess.TimeoutExpired):
        return 0


def device_cases() -> list[Case]:
    gpus = _gpu_count()
    cases = []
    for framework in ("mxnet", "torch"):
        fw = ("--framework", framework)
        cases += [
            Case(
                "devices",
                f"{framework}: --ctx 'cpu(5)'",
                refused(*fw, *TINY, "--ctx", "cpu(5)", says=("cpu(5)",)),
            ),
            Case("devices", f"{framework}: --ctx 'gpu(-1)'", refused(*fw, *TINY, "--ctx", "gpu(-1)")),
            Case("devices", f"{framework}: --ctx tpu", refused(*fw, *TINY, "--ctx", "tpu")),
            Case("devices", f"{framework}: --ctx ''", refused(*fw, *TINY, "--ctx", "")),
            Case("devices", f"{framework}: --ctx 'gpu(99)'", refused(*fw, *TINY, "--ctx", "gpu(99)")),
            Case("devices", f"{framework}: --ctx 'cpu(0)' runs", accepted(*fw, *TINY, "--ctx", "cpu(0)")),
        ]
        for spelling in ("gpu(0)", "gpu0", "cuda:0", "gpu:0"):
            if gpus:
                probe = accepted(*fw, *TINY, "--ctx", spelling)
            else:  # read as GPU 0, and refused because there is none: not as a malformed device
                probe = _no_gpu_here(*fw, *TINY, "--ctx", spelling)
            cases.append(Case("devices", f"{framework}: --ctx {spelling}", probe))
    cases += [
        Case("devices", "torch: --ctx cpu:0 runs", accepted("--framework", "torch", *TINY, "--ctx", "cpu:0")),
        Case("devices", "list --ctx 'cpu(5)'", refused("list", "--ops", "exp", "--ctx", "cpu(5)")),
        Case("devices", "explain --ctx 'cpu(5)'", refused("explain", "exp", "--ctx", "cpu(5)")),
        Case(
            "devices",
            "compare --ctx 'cpu(5)'",
            refused("compare", "mx.nd,torch", "--ops", "exp", *COMPARE, "--ctx", "cpu(5)"),
        ),
        Case(
            "devices",
            "API mxnet ctx='cpu(5)' raises, no abort",
            api_refuses(
                "import mxnet as mx\nfrom opperf import run_performance_test\n"
                "run_performance_test(mx.nd.exp, inputs=[{'data': (4, 4)}], ctx='cpu(5)', runs=2, warmup=0)",
                ("cpu(5)",),
            ),
        ),
        Case(
            "devices",
            "API mxnet ctx=mx.cpu(5) raises, no abort",
            api_refuses(
                "import mxnet as mx\nfrom opperf import run_performance_test\n"
                "run_performance_test(mx.nd.exp, inputs=[{'data': (4, 4)}], ctx=mx.cpu(5), runs=2, warmup=0)"
            ),
        ),
        Case(
            "devices",
            "API torch ctx='cpu(5)' raises",
            api_refuses(
                "import torch\nfrom opperf import run_performance_test\n"
                "run_performance_test(torch.exp, inputs=[{'input': (4, 4)}], ctx='cpu(5)', runs=2, warmup=0)"
            ),
        ),
        Case("devices", "documented commands survive the shell", _readme_shell),
        Case("devices", "make bench CTX='gpu(0)' survives make", _make_gpu),
    ]
    if not gpus:
        cases.append(
            Case(
                "devices",
                "API torch ctx='cuda:0' without a GPU raises",
                api_refuses(
                    "import torch\nfrom opperf import run_performance_test\n"
                    "inputs = [{'input': (4, 4)}]\n"
                    "run_performance_test(torch.exp, inputs=inputs, ctx='cuda:0', runs=2, warmup=0)"
                ),
            )
        )
    return cases


def _no_gpu_here(*args: str) -> Callable:
    """A GPU spelling on a machine without one: refused for the missing GPU (or CUDA), not misread."""
    check = refused(*args)

    def probe(folder: Path) -> Outcome:
        outcome = check(folder)
        misread = "malformed" in outcome.evidence or not re.search(r"gpu|cuda", outcome.evidence, re.I)
        return Outcome(bool(outcome.held) and not misread, outcome.evidence)

    return probe


def _documentation() -> str:
    """The README and every document beside it (``docs/``), in one text."""
    return "\n".join(path.read_text() for path in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))))


def _readme_shell(folder: Path) -> Outcome:
    text = _documentation()
    lines = [
        line
        for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S)
        if lang in ("sh", "")
        for line in body.splitlines()
    ]
    lines = [x for x in lines if re.match(r"\s*(python opperf\.py|opperf |make |[A-Z_]+=)", x)]
    bad = [
        x
        for x in lines
        if subprocess.run(["bash", "-n", "-c", x], capture_output=True, check=False).returncode != 0
    ]
    return Outcome(not bad, f"{len(lines)} command lines; bash -n rejects {len(bad)}: {bad[:2]}")


def _make_gpu(folder: Path) -> Outcome:
    done = subprocess.run(
        [
            "make",
            "-s",
            "-C",
            str(ROOT),
            "-o",
            ".venv/.installed",
            "bench",
            f"PY={PYTHON}",
            "CTX=gpu(0)",
            f"OUT={folder}",
            "ARGS=--ops exp --runs 2 --warmup 0 --quiet",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(folder, None),
        check=False,
    )
    text = done.stdout + done.stderr
    ok = "syntax error" not in text and ("error:" in text or done.returncode == 0) and "Traceback" not in text
    last = [x for x in text.splitlines() if x.strip()][-2:] or [""]
    return Outcome(ok, f"rc={done.returncode} {' | '.join(last)[:140]}")


# --- memory ----------------------------------------------------------------------------------------

MEMORY_CGROUP = Path("/sys/fs/cgroup/memory")


@contextlib.contextmanager
def memory_cgroup(limit: int) -> Iterator[Path | None]:
    """A fresh v1 memory cgroup holding ``limit`` bytes, or None where none can be made here."""
    group = MEMORY_CGROUP / f"opperf-battery-{uuid.uuid4().hex[:8]}"
    try:
        group.mkdir()
        (group / "memory.limit_in_bytes").write_text(str(limit))
    except OSError:
        yield None
        return
    try:
        yield group
    finally:
        for _ in range(100):
            with contextlib.suppress(OSError):
                group.rmdir()
                break
            time.sleep(0.1)


def in_cgroup(group: Path, command: list[str]) -> list[str]:
    return ["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$@"', "sh", *command]


def oom_kills(group: Path) -> int:
    fields = dict(line.split() for line in (group / "memory.oom_control").read_text().splitlines())
    return int(fields.get("oom_kill", "0"))


BROADCAST_BIG = """
import mxnet as mx
from opperf import run_performance_test
inputs = [{'lhs': (30000, 1), 'rhs': (1, 30000)}]
r = run_performance_test(mx.nd.broadcast_add, inputs=inputs, runs=2, warmup=0)
record = r[0]['broadcast_add'][0]
print('RESULT', record.get('status'), record.get('reason'))
"""
VANDER_BIG = """
import torch
from opperf import run_performance_test
inputs = [{'x': (65536,)}]
r = run_performance_test(torch.vander, inputs=inputs, dtype='int64', run_backward=False, runs=2, warmup=0)
record = r[0]['vander'][0]
print('RESULT', record.get('status'), record.get('reason'))
"""
GUARD = """
import json
from opperf.measure.isolation import IsolatedRunner
from opperf.results.options import RunOptions
from opperf.results.measurement import BenchmarkSpec, TensorSpec, freeze_inputs
options = RunOptions(framework="torch", runs=3, warmup=1)
def spec(op, inputs):
    return BenchmarkSpec(namespace="torch", op=op, inputs=freeze_inputs(inputs), options=options)
big = spec("bincount", {"input": TensorSpec((4,), dtype="int64", low=3e8, high=3e8 + 1, integral=True)})
small = spec("add", {"input": TensorSpec((8, 8)), "other": TensorSpec((8, 8))})
with IsolatedRunner("torch", timeout_s=60) as runner:
    for m in (*runner.run([big]), *runner.run([small])):
        print("RESULT", json.dumps([m.status.value, m.reason, m.memory_peak_bytes]))
"""


def _skipped_for_memory(code: str, limit: str) -> Callable:
    def probe(folder: Path) -> Outcome:
        ran = python(folder, code, env={"OPPERF_MEMORY_LIMIT": limit})
        line = next((x for x in ran.out.splitlines() if x.startswith("RESULT")), ran.tail())
        held = ran.rc == 0 and "skipped" in line and "out of memory (not run)" in line
        return Outcome(held, f"rc={ran.rc} {line[:140]}")

    return probe


def _guard(folder: Path) -> Outcome:
    ran = python(folder, GUARD, env={"OPPERF_MEMORY_LIMIT": "1GiB"})
    rows = [json.loads(x[7:]) for x in ran.out.splitlines() if x.startswith("RESULT")]
    held = (
        ran.rc == 0
        and len(rows) == 2
        and rows[0][0] == "crashed"
        and "out of memory" in (rows[0][1] or "")
        and rows[0][2] is not None
        and rows[0][2] < 2 * 1024 * MiB
        and rows[1][0] == "ok"
    )
    return Outcome(held, f"rc={ran.rc} {rows[0] if rows else ran.tail()}"[:160])


def _cgroup_available(folder: Path) -> Outcome:
    with memory_cgroup(600 * MiB) as group:
        if group is None:
            return Outcome(None, "no memory cgroup can be made here (needs root and cgroup v1)")
        code = "from opperf.measure import memory; print(memory.available_host_bytes())"
        done = subprocess.run(
            in_cgroup(group, [PYTHON, "-c", code]),
            capture_output=True,
            text=True,
            env=_env(folder, None),
            timeout=60,
            check=False,
        )
        value = int(done.stdout.split()[-1]) if done.returncode == 0 and done.stdout.split() else -1
        return Outcome(
            0 < value < 600 * MiB,
            f"rc={done.returncode} believed available: {value / MiB:.0f} MiB in a 600 MiB cgroup",
        )


def _cgroup_run(
    limit: int, command: Callable[[Path], list[str]], judge: Callable[[Path, Ran], str | None]
) -> Callable:
    def probe(folder: Path) -> Outcome:
        with memory_cgroup(limit) as group:
            if group is None:
                return Outcome(None, "no memory cgroup can be made here (needs root and cgroup v1)")
            ran = _run(in_cgroup(group, command(folder)), folder, None, 240)
            kills = oom_kills(group)
        problem = f"kernel OOM kills: {kills}" if kills else judge(folder, ran)
        return Outcome(problem is None, f"{ran.tail()}{'; ' + problem if problem else ''}")

    return probe


def _no_problem_and_record(status_word: str) -> Callable[[Path, Ran], str | None]:
    def judge(folder: Path, ran: Ran) -> str | None:
        if ran.rc != 0 or ran.traceback:
            return "failed"
        return None if status_word in ran.out + ran.err else f"no {status_word!r} in the output"

    return judge


def _sweep_vander(folder: Path) -> Outcome:
    ran = run(
        folder,
        "--framework",
        "torch",
        "--ops",
        "vander",
        "--int64-tensor",
        "on",
        "--no-backward",
        *FAST,
        "--output-file",
        "r.json",
        env={"OPPERF_MEMORY_LIMIT": "2GiB"},
    )
    doc = document(folder / "r.json")
    counts = statuses(doc)
    crashed = [r.get("reason") or "" for r in (doc or {}).get("results", ()) if r["status"] == "crashed"]
    held = ran.rc == 0 and not ran.traceback and bool(counts) and all("out of memory" in r for r in crashed)
    return Outcome(held, f"{ran.tail()} statuses {dict(counts)} ({ran.seconds:.0f}s)")


def memory_cases() -> list[Case]:
    return [
        Case(
            "memory",
            "mxnet broadcast_add (30000,1)+(1,30000) under 1GiB: skipped",
            _skipped_for_memory(BROADCAST_BIG, "1GiB"),
        ),
        Case(
            "memory",
            "mxnet broadcast_add (30000,1)+(1,30000) under 2GiB: skipped",
            _skipped_for_memory(BROADCAST_BIG, "2GiB"),
        ),
        Case(
            "memory", "torch vander(65536) int64 under 2GiB: skipped", _skipped_for_memory(VANDER_BIG, "2GiB")
        ),
        Case(
            "memory", "torch vander(65536) int64 under 8GiB: skipped", _skipped_for_memory(VANDER_BIG, "8GiB")
        ),
        Case("memory", "sweep --framework torch --ops vander --int64-tensor on", _sweep_vander),
        Case("memory", "a worker past its allowance is stopped, with its peak", _guard),
        Case("memory", "available memory inside a memory cgroup is the cgroup's", _cgroup_available),
        Case(
            "memory",
            "broadcast_add in a 1 GiB cgroup: skipped, no kernel kill",
            _cgroup_run(
                1024 * MiB, lambda f: [PYTHON, "-c", BROADCAST_BIG], _no_problem_and_record("skipped")
            ),
        ),
        Case(
            "memory",
            "bincount guard in a 1.5 GiB cgroup: no kernel kill",
            _cgroup_run(1536 * MiB, lambda f: [PYTHON, "-c", GUARD], _no_problem_and_record("out of memory")),
        ),
        Case(
            "memory",
            "a small sweep in a 1 GiB cgroup finishes",
            _cgroup_run(
                1024 * MiB,
                lambda f: opperf_command(*TINY, "--output-file", str(f / "r.json")),
                _no_problem_and_record("1 ok"),
            ),
        ),
        Case(
            "memory",
            "OPPERF_MEMORY_LIMIT=512MiB, a small sweep runs",
            accepted(*TINY, env={"OPPERF_MEMORY_LIMIT": "512MiB"}),
        ),
        Case(
            "memory",
            "OPPERF_MEMORY_LIMIT in bytes, a small sweep runs",
            accepted(*TINY, env={"OPPERF_MEMORY_LIMIT": str(1 << 30)}),
        ),
    ]


# --- signals and interruption ----------------------------------------------------------------------


def _interrupt(
    sigs: tuple[int, ...],
    *,
    after: int = 2,
    group: bool = False,
    args: tuple[str, ...] = LONG,
    expect_rc: int | None = None,
    gap: float = 0.05,
) -> Callable:
    """Send ``sigs`` (to the sweep, or to its whole process group as a terminal does) once ``after``
    operators are journaled; the report of what finished must be written, the journal kept, a message
    printed, and the exit status be 128 + the first signal."""

    def probe(folder: Path) -> Outcome:
        output = folder / "r.json"
        started = time.monotonic()
        process = start(folder, *args, "--output-file", str(output))
        if not wait_for(lambda: journal_lines(journal_of(output)) > after or process.poll() is not None, 180):
            process.kill()
        for number, sig in enumerate(sigs):
            if number:
                time.sleep(gap)
            with contextlib.suppress(ProcessLookupError):
                (os.killpg if group else os.kill)(process.pid, sig)
        ran = finish(process, started)
        doc = document(output)
        want = expect_rc if expect_rc is not None else 128 + sigs[0]
        finished = (doc or {}).get("coverage", {}).get("operators", 0)
        problems = [
            f"rc {ran.rc} != {want}" if ran.rc != want else "",
            "traceback" if ran.traceback else "",
            "no report" if doc is None else "",
            f"report has {finished} operators" if doc is not None and finished < after else "",
            "journal gone" if not journal_of(output).exists() else "",
            "no message" if "interrupted" not in ran.err else "",
            "'before any operator finished' with operators finished"
            if "before any operator finished" in ran.err
            else "",
        ]
        problems = [p for p in problems if p]
        return Outcome(not problems, f"rc={ran.rc} {finished} in report; {', '.join(problems) or 'ok'}")

    return probe


def _interrupt_before_any(folder: Path) -> Outcome:
    output = folder / "r.json"
    started = time.monotonic()
    process = start(folder, *LONG, "--output-file", str(output))
    time.sleep(1.0)  # importing the framework, starting the first worker
    process.send_signal(signal.SIGINT)
    ran = finish(process, started)
    held = ran.rc == 130 and not ran.traceback and "interrupted" in ran.err
    return Outcome(held, ran.tail())


def _interrupt_at_start(delay: float, sig: int) -> Callable:
    def probe(folder: Path) -> Outcome:
        started = time.monotonic()
        process = start(folder, *TINY, "--output-file", str(folder / "r.json"))
        time.sleep(delay)
        process.send_signal(sig)
        ran = finish(process, started)
        held = ran.rc in (128 + sig, -sig) and not ran.traceback
        return Outcome(held and ran.rc == 128 + sig, ran.tail())

    return probe


def _interrupt_during_shutdown(folder: Path) -> Outcome:
    """SIGINT as soon as the report exists: the sweep is ending; it must still exit 0 or 130, never
    die by the signal with a traceback."""
    seen = []
    for attempt in range(3):
        output = folder / f"r{attempt}.json"
        started = time.monotonic()
        process = start(folder, *TINY, "--output-file", str(output))
        wait_for(lambda o=output, p=process: o.exists() or p.poll() is not None, 120, step=0.001)
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGINT)
        ran = finish(process, started)
        seen.append((ran.rc, ran.traceback))
    held = all(rc in (0, 130) and not tb for rc, tb in seen)
    return Outcome(held, f"exit statuses {[rc for rc, _ in seen]}, tracebacks {sum(tb for _, tb in seen)}")


def _coreutils_timeout(folder: Path) -> Outcome:
    output = folder / "r.json"
    started = time.monotonic()
    process = subprocess.Popen(
        # 20 passes a configuration: LONG alone finished within the 12 s on a quiet machine (6 s)
        ["timeout", "12", *opperf_command(*LONG, "--runs", "20", "--output-file", str(output))],
        cwd=folder,
        env=_env(folder, None),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ran = finish(process, started)
    doc = document(output)
    held = ran.rc == 124 and doc is not None and journal_of(output).exists() and "interrupted" in ran.err
    return Outcome(held, f"{ran.tail()}; report {'written' if doc else 'missing'}")


def _sigkill_resume(folder: Path) -> Outcome:
    output = folder / "r.json"
    args = ("--categories", "rounding", *FAST, "--output-file", str(output))
    process = start(folder, *args)
    wait_for(lambda: journal_lines(journal_of(output)) > 3 or process.poll() is not None, 180)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    resumed = run(folder, *args, "--resume")
    reference = run(folder, *args[:-1], str(folder / "ref.json"))
    got, want = ops(document(output)), ops(document(folder / "ref.json"))
    held = (
        resumed.rc == 0
        and reference.rc == 0
        and got == want
        and bool(got)
        and "from the journal" in resumed.err
    )
    return Outcome(held, f"{resumed.tail()}; {len(got)} vs uninterrupted {len(want)} operators")


def _worker_signal(sig: int, expect: str, timeout: str = "300", or_timeout: bool = False) -> Callable:
    """A signal to the worker in flight: that operator is recorded ``expect`` (or, with ``or_timeout``,
    a timeout: MXNet's own SIGSEGV handler can keep a signalled worker from dying), the sweep goes on."""

    def probe(folder: Path) -> Outcome:
        output = folder / "r.json"
        started = time.monotonic()
        process = start(
            folder,
            "--ops",
            "exp,log",
            "--runs",
            "3000",
            "--warmup",
            "0",
            "--threads",
            "1",
            "--quiet",
            "--timeout",
            timeout,
            "--output-file",
            str(output),
        )
        wait_for(lambda: bool(children(process.pid)) or process.poll() is not None, 60)
        # Measuring, not still importing its framework (a worker that dies starting is started again):
        # a busy machine can take many seconds to get there.
        wait_for(
            lambda: any(cpu_seconds(w) > 3.0 for w in children(process.pid)) or process.poll() is not None,
            120,
        )
        workers = children(process.pid)  # those alive now: the first may have been replaced
        for worker in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, sig)
        ran = finish(process, started, timeout=180)
        for worker in workers:  # a stopped worker left behind would be a leak; make sure
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, signal.SIGKILL)
        doc = document(output)
        counts = statuses(doc)
        reasons = [r.get("reason") or "" for r in (doc or {}).get("results", ()) if r["status"] == expect]
        recorded = counts.get(expect, 0) + (counts.get("timeout", 0) if or_timeout else 0)
        held = ran.rc == 0 and recorded >= 1 and len(ops(doc)) == 2 and not ran.traceback
        return Outcome(
            held, f"rc={ran.rc} {dict(counts)} {reasons[0][:70] if reasons else ''} ({ran.seconds:.0f}s)"
        )

    return probe


def _killed_sweep_leaves_nothing(delay: float) -> Callable:
    def probe(folder: Path) -> Outcome:
        process = start(
            folder, "--ops", "exp,log", "--runs", "3000", *FAST[2:], "--output-file", str(folder / "r.json")
        )
        wait_for(lambda: bool(children(process.pid)), 60, step=0.005)
        time.sleep(delay)
        workers = children(process.pid)
        process.send_signal(signal.SIGKILL)
        process.wait()
        gone = wait_for(lambda: not any(alive(w) for w in workers), 2.0, step=0.01)
        logs = list((folder / "tmp").glob("opperf-worker-*"))
        return Outcome(
            gone and not logs and bool(workers),
            f"{len(workers)} worker(s), gone within 2 s: {gone}; leftover logs: {len(logs)}",
        )

    return probe


def _stalled_reply(folder: Path) -> Outcome:
    script = folder / "stalling_worker"
    script.write_text(
        f"#!{PYTHON}\nimport json, struct, sys, time, os\nready = json.dumps('ready').encode()\n"
        "os.write(1, struct.pack('!Q', len(ready)) + ready)\nsys.stdin.buffer.read(8)\n"
        "os.write(1, struct.pack('!Q', 1000) + b'x')\ntime.sleep(600)\n"
    )
    script.chmod(0o755)
    code = f"""
    import time
    from opperf import RunOptions
    from opperf.measure.isolation import IsolatedRunner
    from opperf.results.measurement import BenchmarkSpec, TensorSpec, freeze_inputs
    spec = BenchmarkSpec(namespace="mx.nd", op="add", options=RunOptions(runs=2, warmup=1),
                         inputs=freeze_inputs({{"lhs": TensorSpec((4, 4)), "rhs": TensorSpec((4, 4))}}))
    started = time.monotonic()
    with IsolatedRunner("mxnet", timeout_s=1.5, python={str(script)!r}) as runner:
        [m] = runner.run([spec])
    print("RESULT", m.status.value, round(time.monotonic() - started, 1))
    """
    ran = python(folder, code, timeout=60)
    line = next((x for x in ran.out.splitlines() if x.startswith("RESULT")), ran.tail())
    parts = line.split()
    held = len(parts) == 3 and parts[1] == "timeout" and float(parts[2]) < 10
    return Outcome(held, line)


def _pipe_closed(folder: Path) -> Outcome:
    done = subprocess.run(
        f"{shlex.join(opperf_command('list'))} | head -1",
        shell=True,
        cwd=folder,
        capture_output=True,
        text=True,
        env=_env(folder, None),
        timeout=120,
        check=False,
    )
    held = "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    return Outcome(held, f"stderr: {done.stderr.strip()[-110:] or '(none)'}")


def signal_cases() -> list[Case]:
    I, T, H, K = signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL  # noqa: E741, N806
    return [
        Case("signals", "one Ctrl-C", _interrupt((I,))),
        Case("signals", "SIGTERM", _interrupt((T,))),
        Case("signals", "SIGHUP", _interrupt((H,))),
        Case("signals", "two Ctrl-C", _interrupt((I, I))),
        Case("signals", "three Ctrl-C", _interrupt((I, I, I), gap=0.02)),
        Case("signals", "Ctrl-C then a second one 1 s later", _interrupt((I, I), gap=1.0)),
        Case("signals", "SIGTERM then Ctrl-C", _interrupt((T, I))),
        Case("signals", "Ctrl-C to the process group (a terminal)", _interrupt((I,), group=True)),
        Case("signals", "SIGTERM to the process group (CI runner)", _interrupt((T,), group=True)),
        Case("signals", "SIGHUP to the process group (closed terminal)", _interrupt((H,), group=True)),
        Case("signals", "two Ctrl-C to the process group", _interrupt((I, I), group=True)),
        Case("signals", "Ctrl-C with --no-isolation", _interrupt((I,), args=(*LONG, "--no-isolation"))),
        Case("signals", "SIGTERM with --no-isolation", _interrupt((T,), args=(*LONG, "--no-isolation"))),
        Case("signals", "Ctrl-C says what it waits for", _waits_message),
        Case("signals", "Ctrl-C before any operator finished", _interrupt_before_any),
        Case("signals", "Ctrl-C 0.3 s after start", _interrupt_at_start(0.3, I)),
        Case("signals", "SIGTERM 0.3 s after start", _interrupt_at_start(0.3, T)),
        Case("signals", "SIGHUP 0.3 s after start", _interrupt_at_start(0.3, H)),
        Case("signals", "Ctrl-C 0.8 s after start", _interrupt_at_start(0.8, I)),
        Case("signals", "SIGTERM 0.8 s after start", _interrupt_at_start(0.8, T)),
        Case("signals", "SIGHUP 0.8 s after start", _interrupt_at_start(0.8, H)),
        Case("signals", "Ctrl-C 1.5 s after start", _interrupt_at_start(1.5, I)),
        Case("signals", "SIGTERM 1.5 s after start", _interrupt_at_start(1.5, T)),
        Case("signals", "Ctrl-C as the report is written (shutdown)", _interrupt_during_shutdown),
        Case("signals", "coreutils timeout 12 (SIGTERM)", _coreutils_timeout),
        Case("signals", "SIGKILL then --resume = the uninterrupted run", _sigkill_resume),
        Case("signals", "SIGKILL of the worker: crashed, sweep goes on", _worker_signal(K, "crashed", "20")),
        Case(
            "signals",
            "SIGSEGV of the worker: recorded, sweep goes on",
            _worker_signal(signal.SIGSEGV, "crashed", "20", or_timeout=True),
        ),
        Case(
            "signals",
            "SIGSTOP of the worker: timeout at --timeout",
            _worker_signal(signal.SIGSTOP, "timeout", "6"),
        ),
        Case("signals", "a worker stalled mid-reply ends at the deadline", _stalled_reply),
        Case(
            "signals",
            "SIGKILL of a measuring sweep: no worker, no log left",
            _killed_sweep_leaves_nothing(3.0),
        ),
        Case(
            "signals", "SIGKILL of a starting sweep: worker gone at once", _killed_sweep_leaves_nothing(0.0)
        ),
        Case("signals", "`opperf list | head -1`: no BrokenPipe traceback", _pipe_closed),
    ]


def _waits_message(folder: Path) -> Outcome:
    output = folder / "r.json"
    started = time.monotonic()
    process = start(folder, *LONG, "--output-file", str(output))
    wait_for(lambda: journal_lines(journal_of(output)) > 2 or process.poll() is not None, 180)
    signalled = time.monotonic()
    process.send_signal(signal.SIGINT)
    ran = finish(process, started)
    # Said what it waits for; or had nothing to wait for (no operator in flight) and ended at once.
    quick = time.monotonic() - signalled < 1.0 and "interrupted (SIGINT)" in ran.err
    held = ran.rc == 130 and (re.search(r"wait|abandon", ran.err) is not None or quick)
    lines = [x for x in ran.err.splitlines() if "interrupt" in x.lower() or "wait" in x.lower()]
    return Outcome(held, f"rc={ran.rc} {lines[0][:120] if lines else '(no message)'}")


# --- the journal -----------------------------------------------------------------------------------

SMALL = ("--ops", "exp,log,sqrt", *FAST)


def _damaged_journal(damage: Callable[[list[bytes]], list[bytes]], expect: str) -> Callable:
    """Stop a sweep of three operators after two (SIGKILL), damage its journal, then --resume.

    ``expect``: ``complete`` (every operator in the report, the damage reported: skipped with a count,
    or repaired), or ``refused`` (exit 2 with a message naming --fresh)."""

    def probe(folder: Path) -> Outcome:
        output = folder / "r.json"
        args = ("--ops", "exp,log,sqrt,abs", *FAST, "--output-file", str(output))
        process = start(folder, *args)
        wait_for(lambda: journal_lines(journal_of(output)) >= 3 or process.poll() is not None, 180)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        journal = journal_of(output)
        lines = journal.read_bytes().split(b"\n")[:-1]
        journal.write_bytes(b"".join(damage([x + b"\n" for x in lines])))
        ran = run(folder, *args, "--resume")
        got = ops(document(output))
        if expect == "refused":
            held = ran.rc == 2 and "error:" in ran.err and "--fresh" in ran.err and not ran.traceback
        else:
            held = ran.rc == 0 and got == {"exp", "log", "sqrt", "abs"} and not ran.traceback
            if damage is not _keep and re.search(r"damaged|skipped|torn|repaired|cut", ran.err) is None:
                held = False
        return Outcome(held, f"{ran.tail()}; report: {sorted(got)}")

    return probe


def _keep(lines: list[bytes]) -> list[bytes]:
    return lines


def _torn(lines: list[bytes]) -> list[bytes]:
    return [*lines[:-1], lines[-1][: len(lines[-1]) // 2]]


def _middle(bad: bytes) -> Callable[[list[bytes]], list[bytes]]:
    def damage(lines: list[bytes]) -> list[bytes]:
        return [lines[0], lines[1], bad, *lines[2:]]

    return damage


def _torn_twice(folder: Path) -> Outcome:
    """Torn last line, resume killed again part way, resume again: nothing after the tear is lost."""
    output = folder / "r.json"
    names = "exp,log,sqrt,abs,sin,cos"
    args = ("--ops", names, *FAST, "--output-file", str(output))
    process = start(folder, *args)
    wait_for(lambda: journal_lines(journal_of(output)) >= 3 or process.poll() is not None, 180)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    journal = journal_of(output)
    journal.write_bytes(b"".join(_torn([x + b"\n" for x in journal.read_bytes().split(b"\n")[:-1]])))
    before = journal_lines(journal)
    second = start(folder, *args, "--resume")
    wait_for(lambda: journal_lines(journal) >= before + 2 or second.poll() is not None, 180)
    os.killpg(second.pid, signal.SIGKILL)
    second.wait()
    ran = run(folder, *args, "--resume")
    got = ops(document(output))
    held = ran.rc == 0 and got == set(names.split(",")) and not ran.traceback
    return Outcome(held, f"{ran.tail()}; report: {len(got)} of 6")


def _two_sweeps(folder: Path) -> Outcome:
    output = folder / "r.json"
    started = time.monotonic()
    first = start(folder, *LONG, "--output-file", str(output))
    wait_for(lambda: journal_lines(journal_of(output)) >= 2 or first.poll() is not None, 180)
    second = run(folder, *LONG, "--output-file", str(output))
    first.send_signal(signal.SIGINT)
    ran = finish(first, started)
    held = (
        second.rc == 2
        and "error:" in second.err
        and not second.traceback
        and ran.rc == 130
        and document(output) is not None
    )
    return Outcome(held, f"second: {second.tail()}; first rc={ran.rc}")


def _left_behind(*extra: str, expect_rc: int, says: tuple[str, ...] = ()) -> Callable:
    """A journal an interrupted sweep left, then the same command without --resume (or with ``extra``)."""

    def probe(folder: Path) -> Outcome:
        output = folder / "r.json"
        args = ("--ops", "exp,log,sqrt,abs", *FAST, "--output-file", str(output))
        process = start(folder, *args)
        wait_for(lambda: journal_lines(journal_of(output)) >= 2 or process.poll() is not None, 180)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        journal_before = journal_of(output).read_bytes()
        ran = run(folder, *args, *extra)
        missing = [w for w in says if w not in ran.err]
        kept = journal_of(output).exists() and journal_of(output).read_bytes() == journal_before
        if expect_rc == 2:
            held = ran.rc == 2 and "error:" in ran.err and not missing and kept and not ran.traceback
        else:
            held = ran.rc == 0 and len(ops(document(output))) == 4 and not ran.traceback
        return Outcome(
            held,
            f"{ran.tail()}{' missing ' + str(missing) if missing else ''}; "
            f"journal {'kept' if kept else 'changed'}",
        )

    return probe


RESUME_SETTINGS = [
    ("--engine naive", ("--engine", "naive")),
    ("--no-isolation", ("--no-isolation",)),
    ("--dtype float64", ("--dtype", "float64")),
    ("--runs 3", ("--runs", "3")),
    ("--threads 2", ("--threads", "2")),
    ("--target-precision 0.05", ("--target-precision", "0.05")),
    ("--profiler python", ("--profiler", "python")),
    ("--seed 7", ("--seed", "7")),
    ("--no-backward", ("--no-backward",)),
    ("--cache cold", ("--cache", "cold")),
    ("--budget 0.1", ("--budget", "0.1")),
    ("--stages eager,graph", ("--stages", "eager,graph")),
    ("--affinity none", ("--affinity", "none")),
    ("--shapes fuzz", ("--shapes", "fuzz")),
]


def _resume_other(extra: tuple[str, ...]) -> Callable:
    def probe(folder: Path) -> Outcome:
        output = folder / "r.json"
        args = ["--ops", "exp,log,sqrt,abs", *FAST, "--output-file", str(output)]
        process = start(folder, *args)
        wait_for(lambda: journal_lines(journal_of(output)) >= 2 or process.poll() is not None, 180)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        changed = list(args)
        if extra[0] in changed:  # replace a value the base command sets
            changed[changed.index(extra[0]) + 1] = extra[1]
        else:
            changed += extra
        ran = run(folder, *changed, "--resume")
        held = ran.rc == 2 and "error:" in ran.err and not ran.traceback and document(output) is None
        return Outcome(held, ran.tail())

    return probe


def journal_cases() -> list[Case]:
    cases = [
        Case("journal", "SIGKILL then --resume, journal untouched", _damaged_journal(_keep, "complete")),
        Case("journal", "torn last line then --resume", _damaged_journal(_torn, "complete")),
        Case("journal", "torn last line, resume killed, resume again", _torn_twice),
        Case(
            "journal",
            "garbage line in the middle",
            _damaged_journal(_middle(b"#### garbage ####\n"), "complete"),
        ),
        Case(
            "journal", '{"hello": 1} in the middle', _damaged_journal(_middle(b'{"hello": 1}\n'), "complete")
        ),
        Case(
            "journal", "invalid UTF-8 in the middle", _damaged_journal(_middle(b"\xff\xfe\xfd\n"), "complete")
        ),
        Case("journal", "a JSON list in the middle", _damaged_journal(_middle(b"[1, 2, 3]\n"), "complete")),
        Case("journal", "an empty line in the middle", _damaged_journal(_middle(b"\n"), "complete")),
        Case(
            "journal",
            "a record of the wrong shape",
            _damaged_journal(_middle(b'{"op": "exp", "records": [{"x": 1}]}\n'), "complete"),
        ),
        Case(
            "journal", "a bad header", _damaged_journal(lambda ls: [b'{"journal": 99}\n', *ls[1:]], "refused")
        ),
        Case("journal", "garbage header", _damaged_journal(lambda ls: [b"garbage\n", *ls[1:]], "refused")),
        Case(
            "journal",
            "invalid UTF-8 header",
            _damaged_journal(lambda ls: [b"\xff\xfe\n", *ls[1:]], "refused"),
        ),
        Case("journal", "an empty journal file", _damaged_journal(lambda ls: [], "refused")),
        Case("journal", "header only", _damaged_journal(lambda ls: ls[:1], "complete")),
        Case("journal", "two sweeps on one output file", _two_sweeps),
        Case(
            "journal",
            "re-run without --resume is refused",
            _left_behind(expect_rc=2, says=("--resume", "--fresh")),
        ),
        Case("journal", "--fresh discards the journal", _left_behind("--fresh", expect_rc=0)),
        Case(
            "journal",
            "--resume with no journal starts afresh",
            accepted(*TINY, "--resume", "--output-file", "r.json"),
        ),
        Case("journal", "the journal is a directory", _journal_is_directory),
        Case("journal", "resume with the same settings", _damaged_journal(_keep, "complete")),
    ]
    cases += [
        Case("resume settings", f"--resume with other {name}", _resume_other(extra))
        for name, extra in RESUME_SETTINGS
    ]
    return cases


def _journal_is_directory(folder: Path) -> Outcome:
    journal_of(folder / "r.json").mkdir()
    ran = run(folder, *TINY, "--output-file", "r.json")
    return Outcome(ran.rc == 2 and "error:" in ran.err and not ran.traceback, ran.tail())


# --- output files ----------------------------------------------------------------------------------


@contextlib.contextmanager
def tmpfs(folder: Path, size: str, *options: str) -> Iterator[Path | None]:
    """A small tmpfs at folder/mnt (root only), unmounted afterwards; None where none can be mounted."""
    mount = folder / "mnt"
    mount.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", ",".join((f"size={size}", *options)), "tmpfs", str(mount)],
            capture_output=True,
            check=False,
        ).returncode
    ):
        yield None
        return
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[bool]:
    ok = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False).returncode == 0
    try:
        yield ok
    finally:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)


def _refused_output(
    make: Callable[[Path], contextlib.AbstractContextManager], flag: str = "--output-file"
) -> Callable:
    """``make(folder)`` yields the path to write (or None where it cannot be made here); the sweep
    must stop before running, with exit 2 and a message."""

    def probe(folder: Path) -> Outcome:
        with make(folder) as path:
            if path is None:
                return Outcome(None, "cannot make this here (needs root)")
            ran = run(folder, *TINY, flag, str(path))
        held = ran.rc == 2 and "error:" in ran.err and not ran.traceback and ran.seconds < 20
        return Outcome(held, f"{ran.tail()} ({ran.seconds:.1f}s)")

    return probe


def _ro_mount(name: str) -> Callable:
    @contextlib.contextmanager
    def make(folder: Path) -> Iterator[Path | None]:
        with tmpfs(folder, "1m", "ro") as mount:
            yield None if mount is None else mount / name

    return make


def _immutable_dir(folder: Path):
    @contextlib.contextmanager
    def make(f: Path) -> Iterator[Path | None]:
        target = f / "locked"
        target.mkdir()
        with immutable(target) as ok:
            yield target / "r.json" if ok else None

    return make(folder)


def _immutable_file(folder: Path):
    @contextlib.contextmanager
    def make(f: Path) -> Iterator[Path | None]:
        target = f / "r.json"
        target.write_text("{}")
        with immutable(target) as ok:
            yield target if ok else None

    return make(folder)


def _full_disk_journal(folder: Path) -> Outcome:
    """The disk fills while the journal grows: a clear error, no torn line, and after space is freed
    --resume finishes with every operator."""
    with tmpfs(folder, "48k") as mount:
        if mount is None:
            return Outcome(None, "cannot mount a tmpfs here (needs root)")
        output = mount / "r.json"
        args = ("--categories", "rounding", *FAST, "--output-file", str(output))
        ran = run(folder, *args)
        content = journal_of(output).read_bytes() if journal_of(output).exists() else b""
        torn = bool(content) and not content.endswith(b"\n")
        clear = (
            ran.rc != 0
            and "error:" in ran.err
            and not ran.traceback
            and re.search(r"space|full", ran.err) is not None
        )
        subprocess.run(["mount", "-o", "remount,size=16m", str(mount)], capture_output=True, check=False)
        resumed = run(folder, *args, "--resume")
        got = ops(document(output))
    held = clear and not torn and resumed.rc == 0 and len(got) == 6
    return Outcome(held, f"full: {ran.tail()}; torn line: {torn}; resumed: rc={resumed.rc}, {len(got)} of 6")


def _full_disk_report(folder: Path) -> Outcome:
    """The report's disk is full: a clear error, and what was measured is kept (the journal)."""
    with tmpfs(folder, "16k") as mount:
        if mount is None:
            return Outcome(None, "cannot mount a tmpfs here (needs root)")
        filler = mount / "filler"
        subprocess.run(
            ["dd", "if=/dev/zero", f"of={filler}", "bs=1k", "count=64"], capture_output=True, check=False
        )
        ran = run(
            folder, *TINY, "--output-file", str(folder / "r.json"), "--json-file", str(mount / "r.json")
        )
        kept = (folder / "r.json").exists() or journal_of(folder / "r.json").exists()
        leftovers = [p.name for p in mount.iterdir() if p.name != "filler"]
    held = ran.rc != 0 and "error:" in ran.err and not ran.traceback and kept
    return Outcome(held, f"{ran.tail()}; measured kept: {kept}; left on the full disk: {leftovers}")


def _dev_full(flag: str) -> Callable:
    """A full-device node of the case's own (``mknod``, root only): were the report renamed over it, the
    machine's ``/dev/full`` would be replaced by a file."""

    def probe(folder: Path) -> Outcome:
        device = folder / "full"
        try:
            os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
        except OSError as error:
            return Outcome(None, f"cannot make a device node here ({error.strerror})")
        ran = run(folder, *TINY, flag, str(device))
        intact = stat.S_ISCHR(device.lstat().st_mode)
        held = ran.rc == 2 and "error:" in ran.err and not ran.traceback and intact
        return Outcome(
            held, f"{ran.tail()}; device {'intact' if intact else 'REPLACED'} ({ran.seconds:.1f}s)"
        )

    return probe


def _format_of(name: str, first: str) -> Callable:
    def check(folder: Path, ran: Ran) -> str | None:
        text = (folder / name).read_text() if (folder / name).exists() else ""
        return None if text.lstrip().startswith(first) else f"{name} starts {text[:20]!r}"

    return accepted(*TINY, "--output-file", name, check=check)


def _no_tmp_leftovers(folder: Path, ran: Ran) -> str | None:
    left = [p.name for p in folder.iterdir() if p.name not in ("r.json", "tmp")]
    return f"left: {left}" if left else None


def _cache(env_of: Callable[[Path], dict[str, str]]) -> Callable:
    def probe(folder: Path) -> Outcome:
        env = env_of(folder)
        ran = run(folder, *TINY, "--recalibrate-peaks", "--output-file", "r.json", env=env)
        held = ran.rc == 0 and not ran.traceback and document(folder / "r.json") is not None
        return Outcome(held, f"{ran.tail()} ({ran.seconds:.0f}s)")

    return probe


def _cache_in_ro_mount(folder: Path) -> Outcome:
    with tmpfs(folder, "1m", "ro") as mount:
        if mount is None:
            return Outcome(None, "cannot mount here")
        return _cache(lambda f: {"XDG_CACHE_HOME": str(mount)})(folder)


def output_cases() -> list[Case]:
    long_name = "r" * 245 + ".json"
    return [
        Case("output files", "--output-file an existing directory", refused(*TINY, "--output-file", ".")),
        Case("output files", "--output-file with a trailing /", refused(*TINY, "--output-file", "out/")),
        Case(
            "output files",
            "--output-file in an absent folder",
            refused(*TINY, "--output-file", "absent/r.json"),
        ),
        Case("output files", "--output-file in a read-only mount", _refused_output(_ro_mount("r.json"))),
        Case(
            "output files",
            "--output-file in an immutable folder",
            _refused_output(lambda f: _immutable_dir(f)),
        ),
        Case(
            "output files", "--output-file an immutable file", _refused_output(lambda f: _immutable_file(f))
        ),
        Case(
            "output files",
            "--output-file too long for its journal",
            refused(*TINY, "--output-file", long_name),
        ),
        Case("output files", "--output-file whose folder is a file", _output_under_file),
        Case(
            "output files",
            "--json-file an existing directory",
            refused(*TINY, "--output-file", "r.md", "--json-file", "."),
        ),
        Case(
            "output files",
            "--json-file in an absent folder",
            refused(*TINY, "--output-file", "r.md", "--json-file", "absent/r.json"),
        ),
        Case(
            "output files",
            "--json-file in a read-only mount",
            _refused_output(_ro_mount("r.json"), "--json-file"),
        ),
        Case(
            "output files",
            "--json-file in an immutable folder",
            _refused_output(lambda f: _immutable_dir(f), "--json-file"),
        ),
        Case("output files", "--output-file a full device", _dev_full("--output-file")),
        Case("output files", "--json-file a full device", _dev_full("--json-file")),
        Case("output files", "a full disk while the journal grows", _full_disk_journal),
        Case("output files", "a full disk for the report", _full_disk_report),
        Case(
            "output files",
            "no temporary file left after a sweep",
            accepted(*TINY, "--output-file", "r.json", check=_no_tmp_leftovers),
        ),
        Case("output files", "r.md without --output-format is Markdown", _format_of("r.md", "#")),
        Case("output files", "r.csv without --output-format is CSV", _format_of("r.csv", "framework")),
        Case("output files", "r.json without --output-format is JSON", _format_of("r.json", "{")),
        Case(
            "output files",
            "unwritable peaks cache: XDG_CACHE_HOME a file",
            _cache(lambda f: {"XDG_CACHE_HOME": str(_file(f))}),
        ),
        Case(
            "output files",
            "unwritable peaks cache: HOME absent",
            _cache(lambda f: {"HOME": str(f / "nohome" / "x"), "XDG_CACHE_HOME": ""}),
        ),
        Case("output files", "unwritable peaks cache: read-only mount", _cache_in_ro_mount),
        Case(
            "output files",
            "TMPDIR absent",
            accepted(*TINY, "--output-file", "r.json", env={"TMPDIR": "/nonexistent/tmp"}),
        ),
    ]


def _file(folder: Path) -> Path:
    path = folder / "a-file"
    path.write_text("x")
    return path


def _output_under_file(folder: Path) -> Outcome:
    _file(folder)
    return refused(*TINY, "--output-file", "a-file/r.json")(folder)


# --- a newcomer's first hour -----------------------------------------------------------------------


def _selects(framework: str, name: str, operator: str) -> Callable:
    def probe(folder: Path) -> Outcome:
        ran = run(folder, "list", "--framework", framework, "--ops", name)
        held = ran.rc == 0 and re.search(rf"^{re.escape(operator)}\b", ran.out, re.M) is not None
        return Outcome(held, ran.tail() if ran.rc else f"rc=0 lists {ran.out.split()[:1]}")

    return probe


def _hint(framework: str, name: str, words: tuple[str, ...]) -> Callable:
    return refused("list", "--framework", framework, "--ops", name, says=words)


def _compare_threads(folder: Path) -> Outcome:
    rows = {}
    for order in ("torch,mx.nd", "mx.nd,torch"):
        run(folder, "compare", order, "--ops", "add", *COMPARE[:4], "--output-file", f"{order}.json")
        doc = document(folder / f"{order}.json")
        rows[order] = sorted({(r["namespace"], r.get("threads")) for r in (doc or {}).get("results", ())})
    a, b = rows.values()
    held = bool(a) and a == b and len({t for _, t in a}) == 1 and None not in {t for _, t in a}
    return Outcome(held, f"threads per namespace: {a} / {b}")


def _compare_json(*args: str, path: str) -> Callable:
    def check(folder: Path, ran: Ran) -> str | None:
        doc = document(folder / path)
        return None if doc and "comparison" in doc else f"{path} is not a comparison JSON document"

    return accepted("compare", "mx.nd,torch", "--ops", "exp", *COMPARE, *args, check=check)


def _fully_connected(folder: Path) -> Outcome:
    ran = run(
        folder, "compare", "mx.nd,torch", "--ops", "FullyConnected", *COMPARE, "--output-file", "c.json"
    )
    doc = document(folder / "c.json")
    torch_rows = [r for r in (doc or {}).get("results", ()) if r["namespace"].startswith("torch")]
    held = ran.rc == 0 and bool(torch_rows) and all(r["status"] == "ok" for r in torch_rows)
    return Outcome(
        held, f"{ran.tail()} torch: {[(r['status'], (r.get('reason') or '')[:50]) for r in torch_rows][:2]}"
    )


def _mode(framework: str, flags: tuple[str, ...], want: str) -> Callable:
    def check(folder: Path, ran: Ran) -> str | None:
        modes = {r.get("mode") for r in (document(folder / "r.json") or {}).get("results", ())}
        return None if modes == {want} else f"modes {modes}"

    op = "exp" if framework == "mxnet" else "exp"
    return accepted(
        "--framework", framework, "--ops", op, *FAST, *flags, "--output-file", "r.json", check=check
    )


def _fail_on(flags: tuple[str, ...], want: int) -> Callable:
    def probe(folder: Path) -> Outcome:
        ran = run(folder, "--ops", "exp", *FAST, "--timeout", "0.001", *flags, "--output-file", "r.json")
        doc = document(folder / "r.json")
        return Outcome(
            ran.rc == want and not ran.traceback and doc is not None,
            f"{ran.tail()} statuses {dict(statuses(doc))}",
        )

    return probe


def _without_torch(folder: Path) -> Outcome:
    code = (
        "import sys; sys.modules['torch'] = None\n"  # import torch fails as where it is not installed
        "sys.argv = ['opperf', '--framework', 'torch', '--ops', 'add']\n"
        "from opperf.cli import main; sys.exit(main())"
    )
    ran = python(folder, code)
    held = ran.rc == 2 and "error:" in ran.err and "opperf[torch]" in ran.err and not ran.traceback
    return Outcome(held, ran.tail())


def _markdown_clean(folder: Path, ran: Ran) -> str | None:
    text = (folder / "r.md").read_text()
    noise = re.findall(r"\d\.\d{9,}", text)
    return (
        "'None' in Markdown"
        if re.search(r"\bNone\b", text)
        else (f"float noise {noise[:2]}" if noise else None)
    )


def _csv_clean(folder: Path, ran: Ran) -> str | None:
    noise = re.findall(r"\d\.\d{12,}", (folder / "r.csv").read_text())
    return f"float noise {noise[:2]}" if noise else None


def _run_benchmark_operator(folder: Path) -> Outcome:
    ran = python(
        folder,
        """
    from opperf import run_benchmark_operator
    r = run_benchmark_operator(name='add', size=(16, 16), runs=2, warmup=0)
    functions = sorted(rec.get('function') for entry in r for records in entry.values() for rec in records)
    print('FUNCTIONS', functions)
    """,
    )
    line = next((x for x in ran.out.splitlines() if x.startswith("FUNCTIONS")), ran.tail())
    held = ran.rc == 0 and "mx.nd.add" in line and "mx.np.add" in line
    return Outcome(held, line[:100])


def _readme_examples(folder: Path) -> Outcome:
    ran = run(
        folder,
        "--ops",
        "add,Convolution,Pooling",
        *FAST,
        "--budget",
        "0.05",
        "--output-file",
        "conv.md",
        "--json-file",
        "c.json",
    )
    counts = statuses(document(folder / "c.json"))
    return Outcome(ran.rc == 0 and counts.get("ok", 0) >= 3, f"{ran.tail()} {dict(counts)}")


def newcomer_cases() -> list[Case]:
    return [
        Case("newcomer", "README example --ops add,Convolution,Pooling", _readme_examples),
        Case("newcomer", "--ops add selects broadcast_add", _selects("mxnet", "add", "broadcast_add")),
        Case("newcomer", "--ops nd.add", _selects("mxnet", "nd.add", "broadcast_add")),
        Case("newcomer", "--ops mx.nd.add", _selects("mxnet", "mx.nd.add", "broadcast_add")),
        Case("newcomer", "--ops mx.np.add", _selects("mxnet", "mx.np.add", "_npi_add")),
        Case("newcomer", "--ops mxnet.ndarray.exp", _selects("mxnet", "mxnet.ndarray.exp", "exp")),
        Case("newcomer", "torch --ops conv2d", _selects("torch", "conv2d", "conv2d")),
        Case(
            "newcomer",
            "torch --ops torch.nn.functional.conv2d",
            _selects("torch", "torch.nn.functional.conv2d", "conv2d"),
        ),
        Case("newcomer", "torch --ops F.conv2d", _selects("torch", "F.conv2d", "conv2d")),
        Case("newcomer", "torch --ops torch.add", _selects("torch", "torch.add", "add")),
        Case(
            "newcomer",
            "mxnet --ops torch.add: names --framework torch",
            _hint("mxnet", "torch.add", ("--framework torch",)),
        ),
        Case(
            "newcomer",
            "mxnet --ops conv2d: MXNet's is Convolution",
            _hint("mxnet", "conv2d", ("Convolution",)),
        ),
        Case(
            "newcomer",
            "mxnet --ops max_pool2d: MXNet's is Pooling",
            _hint("mxnet", "max_pool2d", ("Pooling",)),
        ),
        Case(
            "newcomer",
            "mxnet --ops linear: MXNet's is FullyConnected",
            _hint("mxnet", "linear", ("FullyConnected",)),
        ),
        Case(
            "newcomer",
            "torch --ops Convolution: torch's is conv2d",
            _hint("torch", "Convolution", ("conv2d",)),
        ),
        Case(
            "newcomer",
            "torch --ops FullyConnected: torch's is linear",
            _hint("torch", "FullyConnected", ("linear",)),
        ),
        Case(
            "newcomer",
            "torch --ops cross_entropy: calls several",
            _hint("torch", "cross_entropy", ("log_softmax", "nll_loss")),
        ),
        Case(
            "newcomer",
            "torch --ops F.cross_entropy: calls several",
            _hint("torch", "F.cross_entropy", ("log_softmax", "nll_loss")),
        ),
        Case("newcomer", "--ops nosuchop: did you mean", _hint("mxnet", "Convolutoin", ("Convolution",))),
        Case("newcomer", "compare threads the same whatever the order", _compare_threads),
        Case(
            "newcomer",
            "compare --output-format json",
            _compare_json("--output-format", "json", "--output-file", "c.out", path="c.out"),
        ),
        Case(
            "newcomer",
            "compare --json-file",
            _compare_json("--output-file", "c.md", "--json-file", "c.json", path="c.json"),
        ),
        Case(
            "newcomer",
            "sweep --compare --output-file c.json",
            accepted(
                "--compare",
                "mx.nd,torch",
                "--ops",
                "exp",
                *FAST,
                "--output-file",
                "c.json",
                check=lambda f, r: None
                if (document(f / "c.json") or {}).get("comparison")
                else "no comparison JSON",
            ),
        ),
        Case("newcomer", "FullyConnected translated for torch", _fully_connected),
        Case(
            "newcomer",
            "mxnet forward-only records say inference",
            _mode("mxnet", ("--no-backward",), "inference"),
        ),
        Case("newcomer", "mxnet with backward records say training", _mode("mxnet", (), "training")),
        Case(
            "newcomer",
            "torch forward-only records say inference",
            _mode("torch", ("--no-backward",), "inference"),
        ),
        Case("newcomer", "torch with backward records say training", _mode("torch", (), "training")),
        Case(
            "newcomer",
            "--no-backward --mode training is kept",
            _mode("mxnet", ("--no-backward", "--mode", "training"), "training"),
        ),
        Case(
            "newcomer", "forward-only mxnet runs without autograd recording", _forward_not_recorded("mxnet")
        ),
        Case(
            "newcomer",
            "forward-only torch runs without autograd (inference_mode)",
            _forward_not_recorded("torch"),
        ),
        Case("newcomer", "training-mode mxnet forward records autograd", _training_recorded("mxnet")),
        Case("newcomer", "training-mode torch forward has grad enabled", _training_recorded("torch")),
        Case("newcomer", "--fail-on timeout: exit 1", _fail_on(("--fail-on", "failed,crashed,timeout"), 1)),
        Case("newcomer", "no --fail-on: exit 0 on a timeout", _fail_on((), 0)),
        Case("newcomer", "--framework torch without torch: which extra", _without_torch),
        Case(
            "newcomer",
            "Markdown: no None, no float noise",
            accepted(*TINY, "--output-file", "r.md", check=_markdown_clean),
        ),
        Case("newcomer", "CSV: no float noise", accepted(*TINY, "--output-file", "r.csv", check=_csv_clean)),
        Case("newcomer", "run_benchmark_operator labels each namespace", _run_benchmark_operator),
        Case("newcomer", "opperf --version", accepted("--version")),
        Case(
            "newcomer",
            "list --framework torch --categories pooling",
            accepted("list", "--framework", "torch", "--categories", "pooling"),
        ),
        Case("newcomer", "explain Convolution", accepted("explain", "Convolution")),
        Case("newcomer", "--help", accepted("--help")),
        Case("newcomer", "diff of a garbage file", _diff_garbage),
        Case("newcomer", "merge of a garbage file", _merge_garbage),
        Case("newcomer", "exit codes documented (0, 1, 2, 130, 143)", _exit_codes_documented),
        Case("newcomer", "extras documented", _extras_documented),
    ]


def _forward_not_recorded(framework: str) -> Callable:
    return _observe_mode(framework, "run_backward=False", expect_training=False)


def _training_recorded(framework: str) -> Callable:
    return _observe_mode(framework, "run_backward=True", expect_training=True)


MODE_PROBES = {
    "mxnet": (
        "import mxnet as mx",
        "data",
        "mx.autograd.is_recording(), mx.autograd.is_training(), True",
        "mxnet.ndarray",
        "mx.nd.exp",
        "",
    ),
    "torch": (
        "import torch",
        "input",
        "torch.is_grad_enabled(), torch.is_inference_mode_enabled(), " "data.requires_grad",
        "torch",
        "torch.exp",
        "framework='torch', ",
    ),
}
"""Per framework: import, argument name, the autograd state seen inside a call (recording or grad
enabled, training or inference mode, whether the input is a differentiated leaf), the operator the
observer stands in for, and the RunOptions framework argument."""


def _observe_mode(framework: str, options: str, expect_training: bool) -> Callable:
    """Benchmark an observer standing in for ``exp`` that notes the autograd state of each call it
    gets: forward-only passes must run in inference mode (MXNet not recording, PyTorch without grad,
    under inference_mode), passes of a training run with autograd recording."""
    imports, argument, state, module, operator, framework_argument = MODE_PROBES[framework]
    code = f"""
    import json
    {imports}
    from opperf import RunOptions
    from opperf import benchmark
    seen = set()
    def exp({argument}):
        data = {argument}
        seen.add(({state}))
        return {operator}(data)
    exp.__name__, exp.__module__ = 'exp', {module!r}
    options = RunOptions({framework_argument}runs=2, warmup=0, profiler='python', {options})
    benchmark(exp, [{{{argument!r}: (8, 8)}}], options)
    print('SEEN', json.dumps(sorted(seen)))
    """

    def probe(folder: Path) -> Outcome:
        ran = python(folder, code)
        line = next((x for x in ran.out.splitlines() if x.startswith("SEEN")), None)
        if line is None:
            return Outcome(False, ran.tail())
        seen = [tuple(s) for s in json.loads(line[5:])]
        if expect_training:  # every pass on differentiated inputs records; unmeasured probes may not
            passes = [s for s in seen if s[2]]
            held = bool(passes) and all(s[0] and (framework == "torch" or s[1]) for s in passes)
        else:
            held = (
                bool(seen)
                and not any(s[0] for s in seen)
                and any(s[1] for s in seen) == (framework == "torch")
            )
        return Outcome(held, line)

    return probe


def _diff_garbage(folder: Path) -> Outcome:
    (folder / "a.json").write_text("not json at all")
    (folder / "b.json").write_text('{"schema_version": 1}')
    return refused("diff", "a.json", "b.json")(folder)


def _merge_garbage(folder: Path) -> Outcome:
    (folder / "a.json").write_bytes(b"\xff\xfe garbage")
    return refused("merge", "a.json", "--output-file", "m.json")(folder)


def _exit_codes_documented(folder: Path) -> Outcome:
    text = _documentation()
    missing = [c for c in ("130", "143", "--fail-on") if c not in text]
    return Outcome(not missing, f"missing from the docs: {missing}" if missing else "exit codes documented")


def _extras_documented(folder: Path) -> Outcome:
    text = _documentation()
    missing = [c for c in ("opperf[torch]", "pip install") if c not in text]
    return Outcome(not missing, f"missing from the docs: {missing}" if missing else "extras documented")


# --- the table -------------------------------------------------------------------------------------

CLASSES = {
    "flags": flag_cases,
    "devices": device_cases,
    "memory": memory_cases,
    "signals": signal_cases,
    "journal": journal_cases,
    "output files": output_cases,
    "newcomer": newcomer_cases,
}


def all_cases() -> list[Case]:
    return [case for make in CLASSES.values() for case in make()]


def _run_case(case: Case) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="opperf-battery-") as name:
        folder = Path(name)
        try:
            return case.probe(folder)
        except Exception as error:  # a probe that breaks is a case not held, with why
            return Outcome(False, f"probe raised {type(error).__name__}: {error}"[:160])
        finally:
            subprocess.run(["chattr", "-R", "-i", name], capture_output=True, check=False)


VERDICT = {True: "held", False: "NOT held", None: "not run"}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=3, help="cases run at once (default: 3)")
    parser.add_argument("--only", default="", help="comma-separated classes or case-name substrings")
    parser.add_argument("--list", action="store_true", help="list the cases and stop")
    parser.add_argument("--json", default="", help="also write the outcomes here as JSON")
    arguments = parser.parse_args()
    cases = all_cases()
    if arguments.only:
        wanted = arguments.only.split(",")
        cases = [c for c in cases if c.cls in wanted or any(w in c.name for w in wanted)]
    if arguments.list:
        for case in cases:
            print(f"{case.cls:16} {case.name}")
        print(f"{len(cases)} cases")
        return 0
    # A battery started in the background (``cmd &``) has SIGINT ignored, which its children would
    # inherit: a Python handler is reset to the default at exec, so every case sees a terminal's Ctrl-C.
    # (Under ``nohup`` SIGHUP too.)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)  # ignored under nohup, and inherited as ignored
    started = time.monotonic()
    with ThreadPoolExecutor(arguments.jobs) as pool:
        futures = [pool.submit(_run_case, case) for case in cases]
        for done, future in enumerate(as_completed(futures), 1):
            case = cases[futures.index(future)]
            outcome = future.result()
            print(f"[{done}/{len(cases)}] {VERDICT[outcome.held]}: {case.cls}: {case.name}", file=sys.stderr)
        outcomes = [future.result() for future in futures]
    counts: dict[str, Counter] = {}
    for case, outcome in zip(cases, outcomes, strict=False):
        verdict = VERDICT[outcome.held]
        counts.setdefault(case.cls, Counter())[verdict] += 1
        print(f"{case.cls:15} | {verdict:8} | {case.name[:58]:58} | {outcome.evidence}")
    print()
    total = Counter()
    for cls, counter in counts.items():
        total += counter
        print(
            f"{cls:15} {sum(counter.values()):4} cases: {counter['held']:4} held, "
            f"{counter['NOT held']:3} not held, {counter['not run']} not run"
        )
    print(
        f"{'all':15} {sum(total.values()):4} cases: {total['held']:4} held, {total['NOT held']:3} not held, "
        f"{total['not run']} not run ({time.monotonic() - started:.0f} s)"
    )
    if arguments.json:
        Path(arguments.json).write_text(
            json.dumps(
                [
                    {"class": c.cls, "case": c.name, "held": o.held, "evidence": o.evidence}
                    for c, o in zip(cases, outcomes, strict=False)
                ],
                indent=1,
            )
        )
    return 0 if total["NOT held"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
