"""``--values`` and ``--layout`` (``opperf.operators.values``, ``opperf.operators.layouts``): what each
distribution draws in numpy and in PyTorch, which tensors the rules let them touch, that the default
draws what opperf always drew, tensors laid out as asked, the layouts a framework refuses, and rows of
two distributions paired by ``diff --across`` and by ``ab --new-option``."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest
import torch
from commands import ROOT, run_opperf

from opperf.frameworks.torch.tensors import host_values as torch_values
from opperf.frameworks.torch.tensors import make_tensor
from opperf.operators.layouts import touches as layout_touches
from opperf.operators.layouts import with_layout
from opperf.operators.values import SMALLEST_NORMAL, host_values, with_distribution
from opperf.results.draws import parse_distribution
from opperf.results.key import record_key
from opperf.results.load import Run, across, read_run
from opperf.results.measurement import TensorSpec
from opperf.results.options import RunOptions
from opperf.utils.errors import OpperfError
from opperf.verdicts.history.store import History

SIZE = 40_000


def _drawn(distribution: str, framework: str, dtype: str = "float32") -> np.ndarray:
    spec = with_distribution(TensorSpec((SIZE,)), distribution, dtype)
    assert spec.values == distribution
    if framework == "numpy":
        return np.asarray(host_values(spec, dtype, np.random.default_rng(3)), dtype=np.float64)
    return torch_values(spec, dtype, torch.Generator().manual_seed(3)).double().numpy()


@pytest.mark.parametrize("framework", ["numpy", "torch"])
def test_each_distribution_draws_what_it_says(framework):
    normal = _drawn("normal", framework)
    assert abs(normal.mean()) < 0.03 and abs(normal.std() - 1) < 0.03 and 0.45 < (normal < 0).mean() < 0.55
    uniform = _drawn("uniform:-4,2", framework)
    assert uniform.min() >= -4 and uniform.max() < 2 and abs(uniform.mean() + 1) < 0.05
    zeros = _drawn("with-zeros", framework)
    assert 0.23 < (zeros == 0).mean() < 0.27 and zeros[zeros != 0].min() >= 0.1
    special = _drawn("with-nan-inf", framework)
    for fraction in (np.isnan(special).mean(), np.isposinf(special).mean(), np.isneginf(special).mean()):
        assert 0.04 < fraction < 0.06
    assert special[np.isfinite(special)].min() >= 0.1
    subnormal = _drawn("subnormal", framework)
    assert (subnormal < SMALLEST_NORMAL["float32"]).all() and (subnormal > 0).mean() > 0.999


def test_float16_subnormals_are_below_its_own_smallest_normal():
    drawn = _drawn("subnormal", "numpy", "float16")
    assert drawn.max() < 2.0**-14 and drawn.max() > 2.0**-15


def test_the_default_draws_the_values_opperf_always_drew():
    """``uniform-positive`` takes the path every earlier release took: one seed, the same values."""
    spec = TensorSpec((64, 8))
    expected = np.random.default_rng(7).uniform(0.1, 1.0, size=(64, 8)).astype(np.float32)
    assert np.array_equal(host_values(spec, "float32", np.random.default_rng(7)), expected)


def test_a_distribution_touches_only_what_the_rules_leave_free():
    """A range a rule chose is the operator's domain; indices stay valid (normal concentrates
    them); integer and structured tensors are left as they are."""
    free = TensorSpec((4,))
    assert with_distribution(free, "normal", "float32").values == "normal"
    assert with_distribution(free, "normal", "int32") == free
    assert (
        with_distribution(TensorSpec((4,), low=-1.0, high=1.0), "normal", "float32").values
        == "uniform-positive"
    )
    assert (
        with_distribution(TensorSpec((3, 3), structure="spd"), "with-nan-inf", "float32").structure == "spd"
    )
    indices = TensorSpec((SIZE,), low=0, high=1000, integral=True)
    assert with_distribution(indices, "with-nan-inf", "float32") == indices
    drawn = host_values(with_distribution(indices, "normal", "float32"), "float32", np.random.default_rng(0))
    assert drawn.min() >= 0 and drawn.max() <= 999 and drawn.std() < 100  # uniform would be 289
    listed = with_distribution((free, free), "subnormal", "float32")
    assert [spec.values for spec in listed] == ["subnormal", "subnormal"]


def test_one_spelling_per_distribution():
    assert parse_distribution(" uniform:-2.0,2 ") == "uniform:-2,2"
    for text, why in [
        ("normal:0,1", "only uniform takes a range"),
        ("uniform:2,1", "LOW < HIGH"),
        ("uniform:1", "two numbers"),
        ("pareto", "unknown value distribution"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_distribution(text)
    with pytest.raises(OpperfError, match="values: must be one of"):
        RunOptions(values="uniform:-2.0,2").validated()


@pytest.mark.parametrize("layout", ["transposed", "strided", "channels-last"])
def test_a_torch_tensor_is_laid_out_as_asked_with_the_same_values(layout):
    spec = TensorSpec((2, 3, 4, 5))
    laid_out = with_layout(spec, layout)
    contiguous = make_tensor(spec, "float32", "cpu", torch.Generator().manual_seed(1))
    tensor = make_tensor(laid_out, "float32", "cpu", torch.Generator().manual_seed(1))
    assert torch.equal(tensor, contiguous) and not tensor.is_contiguous()
    if layout == "channels-last":
        assert tensor.is_contiguous(memory_format=torch.channels_last)
    if layout == "transposed":
        assert tensor.stride()[-2:] == (1, 4)


def test_a_layout_touches_dense_tensors_of_its_ranks():
    assert not layout_touches(TensorSpec((8,)), "transposed") and layout_touches(
        TensorSpec((8, 2)), "transposed"
    )
    assert not layout_touches(TensorSpec((8, 2, 2)), "channels-last")
    assert layout_touches(TensorSpec((1, 8, 2, 2, 2)), "channels-last")
    assert not layout_touches(TensorSpec((8, 2), storage="csr"), "strided")
    assert not layout_touches(TensorSpec((8, 8), structure="spd"), "transposed")


def test_a_framework_without_layouts_refuses_them_naming_one_that_has_them():
    with pytest.raises(OpperfError, match="MXNet's arrays are always dense.*--framework torch has it"):
        RunOptions(framework="mxnet", layout="transposed").validated()
    assert RunOptions(framework="torch", layout="transposed").validated().layout == "transposed"
    done = run_opperf("sweep", "--framework", "jax", "--ops", "exp", "--layout", "strided", cwd=ROOT)
    assert done.returncode == 2 and done.stderr.startswith("error: layout strided: JAX arrays")


@pytest.mark.slow
def test_two_sweeps_of_two_distributions_pair_across_values(tmp_path):
    """Each record says its values; its inputs (and row key's) are the default's, so ``diff --across
    values`` pairs every row, and without it the rows are incomparable."""
    common = ["sweep", "--ops", "sign", "--no-backward", "--runs", "3", "--warmup", "1", "--no-isolation"]
    common += ["--output-format", "json"]
    for values in ("uniform-positive", "normal"):
        done = run_opperf(*common, "--values", values, "--output-file", f"{values}.json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    (tmp_path / "uniform-positive-again.json").write_bytes((tmp_path / "uniform-positive.json").read_bytes())
    records = json.loads((tmp_path / "normal.json").read_text())["results"]
    assert {r["values"] for r in records} == {"normal"} and {r["layout"] for r in records} == {"contiguous"}
    default = json.loads((tmp_path / "uniform-positive.json").read_text())["results"]
    assert [r["inputs"] for r in default] == [r["inputs"] for r in records]
    paired = run_opperf(
        "diff",
        "uniform-positive.json",
        "normal.json",
        "--across",
        "values",
        "--output-format",
        "json",
        cwd=tmp_path,
    )
    document = json.loads(paired.stdout)
    assert paired.returncode in (0, 1) and len(document["rows"]) == len(records)
    assert not any(row["verdict"] == "incomparable" for row in document["rows"])
    assert any(
        "values uniform-positive (base) against normal (new)" in note for note in document["summary"]["notes"]
    )
    apart = json.loads(
        run_opperf(
            "diff", "uniform-positive.json", "normal.json", "--output-format", "json", cwd=tmp_path
        ).stdout
    )
    assert {row["verdict"] for row in apart["rows"]} == {"incomparable"}
    report = run_opperf(
        "report", "uniform-positive.json", "normal.json", "--output-file", "r.html", cwd=tmp_path
    )
    page = (tmp_path / "r.html").read_text()
    assert report.returncode == 0 and 'id="values-table"' in page
    assert "3 rows measured at uniform-positive, normal (values)" in page
    mixed = run_opperf(
        "diff", "uniform-positive.json", "normal.json,uniform-positive-again.json", cwd=tmp_path
    )
    both = [read_run(str(tmp_path / f"{values}.json")) for values in ("uniform-positive", "normal")]
    one_file = Run("both.json", {**both[0].records, **both[1].records})
    with pytest.raises(OpperfError, match="both.json holds more than one values .normal, uniform-positive."):
        across([one_file], ("values",), "both.json")
    assert mixed.returncode == 2


@pytest.mark.slow
def test_an_ab_job_with_normal_inputs_on_one_side_pairs_its_rows(tmp_path):
    done = run_opperf(
        "ab",
        "--ops",
        "sign",
        "--no-backward",
        "--budget",
        "0.05",
        "--rounds",
        "2",
        "--min-rounds",
        "2",
        "--new-option",
        "values=normal",
        "--output-file",
        "ab.json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "ab.json").read_text())
    assert document["ab"]["builds"]["new"]["options"] == {"values": "normal"}
    sides = {(r["side"], r["values"]) for r in document["results"]}
    assert sides == {("base", "uniform-positive"), ("new", "normal")}
    verdicts = json.loads(run_opperf("diff", "ab.json", "--output-format", "json", cwd=tmp_path).stdout)
    assert verdicts["rows"] and not any(row["verdict"] == "incomparable" for row in verdicts["rows"])
    refused = run_opperf(
        "ab", "--ops", "sign", "--new-option", "threads=2", "--output-file", "x.json", cwd=tmp_path
    )
    assert refused.returncode == 2 and "a side may set only values, layout, cache, dtype" in refused.stderr


def test_a_history_store_filled_before_values_were_keyed_goes_on_in_the_same_series(tmp_path):
    """Rows a store kept before ``values`` and ``layout`` were keyed lack them in their stored key;
    they read as the defaults, and the next run's rows join their series."""
    data = ROOT / "tests" / "data" / "verdicts"
    db = tmp_path / "history.sqlite"
    assert (
        run_opperf("history", "add", "--db", str(db), str(data / "mxnet_run1.json"), cwd=tmp_path).returncode
        == 0
    )
    with sqlite3.connect(db) as connection:
        for (key,) in connection.execute("SELECT DISTINCT key FROM rows").fetchall():
            old = {name: value for name, value in json.loads(key).items() if name not in ("values", "layout")}
            connection.execute(
                "UPDATE rows SET key = ? WHERE key = ?", (json.dumps(old, sort_keys=True), key)
            )
    assert (
        run_opperf("history", "add", "--db", str(db), str(data / "mxnet_run2.json"), cwd=tmp_path).returncode
        == 0
    )
    with History(str(db)) as store:
        series = store.series()
    assert series and all(len(one.points) == 2 for one in series)
    assert {one.key.values for one in series} == {"uniform-positive"}


def test_a_row_drawn_otherwise_says_how_in_its_label():
    record = {"framework": "torch", "namespace": "torch", "op": "exp", "inputs": {}, "status": "ok"}
    assert record_key(record).drawn_otherwise() == []
    drawn = record_key({**record, "values": "normal", "layout": "strided"})
    assert drawn.drawn_otherwise() == ["values normal", "layout strided"]
    assert drawn.replacing(values=None).drawn_otherwise() == ["layout strided"]  # left out by --across
