"""The NVTX columns of ncu CSV -> the list of ranges that enclosed a kernel launch.

ncu (with `--nvtx`) writes the NVTX state of each launch into two columns:

- `thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg`: the launching
  thread's id, then one quoted entry per open push/pop range, outermost first:
  `545  "<default domain>:ladder:none:none:RGB:0xff:REGISTERED:ladder"  "hold:conflict:...:conflict"`
- `Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg`: open start/end ranges,
  each entry led by its range id (`0:<default domain>:name:...`).

Each entry is `domain:range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg`. A range name may itself
hold ':'; the six trailing fields (the message repeats the name unless its type is none) tell
where the name ends. Ranges come out as nsprof names them: `name` in the default domain,
`domain:name` elsewhere. A domain name holding ':' is not supported.
"""

from __future__ import annotations

import re

from nsprof.ranges import qualify

PUSH_POP_COLUMN = "thread Domain:Push/Pop_Range"  # header prefixes
START_END_COLUMN = "Id:Domain:Start/Stop_Range"
DEFAULT_DOMAIN = "<default domain>"
TRAILING_FIELDS = 6  # PL_Type, PL_Value, CLR_Type, Color, Msg_Type, Msg

_QUOTED = re.compile(r'"([^"]*)"')
_THREAD_ID = re.compile(r"^\d+(\s+|$)")
_RANGE_ID = re.compile(r"^\d+:")


def push_pop_ranges(cell: str) -> list[str]:
    """Ranges of a push/pop column cell, outermost first."""
    return [qualified_range(entry) for entry in _entries(cell, _THREAD_ID)]


def start_end_ranges(cell: str) -> list[str]:
    """Ranges of a start/end column cell, in the order ncu lists them."""
    return [qualified_range(_RANGE_ID.sub("", entry, count=1)) for entry in _entries(cell, None)]


def _entries(cell: str, cell_prefix: re.Pattern | None) -> list[str]:
    cell = cell.strip()
    quoted = _QUOTED.findall(cell)
    if quoted:
        return [entry for entry in quoted if entry]
    if cell_prefix is not None:
        cell = cell_prefix.sub("", cell, count=1)
    return [cell] if cell else []


def qualified_range(entry: str) -> str:
    """'<default domain>:ladder:none:none:RGB:0xff:REGISTERED:ladder' -> 'ladder';
    'hold:conflict:none:none:none:none:none:none' -> 'hold:conflict'."""
    domain, _, rest = entry.partition(":")
    if not rest:  # a bare name
        return domain
    name = _range_name(rest.split(":"))
    return qualify(None if domain == DEFAULT_DOMAIN else domain, name)


def _range_name(fields: list[str]) -> str:
    if len(fields) <= TRAILING_FIELDS:  # shortened entry: the name comes first
        return fields[0]
    message_type, message = fields[-2], fields[-1]
    if message_type == "none" and message == "none":
        return ":".join(fields[:-TRAILING_FIELDS])
    # The message repeats the name: fields = name (k parts) + 5 fixed fields + message (k parts).
    k, odd = divmod(len(fields) - (TRAILING_FIELDS - 1), 2)
    if not odd and k > 0 and fields[:k] == fields[-k:]:
        return ":".join(fields[:k])
    return ":".join(fields[:-TRAILING_FIELDS])
