"""The one guarded way nsprof reads a JSON document it did not just write (a manifest, a bench or
pipeline record, the host's ceilings, a noise record, Triton's kernel metadata): a regular file
only (a FIFO would be read forever, /dev/zero never ends), at most a size cap, nesting within what
the parser can hold, every number finite, control characters spelled out, and a JSON object at the
top. Each failure is one ParseError naming the file, the document it should be and the fix."""

from __future__ import annotations

import json
import math
from pathlib import Path

from nsprof.errors import ParseError
from nsprof.paths import special_file_reason
from nsprof.printable import printable_json

MAX_DOCUMENT_BYTES = 64 * 2**20  # the manifests and records nsprof writes are kilobytes: a larger one is no such file
JSON_TYPES: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}  # in words, as errors name them


class UnreadableDocument(ParseError):
    """A regular file of a sane size whose text is no JSON object (a reader that takes that for "not
    such a document" catches it, and no other failure)."""


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite number")
    return value


def _finite_or_none(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number")


def read_json_object(path: Path, what: str, fix: str, max_bytes: int = MAX_DOCUMENT_BYTES,
                     nonfinite_as_null: bool = False) -> dict:
    """The JSON object at `path`, read as the module docstring says; ParseError otherwise. With
    `nonfinite_as_null`, NaN and the infinities are read as null instead (a manifest's informational
    numbers: a damaged ceiling is then ignored, and the capture still read)."""
    path = Path(path)
    if special := special_file_reason(path):
        raise ParseError(f"{path}: {special}; a {what} is a JSON file", fix)
    size = path.stat().st_size
    if size > max_bytes:  # read whole, a 1 GiB file took 2 GB
        raise ParseError(f"{path}: a {what} of {size / 2**20:,.0f} MiB, larger than any nsprof writes "
                         f"({max_bytes / 2**20:,.0f} MiB at most)", fix)
    try:
        lenient = {"parse_float": _finite_or_none, "parse_constant": lambda name: None}
        strict = {"parse_float": _finite, "parse_constant": _no_constant}
        document = json.loads(printable_json(path.read_text(encoding="utf-8")),
                              **(lenient if nonfinite_as_null else strict))
    except RecursionError:
        raise UnreadableDocument(f"{path}: unreadable {what} (nested too deeply to read)", fix) from None
    except (OSError, UnicodeDecodeError, ValueError) as err:  # json.JSONDecodeError is a ValueError
        raise UnreadableDocument(f"{path}: unreadable {what} ({err})", fix) from None
    if not isinstance(document, dict):
        raise UnreadableDocument(f"{path}: the {what} is {json_type(document)}, not a JSON object", fix)
    return document


def json_type(value) -> str:
    """A JSON value's type in words: 'null', 'a boolean', 'a number', 'a string', 'a list', 'an object'."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return JSON_TYPES.get(type(value), type(value).__name__)
