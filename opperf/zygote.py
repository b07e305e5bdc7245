"""A fork server: fresh benchmark workers in milliseconds, each a fork of a process that has
imported the framework and run nothing.

An A/B job measures every round in fresh workers on both sides (a worker's state after large
configurations moved element-wise operators 5-11% on one side, ``opperf.ab``), and starting a worker
(an interpreter, the framework's import, its registry) took about 2 s here, 12 times a job. A
``Zygote`` is started once per side, with that side's interpreter and environment; it imports the
framework, loads the registry, sets the thread count and freezes the collector exactly as a worker
does (``opperf.isolation.load_backend``), then forks a worker on request. Forking happens before any
operator ran, so no engine or thread pool has started (MXNet stops and restarts its engine around a
fork; PyTorch's pools start at the first parallel operator), and every fork starts from the same
state: the state a fresh worker has, without its start-up.

The fork is the zygote's child, not the sweep's, so the zygote reaps it and tells the sweep its exit
status (``ForkedWorker`` gives ``IsolatedRunner`` the part of ``subprocess.Popen`` it uses). The
worker's pipes and log are made by the sweep and handed to the zygote over a Unix socket, so the
sweep reads and writes them as it does a spawned worker's. A fork dies with the zygote and the
zygote with the sweep (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Mapping, Sequence

_FORK, _STATUS, _STOP = b"F", b"S", b"X"
_PID = struct.Struct("!q")
_EXIT = struct.Struct("!?q")
"""A status reply: whether the fork has exited, and its exit code (negative: killed by that signal)."""
POLL_S = 0.005
"""How often ``ForkedWorker.wait`` asks the zygote whether the fork has exited."""
ZYGOTE_STARTUP_TIMEOUT_S = 120.0
OUTPUT_TAIL_CHARS = 2000


class ZygoteError(OSError):
    """The zygote did not start, or stopped answering."""


class ForkedWorker:
    """A worker forked by a ``Zygote``: the part of ``subprocess.Popen`` that ``IsolatedRunner``
    uses (``pid``, ``stdin``, ``stdout``, ``poll``, ``wait``, ``kill``, ``returncode``)."""

    def __init__(self, zygote: Zygote, pid: int, requests: int, replies: int) -> None:
        self._zygote = zygote
        self.pid = pid
        self.stdin = os.fdopen(requests, "wb", buffering=0)
        self.stdout = os.fdopen(replies, "rb", buffering=0)
        self.returncode: int | None = None
        self.args = f"fork {pid} of the zygote {zygote.pid}"

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._zygote.exit_code(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(self.args, timeout)
            time.sleep(POLL_S)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)  # not reaped until the zygote is asked: still ours


class Zygote:
    """One side's fork server, started on first use with ``python`` and ``environment`` (the
    bootstrap of ``opperf.isolation``, then ``opperf.worker --zygote``); ``fork`` gives a worker."""

    def __init__(
        self,
        python: str,
        arguments: Sequence[str],
        environment: Mapping[str, str],
        bootstrap: str,
    ) -> None:
        """``arguments``: the worker's (framework, --threads, --cpus); ``bootstrap``: the code that
        starts ``opperf.worker`` dying with this process (``opperf.isolation._BOOTSTRAP``)."""
        self._command = [python, "-c", bootstrap, str(os.getpid()), *arguments]
        self._environment = dict(environment)
        self._process: subprocess.Popen | None = None
        self._socket: socket.socket | None = None
        self._log: int | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def fork(self, log: int) -> ForkedWorker:
        """A fresh worker whose stdin and stdout are new pipes to this process and whose stderr is
        ``log``; it says "ready" as a spawned worker does. Restarts the zygote if it died."""
        if self._process is None or self._process.poll() is not None:
            self.close()
            self._start()
        requests_read, requests_write = os.pipe()
        replies_read, replies_write = os.pipe()
        try:
            socket.send_fds(self._socket, [_FORK], [requests_read, replies_write, log])
            (pid,) = _PID.unpack(self._answer(_PID.size))
        except BaseException:
            for descriptor in (requests_write, replies_read):
                os.close(descriptor)
            raise
        finally:
            for descriptor in (requests_read, replies_write):
                os.close(descriptor)
        return ForkedWorker(self, pid, requests_write, replies_read)

    def exit_code(self, pid: int) -> int | None:
        """The fork's exit code once it has exited (the zygote reaps it), else None. A zygote that
        is gone took its forks with it: they count as killed."""
        try:
            self._socket.sendall(_STATUS + _PID.pack(pid))
            exited, code = _EXIT.unpack(self._answer(_EXIT.size))
        except (OSError, AttributeError):
            return -signal.SIGKILL
        return code if exited else None

    def _answer(self, size: int) -> bytes:
        answer = self._socket.recv(size)
        if len(answer) != size:
            raise ZygoteError(f"the zygote stopped answering: {self.output_tail()}")
        return answer

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._log, path = tempfile.mkstemp(prefix="opperf-zygote-", suffix=".log")
        os.unlink(path)
        try:
            self._process = subprocess.Popen(
                [*self._command, "--zygote", str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=self._log,
                pass_fds=(theirs.fileno(),),
                env={**os.environ, **self._environment},
            )
        finally:
            theirs.close()
        self._socket = ours
        ours.settimeout(ZYGOTE_STARTUP_TIMEOUT_S)
        try:
            ready = ours.recv(16)
        except OSError:
            ready = b""
        ours.settimeout(None)
        if ready != b"ready":
            tail = self.output_tail()
            self.close()
            raise ZygoteError(f"the benchmark worker did not start: {tail}")

    def output_tail(self) -> str:
        if self._log is None:
            return ""
        try:
            data = os.pread(self._log, 1 << 20, 0)
        except OSError:
            return ""
        return " ".join(data.decode("utf-8", errors="replace")[-OUTPUT_TAIL_CHARS:].split())

    def close(self) -> None:
        """Stop the zygote (its forks die with it)."""
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.sendall(_STOP)
            self._socket.close()
        if self._process is not None:
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._log is not None:
            with contextlib.suppress(OSError):
                os.close(self._log)
        self._process, self._socket, self._log = None, None, None


def zygote_main(framework: str, threads: int | None, cpus: Sequence[int] | None, control: int) -> None:
    """The zygote's loop (``python -m opperf.worker FRAMEWORK --zygote FD``): load the framework as
    a worker does, say "ready" on the ``control`` socket, then fork a worker for each request (its
    pipes and log come with the request), report forks' exit codes, and stop when told or when the
    sweep closes the socket."""
    from opperf.isolation import load_backend, prepare_process

    prepare_process(cpus)
    backend = load_backend(framework, threads)
    control_socket = socket.socket(fileno=control)
    control_socket.sendall(b"ready")
    exited: dict[int, int] = {}
    while True:
        try:
            message, descriptors, _, _ = socket.recv_fds(control_socket, 64, 3)
        except OSError:
            return
        _reap(exited)
        if not message or message == _STOP:
            return
        if message == _FORK:
            pid = os.fork()
            if pid == 0:
                _become_worker(control_socket, descriptors, backend)
            for descriptor in descriptors:
                os.close(descriptor)
            control_socket.sendall(_PID.pack(pid))
        elif message[:1] == _STATUS:
            (pid,) = _PID.unpack(message[1:])
            code = exited.pop(pid, None)
            control_socket.sendall(_EXIT.pack(code is not None, code or 0))


def _reap(exited: dict[int, int]) -> None:
    """Collect the exit codes of every fork that has exited."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        exited[pid] = os.waitstatus_to_exitcode(status)


def _become_worker(control: socket.socket, descriptors: Sequence[int], backend: object) -> None:
    """In the fork: take the request pipe, reply pipe and log as fds 0, 1 and 2, die with the
    zygote, and serve as a worker; never returns."""
    from opperf.isolation import serve, split_protocol_output

    code = 1
    try:
        zygote = os.getppid()
        control.close()
        for target, descriptor in zip((0, 1, 2), descriptors, strict=True):
            os.dup2(descriptor, target)
            os.close(descriptor)
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != zygote:
            os._exit(1)
        serve(backend, split_protocol_output(), sys.stdin.buffer)
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)
