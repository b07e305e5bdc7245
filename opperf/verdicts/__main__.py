"""``python -m opperf.verdicts BASE NEW``: the diff subcommand on its own, until the main CLI mounts
it; errors print as ``error: ...`` with exit status 2, as the main CLI does."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from opperf.errors import OpperfError
from opperf.verdicts.cli import add_arguments, run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="opperf diff", description=__doc__)
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except OpperfError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
