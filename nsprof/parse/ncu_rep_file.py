"""Check an `.ncu-rep` file's container before NVIDIA's reader sees it.

The reader (ncu-report) gives no error for a damaged file: a truncated or bit-flipped report loads
as launches without a name or a metric, or as no launch at all. So nsprof walks the container
itself, as ncu 2025.x writes it (seen on every report in tests/data and profiles/examples):

    "NVR\\0" | u32 n | FileHeader (n bytes) | blocks...
    block:   u32 n | BlockHeader (n bytes, protobuf) | payload (BlockHeader field 5 bytes)

BlockHeader field 2 is how many profile results (kernel launches) the block holds, so the walk
also says how many launches the reader should find. No ncu-report import: the check works, and
names the damage, where the reader is not installed.
"""

from __future__ import annotations

import struct
from pathlib import Path

from nsprof.errors import ParseError

MAGIC = b"NVR\0"
_PAYLOAD_SIZE = 5  # BlockHeader fields
_RESULT_COUNT = 2
REWRITE_HINT = "Capture it again with ncu -o (or copy it again: an interrupted ncu or copy leaves such a file)"


def declared_launches(path: Path) -> int:
    """How many kernel launches the report's blocks declare. Raises ParseError for an empty file,
    one that is not an Nsight Compute report, or one cut short. Reads only the headers: a report of
    gigabytes is checked in a few seeks."""
    size = path.stat().st_size
    if size == 0:
        raise ParseError(f"{path}: empty file, not an Nsight Compute report", REWRITE_HINT)
    with path.open("rb") as file:
        if file.read(len(MAGIC)) != MAGIC:
            raise ParseError(f"{path}: not an Nsight Compute report (it does not start with ncu's NVR signature)",
                             "Pass a report written by ncu -o, or ncu's CSV output")
        _record(file, size, path)  # the file header
        if file.tell() == size:  # ncu writes its session block first, launches or none
            raise ParseError(f"{path}: truncated: it ends after ncu's file header, before any block", REWRITE_HINT)
        launches = 0
        while file.tell() < size:
            header = _varint_fields(_record(file, size, path), path)
            end = file.tell() + header.get(_PAYLOAD_SIZE, 0)
            if end > size:
                raise ParseError(f"{path}: truncated: it ends at byte {size:,}, inside a block that runs "
                                 f"to byte {end:,}", REWRITE_HINT)
            file.seek(end)
            launches += header.get(_RESULT_COUNT, 0)
    return launches


def _record(file, size: int, path: Path) -> bytes:
    """The length-prefixed record at the file's position."""
    prefix = file.read(4)
    if len(prefix) < 4:
        raise ParseError(f"{path}: truncated: it ends at byte {size:,}, inside a block's length", REWRITE_HINT)
    (length,) = struct.unpack("<I", prefix)
    if file.tell() + length > size:
        raise ParseError(f"{path}: truncated: it ends at byte {size:,}, inside a block header that runs "
                         f"to byte {file.tell() + length:,}", REWRITE_HINT)
    return file.read(length)


def _varint_fields(message: bytes, path: Path) -> dict[int, int]:
    """A protobuf message's integer (varint) fields by number; other wire types are skipped."""
    fields, i = {}, 0
    try:
        while i < len(message):
            key, i = _varint(message, i)
            number, wire = key >> 3, key & 7
            if wire == 0:
                fields[number], i = _varint(message, i)
            elif wire == 2:
                size, i = _varint(message, i)
                i += size
            elif wire in (1, 5):
                i += 8 if wire == 1 else 4
            else:
                raise ValueError(f"wire type {wire}")
        if i != len(message):
            raise ValueError("a field runs past the header")
    except (IndexError, ValueError) as err:
        raise ParseError(f"{path}: damaged: a block header does not parse ({err})", REWRITE_HINT) from None
    return fields


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i
