"""One worker per GPU (``sweep --devices``): what is refused before anything runs, how the CPUs are
shared, and the pool that hands operators to whichever worker is free, run with real workers.

This machine has no GPU, so the pool's workers here measure on the CPU: each still gets its own
``CUDA_VISIBLE_DEVICES``, takes the next operator when it is free, and is killed when the sweep stops.
"""

from __future__ import annotations

import os
import sys
import time

import pytest

from opperf.cli import main
from opperf.frameworks import get_backend
from opperf.results.measurement import Status
from opperf.results.options import RunOptions
from opperf.sweep.devices import DevicePool, check_devices, cpu_shares, parse_devices, worker_environment
from opperf.sweep.run import SweepConfig, plan_operator, select_operators
from opperf.utils.devices import CPU, Device
from opperf.utils.errors import OpperfError

GPU = Device("gpu")
OPS = ("exp", "log", "sqrt", "abs", "sign", "cos", "sin", "tan")


def test_gpu_indices_parse_each_once():
    assert parse_devices("0,1, 3") == (0, 1, 3)
    with pytest.raises(ValueError, match="twice"):
        parse_devices("0,0")
    with pytest.raises(ValueError, match="GPU indices"):
        parse_devices("gpu0")


def test_a_pool_is_refused_where_it_cannot_place_a_worker_per_gpu():
    with pytest.raises(OpperfError, match="this sweep runs on cpu\\(0\\): add --ctx gpu"):
        check_devices((0, 1), CPU, isolate=True, threads_vary=False)
    with pytest.raises(OpperfError, match="drop --no-isolation"):
        check_devices((0, 1), GPU, isolate=False, threads_vary=False)
    with pytest.raises(OpperfError, match="choose one"):
        check_devices((0, 1), GPU, isolate=True, threads_vary=True)
    check_devices((0, 1), GPU, isolate=True, threads_vary=False)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--devices", "0,1"], "this sweep runs on cpu(0): add --ctx gpu"),
        (["--devices", "0,1", "--ctx", "gpu"], "has no CUDA support"),
    ],
)
def test_the_sweep_refuses_devices_before_anything_runs(tmp_path, monkeypatch, capsys, flags, expected):
    monkeypatch.chdir(tmp_path)
    assert main(["--ops", "exp", "--quiet", *flags]) == 2
    assert expected in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_a_gpu_named_twice_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["--ops", "exp", "--devices", "0,0"])
    assert stopped.value.code == 2 and "names a GPU twice: 0,0" in capsys.readouterr().err


def test_each_gpus_worker_gets_its_own_share_of_the_cpus():
    assert cpu_shares(range(16), 4) == [(0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11), (12, 13, 14, 15)]
    assert cpu_shares((2, 3, 5), 2) == [(2,), (3,)]
    assert cpu_shares((0,), 2) == [None, None]


def _pool_and_measure():
    backend = get_backend("mxnet")
    config = SweepConfig(options=RunOptions(warmup=0, runs=2, threads=1, run_backward=False))
    operators = select_operators(backend, OPS, ())

    def measure(op, runner):
        return list(runner.run(plan_operator(op, config, backend).specs))

    pool = DevicePool((0, 1), "mxnet", 60.0, 1, [None, None], sys.executable)
    return pool, operators, measure


def test_every_operator_is_measured_once_by_whichever_worker_is_free():
    pool, operators, measure = _pool_and_measure()
    costs = {op.name: float(index) for index, op in enumerate(operators)}
    with pool:
        done = list(pool.completed(operators, costs, measure))
    names = [op.name for op, _ in done]
    assert sorted(names) == sorted(OPS)
    assert all(m.status is Status.OK for _, results in done for m in results)
    placed = pool.placement
    assert set(placed) == {"0", "1"} and all(placed.values())  # both workers took operators
    assert sorted(placed["0"] + placed["1"]) == sorted(OPS)
    # the most expensive first: the two costliest went to the two workers before any other
    assert {placed["0"][0], placed["1"][0]} == {operators[-1].name, operators[-2].name}


def test_a_pool_that_finished_retires_its_workers_and_kills_none():
    """Each worker exits as a retired one does, asked to, when the pool closes: the thread that
    started it waits for that (the kernel kills a worker whose starting thread has ended)."""
    pool, operators, measure = _pool_and_measure()
    processes = []

    def measured(op, runner):
        results = measure(op, runner)
        processes.append(runner._process)
        return results

    with pool:
        assert len(list(pool.completed(operators, {}, measured))) == len(operators)
        assert all(process.poll() is None for process in processes)  # alive once the GPUs are done
    assert {process.wait(timeout=10) for process in processes} == {0}


