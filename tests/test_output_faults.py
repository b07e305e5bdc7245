"""Output paths a report must not be renamed over (a device, a pipe), and a full disk while the report
or the journal is written: a clear error, nothing half-written, what was measured kept for --resume.
The full disk is a real one: a tmpfs of a few kilobytes (needs root; skipped, saying so, elsewhere)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from opperf.cli import main
from opperf.utils.errors import OpperfError
from opperf.utils.files import write_atomically

QUICK = ["--runs", "2", "--warmup", "0", "--threads", "1", "--no-isolation", "--quiet"]


@contextlib.contextmanager
def small_disk(folder: Path, size: str):
    """A tmpfs of ``size`` at ``folder/disk``, unmounted afterwards."""
    mount = folder / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs (a real full disk) needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], check=False)
    if done.returncode:
        pytest.skip("this machine does not let even root mount a tmpfs")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.parametrize("flag", ["--output-file", "--json-file"])
def test_a_device_is_refused_before_anything_runs_and_left_as_it_is(flag, tmp_path, capsys):
    device = tmp_path / "full"  # a node of our own: were it replaced, /dev/full would not be
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except OSError as error:
        pytest.skip(f"making a device node needs root ({error.strerror})")
    argv = ["--ops", "exp", *QUICK]
    argv += (
        ["--output-file", str(tmp_path / "r.md"), flag, str(device)]
        if flag == "--json-file"
        else [flag, str(device)]
    )
    assert main(argv) == 2
    assert "is no regular file" in capsys.readouterr().err
    assert stat.S_ISCHR(device.lstat().st_mode)  # still the device


def test_a_pipe_is_not_replaced_by_a_file(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OpperfError, match="no regular file"):
        write_atomically(fifo, "{}")
    assert fifo.is_fifo()


def test_a_full_disk_while_writing_a_report_leaves_no_file_and_says_so(tmp_path):
    with small_disk(tmp_path, "8k") as disk:
        (disk / "old.json").write_text("old")
        with pytest.raises(OpperfError, match="cannot write .*No space left on device"):
            write_atomically(disk / "old.json", "x" * 64 * 1024)
        assert sorted(p.name for p in disk.iterdir()) == ["old.json"]  # no temporary file left
        assert (disk / "old.json").read_text() == "old"  # the previous report untouched


def test_a_full_disk_for_the_report_keeps_the_journal_for_resume(tmp_path, capsys):
    with small_disk(tmp_path, "256k") as disk:
        (disk / "filler").write_bytes(b"\0" * 252 * 1024)  # room for no report
        output = tmp_path / "r.md"
        argv = ["--ops", "exp,log", *QUICK, "--output-file", str(output), "--json-file", str(disk / "r.json")]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "No space left on device" in err and "--resume" in err
        (disk / "filler").unlink()
        assert main([*argv, "--resume"]) == 0
        assert {r["op"] for r in json.loads((disk / "r.json").read_text())["results"]} == {"exp", "log"}


def test_a_disk_that_fills_while_the_journal_grows_leaves_whole_lines(tmp_path, capsys):
    with small_disk(tmp_path, "24k") as disk:
        output = disk / "r.json"
        argv = ["--categories", "rounding", *QUICK, "--output-file", str(output)]
        assert main(argv) == 2
        assert "No space left on device" in capsys.readouterr().err
        journal = Path(f"{output}.journal.jsonl").read_bytes()
        assert journal.endswith(b"\n") and all(json.loads(line) for line in journal.splitlines())
        subprocess.run(["mount", "-o", "remount,size=16m", str(disk)], check=True)
        assert main([*argv, "--resume"]) == 0
        assert len({r["op"] for r in json.loads(output.read_text())["results"]}) == 6


def test_rendered_figures_carry_no_float_noise(tmp_path):
    # Rates, roofline fractions and the competing load are derived: 6 significant digits, not
    # 1.9999999999999998; every CSV cell keeps at most 10.
    output, csv = tmp_path / "r.json", tmp_path / "r.csv"
    assert main(["--ops", "exp", *QUICK, "--output-file", str(csv), "--json-file", str(output)]) == 0
    for result in json.loads(output.read_text())["results"]:
        derived = [result["competing_load"], *result["roofline"].values()]
        derived += result["roofline"]["fraction_of_peak"].values()
        for value in derived:
            if isinstance(value, float):
                assert len(f"{value!r}".lstrip("0.").replace(".", "").split("e")[0]) <= 6, value
    assert not re.search(r"\d\.\d{11,}", csv.read_text())


def test_a_full_disk_under_the_journal_is_one_error_and_closing_it_raises_nothing(tmp_path):
    """The line that does not fit is taken back, and closing the journal has no buffered remainder to
    fail on again (it raised a second OSError, chained under the first)."""
    from opperf.results.measurement import BenchmarkSpec, Measurement, Status
    from opperf.sweep.checkpoint import JournalWriter, load_journal

    with small_disk(tmp_path, "12k") as disk:
        writer = JournalWriter(str(disk / "j.jsonl"), {"settings": 1}, append=False)
        record = Measurement(spec=BenchmarkSpec("mx.nd", "exp", ()), status=Status.SKIPPED, reason="x" * 3000)
        with pytest.raises(OpperfError, match=r"cannot write the journal \(No space left on device\)"):
            for _ in range(20):
                writer.add("exp", [record])
        writer.close()
        journal = load_journal(str(disk / "j.jsonl"))
        assert journal is not None and not journal.torn and not journal.damaged and journal.finished
