"""nsprof's own JSON documents in a profile directory: manifest.json, pipeline.json, the bench
records of the workload and of the CPU stages, and the host's ceilings.

They are read once, here, and their shape checked where the rest of nsprof relies on it, so that a
hand-edited or damaged document is one ParseError naming the file and the field, not an
AttributeError or KeyError in whichever command meets it first.
"""

from __future__ import annotations

from pathlib import Path

from nsprof.errors import ParseError
from nsprof.ladder_runs.bench_types import StageDetails
from nsprof.parse.bench_record import result_problem
from nsprof.parse.json_document import JSON_TYPES, json_type, read_json_object
from nsprof.parse.model import CpuRung
from nsprof.printable import printable

# The manifest's fields that commands read, with the JSON type each must have where present.
MANIFEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "op": str, "started": str, "status": str, "stages": list, "sizes": list, "device": (dict, str),
    "software": dict, "tools": dict, "verification": list, "ceilings": dict}
MANIFEST_MAPS: dict[str, type] = {"tools": dict, "verification": dict}  # what each entry of these holds
VERIFICATION_NUMBERS = ("rel_error", "tolerance")  # a number or null in each verification entry
# What a pipeline.json record must hold (nsprof.ranges.pipeline_range names its flows by them).
PIPELINE_RECORD_FIELDS = ("op", "stage", "size", "variant")
RECAPTURE = "Restore the file, or capture the profile again with `nsprof profile` / `nsprof pipeline`"

def read_manifest(path: Path) -> dict | None:
    """manifest.json as a dict, its fields checked (MANIFEST_FIELDS); None where there is none."""
    manifest = _read_object(path, "manifest", nonfinite_as_null=True)  # a damaged ceiling in it is ignored
    if manifest is None:
        return None
    for field, kind in MANIFEST_FIELDS.items():
        value = manifest.get(field)
        if value is not None and not isinstance(value, kind):
            raise ParseError(f"{path}: \"{field}\" is {json_type(value)}, not {_kinds(kind)}", RECAPTURE)
    for field, kind in MANIFEST_MAPS.items():
        entries = manifest.get(field) or {}
        for key, entry in (entries.items() if isinstance(entries, dict) else enumerate(entries)):
            if not isinstance(entry, kind):
                raise ParseError(f"{path}: \"{field}\" entry {key!r} is {json_type(entry)}, not {_kinds(kind)}",
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
        raise ParseError(f"{path}: \"floor\" is {json_type(document['floor'])}, not an object", RECAPTURE)
    return document


def read_tuning(path: Path) -> dict[tuple[str, str], StageDetails] | None:
    """What a capture's bench record (bench-nsys.json, written by the nsys pass; the ncu pass reuses
    it) says of its tuned stages (Triton and library): (stage, size) -> `details` (the tuning's trials and kept
    configuration, and what Triton compiled: nsprof.ladder_runs.triton_stage); None without the file.
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


# What a bench record must hold to be shown as a CPU stage's row (nsprof.ladder_analysis.work.cpu_work).
BENCH_RECORD_FIELDS = ("op", "stage", "size", "status")


def read_cpu_rung(bench: Path, ceilings: Path) -> CpuRung | None:
    """The CPU stages a capture timed (`bench`: bench-cpu.json) and the host's roofs measured beside
    them (`ceilings`: ceilings-cpu.json, optional), every record checked; None without the records."""
    document = _read_object(bench, "bench results")
    if document is None:
        return None
    records = _check_records(bench, document, "results", "nsprof bench", BENCH_RECORD_FIELDS)
    for number, record in enumerate(records, 1):  # the times and sizes every CPU stage's figure divides by
        if problem := result_problem(record) or _size_problem(record):
            raise ParseError(f"{bench}: record {number} ({printable(record['stage'])[:40]}) {problem}", RECAPTURE)
    roofs = _read_object(ceilings, "host's ceilings")
    if roofs is not None and not isinstance(roofs.get("ceilings"), dict):
        raise ParseError(f"{ceilings}: not what `nsprof ceilings --cpu --json` writes (no \"ceilings\" object)", RECAPTURE)
    if roofs is not None and (problem := _roofs_problem(roofs["ceilings"])):
        raise ParseError(f"{ceilings}: {problem}", RECAPTURE)
    env = document.get("env")
    return CpuRung(records, env if isinstance(env, dict) else {}, roofs)


MAX_DIMENSION = 2**31 - 1  # a matrix dimension CUDA indexes; a 400-digit one overflowed every figure
HOST_ROOFS = ("fp32_tflops", "dram_tbyte_per_s")  # what nsprof ceilings --cpu measures (nsprof.ladder_runs.cpu_ceilings)
MAX_HOST_ROOF = 1e4  # TFLOP/s or TB/s: no host reaches this; a larger "measured" roof is damage


def _size_problem(record: dict) -> str | None:
    """Where a CPU stage's size is no size of its op (each dimension a positive whole number, as many
    as the op has: MxNxK for a GEMM), in words; None for one that is."""
    from nsprof.ladder.registry import all_ops
    from nsprof.sizes import parse_label

    op = all_ops().get(record["op"])
    if op is None:
        return f"names the op {printable(record['op'])[:40]!r}, which nsprof does not know"
    try:
        dims = parse_label(record["size"])
    except (ValueError, TypeError):
        dims = ()
    if len(dims) != op.dims.count("x") + 1 or min(dims) < 1 or max(dims) > MAX_DIMENSION:
        return f"has size {printable(record['size'])[:40]!r}, not a size of {op.name} ({op.dims})"
    return None


def _roofs_problem(roofs: dict) -> str | None:
    """What makes the host's measured roofs unusable, in words; None when each is a positive number."""
    for name in HOST_ROOFS:
        roof = roofs.get(name)
        if roof is None:
            continue
        value = roof.get("value") if isinstance(roof, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < MAX_HOST_ROOF:
            return f"the host's {name} is {printable(str(value))[:40]}, not a measured roof"
    return None


def _check_records(path: Path, document: dict, key: str, command: str, fields: tuple[str, ...]) -> list:
    """document[key], a list of objects each naming `fields` as strings and with a number or null as
    median_ms; a ParseError naming the file, the record and the field otherwise."""
    records = document.get(key)
    if not isinstance(records, list):
        raise ParseError(f"{path}: not the results of `{command}` (no \"{key}\" list)", RECAPTURE)
    for number, record in enumerate(records, 1):
        if not isinstance(record, dict):
            raise ParseError(f"{path}: record {number} is {json_type(record)}, not an object", RECAPTURE)
        missing = [field for field in fields if not isinstance(record.get(field), str)]
        if missing:
            raise ParseError(f"{path}: record {number} has no {', '.join(missing)}", RECAPTURE)
        median = record.get("median_ms")
        if median is not None and (isinstance(median, bool) or not isinstance(median, (int, float))):
            raise ParseError(f"{path}: record {number}'s median_ms is {json_type(median)}, not a number", RECAPTURE)
    return records


def _read_object(path: Path, what: str, nonfinite_as_null: bool = False) -> dict | None:
    """The JSON object of an optional document of a profile (None where it is not there), read through
    the one guarded reader."""
    if not path.exists() and not path.is_symlink():
        return None
    return read_json_object(path, what, RECAPTURE, nonfinite_as_null=nonfinite_as_null)


def _kinds(kind) -> str:
    return " or ".join(JSON_TYPES[k] for k in (kind if isinstance(kind, tuple) else (kind,)))
