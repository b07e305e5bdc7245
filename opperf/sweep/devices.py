"""One worker per GPU (``sweep --devices 0,1,2,3``): a Slurm task or a pod that owns a node measures
on all its GPUs at once, rather than one node's GPUs being shards of their own.

Each GPU gets its own worker, which sees that GPU alone (``CUDA_VISIBLE_DEVICES``) as ``gpu(0)``: its
records carry the device a one-GPU sweep's do, so ``diff`` and ``history`` pair them with one, and
the environment says which GPU measured which operator (``device_workers``). Operators go to
whichever worker is free next, the most expensive first (by ``--costs`` where given), so that the
GPUs finish together; each worker is pinned to a share of the CPUs of its own, since a GPU's
launches run on them. A crash or a hang costs one operator on one GPU, as on one GPU.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence

from opperf.measure.isolation import IsolatedRunner
from opperf.operators.info import OpInfo
from opperf.results.measurement import Measurement
from opperf.utils.devices import Device
from opperf.utils.errors import OpperfError

VISIBLE = "CUDA_VISIBLE_DEVICES"
"""What each worker's environment sets to the one GPU it measures on. ``CUDA_DEVICE_ORDER`` is set to
PCI order with it, so that ``--devices 2`` is the GPU ``nvidia-smi`` and NVML call 2 (CUDA's own order
puts the fastest first), and the worker's GPU state is read from that GPU (``utils.gpu_state``)."""

WORKER_DEVICE = Device("gpu", 0)
"""The device each worker's records name: the one GPU it sees."""

Measure = Callable[[OpInfo, IsolatedRunner], list[Measurement]]


def parse_devices(text: str) -> tuple[int, ...]:
    """``0,1,2,3`` as GPU indices, each once; ValueError naming what is wrong."""
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() for part in parts):
        raise ValueError(f"expected GPU indices such as 0,1,2,3, got {text!r}")
    indices = tuple(int(part) for part in parts)
    if len(set(indices)) != len(indices):
        raise ValueError(f"names a GPU twice: {text}")
    return indices


def check_devices(devices: Sequence[int], device: Device, isolate: bool, threads_vary: bool) -> None:
    """Refuse ``--devices`` where it cannot place a worker per GPU: a sweep on the CPU, in this
    process (``--no-isolation``), or with thread counts as a factor (each count has workers)."""
    if not device.on_gpu:
        raise OpperfError(
            f"--devices places one worker on each GPU; this sweep runs on {device}: add --ctx gpu"
        )
    if not isolate:
        raise OpperfError("--devices runs a worker per GPU; drop --no-isolation")
    if threads_vary:
        raise OpperfError("--devices and several --threads counts each need workers of their own; choose one")


