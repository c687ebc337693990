"""Names as nsprof shows them: control characters spelled out.

Kernel, NVTX, GPU and program names come from files anyone can write. An escape sequence in one
would recolour or clear the terminal, a newline would break a table row or a one-line error into
many, and a bidirectional override would show text in an order it does not have. The readers
(nsys, ncu, nsprof's own JSON) pass every name through here once, so tables, errors, report.md,
plots and --json all show the same name: `evil\\x1b[31m` rather than red text.
"""

from __future__ import annotations

import json
import re

# C0 and C1 controls, DEL, and the marks and overrides that reorder text (U+200E/F, U+202A-E,
# U+2066-9).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SPELLED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}

# A JSON string spells such a character as an escape (\n, \u001b); an escaped backslash is
# matched too, so that the `n` of `\\n` is not read as one.
_JSON_ESCAPE = re.compile(r"\\(?:\\|[bfnrt]|u(?:00[01][0-9a-fA-F]|007[fF]|00[89][0-9a-fA-F]|200[eEfF]"
                          r"|202[a-eA-E]|206[6-9]))")


def _spelling(match: re.Match) -> str:
    char = match.group()
    return _SPELLED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def printable(text: str) -> str:
    """`text` with each control character written as its escape (`\\n`, `\\x1b`, `\\u202e`)."""
    return _UNPRINTABLE.sub(_spelling, text)


def printable_json(text: str) -> str:
    """JSON text whose strings, once loaded, are printable: each escape of a control character is
    replaced by the escape of its spelling (`\\u001b` -> `\\\\x1b`); everything else is unchanged."""
    return _JSON_ESCAPE.sub(lambda m: json.dumps(printable(json.loads(f'"{m.group()}"')))[1:-1], text)
