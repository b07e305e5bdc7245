"""The documents that are generated from the code are what the code says."""

from __future__ import annotations

from pathlib import Path

from opperf.cli import SUBCOMMANDS
from opperf.cli.reference import reference

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_the_command_reference_is_what_the_parsers_say():
    """docs/command-reference.md is generated from the parsers; a flag added, removed or reworded
    without regenerating it fails here, naming the command that regenerates it."""
    committed = (DOCS / "command-reference.md").read_text()
    assert (
        committed == reference()
    ), "docs/command-reference.md is stale: run `python -m opperf.cli.reference > docs/command-reference.md`"


def test_the_command_reference_covers_every_subcommand_and_flag():
    text = reference()
    assert all(f"\n## {name}\n" in text for name in SUBCOMMANDS)
    for flag in ("--framework", "--ctx", "--cache", "--allow-different-machines", "--new-env", "--db"):
        assert f"`{flag}" in text, flag
    assert "### history detect" in text and "| argument | meaning |" in text


def test_the_results_format_holds_every_field_of_a_record_as_the_schema_says():
    """docs/results-format.md's field table is generated from the schema's ``MEANINGS``: every field
    a reader checks has a meaning, and the document shows them as the schema says."""
    from opperf.results.schema import MEANINGS, OPTIONAL, REQUIRED, field_table

    assert set(MEANINGS) == {*REQUIRED, *OPTIONAL}
    assert (
        field_table() in (DOCS / "results-format.md").read_text()
    ), "docs/results-format.md's field table is stale: paste opperf.results.schema.field_table()"
