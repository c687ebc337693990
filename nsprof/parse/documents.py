"""nsprof's own JSON documents in a profile directory: manifest.json, pipeline.json, the bench
records of the workload and of the CPU stages, and the host's ceilings.

They are read once, here, and their shape checked where the rest of nsprof relies on it, so that a
hand-edited or damaged document is one ParseError naming the file and the field, not an
AttributeError or KeyError in whichever command meets it first.
"""

from __future__ import annotations

import json
from pathlib import Path

from nsprof.errors import ParseError
from nsprof.parse.model import CpuRung
from nsprof.printable import printable_json

# The manifest's fields that commands read, with the JSON type each must have where present.
MANIFEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "op": str, "started": str, "status": str, "stages": list, "sizes": list, "device": (dict, str),
    "software": dict, "tools": dict, "verification": list, "ceilings": dict}
MANIFEST_MAPS: dict[str, type] = {"tools": dict, "verification": dict}  # what each entry of these holds
VERIFICATION_NUMBERS = ("rel_error", "tolerance")  # a number or null in each verification entry
# What a pipeline.json record must hold (nsprof.ranges.pipeline_range names its flows by them).
PIPELINE_RECORD_FIELDS = ("op", "stage", "size", "variant")
RECAPTURE = "Restore the file, or capture the profile again with `nsprof profile` / `nsprof pipeline`"
_JSON_TYPES: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}


def read_manifest(path: Path) -> dict | None:
    """manifest.json as a dict, its fields checked (MANIFEST_FIELDS); None where there is none."""
    manifest = _read_object(path, "manifest")
    if manifest is None:
        return None
    for field, kind in MANIFEST_FIELDS.items():
        value = manifest.get(field)
        if value is not None and not isinstance(value, kind):
            raise ParseError(f"{path}: \"{field}\" is {_json_type(value)}, not {_kinds(kind)}", RECAPTURE)
    for field, kind in MANIFEST_MAPS.items():
        entries = manifest.get(field) or {}
        for key, entry in (entries.items() if isinstance(entries, dict) else enumerate(entries)):
            if not isinstance(entry, kind):
                raise ParseError(f"{path}: \"{field}\" entry {key!r} is {_json_type(entry)}, not {_kinds(kind)}",
                                 RECAPTURE)
    for number, check in enumerate(manifest.get("verification") or [], 1):
        for field in VERIFICATION_NUMBERS:
            value = check.get(field)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ParseError(f"{path}: verification entry {number} has {field} {value!r}, not a number", RECAPTURE)
    return manifest


def read_pipeline_results(path: Path) -> dict | None:
    """pipeline.json (what `nsprof pipeline` measured), every record checked to name its flow;
    None where there is none."""
    document = _read_object(path, "pipeline results")
    if document is None:
        return None
    _check_records(path, document, "records", "nsprof pipeline", PIPELINE_RECORD_FIELDS)
    if not isinstance(document.get("floor") or {}, dict):
        raise ParseError(f"{path}: \"floor\" is {_json_type(document['floor'])}, not an object", RECAPTURE)
    return document


def read_tuning(path: Path) -> dict[tuple[str, str], dict] | None:
    """What a capture's bench record (bench-nsys.json, written by the nsys pass; the ncu pass reuses
    it) says of its tuned stages (Triton and library): (stage, size) -> `details` (the tuning's trials and kept
    configuration, and what Triton compiled: nsprof.launch.triton_stage); None without the file.
    Records without details (the other stages) are left out."""
    document = _read_object(path, "bench results")
    if document is None:
        return None
    records = document.get("results")
    if not isinstance(records, list):
        raise ParseError(f"{path}: not the results of `nsprof bench` (no \"results\" list)", RECAPTURE)
    return {(str(record.get("stage")), str(record.get("size"))): record["details"] for record in records
            if isinstance(record, dict) and isinstance(record.get("details"), dict)
            and isinstance(record["details"].get("autotune"), dict)}


# What a bench record must hold to be shown as a CPU stage's row (nsprof.analyze.ladder.cpu_work).
BENCH_RECORD_FIELDS = ("op", "stage", "size", "status")


def read_cpu_rung(bench: Path, ceilings: Path) -> CpuRung | None:
    """The CPU stages a capture timed (`bench`: bench-cpu.json) and the host's roofs measured beside
    them (`ceilings`: ceilings-cpu.json, optional), every record checked; None without the records."""
    document = _read_object(bench, "bench results")
    if document is None:
        return None
    records = _check_records(bench, document, "results", "nsprof bench", BENCH_RECORD_FIELDS)
    roofs = _read_object(ceilings, "host's ceilings")
    if roofs is not None and not isinstance(roofs.get("ceilings"), dict):
        raise ParseError(f"{ceilings}: not what `nsprof ceilings --cpu --json` writes (no \"ceilings\" object)", RECAPTURE)
    env = document.get("env")
    return CpuRung(records, env if isinstance(env, dict) else {}, roofs)


def _check_records(path: Path, document: dict, key: str, command: str, fields: tuple[str, ...]) -> list:
    """document[key], a list of objects each naming `fields` as strings and with a number or null as
    median_ms; a ParseError naming the file, the record and the field otherwise."""
    records = document.get(key)
    if not isinstance(records, list):
        raise ParseError(f"{path}: not the results of `{command}` (no \"{key}\" list)", RECAPTURE)
    for number, record in enumerate(records, 1):
        if not isinstance(record, dict):
            raise ParseError(f"{path}: record {number} is {_json_type(record)}, not an object", RECAPTURE)
        missing = [field for field in fields if not isinstance(record.get(field), str)]
        if missing:
            raise ParseError(f"{path}: record {number} has no {', '.join(missing)}", RECAPTURE)
        median = record.get("median_ms")
        if median is not None and (isinstance(median, bool) or not isinstance(median, (int, float))):
            raise ParseError(f"{path}: record {number}'s median_ms is {_json_type(median)}, not a number", RECAPTURE)
    return records


MAX_DOCUMENT_BYTES = 64 * 2**20  # the manifests and records nsprof writes are kilobytes: a larger one is no such file


def _read_object(path: Path, what: str) -> dict | None:
    if not path.is_file():
        return None
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:  # read whole, a 1 GiB file took 2 GB
        raise ParseError(f"{path}: a {what} of {size / 2**20:,.0f} MiB, larger than any nsprof writes "
                         f"({MAX_DOCUMENT_BYTES // 2**20} MiB at most)", RECAPTURE)
    try:
        document = json.loads(printable_json(path.read_text(encoding="utf-8")))
    except RecursionError:
        raise ParseError(f"{path}: unreadable {what} (nested too deeply to read)", RECAPTURE) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ParseError(f"{path}: unreadable {what} ({err})", RECAPTURE) from None
    if not isinstance(document, dict):
        raise ParseError(f"{path}: the {what} is {_json_type(document)}, not a JSON object", RECAPTURE)
    return document


def _json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _kinds(kind) -> str:
    return " or ".join(_JSON_TYPES[k] for k in (kind if isinstance(kind, tuple) else (kind,)))