def worker_environment(index: int, environ: Mapping[str, str]) -> dict[str, str]:
    """What GPU ``index``'s worker adds to its environment: that GPU alone visible. Where the sweep
    itself sees a subset (a job given ``CUDA_VISIBLE_DEVICES=4,5,6,7``), ``index`` counts within it,
    as the framework checked it, and the worker sees that entry; elsewhere it counts in PCI order, as
    ``nvidia-smi`` and NVML do."""
    visible = environ.get(VISIBLE)
    if visible is None:
        return {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", VISIBLE: str(index)}
    listed = [entry.strip() for entry in visible.split(",") if entry.strip()]
    if index >= len(listed):
        raise OpperfError(
            f"--devices {index}: this sweep sees {len(listed)} GPU(s) ({VISIBLE}={visible}); "
            f"name 0..{len(listed) - 1}"
        )
    return {VISIBLE: listed[index]}


def cpu_shares(available: Sequence[int], count: int) -> list[tuple[int, ...] | None]:
    """``count`` disjoint, contiguous shares of the ``available`` CPUs, one per GPU's worker; none
    pinned (None each) where there are fewer CPUs than GPUs."""
    if len(available) < count:
        return [None] * count
    size = len(available) // count
    return [tuple(available[k * size : (k + 1) * size]) for k in range(count)]


class DevicePool:
    """A worker for each GPU, each taking the next operator when it is free."""

    def __init__(
        self,
        devices: Sequence[int],
        framework: str,
        timeout_s: float,
        threads: int | None,
        cpus: Sequence[tuple[int, ...] | None],
        python: str,
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        """``threads``: each worker's intra-op threads (None: the framework's own), at most its share
        of the CPUs where it is pinned to one (``cpus``, one entry per GPU; None: unpinned)."""
        self._runners = {
            index: IsolatedRunner(
                framework,
                timeout_s,
                threads if share is None else min(threads or len(share), len(share)),
                share,
                python=python,
                environment=worker_environment(index, environ),
            )
            for index, share in zip(devices, cpus, strict=True)
        }
        self._stop = threading.Event()
        self._closed = threading.Event()
        self._threads: list[threading.Thread] = []
        self.placement: dict[str, list[str]] = {str(index): [] for index in devices}
        """The operators each GPU measured, by its index."""
        self.in_flight: dict[int, str] = {}
        """The operator each GPU is measuring now, by its index."""

    def __enter__(self) -> DevicePool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        for runner in self._runners.values():
            runner.close()
        self._closed.set()
        for thread in self._threads:
            thread.join()

    @property
    def first(self) -> IsolatedRunner:
        """The first GPU's runner (for the harness's overhead probe)."""
        return next(iter(self._runners.values()))

    @property
    def peak_rss_bytes(self) -> int | None:
        peaks = [r.peak_rss_bytes for r in self._runners.values() if r.peak_rss_bytes is not None]
        return max(peaks) if peaks else None

    def completed(
        self, operators: Sequence[OpInfo], costs: Mapping[str, float], measure: Measure
    ) -> Iterator[tuple[OpInfo, list[Measurement]]]:
        """Each operator with its results, as the GPUs finish them, the most expensive taken first.
        Stopped (Ctrl-C, a signal raised here), the operators still being measured are abandoned:
        their workers are killed and nothing of them is returned."""
        pending: queue.Queue[OpInfo] = queue.Queue()
        for op in sorted(operators, key=lambda op: -costs.get(op.name, 0.0)):
            pending.put(op)
        finished: queue.Queue[tuple[OpInfo, list[Measurement]] | BaseException | None] = queue.Queue()
        self._threads = [
            threading.Thread(
                target=self._serve, args=(index, runner, pending, finished, measure), daemon=True
            )
            for index, runner in self._runners.items()
        ]
        for thread in self._threads:
            thread.start()
        running = len(self._threads)
        try:
            while running:
                item = finished.get()
                if item is None:
                    running -= 1
                elif isinstance(item, BaseException):
                    raise item
                else:
                    yield item
        finally:
            self._stop.set()
            if running:  # stopped before every GPU was done: what they still measure is abandoned
                self._abandon_workers()

    def _serve(
        self,
        index: int,
        runner: IsolatedRunner,
        pending: queue.Queue[OpInfo],
        finished: queue.Queue[tuple[OpInfo, list[Measurement]] | BaseException | None],
        measure: Measure,
    ) -> None:
        """GPU ``index``'s thread: measure the next pending operator until none is left or the pool
        stops; an error that is not an operator's goes to the caller."""
        try:
            while not self._stop.is_set():
                try:
                    op = pending.get_nowait()
                except queue.Empty:
                    break
                self.in_flight[index] = op.name
                results = measure(op, runner)
                if self._stop.is_set():
                    break  # abandoned: its worker was killed under it
                del self.in_flight[index]
                self.placement[str(index)].append(op.name)
                finished.put((op, results))
        except BaseException as error:
            finished.put(error)
        finally:
            finished.put(None)
            # The kernel kills a worker when the thread that started it ends (PR_SET_PDEATHSIG,
            # ``opperf.utils.child``): this one outlives its workers, which the pool's close retires.
            self._closed.wait()

    def _abandon_workers(self) -> None:
        """Abandon every runner: its worker is killed, so a thread waiting on one returns at once, and
        it measures nothing more of its operator."""
        for runner in self._runners.values():
            runner.abandon()
