"""The scale-out recipes of ``docs/recipes`` (a Slurm job array, a Kubernetes Indexed Job, a GitHub
Actions workflow): each is read as its engine reads it, and its opperf commands run here as each of
its tasks would run them, with the environment that engine gives a task; the Slurm script also runs
for real, submitted to a one-node Slurm cluster the tests start (skipped, saying why, where Slurm is
not installed: CI installs Debian's where it can). Every split merges to exactly the records of the
unsharded sweep of the same selection."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from documents import another_run

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
    engines = [json.loads(part.read_text())["environment"]["batch_job"] for part in parts]
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
    hosts = {json.loads(part.read_text())["environment"]["batch_job"]["host"] for part in parts}
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
    main_run = another_run(json.loads((folder / "merged.json").read_text()))  # the main branch's own run
    (folder / "main.json").write_text(json.dumps(main_run))
    (folder / "merged-copy.json").write_bytes((folder / "merged.json").read_bytes())
    gate = shlex.split(diff.replace("merged.json", "merged-copy.json"))[1:]
    done = subprocess.run([sys.executable, *gate], cwd=folder, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1) and "opperf diff" in done.stdout  # 1: a regression gates the PR
    _run([sys.executable, *shlex.split(history)[1:]], folder)
    parts = [folder / f"part-{shard}.json" for shard in shards]
    _assert_merges_to_the_whole(folder, parts)


def _slurm_daemons() -> dict[str, str]:
    """The Slurm and munge programs a cluster of one node needs, where all are installed."""
    names = ("sbatch", "slurmctld", "slurmd", "munged", "munge")
    found = {name: shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin") for name in names}
    return {name: path for name, path in found.items() if path}


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for probe in sockets:
        probe.bind(("127.0.0.1", 0))
    ports = [probe.getsockname()[1] for probe in sockets]
    for probe in sockets:
        probe.close()
    return ports


@pytest.fixture(scope="module")
def slurm() -> Iterator[dict[str, str]]:
    """A Slurm cluster of one node (this machine) of the tests' own, started as root with munge:
    the environment that points ``sbatch`` at it. Skipped, saying why, where it cannot run."""
    programs = _slurm_daemons()
    missing = sorted({"sbatch", "slurmctld", "slurmd", "munged", "munge"} - set(programs))
    if missing:
        pytest.skip(
            f"Slurm is not installed here ({', '.join(missing)} missing; Debian's slurmctld, slurmd, munge)"
        )
    if os.geteuid() != 0:
        pytest.skip("a Slurm cluster of the tests' own runs its daemons as root")
    if subprocess.run([programs["munge"], "-n"], capture_output=True, check=False).returncode != 0:
        Path("/run/munge").mkdir(exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        subprocess.run(["runuser", "-u", "munge", "--", programs["munged"]], check=True, capture_output=True)
    folder = Path(tempfile.mkdtemp(prefix="opperf-slurm-"))
    host = socket.gethostname().split(".")[0]
    controller_port, node_port = _free_ports(2)
    config = folder / "slurm.conf"
    config.write_text(
        "\n".join(
            [
                "ClusterName=opperf-tests",
                f"SlurmctldHost={host}",
                f"SlurmctldPort={controller_port}",
                f"SlurmdPort={node_port}",
                "SlurmUser=root",
                "SlurmdUser=root",
                "AuthType=auth/munge",
                f"StateSaveLocation={folder}",
                f"SlurmdSpoolDir={folder}/spool",
                f"SlurmctldPidFile={folder}/slurmctld.pid",
                f"SlurmdPidFile={folder}/slurmd.pid",
                f"SlurmctldLogFile={folder}/slurmctld.log",
                f"SlurmdLogFile={folder}/slurmd.log",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_CPU",
                "ReturnToService=2",
                f"NodeName={host} CPUs={os.cpu_count()} State=UNKNOWN",
                f"PartitionName=opperf Nodes={host} Default=YES MaxTime=INFINITE State=UP",
                "",
            ]
        )
    )
    environ = {"SLURM_CONF": str(config)}
    for daemon in ("slurmctld", "slurmd"):
        subprocess.run([programs[daemon], "-f", str(config)], env={**os.environ, **environ}, check=True)
    try:
        yield environ
    finally:
        for daemon in ("slurmd", "slurmctld"):
            pid = folder / f"{daemon}.pid"
            if pid.exists():
                subprocess.run(["kill", pid.read_text().strip()], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_real_slurm_array_runs_the_recipe_and_merges_to_the_whole(slurm, tmp_path):
    """``sbatch --wait`` the recipe on a real cluster of one node: each array task sweeps its shard
    (``--shard auto`` from the task's own environment), and the parts merge to the unsharded set."""
    folder = _folder(tmp_path)
    script = RECIPES / "slurm-array.sh"
    environ = {**slurm, **_path(folder)}
    command = ["sbatch", "--wait", f"--chdir={folder}", str(script), *SELECTION]
    done = subprocess.run(
        command, env={**os.environ, **environ}, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    job = re.search(r"Submitted batch job (\d+)", done.stdout).group(1)
    parts = sorted((folder / "parts").glob("part-*.json"))
    first, last = map(int, re.search(r"^#SBATCH --array=(\d+)-(\d+)$", script.read_text(), re.M).groups())
    assert len(parts) == last - first + 1
    engines = [json.loads(part.read_text())["environment"]["batch_job"] for part in parts]
    assert {(e["engine"], e["job_id"]) for e in engines} == {("slurm", job)}
    assert sorted(e["task_id"] for e in engines) == [str(task) for task in range(first, last + 1)]
    _assert_merges_to_the_whole(folder, parts)
