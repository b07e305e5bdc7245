"""``--in-place``: each operator's in-place form as the variant ``in-place`` beside its row (PyTorch's
``exp_``, ``add_``; MXNet's ``out=`` writes), on inputs restored after every pass so that repeated
calls do not drift, forward only; what a form cannot take is skipped with the reason, and a framework
without in-place forms refuses the flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from commands import run_opperf

from opperf.frameworks import get_backend
from opperf.measure.stages import IN_PLACE
from opperf.results.measurement import BenchmarkSpec, TensorSpec, freeze_inputs
from opperf.results.options import RunOptions


def test_repeated_in_place_calls_compute_on_the_same_values():
    """``exp_`` on [0.1, 1) reaches infinity by its fourth call on its own results; restored after
    each pass, the tensor holds its first values again, and a call after twenty passes writes exp of
    them."""
    spec = BenchmarkSpec(
        "torch",
        "exp",
        freeze_inputs({"input": TensorSpec((64, 64))}),
        RunOptions(framework="torch", run_backward=False, mode="inference"),
        category="unary",
        variant=IN_PLACE,
    )
    passes = get_backend("torch").session.prepare(spec, 0, None)
    assert passes.restore is not None and passes.backward is None
    first = passes.full_pass().value.clone()  # the in-place form's input, restored after the pass
    assert float(first.min()) >= 0.1 and float(first.max()) < 1
    for _ in range(20):
        assert torch.equal(passes.full_pass().value, first)
    written = passes.forward().value  # the call itself, as a timed pass makes it
    assert torch.isfinite(written).all() and torch.equal(written, torch.exp(first))


def _records(path: Path) -> list[dict]:
    return json.loads(path.read_text())["results"]


@pytest.mark.slow
def test_a_torch_sweep_measures_each_in_place_form_beside_its_row(tmp_path):
    done = run_opperf(
        "sweep", "--framework", "torch", "--ops", "exp,add,sum", "--in-place", "--runs", "5", "--warmup", "1",
        "--no-isolation",
        "--output-format", "json", "--output-file", "r.json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "3 operators: 3 ok" in done.stderr  # a form an operator cannot take does not make it skipped
    records = _records(tmp_path / "r.json")
    in_place = [r for r in records if r["variant"] == IN_PLACE]
    assert {r["op"] for r in in_place} == {"exp", "add"}  # sum has no in-place form
    plain = {(r["op"], json.dumps(r["inputs"])) for r in records if not r["variant"]}
    assert all((r["op"], json.dumps(r["inputs"])) in plain for r in in_place)
    for record in in_place:
        if record["status"] == "skipped":  # add_ of a (10000, 1) tensor and a (10000, 100) one
            assert record["op"] == "add" and "cannot write its (10000, 100) result into" in record["reason"]
            assert record["inputs"]["input"]["shape"] == [10000, 1]
            continue
        assert record["status"] == "ok" and record["backward"] is None
        assert "in-place" in record["backward_reason"]
    assert sum(r["status"] == "ok" for r in in_place) == 5
    report = run_opperf("report", "r.json", "--output-file", "r.html", cwd=tmp_path)
    page = (tmp_path / "r.html").read_text()
    assert report.returncode == 0 and 'id="variant-table"' in page
    assert "5 rows measured at out-of-place, in-place (variant); each ratio is against out-of-place" in page


def test_an_mxnet_in_place_form_writes_into_out(tmp_path):
    done = run_opperf(
        "sweep", "--ops", "exp", "--in-place", "--runs", "3", "--warmup", "1", "--no-isolation",
        "--output-format", "json", "--output-file", "r.json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    in_place = [r for r in _records(tmp_path / "r.json") if r["variant"] == IN_PLACE]
    assert len(in_place) == 3 and all(r["status"] == "ok" and r["backward"] is None for r in in_place)
    assert all("out=" in r["backward_reason"] for r in in_place)


def test_a_framework_without_in_place_forms_refuses_the_flag(tmp_path):
    done = run_opperf("sweep", "--framework", "jax", "--ops", "exp", "--in-place", cwd=tmp_path)
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        == "error: --in-place: JAX has no in-place forms (its arrays are immutable); leave --in-place out"
    )


def test_a_comparison_refuses_in_place_forms(tmp_path):
    """A comparison calls each namespace's function as users do: an in-place form is a sweep's
    factor, which ``compare`` does not take at all."""
    done = run_opperf("compare", "mx.nd,torch", "--ops", "exp", "--in-place", cwd=tmp_path)
    assert done.returncode == 2 and "unrecognized arguments: --in-place" in done.stderr


def test_in_place_calls_over_rotating_input_sets_never_drift():
    """Measured cold, passes rotate over input sets; each set is copied back after the pass that used
    it, so every call, on whichever set, computes on that set's first values."""
    spec = BenchmarkSpec(
        "torch",
        "exp",
        freeze_inputs({"input": TensorSpec((64, 64))}),
        RunOptions(framework="torch", run_backward=False, mode="inference", cache="cold"),
        category="unary",
        variant=IN_PLACE,
    )
    passes = get_backend("torch").session.prepare(spec, 0, None)
    for _ in range(50):
        passes.full_pass()
    for _ in range(50):  # the calls themselves, as timed passes make them, then restored
        written = passes.forward().value
        assert torch.isfinite(written).all() and float(written.min()) > 1.1 and float(written.max()) < 2.72
        passes.restore()
