"""Peak calibration: real measurements on small sizes, an injected clock, and the per-machine cache."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import math

import pytest

from opperf.measure.roofline.peaks import (
    CACHE_FILE_NAME,
    CACHE_SCHEMA_VERSION,
    MachinePeaks,
    PeakProbes,
    calibrate_peaks,
    load_peaks,
    machine_identity,
    measure_bandwidth,
    measure_gemm,
)

QUICK = PeakProbes(copy_bytes=8 * 2**20, gemm_size=128, repeats=2)


def ticking_clock(step: float):
    """A clock that advances ``step`` seconds every time it is read: every timed call takes ``step``."""
    ticks = itertools.count()
    return lambda: next(ticks) * step


def test_calibration_measures_positive_finite_peaks():
    peaks = calibrate_peaks(QUICK)
    for rate in (peaks.bandwidth_bytes_per_s, peaks.gemm_flops_per_s):
        assert math.isfinite(rate) and rate > 0
    assert dt.datetime.fromisoformat(peaks.measured_at).tzinfo is not None
    assert "copyto of 8 MiB" in peaks.method and "matrix products 128x128" in peaks.method


def test_the_gemm_roof_is_the_best_of_numpy_and_the_frameworks_own():
    """An OpenBLAS NumPy is not what a framework's kernels reach: the roof is the best candidate, and
    every candidate is named with its rate."""
    elsewhere = {"fast": (1e15, "a very fast library"), "slow": (1.0, "a slow one")}
    peaks = calibrate_peaks(QUICK, gemm_elsewhere=lambda size, repeats: elsewhere)
    assert peaks.gemm_flops_per_s == 1e15
    assert "the best of fast among" in peaks.method and "a slow one: 0.0 GFLOP/s" in peaks.method
    numpy_only = calibrate_peaks(QUICK, gemm_elsewhere=lambda size, repeats: {"slow": (1.0, "slow")})
    assert numpy_only.gemm_flops_per_s > 1 and "the best of numpy" in numpy_only.method


def test_each_installed_framework_measures_its_own_matrix_product():
    from opperf.frameworks import FRAMEWORKS, describe, gemm_rates

    rates = gemm_rates(64, 2)
    assert set(rates) == {name for name in FRAMEWORKS if describe(name).installed}
    assert all(math.isfinite(rate) and rate > 0 for rate, _ in rates.values())
    assert rates["mxnet"][1].startswith("mxnet ") and rates["torch"][1].startswith("torch ")
    assert "Convolution" in rates["mxnet"][1] and "conv3d" in rates["torch"][1]  # the candidates named
    assert "jax" not in rates or rates["jax"][1].startswith("jax ")


def test_rates_are_the_counted_work_over_the_best_time():
    # Each copy moves 2 MiB read + 2 MiB written; each product does 2 * 64**3 FLOPs.
    assert measure_bandwidth(2 * 2**20, repeats=3, clock=ticking_clock(0.5)) == 2 * 2 * 2**20 / 0.5
    assert measure_gemm(64, repeats=3, clock=ticking_clock(0.25)) == 2 * 64**3 / 0.25


def test_at_least_one_repeat():
    with pytest.raises(ValueError):
        measure_gemm(8, repeats=0)


class Calibrations:
    """Hands out distinct peaks, counting how often it was asked: a stand-in for measuring."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> MachinePeaks:
        self.count += 1
        return MachinePeaks(
            bandwidth_bytes_per_s=1e9 * self.count,
            gemm_flops_per_s=1e10 * self.count,
            measured_at="2024-01-01T00:00:00+00:00",
            method=f"calibration {self.count}",
            blas_threads=2,
        )


def test_cache_round_trip(tmp_path):
    calibrate = Calibrations()
    first = load_peaks(tmp_path, calibrate=calibrate)
    assert load_peaks(tmp_path, calibrate=calibrate) == first
    assert calibrate.count == 1
    document = json.loads((tmp_path / CACHE_FILE_NAME).read_text())
    assert document["schema_version"] == CACHE_SCHEMA_VERSION
    assert MachinePeaks.from_json(document["machines"][machine_identity()]) == first


def test_redo_measures_again_and_replaces_the_entry(tmp_path):
    calibrate = Calibrations()
    load_peaks(tmp_path, calibrate=calibrate)
    redone = load_peaks(tmp_path, redo=True, calibrate=calibrate)
    assert calibrate.count == 2 and redone.method == "calibration 2"
    assert load_peaks(tmp_path, calibrate=calibrate) == redone


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        json.dumps({"schema_version": 99, "machines": {}}),
        json.dumps({"schema_version": 1, "machines": {machine_identity(): {"bandwidth_bytes_per_s": -1}}}),
    ],
    ids=["not json", "not an object", "other schema", "damaged entry"],
)
def test_an_unusable_cache_is_measured_again(tmp_path, content):
    (tmp_path / CACHE_FILE_NAME).write_text(content)
    calibrate = Calibrations()
    peaks = load_peaks(tmp_path, calibrate=calibrate)
    assert calibrate.count == 1
    assert load_peaks(tmp_path, calibrate=calibrate) == peaks


def test_other_machines_entries_are_kept(tmp_path):
    other = Calibrations()().to_json()
    document = {
        "schema_version": CACHE_SCHEMA_VERSION,
        "machines": {"elsewhere | Some CPU | 64 cores": other},
    }
    (tmp_path / CACHE_FILE_NAME).write_text(json.dumps(document))
    load_peaks(tmp_path, calibrate=Calibrations())
    machines = json.loads((tmp_path / CACHE_FILE_NAME).read_text())["machines"]
    assert machines["elsewhere | Some CPU | 64 cores"] == other
    assert machine_identity() in machines


def test_the_cache_folder_is_created(tmp_path):
    folder = tmp_path / "cache" / "opperf"
    load_peaks(folder, calibrate=Calibrations())
    assert (folder / CACHE_FILE_NAME).is_file()
    assert [p.name for p in folder.iterdir()] == [CACHE_FILE_NAME]  # no temporary file left behind