def _children() -> set[int]:
    """This process's child processes, read from each process's parent in /proc. (A thread's
    `children` file can vanish between listing and reading it when the thread ends.)"""
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended while we looked
        if int(fields[1]) == os.getpid():
            found.add(int(entry))
    return found


def test_a_stopped_pool_kills_its_workers_and_measures_nothing_more():
    """Stopped mid-operator (a Ctrl-C in the sweep's loop closes the pool's generator), each worker is
    killed under its configuration and its runner measures no further one: an operator of 200
    configurations is not measured to its end first, nor is a replacement worker started."""
    before = _children()
    backend = get_backend("mxnet")
    config = SweepConfig(options=RunOptions(warmup=0, runs=2, threads=1, run_backward=False))
    operators = select_operators(backend, OPS, ())
    measured: dict[str, tuple[int, int]] = {}  # operator: (configurations measured, asked for)
    begun: set[str] = set()

    def measure(op, runner):
        specs = plan_operator(op, config, backend).specs
        asked = specs * 100 if op.name != "exp" else specs
        begun.add(op.name)
        results = list(runner.run(asked))
        measured[op.name] = (len(results), len(asked))
        return results

    pool = DevicePool((0, 1), "mxnet", 60.0, 1, [None, None], sys.executable)
    with pool:
        completed = pool.completed(operators, {"exp": 9.0}, measure)
        next(completed)  # exp, the most expensive, from one worker; the other is deep in a long one
        deadline = time.monotonic() + 60  # on a busy machine exp can finish before the other worker
        while not begun - {"exp"} and time.monotonic() < deadline:  # has started its long operator
            time.sleep(0.05)
        time.sleep(0.5)  # a few of its configurations measured
        started = time.monotonic()
        completed.close()
        assert time.monotonic() - started < 10
    assert _children() <= before  # every worker gone, none left behind
    # each long operator was abandoned, not measured to its end (under load, one measured 155 of its
    # hundreds of configurations while exp ran: the point is that it stopped, not how soon)
    long = {name: counts for name, counts in measured.items() if name != "exp"}
    assert long and all(done < asked for done, asked in long.values()), measured
    assert sum(len(names) for names in pool.placement.values()) < len(OPS)


def test_each_gpus_worker_sees_its_gpu_alone_as_the_sweep_numbers_it():
    """Unset, an index is the GPU in PCI order (nvidia-smi's); where the sweep sees a subset, an index
    counts within it."""
    assert worker_environment(2, {}) == {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "2"}
    assert worker_environment(1, {"CUDA_VISIBLE_DEVICES": "4,5,6,7"}) == {"CUDA_VISIBLE_DEVICES": "5"}
    with pytest.raises(OpperfError, match="sees 1 GPU"):
        worker_environment(1, {"CUDA_VISIBLE_DEVICES": "GPU-8f6d"})


def test_a_resumed_sweep_on_devices_gives_the_journals_results_then_measures_the_rest():
    """The sweep's loop over a pool: what the journal finished comes back as it was, the rest is
    measured by the workers, each operator once."""
    from opperf.sweep.run import _on_devices

    pool, operators, measure = _pool_and_measure()
    config = SweepConfig(options=RunOptions(warmup=0, runs=2, threads=1, run_backward=False))
    backend = get_backend("mxnet")
    with pool:
        earlier = {op.name: results for op, results in pool.completed(operators[:3], {}, measure)}
    resumed = DevicePool((0, 1), "mxnet", 60.0, 1, [None, None], sys.executable)
    with resumed:
        outcomes = list(_on_devices(resumed, operators, earlier, config, backend))
    assert [op.name for op, _, fresh in outcomes if not fresh] == [op.name for op in operators[:3]]
    assert all(results == earlier[op.name] for op, results, fresh in outcomes if not fresh)
    fresh = sorted(op.name for op, _, was_fresh in outcomes if was_fresh)
    assert fresh == sorted(op.name for op in operators[3:])
    assert sorted(resumed.placement["0"] + resumed.placement["1"]) == fresh


def test_harness_efficiency_is_a_share_of_each_workers_wall_time():
    """Four GPUs each sampling 9 s of a 10 s sweep ran 90% of the time, not 360%."""
    from opperf.results.measurement import BenchmarkSpec, Measurement
    from opperf.sweep.run import harness_efficiency

    spec = BenchmarkSpec("mx.nd", "exp", ())
    measured = [Measurement(spec, Status.OK, forward=(1e-3,), sampling_s=9.0) for _ in range(4)]
    assert harness_efficiency(measured, 10.0, workers=4) == 0.9
    assert harness_efficiency(measured[:1], 10.0) == 0.9
