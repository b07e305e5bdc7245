"""Threads as a sweep factor: the setting, real workers per count, and the scaling table and its flags."""

from __future__ import annotations

import pytest

from opperf.measure.threads import ThreadPlan
from opperf.operators.rules.profiles import SMALL
from opperf.report.markdown import render_markdown
from opperf.report.scaling import scalings
from opperf.results.measurement import Status
from opperf.results.options import RunOptions, SweepFactors, _thread_setting, thread_counts
from opperf.results.record import Record
from opperf.results.rows import results_file
from opperf.sweep.document import build_document
from opperf.sweep.run import SweepConfig, run_sweep
from opperf.utils.affinity import available_cpus
from opperf.utils.errors import OpperfError


def test_thread_settings_parse_and_expand() -> None:
    assert _thread_setting("2") == 2
    assert _thread_setting("2,1,2") == (1, 2)
    with pytest.raises(ValueError, match="integer"):
        _thread_setting("1,,2")
    assert _thread_setting("AUTO") == "auto"
    assert thread_counts("auto", 2) == (1, 2)
    assert thread_counts("auto", 6) == (1, 2, 4, 6)
    assert thread_counts("auto", 1) == (1,)
    assert thread_counts((1, 3), 2) == (1, 3)
    assert thread_counts(None, 8) == (None,)
    with pytest.raises(OpperfError, match="thread_counts"):
        SweepFactors(thread_counts=(1, 0)).validated("mxnet")
    with pytest.raises(OpperfError, match="threads"):
        RunOptions(threads="many").validated()  # type: ignore[arg-type]
    assert SweepFactors.split_threads(4) == (4, None)
    assert SweepFactors.split_threads((1, 2)) == (None, (1, 2))
    assert SweepFactors.split_threads("auto") == (None, "auto")


def test_counts_alternate_their_order_per_operator() -> None:
    plan = ThreadPlan.of((1, 2), "auto", (0, 1))
    assert plan.cpus == {1: (1,), 2: None}  # a count needing every CPU runs unpinned
    assert [o.threads for o in plan.variants(RunOptions(), 0)] == [1, 2]
    assert [o.threads for o in plan.variants(RunOptions(), 1)] == [2, 1]


def test_a_thread_list_needs_workers_and_is_refused_outside_sweeps() -> None:
    """Several counts are a sweep's factor; what one measurement runs with (an A/B job's, a
    comparison's, the Python API's options) takes one, and says where several go."""
    config = SweepConfig(factors=SweepFactors(thread_counts=(1, 2)), ops=("relu",), isolate=False)
    with pytest.raises(OpperfError, match="no-isolation"):
        run_sweep(config)
    with pytest.raises(OpperfError, match="one thread count; several .* a sweep's factor"):
        RunOptions(threads=(1, 2)).validated()  # type: ignore[arg-type]
    with pytest.raises(OpperfError, match="one count is a run option"):
        SweepFactors(thread_counts=2).validated("mxnet")  # type: ignore[arg-type]


def test_sweep_measures_each_count_in_its_own_workers() -> None:
    options = RunOptions(warmup=1, runs=5, profiler="python")
    factors = SweepFactors(thread_counts=(1, 2))
    config = SweepConfig(options=options, factors=factors, profile=SMALL, ops=("relu", "sum"))
    result = run_sweep(config)
    assert all(m.status is Status.OK for m in result.measurements)
    by_op = {}
    for m in result.measurements:
        by_op.setdefault(m.spec.op, []).append(m.spec.options.threads)
    # two SMALL configurations per operator, at each count; the second operator takes them in reverse
    assert by_op["relu"] == [1, 1, 2, 2]
    assert by_op["sum"] == [2, 2, 1, 1]
    environment = result.environment
    assert environment.usable_cpus == len(available_cpus())
    assert set(environment.thread_workers) == {"1", "2"}
    if len(available_cpus()) > 1:
        assert environment.thread_workers["1"] == [available_cpus()[-1]]
    document = build_document(result.measurements, environment.to_json(), result.registered)
    assert all(isinstance(r["threads"], int) for r in document["results"])
    found = scalings(results_file(document, "sweep.json").rows, environment.usable_cpus)
    assert len(found) == 4
    assert all([f.threads for f in s.figures] == [1, 2] for s in found)
    assert "## Thread scaling" in render_markdown(document)


def _record(threads: int, median_s: float, load: float = 0.0, op: str = "relu") -> dict[str, object]:
    return {
        "framework": "mxnet",
        "namespace": "mx.nd",
        "op": op,
        "inputs": {"data": {"shape": [64, 64]}},
        "dtype": "float32",
        "device": "cpu(0)",
        "threads": threads,
        "category": "activation",
        "status": "ok",
        "forward": {"samples_s": [median_s] * 5},
        "backward": None,
        "memory_peak_bytes": None,
        "competing_load": load,
    }


def _read(records: list[dict[str, object]]) -> tuple[Record, ...]:
    return results_file({"results": records}, "test.json").rows


def test_scaling_figures_and_flags() -> None:
    (plain,) = scalings(_read([_record(1, 4e-3), _record(2, 2.5e-3)]), usable_cpus=2)
    second = plain.figures[1]
    assert plain.speedup(second) == pytest.approx(1.6)
    assert plain.efficiency(second) == pytest.approx(0.8)
    assert plain.flags == []
    (fast,) = scalings(_read([_record(1, 4e-3), _record(2, 1e-3), _record(4, 1e-3)]), usable_cpus=2)
    assert fast.flags == ["oversubscribed", "superlinear"]
    (busy,) = scalings(_read([_record(1, 4e-3, load=0.9), _record(2, 2e-3)]), usable_cpus=2)
    assert busy.speedup(busy.figures[1]) is None
    assert busy.flags == ["busy_machine"]
    assert scalings(_read([_record(1, 4e-3), _record(1, 4e-3, op="sum")]), usable_cpus=2) == []


def test_scaling_table_says_busy_instead_of_a_number() -> None:
    document = {
        "environment": {"usable_cpus": 2},
        "results": [_record(1, 4e-3, load=0.9), _record(2, 2e-3)],
    }
    table = render_markdown(document).split("## Thread scaling")[1]
    row = next(line for line in table.splitlines() if line.startswith("| mx.nd.relu"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[2:] == ["n/a (busy)", "2.0000", "n/a (busy)", "n/a (busy)", "busy_machine"]
