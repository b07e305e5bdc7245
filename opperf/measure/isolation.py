"""Running benchmarks in a worker process, so a crash or a hang costs one result, not the sweep.

The worker is a spawned Python process (``opperf.utils.child``: nothing of the folder the sweep runs in
is imported) that imports the framework once and measures specs sent to it over a pipe, one at a
time, until told to stop. A worker that dies (segmentation fault, abort,
out-of-memory kill) yields a ``crashed`` record with the signal and the end of its output; one that
outlives the per-operator time limit (or stalls part way through a reply) is killed and yields
``timeout`` records; one that outgrows its memory is stopped before the kernel's OOM killer acts
(``opperf.measure.memory_guard``) and yields a ``crashed`` record saying so, with its peak. Either way
the next spec gets a fresh worker. The worker's log is unlinked as soon as it is made, and the worker
dies with the sweep, so a killed sweep leaves neither behind.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, BinaryIO, cast

from opperf.frameworks import DEFAULT_FRAMEWORK, NotInstalledError, describe
from opperf.frameworks.start_check import fatal_message
from opperf.measure.memory import peak_rss_bytes
from opperf.measure.memory_guard import MemoryGuard, OutOfMemory
from opperf.measure.messages import (
    BuildDescription,
    DescribeProbe,
    DeviceFault,
    OverheadProbe,
    Round,
    RoundMeasured,
)
from opperf.measure.sampling import SamplingPlan
from opperf.measure.wire import WireError, decode, encode
from opperf.results.measurement import BenchmarkSpec, Measurement, Status
from opperf.utils.affinity import available_cpus, pin_process
from opperf.utils.child import opperf_command
from opperf.utils.devices import Device

if TYPE_CHECKING:
    from opperf.frameworks import Backend
    from opperf.measure.harness import Passes, Session

OUTPUT_TAIL_CHARS = 2000
STARTUP_TIMEOUT_S = 120.0
# How long a stopping sweep waits for its worker to exit (finishing the operator it runs) before
# killing it.
STOP_GRACE_S = 5.0
# How long a reply is awaited before the memory guard first looks at the worker.
FIRST_LOOK_S = 0.05
LARGEST_FRAME_BYTES = 1 << 30
"""More than any message a worker sends (a registry's description is a few MB): a header claiming
more is text the worker's interpreter printed on the pipe before the worker took it over (a
wrapper script's ``echo``, a ``sitecustomize`` printing a banner), read as a length."""


class _Prepared:
    """The worker's one held preparation: the spec, its passes (or the result that they could not be
    made) and the round that made them."""

    def __init__(self) -> None:
        self.spec: BenchmarkSpec | None = None
        self.passes: Passes | Measurement | None = None
        self.round = 0

    def measure(self, backend: Backend, job: Round) -> RoundMeasured:
        from opperf.measure import harness

        session = backend.session
        first = job.index == 0 or job.spec != self.spec
        if first:
            self.release()  # the previous configuration's inputs go before the next's are made
            spec = job.spec
            function = backend.lookup(spec.namespace, spec.function or spec.op) if job.public else None
            if job.public and function is None:
                passes: Passes | Measurement = Measurement(
                    spec, Status.FAILED, reason=f"{spec.label}: the worker's build has no such function"
                )
            else:
                passes = harness.prepare(session, spec, function, check_fit=job.index == 0)
            self.spec, self.passes, self.round = job.spec, passes, job.index
        if isinstance(self.passes, Measurement):
            return RoundMeasured(self.passes, self.round)
        # The preparation's pass warms the round it was made for; a later round re-warms on its own.
        prepared = cast("Passes", self.passes)  # not None: the first round prepared it
        passes = prepared if first else replace(prepared, warmed=())
        measurement = harness.measure_prepared(session, job.spec, passes, probe_memory=False, plan=job.plan)
        return RoundMeasured(measurement, self.round)

    def release(self) -> None:
        self.spec, self.passes = None, None


def crashed_once(crashed: Measurement, again: Measurement) -> Measurement:
    """A job measured again, in a fresh worker, after its worker died measuring it: its measurement
    if it measured, saying it crashed once; its second crash, tried twice, if not.

    One crash can be chance: MXNet's ``_image_random_color_jitter`` crashed (SIGSEGV) in 1 of its
    16 measurements in an A/A job over the registry, and its rows read ``fixed``. Two sweeps of one
    build, the two sides of an A/B job or two namespaces of a comparison then read ``fixed`` or
    ``newly-failing``, which fails a CI gate, for identical code; an operator a build crashes crashes
    again (``_contrib_quantize_asym``, every time)."""
    if again.status is Status.OK:
        note = f"crashed once ({crashed.reason}), then measured in a fresh worker"
        return replace(again, reason=f"{again.reason}; {note}" if again.reason else note)
    if again.status is Status.CRASHED:
        return replace(again, reason=f"{again.reason} (and again in a fresh worker, tried once more)")
    return again


def _measurement_of(reply: Measurement | RoundMeasured) -> Measurement:
    """The measurement a reply carries (a round's, or the reply itself)."""
    return reply.measurement if isinstance(reply, RoundMeasured) else reply


def _after_retry(reply: Measurement | RoundMeasured) -> Measurement | RoundMeasured:
    """A reply that failed again in a fresh worker, saying so."""
    measurement = _measurement_of(reply)
    noted = replace(
        measurement, reason=f"{measurement.reason} (and again in a fresh worker, tried once more)"
    )
    return replace(reply, measurement=noted) if isinstance(reply, RoundMeasured) else noted


_FRAME = struct.Struct("!Q")


class _StalledError(Exception):
    """The worker's reply did not come (or stopped part way) within the time it had."""


class _OutOfMemoryError(Exception):
    """The memory guard stopped the worker."""

    def __init__(self, stopped: OutOfMemory) -> None:
        super().__init__(stopped.reason)
        self.stopped = stopped


def send_frame(stream: BinaryIO, message: object) -> None:
    """One message, as plain values (``wire``), framed by its length."""
    payload = encode(message)
    stream.write(_FRAME.pack(len(payload)) + payload)
    stream.flush()


def receive_frame(stream: BinaryIO) -> object:
    header = stream.read(_FRAME.size)
    if len(header) < _FRAME.size:
        raise EOFError("the benchmark worker closed its pipe")
    (length,) = _FRAME.unpack(header)
    return decode(stream.read(length))


def thread_environment(threads: int | None) -> dict[str, str]:
    """Variables that fix a fresh process's thread pools before a framework reads them at import:
    MXNet's OpenMP count cannot be changed once its engine has started."""
    if threads is None:
        return {}
    return {name: str(threads) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}


def worker_main(
    framework: str, threads: int | None = None, cpus: Sequence[int] | None = None, compiled: str | None = None
) -> None:
    """The worker's loop: receive a BenchmarkSpec, send back its Measurement (an OverheadProbe: its seconds);
    None ends the loop. With ``cpus`` the worker, and every thread the framework starts, runs on those;
    with ``compiled`` the framework keeps what it compiles there (``Backend.keep_compiled``).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what an interrupt stops
    from opperf.frameworks import python_variable

    os.environ.pop(python_variable(framework), None)  # the framework runs here, in this interpreter
    # The protocol's replies go to a private copy of stdout; file descriptors 1 and 2 then go to
    # the log the parent reads after a crash, so nothing a framework prints can corrupt a frame.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    serve(load_backend(framework, threads, compiled), replies, sys.stdin.buffer, cpus)


def load_backend(framework: str, threads: int | None, compiled: str | None = None) -> Backend:
    """The framework imported, its thread count set, its runtime started, its folder for compiled
    programs named and its registry loaded, before any operator runs: a worker's state when it says it
    is ready."""
    from opperf.frameworks import get_backend

    backend = get_backend(framework, check_start=False)
    backend.set_threads(threads)
    backend.start()  # its engine, with those threads; one it cannot make fails the start, not each run
    if compiled is not None:
        backend.keep_compiled(compiled)
    backend.operators()  # the registry, loaded once, before the collector is frozen
    # The framework and its registry are millions of long-lived objects: frozen, they leave the full
    # collections the memory probes run (to free each pass's outputs) a few milliseconds, not 30.
    gc.freeze()
    return backend


def serve(backend: Backend, replies: BinaryIO, requests: BinaryIO, cpus: Sequence[int] | None) -> None:
    """Say "ready", then answer requests until None or the parent closes the pipe. At the first
    request the worker, and every thread the framework started or starts later, moves to ``cpus``:
    not before, so that a standby worker (``IsolatedRunner(standby=True)``) imports the framework on
    other CPUs than the worker measuring beside it."""
    from opperf.measure import harness

    send_frame(replies, "ready")
    prepared = _Prepared()
    pinned = not cpus
    while True:
        try:
            job = receive_frame(requests)
        except EOFError:  # the parent is gone
            return
        if job is None:
            return
        if not pinned:
            pin_process(cast("Sequence[int]", cpus))
            pinned = True
        if isinstance(job, OverheadProbe):
            send_frame(replies, harness.harness_overhead(backend.session, job.profiler, job.device))
        elif isinstance(job, DescribeProbe):
            send_frame(replies, BuildDescription.of(backend))
        elif isinstance(job, Round):
            if not _answer(replies, backend.session, prepared.measure(backend, job)):
                return
        else:
            prepared.release()
            if not _answer(
                replies, backend.session, harness.measure(backend.session, cast(BenchmarkSpec, job))
            ):
                return


def _answer(replies: BinaryIO, session: Session, reply: Measurement | RoundMeasured) -> bool:
    """Send a measurement's reply; False when it says the worker's device may be unusable
    (``DeviceFault``), after which the worker exits."""
    measurement = _measurement_of(reply)
    if measurement.status is Status.FAILED and session.device_fault(
        measurement.reason, measurement.spec.options.device
    ):
        send_frame(replies, DeviceFault(reply))
        return False
    send_frame(replies, reply)
    return True


class WorkerStartError(OSError):
    """A worker that did not start; ``why`` is what it printed, on one line (``startup_failure``)."""

    def __init__(self, why: str) -> None:
        self.why = why or "it printed nothing"
        super().__init__(f"the benchmark worker did not start: {self.why}")

    @property
    def lacks_module(self) -> bool:
        """Whether it did not start for want of a module (numpy, the framework), by the exception it
        died of: the interpreter needs them installed, where other causes (a wrapper that runs Python
        without ``exec``, a setting the framework refuses) need another fix."""
        raised = self.why.split(":", 1)[0].rsplit(".", 1)[-1]
        return raised in ("ModuleNotFoundError", "ImportError", NotInstalledError.__name__)


EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*)?(Error|Exception|Exit|Interrupt)\b.*$", re.MULTILINE)
"""How the exception that ends a Python traceback reads (``ModuleNotFoundError: No module named ...``)."""


def startup_failure(output: str) -> str:
    """What a worker that did not start printed, on one line: the exception a Python traceback ended
    with (an interpreter without numpy: ``ModuleNotFoundError: No module named 'numpy'``; found by its
    own line, as the traceback's head may lie before the printed tail), else a fatal log line's
    message (XLA's ``Unknown flags in XLA_FLAGS: ...``), else all of it."""
    raised = list(EXCEPTION_LINE.finditer(output))
    if raised:
        return raised[-1].group(0).strip()
    return fatal_message(output.splitlines()) or " ".join(output.split())


def describe_exit(exitcode: int | None) -> str:
    """``killed by SIGSEGV`` for a negative exit code, ``exited with status N`` otherwise."""
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with status {exitcode}"


class IsolatedRunner:
    """Measures specs in a reusable worker process, with a time limit per group of specs. The workers
    it starts share a folder private to it for what their framework compiles, where the framework keeps
    it (``Framework.keeps_compiled``), removed at ``close``: a fresh worker finds there what the ones
    before it compiled."""

    def __init__(
        self,
        framework: str = DEFAULT_FRAMEWORK,
        timeout_s: float = 120.0,
        threads: int | None = None,
        cpus: Sequence[int] | None = None,
        python: str = sys.executable,
        environment: Mapping[str, str] | None = None,
        standby: bool = False,
    ) -> None:
        """``python`` is the interpreter workers run in (another build of the framework, for an A/B
        job; it loads this opperf package, and must have its dependencies), ``environment`` what their
        environment adds.
        ``standby``: whenever a worker is taken into use, the next one is started beside it, on the
        CPUs the workers are not pinned to, so a fresh worker (``retire_worker``, or after a crash)
        is ready when it is needed instead of starting then (about 2 s for MXNet)."""
        self._framework = framework
        self._failure: Exception | None = None  # why the last probe got no answer
        self._python = python
        self._environment = dict(environment or {})
        self._threads = threads
        self._cpus = tuple(cpus) if cpus else ()
        self._timeout_s = timeout_s
        self._process: subprocess.Popen | None = None
        self._log: int | None = None  # the worker's log, already unlinked: read through this descriptor
        self._job_output_start = 0
        self._guard = MemoryGuard.from_environment()
        self._standby = standby
        self._next: tuple[subprocess.Popen, int] | None = None  # the standby worker and its log
        self._retired: list[subprocess.Popen] = []  # asked to exit, not yet reaped
        self._abandoned = False  # set by ``abandon``, from another thread
        self._died_measuring = False  # whether the last request's worker died on its own measuring it
        self._compiled: str | None = None  # the workers' folder for compiled programs, once one starts
        # The largest peak resident memory of this runner's workers, read after each reply and before a
        # worker is killed; a worker that dies takes the peak of its last job with it.
        self.peak_rss_bytes: int | None = None

    @property
    def compiled_folder(self) -> str | None:
        """The folder this runner's workers keep what their framework compiles in (None for a
        framework that keeps nothing, before the first worker starts, and after ``close``); empty
        where the user named a lasting folder of the framework's own, where they keep it instead."""
        return self._compiled

    @property
    def worker_pid(self) -> int | None:
        """The live worker's process id; None when there is none."""
        process = self._process  # read once: another thread may retire it meanwhile (``sweep --devices``)
        return process.pid if process is not None and process.poll() is None else None

    @property
    def _live(self) -> subprocess.Popen:
        """The worker process, where the caller has made sure there is one (``_ensure_worker``)."""
        return cast(subprocess.Popen, self._process)

    def __enter__(self) -> IsolatedRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def run(self, jobs: Sequence[BenchmarkSpec]) -> Iterator[Measurement]:
        """One Measurement per spec, in order; all of them together get ``timeout_s`` seconds."""
        deadline = time.monotonic() + self._timeout_s
        for index, job in enumerate(jobs):
            if self._abandoned:
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                yield from (self._not_run(j) for j in jobs[index:])
                return
            yield self._run_one(job, remaining)

    def _run_one(self, job: BenchmarkSpec, remaining: float) -> Measurement:
        return cast(Measurement, self._tried(job, job, remaining))

    def _tried(self, message: object, job: BenchmarkSpec, remaining: float) -> object:
        """``_request``, and once more in a fresh worker where the worker died measuring ``job`` (not
        stopped by the memory guard, the time limit or ``abandon``): ``crashed_once``."""
        started = time.monotonic()
        first = self._request(message, job, remaining)
        left = remaining - (time.monotonic() - started)
        if not self._died_measuring or self._abandoned or left <= 0:
            return first
        again = self._request(message, job, left)
        crashed = _measurement_of(cast("Measurement | RoundMeasured", first))
        if isinstance(again, RoundMeasured):
            return replace(again, measurement=crashed_once(crashed, again.measurement))
        return crashed_once(crashed, cast(Measurement, again))

    def _request(self, message: object, job: BenchmarkSpec, remaining: float, retry: bool = True) -> object:
        """Send ``message`` about ``job``; the worker's reply, or ``job``'s crashed or timed-out result.
        A reply that says the worker's device may be unusable (``DeviceFault``) costs that worker, and
        the request is made once more to a fresh one."""
        started = time.monotonic()
        worker_up = False
        self._died_measuring = False
        try:
            self._ensure_worker()
            worker_up = True
            self._job_output_start = os.fstat(cast(int, self._log)).st_size
            send_frame(cast(BinaryIO, self._live.stdin), message)
            reply = self._receive(remaining)
            self._note_peak_rss()
        except (_OutOfMemoryError, _StalledError, EOFError, OSError, WireError) as error:
            lost = self._lost(job, error)
            stopped = isinstance(error, _OutOfMemoryError) or lost.status is not Status.CRASHED
            self._died_measuring = worker_up and not stopped
            if worker_up and not self._abandoned:
                self._replace_worker()
            return lost
        if not isinstance(reply, DeviceFault):
            return reply
        self.retire_worker()  # it exits on its own after the fault
        if not retry:
            return _after_retry(reply.reply)
        return self._request(message, job, remaining - (time.monotonic() - started), retry=False)

    def abandon(self) -> None:
        """Stop measuring for good, from another thread (a stopped ``sweep --devices``): the worker is
        killed under its job, which comes back crashed; ``run`` yields nothing after it, and no worker
        replaces it."""
        self._abandoned = True
        process = self._process
        if process is not None and process.poll() is None:
            _kill_group(process)

    def _lost(self, job: BenchmarkSpec, error: Exception) -> Measurement:
        """``job``'s result when its worker was lost to ``error``: stopped by the memory guard, killed
        at the time limit, or crashed."""
        if isinstance(error, _OutOfMemoryError):
            self._kill()
            return Measurement(
                spec=job, status=Status.CRASHED, reason=str(error), memory_peak_bytes=error.stopped.peak_bytes
            )
        if isinstance(error, _StalledError) and self._live.poll() is None:
            self._kill()
            return self._timed_out(job)
        if isinstance(error, WorkerStartError):
            self._kill()
            return Measurement(spec=job, status=Status.CRASHED, reason=str(error))
        return self._crashed(job)

    def _replace_worker(self) -> None:
        """Bring the next worker up now, after one was lost measuring a job: the wait is that job's
        (its ``elapsed_s``, which ``--costs`` balances shards by), not the next one's. A worker that
        cannot start is left for the next request to report."""
        try:
            self._ensure_worker()
        except (_OutOfMemoryError, OSError):
            self._kill()

    def run_round(
        self, spec: BenchmarkSpec, index: int, plan: SamplingPlan | None = None, public: bool = False
    ) -> RoundMeasured:
        """Round ``index`` of ``spec``, measured with ``plan`` (None: the spec's own) on the worker's
        preparation of it (made in round 0, or again by a fresh worker); within ``timeout_s``.
        ``public``: through the function users call by the spec's namespace and name (``Round``)."""
        reply = self._tried(Round(spec, index, plan, public), spec, self._timeout_s)
        return RoundMeasured(reply, index) if isinstance(reply, Measurement) else cast(RoundMeasured, reply)

    def harness_overhead(self, profiler: str, device: Device) -> float | None:
        """The harness's cost per call as the worker measures it; None if the worker could not."""
        return cast("float | None", self._ask(OverheadProbe(profiler, device)))

    def describe(self) -> BuildDescription:
        """The framework build the worker runs (its version and operators); OSError naming why when
        no worker can say (the interpreter is no Python, or lacks numpy or the framework)."""
        answer = self._ask(DescribeProbe())
        if isinstance(self._failure, WorkerStartError):
            raise self._failure
        if not isinstance(answer, BuildDescription):
            failure = self._failure
            raise OSError(
                (str(failure) or type(failure).__name__)
                if failure
                else "the benchmark worker did not describe its build"
            )
        return answer

    def _ask(self, probe: object) -> object | None:
        self._failure = None
        try:
            self._ensure_worker()
            send_frame(cast(BinaryIO, self._live.stdin), probe)
            answer = self._receive(self._timeout_s)
            self._note_peak_rss()
            return answer
        except (_StalledError, _OutOfMemoryError, EOFError, OSError, WireError) as error:
            self._failure = error
        self._kill()
        return None

    def _receive(self, timeout: float) -> object:
        """The worker's next frame, read within ``timeout`` seconds however it arrives (a worker that
        stops part way through a reply raises ``_StalledError`` at the deadline too), the memory guard
        looking at the worker whenever it is quiet for the guard's interval. Raises ``EOFError`` when
        the worker closed its end, ``_OutOfMemoryError`` when the guard stopped it."""
        deadline = time.monotonic() + timeout
        descriptor = cast(BinaryIO, self._live.stdout).fileno()
        received = bytearray()
        wanted, header = _FRAME.size, True
        interval = FIRST_LOOK_S
        while True:
            if len(received) == wanted:
                if not header:
                    return decode(bytes(received[_FRAME.size :]))
                length = _FRAME.unpack(received)[0]
                if length > LARGEST_FRAME_BYTES:
                    printed = bytes(received)
                    raise WireError(
                        f"the worker's interpreter printed on the pipe it answers on ({printed!r} ...): "
                        "have what it runs at start-up print on stderr"
                    )
                wanted, header = _FRAME.size + length, False
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise _StalledError(f"the benchmark worker did not answer in {timeout:.0f} s")
            readable, _, _ = select.select([descriptor], [], [], min(left, interval))
            if readable:
                chunk = os.read(descriptor, wanted - len(received))
                if not chunk:
                    raise EOFError("the benchmark worker closed its pipe")
                received += chunk
                continue
            reading = self._guard.look(self._live.pid)
            if reading.stop is not None:
                raise _OutOfMemoryError(reading.stop)
            interval = reading.next_look_s

    def _timed_out(self, job: BenchmarkSpec) -> Measurement:
        reason = f"exceeded the time limit of {self._timeout_s:g} s (--timeout); the worker was killed"
        return Measurement(spec=job, status=Status.TIMEOUT, reason=reason)

    def _not_run(self, job: BenchmarkSpec) -> Measurement:
        """A configuration the operator's time limit left no time for: never sent to a worker."""
        reason = (
            f"not run: the operator's earlier configurations spent its time limit of {self._timeout_s:g} s "
            "(--timeout)"
        )
        return Measurement(spec=job, status=Status.TIMEOUT, reason=reason)

    def _crashed(self, job: BenchmarkSpec) -> Measurement:
        exitcode = None
        if self._process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=5)
            exitcode = self._process.returncode
        tail = self._output_tail()
        self._kill()
        reason = f"worker {describe_exit(exitcode)}" + (f"; last output: {tail}" if tail else "")
        return Measurement(spec=job, status=Status.CRASHED, reason=reason)

    def _ensure_worker(self) -> None:
        if self._process is not None and self._process.poll() is None:
            return
        self._kill()
        if self._next is not None and self._next[0].poll() is not None:
            self._discard_standby()  # it died waiting (killed from outside): not this job's crash
        self._process, self._log = self._next or self._spawn(beside=False)
        self._next = self._spawn(beside=True) if self._standby else None
        try:  # a worker that outgrows its memory while it starts is stopped as one that measures
            ready = self._receive(STARTUP_TIMEOUT_S)
        except _StalledError:
            printed = startup_failure(self._output_text())
            said = f"; it printed: {printed}" if printed else ""
            raise WorkerStartError(f"it was not ready in {STARTUP_TIMEOUT_S:.0f} s{said}") from None
        except WireError as error:
            raise WorkerStartError(str(error)) from None
        except EOFError:
            ready = None
        if ready != "ready":
            raise WorkerStartError(startup_failure(self._output_text()))

    def _spawn(self, beside: bool) -> tuple[subprocess.Popen, int]:
        """A new worker and its log (unlinked: the worker writes through its descriptor and the sweep
        reads through this one). ``beside``: a standby, kept off the workers' CPUs while it starts
        (it pins itself to them at its first request)."""
        log, path = tempfile.mkstemp(prefix="opperf-worker-", suffix=".log")
        os.unlink(path)
        threads = [] if self._threads is None else ["--threads", str(self._threads)]
        cpus = ["--cpus", ",".join(map(str, self._cpus))] if self._cpus else []
        if self._compiled is None and describe(self._framework).keeps_compiled:
            self._compiled = tempfile.mkdtemp(prefix="opperf-compiled-")
        compiled = ["--compiled", self._compiled] if self._compiled else []
        try:
            process = subprocess.Popen(
                opperf_command(
                    "opperf.measure.worker", self._framework, *threads, *cpus, *compiled, python=self._python
                ),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                bufsize=0,
                env={**os.environ, **thread_environment(self._threads), **self._environment},
                start_new_session=True,  # its own process group, killed whole (``_kill_group``)
            )
        except OSError as error:  # the interpreter is gone, or no program
            os.close(log)
            raise WorkerStartError(f"{self._python} cannot be run ({error.strerror})") from None
        others = self._other_cpus()
        if beside and others:
            with contextlib.suppress(OSError):
                pin_process(others, process.pid)
        return process, log

    def _other_cpus(self) -> list[int]:
        """The CPUs the workers are not pinned to (none when they are not pinned)."""
        return sorted(set(available_cpus()) - set(self._cpus)) if self._cpus else []

    def _output_tail(self) -> str:
        """The end of what the worker printed since the current job was sent, on one line."""
        return " ".join(self._output_text().split())

    def _output_text(self) -> str:
        """The end of what the worker printed since the current job was sent, as printed."""
        if self._log is None:
            return ""
        try:
            size = os.fstat(self._log).st_size - self._job_output_start
            data = os.pread(self._log, max(0, size), self._job_output_start)
        except OSError:
            return ""
        return data.decode("utf-8", errors="replace")[-OUTPUT_TAIL_CHARS:]

    def _note_peak_rss(self) -> None:
        """Fold the live worker's peak resident memory into ``peak_rss_bytes``."""
        peak = peak_rss_bytes(self._live.pid)
        if peak is not None:
            self.peak_rss_bytes = max(peak, self.peak_rss_bytes or 0)

    def _kill(self) -> None:
        if self._process is not None:
            if self._process.poll() is None:
                self._note_peak_rss()
            _kill_group(self._process)  # a worker that died leaves what it started: that goes too
            self._process.wait()
            _close_pipes(self._process)
        if self._log is not None:
            with contextlib.suppress(OSError):
                os.close(self._log)
        self._process, self._log, self._job_output_start = None, None, 0

    def retire_worker(self) -> None:
        """Ask the worker to exit and let it go: the next request gets a fresh worker at once, while
        the retired one finishes exiting on its own (its exit hooks still run, e.g. the removal of
        torch's compile folder), moved off the workers' CPUs first so that its exit does not share
        them with the next worker's first measurements. An idle MXNet worker takes up to a second to
        exit, almost all of it waiting (measured here: 0.9-1.0 s, 0.04 s of it on a CPU); an A/B job
        retires both sides' workers every round, and waiting for them was a sixth of its time.
        ``close`` reaps them."""
        self._reap_retired()
        process = self._process
        if process is None or process.poll() is not None:
            self._kill()
            return
        self._note_peak_rss()
        others = self._other_cpus()
        if others:
            with contextlib.suppress(OSError):
                pin_process(others, process.pid)
        with contextlib.suppress(OSError):
            send_frame(cast(BinaryIO, process.stdin), None)
        self._retired.append(process)
        self._process = None  # ``_kill`` now closes only the log
        _close_pipes(process)
        self._kill()

    def close(self) -> None:
        """Stop the worker (``retire_worker``) and the standby if there is one, wait for the retired
        workers to exit, killing those still running after ``STOP_GRACE_S``, and remove the workers'
        folder for compiled programs."""
        self.retire_worker()
        self._discard_standby()
        deadline = time.monotonic() + STOP_GRACE_S
        for process in self._retired:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            if process.poll() is None:
                _kill_group(process)
                process.wait()
        self._retired = []
        if self._compiled is not None:
            shutil.rmtree(self._compiled, ignore_errors=True)
            self._compiled = None

    def _reap_retired(self) -> None:
        self._retired = [process for process in self._retired if process.poll() is None]

    def _discard_standby(self) -> None:
        if self._next is not None:
            standby, log = self._next
            _kill_group(standby)
            standby.wait()
            _close_pipes(standby)
            with contextlib.suppress(OSError):
                os.close(log)
            self._next = None


def _kill_group(process: subprocess.Popen) -> None:
    """SIGKILL to a worker and every process of its group (it leads one of its own): what it started
    goes with it, such as a compiler's helper processes or what a wrapper script started, where killing
    the worker alone left them running. Sent also where the worker has died already (a crash, the
    kernel's out-of-memory kill): its group lives on while a member does, and its id is not reused."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if process.poll() is None:
        process.kill()


def _close_pipes(process: subprocess.Popen) -> None:
    """Close this side's ends of a worker's pipes (the worker may be gone already)."""
    for stream in (process.stdin, process.stdout):
        with contextlib.suppress(OSError):
            cast(BinaryIO, stream).close()
