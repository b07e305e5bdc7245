"""PyTorch's compile cache (inductor, ``--stages compile``) where the cache folder cannot be written (a
read-only home or ``XDG_CACHE_HOME``, a read-only ``TORCHINDUCTOR_CACHE_DIR``): compiles still run, in a
private temporary folder removed when the process ends. Each case is a fresh process, since PyTorch
fixes its cache folder the first time it is asked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLAIM = (
    "import os; from opperf.frameworks.torch.stages import claim_compile_cache; "
    "print(claim_compile_cache()); print(os.environ['TORCHINDUCTOR_CACHE_DIR'])"
)


def _run(command: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path / "tmp"), **env}
    if "TORCHINDUCTOR_CACHE_DIR" not in env:
        environment.pop("TORCHINDUCTOR_CACHE_DIR", None)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=600, check=False)


def _a_file(tmp_path: Path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a folder")
    return path


@pytest.mark.parametrize(
    "unwritable",
    [
        lambda tmp: {"XDG_CACHE_HOME": str(_a_file(tmp))},
        lambda tmp: {"TORCHINDUCTOR_CACHE_DIR": str(_a_file(tmp) / "inductor")},
    ],
    ids=["cache-home-a-file", "inductor-dir-under-a-file"],
)
def test_an_unwritable_cache_folder_gives_way_to_a_private_temporary_one(unwritable, tmp_path):
    done = _run([sys.executable, "-c", CLAIM], tmp_path, **unwritable(tmp_path))
    assert done.returncode == 0, done.stderr
    claimed, variable = done.stdout.split()
    assert claimed == variable and Path(claimed).parent == tmp_path / "tmp"
    assert not Path(claimed).exists()  # removed when the process ended


def test_a_writable_configured_cache_folder_is_used_and_kept(tmp_path):
    mine = tmp_path / "my-inductor-cache"
    done = _run([sys.executable, "-c", CLAIM], tmp_path, TORCHINDUCTOR_CACHE_DIR=str(mine))
    assert done.stdout.split() == [str(mine), str(mine)] and mine.is_dir()  # the user's: not removed


@pytest.mark.slow
def test_a_compile_sweep_with_an_unwritable_cache_home_measures(tmp_path):
    output = tmp_path / "r.json"
    command = [sys.executable, str(ROOT / "opperf.py"), "--framework", "torch", "--ops", "exp", "--stages",
               "compile", "--no-backward", "--runs", "2", "--warmup", "0", "--threads", "1", "--quiet",
               "--output-file", str(output)]  # fmt: skip
    done = _run(command, tmp_path, XDG_CACHE_HOME=str(_a_file(tmp_path)))
    assert done.returncode == 0, done.stderr
    records = json.loads(output.read_text())["results"]
    assert records and {(r["stage"], r["status"]) for r in records} == {("compile", "ok")}
    assert not list((tmp_path / "tmp").glob("opperf-torch-compile-*"))
