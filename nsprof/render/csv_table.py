"""Every CSV nsprof writes, made safe to open in a spreadsheet.

A cell that begins with =, +, -, @, a tab or a carriage return is a formula to Excel, LibreOffice
and Google Sheets; kernel and range names come from the profiled program, so such a name could run
in the reader's spreadsheet. As OWASP's CSV-injection guidance says, such text cells get a leading
single quote (shown as text, not evaluated). Numbers are left alone: -3.5 stays a number.
"""

from __future__ import annotations

import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """A text value a spreadsheet would take for a formula, quoted; anything else as it is."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def csv_bytes(frame: pd.DataFrame, float_format: str = "%.6g") -> bytes:
    """`frame` as CSV (no index), its text cells made safe (module docstring)."""
    text_columns = [column for column in frame.columns if not pd.api.types.is_numeric_dtype(frame[column])]
    safe = frame.assign(**{str(column): frame[column].map(safe_cell) for column in text_columns})
    return safe.to_csv(index=False, float_format=float_format).encode()
