"""The scale-out recipes of ``docs/recipes`` (a Slurm job array, a Kubernetes Indexed Job, a GitHub
Actions workflow): each is read as its engine reads it, and its opperf commands run here as each of
its tasks would run them, with the environment that engine gives a task (no engine runs here: these
check the recipes' opperf parts, not the engines). Every split merges to exactly the records of the
unsharded sweep of the same selection."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "docs" / "recipes"
SELECTION = ["--ops", "exp,log,sqrt,abs,sign,cos", "--budget", "0.02", "--threads", "1", "--no-isolation"]
"""What bounds each recipe's sweep here: a few operators, a short budget, no workers."""

pytestmark = pytest.mark.slow


def _run(command: list[str], folder: Path, environ: dict[str, str] | None = None) -> None:
    done = subprocess.run(
        command,
        cwd=folder,
        env={**os.environ, **(environ or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"{command}: {done.stderr[-2000:]}"


def _folder(tmp_path: Path) -> Path:
    """A folder to run recipes in, as a checkout: ``opperf.py`` in it, ``python`` this interpreter."""
    (tmp_path / "opperf.py").symlink_to(ROOT / "opperf.py")
    (tmp_path / "bin").mkdir()
    python = tmp_path / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')  # a link would lose the venv
    python.chmod(0o755)
    return tmp_path


def _path(folder: Path) -> dict[str, str]:
    return {"PATH": f"{folder / 'bin'}{os.pathsep}{os.environ['PATH']}"}


def _keys(path: Path) -> set[tuple[str, str]]:
    return {
        (r["op"], json.dumps(r["inputs"], sort_keys=True)) for r in json.loads(path.read_text())["results"]
    }


def _assert_merges_to_the_whole(folder: Path, parts: list[Path]) -> None:
    _run([sys.executable, "opperf.py", "merge", *map(str, parts), "--output-file", "merged.json"], folder)
    _run([sys.executable, "opperf.py", "sweep", *SELECTION, "--output-file", "whole.json"], folder)
    assert _keys(folder / "merged.json") == _keys(folder / "whole.json")
    assert all(_keys(part) for part in parts)  # every shard ran something


def test_the_slurm_array_runs_a_shard_per_task_and_merges_to_the_whole(tmp_path):
    folder = _folder(tmp_path)
    script = RECIPES / "slurm-array.sh"
    first, last = map(int, re.search(r"^#SBATCH --array=(\d+)-(\d+)$", script.read_text(), re.M).groups())
    for task in range(first, last + 1):
        engine = {
            "SLURM_JOB_ID": str(900 + task),
            "SLURM_ARRAY_JOB_ID": "900",
            "SLURM_ARRAY_TASK_ID": str(task),
            "SLURM_ARRAY_TASK_MIN": str(first),
            "SLURM_ARRAY_TASK_MAX": str(last),
            "SLURM_ARRAY_TASK_COUNT": str(last - first + 1),
        }
        _run(["bash", str(script), *SELECTION], folder, {**engine, **_path(folder)})
    parts = sorted((folder / "parts").glob("part-*.json"))
    assert len(parts) == last - first + 1
    engines = [json.loads(part.read_text())["environment"]["engine"] for part in parts]
    assert {(e["engine"], e["job_id"]) for e in engines} == {("slurm", "900")}
    _assert_merges_to_the_whole(folder, parts)


def test_the_kubernetes_indexed_job_runs_a_shard_per_pod_and_merges_to_the_whole(tmp_path):
    folder = _folder(tmp_path)
    job = yaml.safe_load((RECIPES / "kubernetes-indexed-job.yaml").read_text())
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    count = spec["completions"]
    assert spec["parallelism"] == count
    (container,) = spec["template"]["spec"]["containers"]
    command = container["args"][0].replace("/results/", f"{folder}/")
    assert f"--shard auto --shards {count}" in command
    for index in range(count):
        engine = {
            "JOB_COMPLETION_INDEX": str(index),
            "JOB_NAME": "opperf-nightly",
            "HOSTNAME": f"pod-{index}",
        }
        _run(
            [*container["command"], f"{command} {shlex.join(SELECTION)}"], folder, {**engine, **_path(folder)}
        )
    parts = [folder / f"part-{index}.json" for index in range(count)]
    hosts = {json.loads(part.read_text())["environment"]["engine"]["host"] for part in parts}
    assert hosts == {f"pod-{index}" for index in range(count)}
    _assert_merges_to_the_whole(folder, parts)


def _steps(job: dict) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


def test_the_github_workflow_sweeps_a_matrix_merges_and_gates(tmp_path):
    folder = _folder(tmp_path)
    workflow = yaml.safe_load((RECIPES / "github-actions.yml").read_text())
    jobs = workflow["jobs"]
    shards = jobs["sweep"]["strategy"]["matrix"]["shard"]
    (sweep,) = [run for run in _steps(jobs["sweep"]) if " sweep " in run]
    for shard in shards:
        command = shlex.split(sweep.replace("${{ matrix.shard }}", str(shard)))
        assert f"{shard}/{len(shards)}" in command
        _run([sys.executable, *command[1:], *SELECTION], folder)
    merge, diff, history = (run for run in _steps(jobs["merge"]) if "opperf.py" in run)
    _run([sys.executable, *shlex.split(merge)[1:]], folder)
    (folder / "main.json").write_bytes((folder / "merged.json").read_bytes())
    (folder / "merged-copy.json").write_bytes((folder / "merged.json").read_bytes())
    gate = shlex.split(diff.replace("merged.json", "merged-copy.json"))[1:]
    done = subprocess.run([sys.executable, *gate], cwd=folder, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1) and "opperf diff" in done.stdout  # 1: a regression gates the PR
    _run([sys.executable, *shlex.split(history)[1:]], folder)
    parts = [folder / f"part-{shard}.json" for shard in shards]
    _assert_merges_to_the_whole(folder, parts)
