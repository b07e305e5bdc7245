"""What the subcommands share: value parsers, the selection flags, and writing a report."""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from collections.abc import Callable

from opperf.sweep.costs import MeasuredCosts, read_costs
from opperf.sweep.engines import shard_from_environment
from opperf.sweep.shards import Shard
from opperf.utils.affinity import AUTO, check_setting
from opperf.utils.errors import OpperfError
from opperf.utils.files import write_atomically


def names(text: str) -> tuple[str, ...]:
    """A comma-separated list; empty items are dropped, and a list with none left is refused (an unset
    CI variable must not silently mean "everything")."""
    found = tuple(name.strip() for name in text.split(",") if name.strip())
    if not found:
        raise argparse.ArgumentTypeError(f"{text!r} names nothing; name at least one, or leave the flag out")
    return found


def on_off(text: str) -> bool:
    value = text.strip().lower()
    if value not in ("on", "off"):
        raise argparse.ArgumentTypeError(f"expected on or off, got {text!r}")
    return value == "on"


def _number(text: str, convert: type, expected: str, valid: Callable[[float], bool], bound: str) -> float:
    """``text`` converted, or the argparse error naming what was expected or the bound it broke."""
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if not valid(value):
        raise argparse.ArgumentTypeError(f"must {bound}, got {text!r}")
    return value


