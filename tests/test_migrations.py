"""Results files of earlier versions read as the current one (``opperf.results.migrations``): by
hand on what version 1 left out, on the golden version-1 file, and on files earlier releases wrote
(``tests/data/releases``), each read, migrated and diffed by the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from documents import another_run

from opperf.results.document import SCHEMA_VERSION, check_document
from opperf.results.key import record_key
from opperf.results.migrations import CURRENT, migrate
from opperf.results.options import KEYED, RunOptions

ROOT = Path(__file__).resolve().parents[1]
RELEASES = sorted((ROOT / "tests" / "data" / "releases").glob("*.json"))


def _version_1(**record: object) -> dict[str, object]:
    base = {"framework": "mxnet", "namespace": "mx.nd", "op": "exp", "inputs": {}, "status": "ok"}
    return {
        "schema_version": 1,
        "environment": {"framework": "mxnet", "run_backward": False, "device": "cpu(0)"},
        "results": [{**base, **record}],
    }


def test_a_version_1_record_gets_every_keyed_option_its_mode_and_stage():
    """What a record lacks comes from its file's environment (early releases kept ``run_backward``
    there), else from what that release always used (the option's default); ``mode`` follows
    ``run_backward``; what a release did not measure is null, not guessed; the input is not changed."""
    old = _version_1(profiler="python")
    migrated = migrate(old)
    (record,) = migrated["results"]
    assert migrated["schema_version"] == CURRENT == SCHEMA_VERSION == 3 and migrated["migrated_from"] == 1
    assert set(KEYED) <= set(record)
    assert record["run_backward"] is False and record["mode"] == "inference"
    assert record["profiler"] == "python" and record["cache"] == "hot" and record["dtype"] == "float32"
    assert record["stage"] == "eager" and record["timer"] is None and record["host_latency"] is None
    assert "run_backward" not in old["results"][0] and old["schema_version"] == 1
    assert check_document(old)["results"][0]["mode"] == "inference"


def test_a_current_or_unknown_version_is_left_as_it_is():
    current = {**_version_1(), "schema_version": CURRENT}
    assert migrate(current) is current
    for version in (99, True, "1", None):
        document = {**_version_1(), "schema_version": version}
        assert migrate(document) is document


def test_a_version_2_record_was_drawn_uniform_positive_into_contiguous_tensors():
    """Version 3 keys ``values`` and ``layout``; every earlier release drew at their defaults."""
    old = {**_version_1(), "schema_version": 2}
    old["results"][0].update(
        {name: RunOptions().keyed()[name] for name in KEYED if name not in ("values", "layout")}
    )
    (record,) = migrate(old)["results"]
    assert record["values"] == "uniform-positive" and record["layout"] == "contiguous"
    assert record_key(record) == record_key(
        {**old["results"][0], "values": "uniform-positive", "layout": "contiguous"}
    )


def test_the_golden_version_1_file_reads_as_the_current_version():
    document = check_document(json.loads((ROOT / "tests" / "golden" / "results_v1.json").read_text()))
    assert document["schema_version"] == CURRENT and document["migrated_from"] == 1
    assert all(set(KEYED) <= set(record) and record["stage"] == "eager" for record in document["results"])


def _kind(path: Path) -> str:
    return path.stem.split("-", 4)[-1]  # sweep, sweep-torch or ab


@pytest.mark.skipif(not RELEASES, reason="no files of earlier releases in tests/data/releases")
@pytest.mark.parametrize("path", RELEASES, ids=[path.name for path in RELEASES])
def test_every_file_an_earlier_release_wrote_reads_migrates_and_diffs(path, tmp_path):
    """Each file from ``git log`` (see tests/data/releases/README.md) reads as version 2 with every
    keyed option in every record; ``opperf diff`` runs on it (an A/B file alone; a sweep against a
    copy of the newest release's sweep of its framework) with exit 0 or 1, and pairs rows across the
    releases wherever the two files' records share a row key (the migrated key is the current one; a
    file swept with another thread count shares none, and its rows are new, gone or incomparable)."""
    document = check_document(json.loads(path.read_text()))
    assert document["schema_version"] == CURRENT
    assert all(set(KEYED) <= set(record) for record in document["results"])
    shared = True
    if _kind(path) == "ab":
        sides = [str(path)]
    else:
        newest = max(p for p in RELEASES if _kind(p) == _kind(path))
        copy = tmp_path / f"newest-{newest.name}"  # another run: a file and its copy are one run
        copy.write_text(json.dumps(another_run(json.loads(newest.read_text()))))
        sides = [str(path), str(copy)]
        newest_keys = {record_key(r) for r in check_document(json.loads(newest.read_text()))["results"]}
        shared = bool({record_key(r) for r in document["results"]} & newest_keys)
    out = tmp_path / "diff.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "opperf.py"), "diff", *sides, "--output-file", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    verdicts = [row["verdict"] for row in json.loads(out.read_text())["rows"]]
    paired = {"same", "slower", "faster", "inconclusive"}
    assert any(verdict in paired for verdict in verdicts) == shared, verdicts
    assert shared or set(verdicts) <= {"new", "gone", "incomparable"}


def test_a_file_a_history_store_held_before_migration_is_added_once(tmp_path):
    """A store filled by an opperf that read version-1 files as they were (its digest of the file as
    written) finds the same file, now read migrated, there already: adding it again adds nothing."""
    from opperf.verdicts.history.store import History

    path = ROOT / "tests" / "golden" / "results_v1.json"
    as_written = json.loads(path.read_text())
    with History(str(tmp_path / "h.sqlite"), create=True) as store:
        assert store.add(as_written, str(path))  # as the opperf before migrations added it
        assert store.add(check_document(json.loads(path.read_text())), str(path)) is None
        assert store.run_count() == 1
