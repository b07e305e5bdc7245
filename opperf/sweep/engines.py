"""Which shard a task of a batch engine runs, read from the environment the engine gives it
(``sweep --shard auto``), and where a results file was measured (the engine's job and task ids).

opperf plugs into the engines teams already run rather than scheduling shards itself (a scheduler on
the benchmark machine adds noise, and the split is known in advance):

- Slurm job arrays (``sbatch --array=0-3``): ``SLURM_ARRAY_TASK_ID`` with ``SLURM_ARRAY_TASK_COUNT``,
  or ``SLURM_ARRAY_TASK_MIN`` and ``SLURM_ARRAY_TASK_MAX`` (and ``SLURM_ARRAY_TASK_STEP``);
- Kubernetes Indexed Jobs: ``JOB_COMPLETION_INDEX`` (0-based), with ``--shards N``: the count is the
  Job's ``completions``, which the pod's environment does not hold;
- a CI matrix passes ``--shard K/N`` itself.

Where none is set, ``--shard auto`` refuses to guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from opperf.sweep.shards import Shard
from opperf.utils.errors import OpperfError

SLURM = "slurm"
KUBERNETES = "kubernetes"
GITHUB_ACTIONS = "github-actions"

_IDS: dict[str, tuple[str, str]] = {
    SLURM: ("SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID"),
    KUBERNETES: ("JOB_NAME", "JOB_COMPLETION_INDEX"),
    GITHUB_ACTIONS: ("GITHUB_RUN_ID", "GITHUB_JOB"),
}
"""Per engine, the variables naming the job and the task (``JOB_NAME`` only where the manifest sets
it from the Job's name; the pod's ``HOSTNAME`` is kept too)."""


@dataclass(frozen=True)
class EngineTask:
    """The engine a process runs under, its job and task ids as the engine names them (None where
    unset), and the host (a Kubernetes pod's name)."""

    engine: str
    job_id: str | None
    task_id: str | None
    host: str | None = None

    def describe(self) -> dict[str, object]:
        return {"engine": self.engine, "job_id": self.job_id, "task_id": self.task_id, "host": self.host}


def engine_task(environ: Mapping[str, str]) -> EngineTask | None:
    """The engine task this process runs as, or None outside any engine opperf knows."""
    for engine, (job, task) in _IDS.items():
        if environ.get(task) or (engine == SLURM and environ.get("SLURM_JOB_ID")):
            job_id = environ.get(job) or (environ.get("SLURM_JOB_ID") if engine == SLURM else None)
            return EngineTask(engine, job_id, environ.get(task), environ.get("HOSTNAME"))
    return None


def shard_from_environment(environ: Mapping[str, str], shards: int | None = None) -> Shard:
    """The shard a Slurm array task or a Kubernetes Indexed Job pod runs (``--shard auto``);
    ``shards`` is the count where the engine does not give it. OpperfError naming what to set."""
    slurm, kubernetes = environ.get("SLURM_ARRAY_TASK_ID"), environ.get("JOB_COMPLETION_INDEX")
    if slurm and kubernetes:
        raise OpperfError(
            "--shard auto: both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set; pass --shard K/N"
        )
    if slurm:
        return _slurm_shard(environ, shards)
    if kubernetes:
        if shards is None:
            raise OpperfError(
                "--shard auto in a Kubernetes Indexed Job needs --shards N (the Job's completions)"
            )
        return _shard(_integer("JOB_COMPLETION_INDEX", kubernetes) + 1, shards, "JOB_COMPLETION_INDEX")
    raise OpperfError(
        "--shard auto: no engine's task index in the environment (SLURM_ARRAY_TASK_ID of a Slurm job "
        "array, JOB_COMPLETION_INDEX of a Kubernetes Indexed Job); pass --shard K/N (a CI matrix)"
    )


def _slurm_shard(environ: Mapping[str, str], shards: int | None) -> Shard:
    """Task ``SLURM_ARRAY_TASK_ID`` of an array of ``SLURM_ARRAY_TASK_COUNT`` tasks numbered from
    ``SLURM_ARRAY_TASK_MIN`` by ``SLURM_ARRAY_TASK_STEP`` (``--array=0-3``: tasks 0..3, shards 1..4)."""
    task = _integer("SLURM_ARRAY_TASK_ID", environ["SLURM_ARRAY_TASK_ID"])
    first = _integer("SLURM_ARRAY_TASK_MIN", environ.get("SLURM_ARRAY_TASK_MIN", "0"))
    step = _integer("SLURM_ARRAY_TASK_STEP", environ.get("SLURM_ARRAY_TASK_STEP", "1")) or 1
    if "SLURM_ARRAY_TASK_COUNT" in environ:
        count = _integer("SLURM_ARRAY_TASK_COUNT", environ["SLURM_ARRAY_TASK_COUNT"])
    elif "SLURM_ARRAY_TASK_MAX" in environ:
        count = (_integer("SLURM_ARRAY_TASK_MAX", environ["SLURM_ARRAY_TASK_MAX"]) - first) // step + 1
    elif shards is not None:
        count = shards
    else:
        raise OpperfError(
            "--shard auto: SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_COUNT or "
            "SLURM_ARRAY_TASK_MAX; pass --shards N"
        )
    if (task - first) % step:
        raise OpperfError(
            f"--shard auto: Slurm task {task} is not on its array's grid (from {first} by {step}); "
            "pass --shard K/N"
        )
    if shards is not None and shards != count:
        raise OpperfError(f"--shards {shards} disagrees with the Slurm array's {count} tasks; leave it out")
    return _shard((task - first) // step + 1, count, "SLURM_ARRAY_TASK_ID")


def _shard(index: int, count: int, variable: str) -> Shard:
    if not 1 <= index <= count:
        raise OpperfError(f"--shard auto: {variable} gives shard {index} of {count}, outside 1..{count}")
    return Shard(index, count)


def _integer(name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise OpperfError(f"--shard auto: {name} is {text[:40]!r}, not a whole number") from None
