"""The command reference, generated from the parsers themselves: every subcommand with its usage and
each flag's help and default, as Markdown (``docs/command-reference.md``).

    python -m opperf.cli.reference > docs/command-reference.md

A hand-written flag table drifts from the code it describes; this one cannot, and
``tests/test_docs.py`` fails, naming the command above, when the committed file is not what the
parsers say.
"""

from __future__ import annotations

import argparse
import sys

from opperf.cli import SUBCOMMANDS, build_parser

WIDTH = 100
"""Usage lines are wrapped here, whatever the terminal that generated the file."""

HEADER = """# Command reference

Generated from opperf's parsers by `python -m opperf.cli.reference > docs/command-reference.md`;
`tests/test_docs.py` checks that it is current. What each option means in depth: the documents
in this folder ([command-line.md](command-line.md) for a sweep's flags and the categories).
"""


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """A parser's subcommands by name (none where it has none)."""
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def _value(action: argparse.Action) -> str:
    if action.metavar is not None:
        return str(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{_value(action)}`"
    value = "" if action.nargs == 0 else f" {_value(action)}"
    return ", ".join(f"`{flag}{value}`" for flag in action.option_strings)


def _default(action: argparse.Action) -> str:
    """`` (default: X)`` for an option whose help does not state its default already (the help's
    own words cover defaults that depend on the machine, such as this interpreter)."""
    stated = "default" in (action.help or "")
    if (
        stated
        or action.nargs == 0
        or action.default in (None, argparse.SUPPRESS, (), [], "")
        or action.required
    ):
        return ""
    shown = ",".join(map(str, action.default)) if isinstance(action.default, tuple | list) else action.default
    return f" (default: `{shown}`)"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def section(name: str, parser: argparse.ArgumentParser, summary: str) -> str:
    """One subcommand: what it does, its usage, then a table of its arguments with help and default;
    then its own subcommands (``history add``), each a section."""
    formatter = argparse.HelpFormatter(parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    rows = [
        f"| {_cell(_flags(action))} | {_cell(formatter._expand_help(action))}{_default(action)} |"
        for action in parser._actions
        if action.help and action.help != argparse.SUPPRESS and not isinstance(action, argparse._HelpAction)
    ]
    table = ["| argument | meaning |", "| --- | --- |", *rows, ""] if rows else []
    level = "#" * (name.count(" ") + 2)
    lines = [f"{level} {name}", "", _cell(summary), "", "```", formatter.format_help().strip(), "```", ""]
    nested = [
        section(f"{name} {child}", subparser, _summary(parser, child))
        for child, subparser in _subparsers(parser).items()
    ]
    return "\n".join([*lines, *table, *nested])


def _summary(parser: argparse.ArgumentParser, name: str) -> str:
    """The one-line help ``parser`` lists its subcommand ``name`` with."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return next((choice.help or "" for choice in action._choices_actions if choice.dest == name), "")


def reference() -> str:
    """The whole reference: every subcommand in the order ``opperf --help`` lists them."""
    parser = build_parser()
    parsers = _subparsers(parser)
    return "\n".join(
        [HEADER, *(section(name, parsers[name], _summary(parser, name)) for name in SUBCOMMANDS)]
    )


if __name__ == "__main__":
    sys.stdout.write(reference())
