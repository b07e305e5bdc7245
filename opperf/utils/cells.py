"""Text that a spreadsheet shows as text and never evaluates.

Operator names, inputs and reasons in a report come from result files, and result files come from
elsewhere. A spreadsheet reads a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab, a carriage
return, or their full-width forms) as a formula: ``=HYPERLINK(...)`` in an operator's name would be a
live link, and worse formulas run commands. As OWASP's CSV-injection guidance says, a CSV text cell
that starts so gets a leading apostrophe (``'=x``, shown as ``=x``); an xlsx cell holds text as text
and is marked quote-prefixed, so editing it does not turn it into a formula either. Numbers are never
touched: ``-1.5`` stays a number.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
"""What makes a spreadsheet read a cell as a formula: these characters first."""


def reads_as_formula(value: object) -> bool:
    """Whether ``value`` is text a spreadsheet would read as a formula."""
    return isinstance(value, str) and value.startswith(FORMULA_STARTS)


def inert_csv_cell(value: object) -> object:
    """``value`` as a CSV cell: text that would read as a formula with a leading apostrophe; anything
    else (numbers, booleans, None, other text) as it is."""
    return f"'{value}" if reads_as_formula(value) else value
