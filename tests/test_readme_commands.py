"""Every shell command block of the README and of the documents beside it (``docs/``) runs, so
their commands cannot rot.

Each command goes through ``opperf.cli.main`` as the shell would split it, in one folder, in the
order ``DOCUMENTS`` reads them (later commands read the files earlier ones wrote). Commands that
would sweep a whole registry or run for minutes get a small selection and budget (``BOUNDED``: each
substitution says why); files a command reads that no documented command writes are made first by
one small sweep (``INPUTS``); a command that needs hardware or a tool this machine lacks is skipped
with the reason.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest
from documents import another_run

from opperf.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = (
    ROOT / "README.md",
    *(
        ROOT / "docs" / name
        for name in (
            "command-line.md", "python-api.md", "measurement.md", "gpu.md", "sweeps.md",
            "diff-and-ab.md", "reports.md", "results-format.md", "capture.md", "stages-and-patterns.md",
            "input-data.md", "scale-out.md", "figures.md", "contributing.md", "command-reference.md",
            "frameworks.md",
        )
    ),
)  # fmt: skip
"""The README, then the documents in the order the README's sections had them (the commands of the
diff document read files the sweeps before it wrote)."""
FAST = ["--budget", "0.02", "--threads", "1"]
"""What bounds a measuring command: a short budget per configuration, one thread."""

BOUNDED: tuple[tuple[str, str, str], ...] = (
    (r"--categories \S+", "--ops exp", "a category sweep takes minutes; one operator shows the flags work"),
    (r"--warmup 25 --runs 100", "--warmup 1 --runs 2", "fixed counts of upstream size take minutes"),
    (r"--ops Convolution,exp", "--ops exp", "Convolution's A/B rounds take tens of seconds"),
    (r"--ops Convolution,FullyConnected", "--ops exp", "one operator is enough"),
    (r"--input-shape 1,3,224,224", "--input-shape 1,3,16,16", "a small image keeps the capture quick"),
    (r"--configs (\S+)", r"--configs \1 --configs-sample 2", "replaying every layer takes minutes"),
    (r" \[[^]]*\]", "", "[optional arguments] in the README's notation"),
    (r"--base-python \S+ --new-python \S+", f"--base-python {sys.executable} --new-python {sys.executable}",
     "one interpreter on both sides: an A/A job"),
)  # fmt: skip
"""(pattern, replacement, why) applied to every command."""

SKIPPED = {
    "make ": "make builds a virtual environment first (minutes); its recipes run the commands tested here",
    "--ctx 'gpu(0)'": "needs a GPU",
}
SHARDED = ["--ops", "exp,log,sqrt,abs"]
"""The selection ``--shard`` cuts: four operators, so each of four shards has one."""

EXTRA: dict[str, list[str]] = {
    "sweep": [*FAST, "--no-isolation"],  # workers are tested elsewhere; starting one per command doubled this
    "compare": [*FAST, "--rounds", "2"],  # two rounds show the verdicts; up to ten take a minute
    "ab": [*FAST, "--rounds", "1"],  # one round shows the job works; three triple it
    "model": ["--input-shape", "1,3,16,16", "--passes", "2"],
}
"""What each measuring subcommand gets added, to keep it to seconds."""

INPUTS = (
    "base.json", "new1.json", "new2.json", "new.json", "main.json", "pr.json",
    "main1.json", "main2.json", "main3.json", "pr1.json", "pr2.json", "pr3.json",
    "results/mxnet_cpu.json", "previous.json",
)  # fmt: skip
"""Result files README commands read that no README command writes (besides the other shards)."""


def readme_commands() -> list[str]:
    """The command lines of every shell block (fenced ``sh`` or plain, every line a command), comments
    dropped."""
    commands = []
    text = "\n".join(document.read_text() for document in DOCUMENTS)
    for language, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
        lines = [line.split("  #")[0].strip() for line in body.splitlines() if line.strip()]
        if (
            language in ("sh", "")
            and lines
            and all(re.match(r"(python opperf\.py|opperf |make )", x) for x in lines)
        ):
            commands += lines
    return commands


def bounded(command: str) -> list[str]:
    """The command's arguments for ``main``, made small where it would run long."""
    for pattern, replacement, _ in BOUNDED:
        if not (command.startswith("python opperf.py list") and pattern.startswith("--categories")):
            command = re.sub(pattern, replacement, command)
    words = shlex.split(command)
    words = words[2:] if words[0] == "python" else words[1:]
    subcommand = words[0] if words and not words[0].startswith("-") else "sweep"
    if "--version" in words:
        return words
    if "--shard" in words:
        words += SHARDED
    elif subcommand in ("sweep", "compare", "ab") and not {"--ops", "--configs"} & set(words):
        words += ["--ops", "exp"]  # the whole registry, or every default operator, takes minutes
    extra = EXTRA.get(subcommand, [])
    if "jax" in words:
        # JAX takes its thread count once a process, and an earlier test may have started it in this
        # one: its commands run in workers, at the framework's own thread count.
        extra = [word for word in extra if word != "--no-isolation"]
        if "--threads" in extra:
            at = extra.index("--threads")
            extra = extra[:at] + extra[at + 2 :]
    return words + extra


def _make_inputs(folder: Path) -> None:
    """The files README commands read but none writes: a small sweep's results under each name, and
    the shards besides the one the README runs."""
    source = folder / "input.json"
    in_process = ["--no-isolation", *FAST]  # no worker to start: these only make files to read
    assert main(["--ops", "exp", *in_process, "--output-file", str(source)]) == 0
    document = json.loads(source.read_text())
    for hour, name in enumerate(INPUTS):  # separate runs: diff refuses one run counted twice
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text(json.dumps(another_run(document, hour)))
    for shard in (1, 3, 4):
        output = f"part{shard}.json"
        assert main(["--shard", f"{shard}/4", *SHARDED, *in_process, "--output-file", output]) == 0


def test_the_readme_has_command_blocks():
    commands = readme_commands()
    assert len(commands) >= 20 and any("--ops add" in c or ",add" in c for c in commands)


@pytest.mark.slow
def test_every_readme_command_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _make_inputs(tmp_path)
    ran, skipped = [], []
    for command in readme_commands():
        reason = next((why for marker, why in SKIPPED.items() if marker in command), None)
        if reason:
            skipped.append(f"{command}: {reason}")
            continue
        words = bounded(command)
        try:
            status = main(words)
        except SystemExit as stop:  # --version, as argparse ends it
            status = stop.code
        err = capsys.readouterr().err
        assert status in (0, 1), f"{command} -> {shlex.join(words)}: exit {status}\n{err}"
        assert "Traceback" not in err and "error:" not in err, f"{command}:\n{err}"
        ran.append(command)
    print(f"{len(ran)} README commands ran; skipped: {skipped}")
    assert len(ran) >= 20
    for written in ("results.md", "conv.md", "torch.md", "compare.md", "ab.json", "all.json", "report.html"):
        assert (tmp_path / written).stat().st_size > 0, written


def test_every_document_is_read():
    """No document beside the README escapes the commands' test."""
    assert set(DOCUMENTS[1:]) == set((ROOT / "docs").glob("*.md"))