def fraction(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1, such as a threshold of 0.05."""
    return _number(
        text, float, "a fraction such as 0.05", lambda v: 0 < v < 1, "lie strictly between 0 and 1"
    )


NO_LIMIT = "none"
"""What ``--timeout`` takes for no time limit (an unset limit must be said, not made of nan or inf)."""


def time_limit(text: str) -> float:
    """An argparse type: a positive, finite number of seconds, or ``none`` (no limit: infinity)."""
    if text.strip().lower() == NO_LIMIT:
        return math.inf
    valid = lambda v: v > 0 and math.isfinite(v)  # noqa: E731
    return _number(
        text, float, f"a number of seconds or {NO_LIMIT}", valid,
        f"be a positive, finite number of seconds (or {NO_LIMIT}: no time limit)",
    )  # fmt: skip


def whole(minimum: int, what: str) -> Callable[[str], int]:
    """An argparse type: a whole number of ``what`` of at least ``minimum``."""
    return lambda text: int(
        _number(text, int, f"a whole number of {what}", lambda v: v >= minimum, f"be at least {minimum}")
    )


def add_selection(parser: argparse.ArgumentParser) -> None:
    """``--ops`` and ``--categories``, as every subcommand that chooses operators takes them."""
    parser.add_argument(
        "--ops", default=(), type=names, help="comma-separated operators, e.g. add,Convolution"
    )
    parser.add_argument(
        "--categories", default=(), type=names, help="comma-separated categories, e.g. unary,pooling"
    )


def _affinity(text: str) -> str:
    try:
        return check_setting(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """``--quiet``, as every subcommand that shows progress on a terminal takes it."""
    parser.add_argument(
        "--quiet", action="store_true", help="no progress line (there is none off a terminal)"
    )


def add_affinity(parser: argparse.ArgumentParser, whose: str = "each worker", more: str = "") -> None:
    """``--affinity``, as a sweep and an A/B job take it: the CPUs for ``whose``."""
    parser.add_argument(
        "--affinity",
        default=AUTO,
        type=_affinity,
        metavar="{auto,none,CPUS}",
        help=f"CPUs for {whose}: auto pins a worker to one CPU per intra-op thread (the last ones), "
        "which makes medians repeatable across processes; none leaves it to the scheduler; or a list "
        f"such as 1 or 0,2-3{more} (default: auto)",
    )


def add_timeout(parser: argparse.ArgumentParser, what: str, default: float) -> None:
    """``--timeout``, as a sweep, an A/B job and a comparison take it: the seconds ``what`` may take
    before its worker is killed and it is recorded as a timeout."""
    parser.add_argument(
        "--timeout",
        default=default,
        type=time_limit,
        metavar=f"SECONDS|{NO_LIMIT}",
        help=f"seconds {what} may take before its worker is killed and it is recorded as a timeout; "
        f"{NO_LIMIT}: no limit (default: {default:g})",
    )


def add_isolation(parser: argparse.ArgumentParser, what: str) -> None:
    """``--no-isolation``, as a sweep and a comparison take it."""
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help=f"run {what} in this process: faster to start, but a crash or running out of memory ends "
        "the run and a hang blocks it",
    )


SHOW_TAGS = ()
"""``--tags`` given without names (``opperf list --tags``): show the tags instead of selecting by them."""


def add_tag_selection(parser: argparse.ArgumentParser, listing: bool = False) -> None:
    """``--tags`` and ``--tags-all``: long-tail operators by their DLOP-Bench tags. With ``listing``,
    ``--tags`` without names asks for the tags themselves (``SHOW_TAGS``)."""
    parser.add_argument(
        "--tags",
        default=None,
        type=names,
        metavar="TAGS",
        nargs="?" if listing else None,
        const=SHOW_TAGS if listing else None,
        help="comma-separated DLOP-Bench tags: the long-tail operators carrying any of them, e.g. "
        "ForLoop,InputAware"
        + ("; without names, list the tags with their counts and members" if listing else ""),
    )
    parser.add_argument(
        "--tags-all",
        action="store_true",
        help="with --tags: only the operators carrying every one of the tags",
    )


def selected_tags(arguments: argparse.Namespace) -> tuple[str, ...]:
    """The tags to select by (none when --tags is absent or lists tags); --tags-all needs --tags."""
    tags = arguments.tags or ()
    if arguments.tags_all and not tags:
        raise OpperfError(
            "--tags-all narrows --tags; name the tags, e.g. --tags ForLoop,InputAware --tags-all"
        )
    return tags


JOURNAL_SUFFIX = ".journal.jsonl"
"""What a sweep's journal adds to its report's name (``opperf.sweep.checkpoint``)."""


def check_outputs(*outputs: tuple[str, str | None, str]) -> None:
    """Refuse, before anything runs, outputs (each its flag, its path or None, an example name) that
    could not be written (``check_writable``), whose extension names a format other than the
    example's that no report is written in (JSON into ``diff.html``), or that two flags name alike:
    the second written would replace the first."""
    named: dict[str, str] = {}
    for flag, path, example in outputs:
        if path == "":
            raise OpperfError(f"{flag} '' names no file; name one, e.g. {example}, or leave the flag out")
        if path is None:
            continue
        extension = os.path.splitext(path)[1].lower()
        if extension in FOREIGN_EXTENSIONS and extension != os.path.splitext(example)[1]:
            raise OpperfError(
                f"{flag} {path!r} names {FOREIGN_EXTENSIONS[extension]} file, but what it writes is no such "
                f"file: name it as its format is, e.g. {example}"
            )
        check_writable(path, flag, example)
        same = named.setdefault(os.path.realpath(path), flag)
        if same != flag:
            raise OpperfError(f"{same} and {flag} name the same file {path!r}; choose a file for each")


def check_apart_from_journal(journal: str, *outputs: tuple[str, str | None]) -> None:
    """Refuse outputs (each its flag and path or None) that name the journal of ``--output-file`` or
    its lock: the journal is removed once the report is written, and what was written there with it."""
    kept = {
        os.path.realpath(journal): "the journal",
        os.path.realpath(f"{journal}.lock"): "the journal's lock",
    }
    for flag, path in outputs:
        if path and os.path.realpath(path) in kept:
            raise OpperfError(
                f"{flag} {path!r} names {kept[os.path.realpath(path)]} of --output-file, which the sweep "
                f"removes when it ends; choose another file"
            )


def check_writable(path: str, flag: str = "--output-file", example: str = "results.json") -> None:
    """Refuse, before anything runs, an output file that could not be written: a folder, a device or
    pipe (renaming the report into place would replace it), a folder that does not exist or cannot
    be written in, a file that cannot be replaced, or a name too long for the journal beside it.
    ``flag`` is the option that named the file (the fix the message suggests), ``example`` a file
    name for it."""
    if path.endswith(os.sep) or os.path.isdir(path):
        raise OpperfError(
            f"output {path!r} is a folder; name a file in it, e.g. {os.path.join(path, example)}"
        )
    if os.path.exists(path) and not os.path.isfile(path):
        raise OpperfError(
            f"output {path!r} is no regular file (a device, pipe or socket): a report is written by "
            f"renaming a finished file into place, which would replace it; choose a file for {flag}"
        )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise OpperfError(f"output folder {folder!r} does not exist; create it or choose another {flag}")
    longest = os.pathconf(folder, "PC_NAME_MAX")
    if len(os.path.basename(path)) + len(JOURNAL_SUFFIX) > longest:
        raise OpperfError(
            f"output name {os.path.basename(path)!r} is too long for its journal beside it "
            f"({longest} characters at most, {len(JOURNAL_SUFFIX)} of them the journal's suffix); shorten it"
        )
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
        if os.path.exists(path):
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
    except OSError as error:
        raise OpperfError(f"cannot write {path!r} ({error.strerror}); choose another {flag}") from None


def write_or_print(text: str, path: str | None) -> None:
    """``text`` into ``path`` (atomically), or on standard output when there is none."""
    if path:
        write_atomically(path, text)
    else:
        print(text, end="" if text.endswith("\n") else "\n")


EXTENSIONS = {".json": "json", ".md": "md", ".markdown": "md", ".csv": "csv", ".xlsx": "xlsx"}
"""Report formats by file extension."""
FOREIGN_EXTENSIONS = {
    ".html": "an HTML", ".htm": "an HTML", ".pdf": "a PDF", ".png": "a PNG", ".svg": "an SVG",
    ".xls": "an old Excel", ".xml": "an XML", ".yaml": "a YAML", ".yml": "a YAML",
}  # fmt: skip
"""Extensions of formats no subcommand writes a report in: Markdown written into ``report.html``
would be taken for a page by a browser or a CI artifact viewer."""
WRITTEN_AS = {"hud": "json"}
"""Formats that are written in another format's syntax, and so take its extension."""


def report_format(requested: str | None, output_file: str | None, default: str) -> str:
    """The format asked for, else the one ``output_file``'s extension names, else ``default``; a
    format that contradicts the extension, or an extension of a format no report is written in
    (``FOREIGN_EXTENSIONS``), is refused."""
    extension = os.path.splitext(output_file or "")[1].lower()
    if extension in FOREIGN_EXTENSIONS:
        html = extension in (".html", ".htm")
        written = WRITTEN_AS.get(requested or default, requested or default)
        raise OpperfError(
            f"--output-file {output_file!r} names {FOREIGN_EXTENSIONS[extension]} file, which this command "
            f"does not write: give it its format's extension (.{written})"
            + ("; an HTML report of results is `opperf report RESULTS.json --html PAGE.html`" if html else "")
        )
    implied = EXTENSIONS.get(extension)
    if requested and implied and WRITTEN_AS.get(requested, requested) != implied:
        raise OpperfError(
            f"--output-format {requested} contradicts --output-file {output_file!r} ({implied}); "
            f"drop one of them or give the file a .{requested} extension"
        )
    return requested or implied or default


AUTO_SHARD = "auto"


def _shard_setting(text: str) -> Shard | str:
    if text.strip().lower() == AUTO_SHARD:
        return AUTO_SHARD
    try:
        return Shard.parse(text)
    except OpperfError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_costs(parser: argparse.ArgumentParser) -> None:
    """``--costs``, as a sharded sweep and ``plan`` take it."""
    parser.add_argument(
        "--costs",
        metavar="PREVIOUS.json",
        help="balance the shards by what each operator cost the previous sweep that wrote this results "
        "file (default: by counting their input configurations)",
    )


def add_sharding(parser: argparse.ArgumentParser) -> None:
    """``--shard K/N|auto``, ``--shards N`` and ``--costs``, as a sweep takes them."""
    parser.add_argument(
        "--shard",
        default=None,
        type=_shard_setting,
        metavar="K/N|auto",
        help="run shard K of N: a deterministic partition of the selection balanced by expected cost "
        "(put the shards' files back together with `opperf merge`); auto reads K and N from a Slurm job "
        "array's or a Kubernetes Indexed Job's environment, and refuses to guess without one",
    )
    parser.add_argument(
        "--shards",
        type=whole(1, "shards"),
        help="N for --shard auto where the engine does not give it (a Kubernetes Indexed Job's completions)",
    )
    add_costs(parser)


def sharding(arguments: argparse.Namespace, framework: str) -> tuple[Shard | None, MeasuredCosts | None]:
    """The shard a sweep runs (``--shard auto`` resolved from the engine's environment) and the
    costs that balance it; OpperfError for flags that do not go together."""
    shard = arguments.shard
    if shard == AUTO_SHARD:
        shard = shard_from_environment(os.environ, arguments.shards)
    elif arguments.shards is not None:
        raise OpperfError(
            "--shards N goes with --shard auto (a Kubernetes Indexed Job); with K/N, leave it out"
        )
    if arguments.costs and shard is None:
        raise OpperfError("--costs balances the shards of a split; add --shard K/N or --shard auto")
    return shard, read_costs(arguments.costs, framework) if arguments.costs else None
