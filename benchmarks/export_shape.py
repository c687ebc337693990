"""Shape statistics of an Nsight Systems SQLite export, as a small JSON document: what a scale
benchmark's synthetic export has to look like to stand for a real capture.

    python3 benchmarks/export_shape.py EXPORT.sqlite [--out shape.json]

Computed by SQL on the export (opened read-only), Python only ranking and summing the results:
rows per table; kernels (distinct names, launches per name, launching APIs, share launched through
CUDA graphs: CUPTI_ACTIVITY_KIND_KERNEL.graphId non-null where the column exists, else graphNodeId
non-null, as nsys 2025 writes it); CUDA API calls and their threads; NVTX ranges (per kind, domain,
thread, name prefix, distinct names, names carrying XLA's `#key=value,...#` arguments, name
lengths, the depth of each push/pop range in its thread's stack); and the training steps, where
ranges are named `step...` (their number and length, the kernels launched in each: the first step
against the median of the others).

benchmarks/records/2026-11-26-cpu-real-scale/jax_export_shape.json is its output for the JAX ResNet-50 capture that
benchmarks/real_scale.py times; synthetic_export.write_xla_export is built to match it.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
from collections import Counter
from pathlib import Path

PUSH_POP, START_END, DOMAIN_CREATE = 59, 60, 75
PREFIX = re.compile(r"[^:#\s/]*")  # XlaPass:#name=...# -> XlaPass; step 3 -> step
NAMES = """SELECT n.domainId AS domain, n.globalTid AS thread, n.start AS start, n.end AS end, n.eventType AS kind,
    COALESCE(n.text, s.value) AS name FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId"""
# Depth of each push/pop range in its thread's stack (1: outermost), by a running sum over the
# thread's opens (+1) and closes (-1) in time order: at one instant closes come before opens,
# and of ranges opened together the longer one first (it holds the others).
DEPTH = f"""WITH marks(thread, t, tie, delta) AS (
    SELECT globalTid, start, -end, 1 FROM NVTX_EVENTS WHERE eventType = {PUSH_POP} AND end IS NOT NULL
    UNION ALL SELECT globalTid, end, -9223372036854775807, -1 FROM NVTX_EVENTS
        WHERE eventType = {PUSH_POP} AND end IS NOT NULL),
  depths AS (SELECT delta, SUM(delta) OVER (PARTITION BY thread ORDER BY t, delta, tie
                                            ROWS UNBOUNDED PRECEDING) AS depth FROM marks)
SELECT depth, count(*) FROM depths WHERE delta = 1 GROUP BY depth ORDER BY depth"""


def spread(values: list[int | float]) -> dict:
    """min, median, max (and how many) of a list of numbers."""
    if not values:
        return {"n": 0}
    return {"n": len(values), "min": min(values), "median": statistics.median(values), "max": max(values)}


def shape(path: Path) -> dict:
    """The statistics described in the module docstring, for one export."""
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    q = conn.execute
    tables = sorted(name for (name,) in q("SELECT name FROM sqlite_master WHERE type = 'table'"))
    result: dict = {"export": Path(path).name, "megabytes": round(Path(path).stat().st_size / 1e6, 1),
                    "tables": {table: q(f"SELECT count(*) FROM [{table}]").fetchone()[0]
                               for table in tables if not table.startswith("ENUM_")}}
    result["tables"] = {table: rows for table, rows in result["tables"].items() if rows}
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        result["kernels"] = _kernels(conn, tables)
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        calls, threads = q("SELECT count(*), count(DISTINCT globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
        top = q("""SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
                   GROUP BY r.nameId ORDER BY 2 DESC LIMIT 8""").fetchall()
        result["runtime"] = {"calls": calls, "threads": threads, "top_apis": dict(top)}
    if "NVTX_EVENTS" in tables:
        result["nvtx"] = _nvtx(conn)
        result["steps"] = _steps(conn, tables)
    conn.close()
    return result


def _kernels(conn: sqlite3.Connection, tables: list[str]) -> dict:
    q = conn.execute
    columns = {row[1] for row in q("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")}
    graph_column = next((c for c in ("graphId", "graphNodeId") if c in columns), None)
    count, names, streams, calls, graphed = q(f"""SELECT count(*), count(DISTINCT demangledName), count(DISTINCT streamId),
        count(DISTINCT correlationId), {f'count({graph_column})' if graph_column else 0}
        FROM CUPTI_ACTIVITY_KIND_KERNEL""").fetchone()
    per_name = [n for (n,) in q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY demangledName ORDER BY 1 DESC")]
    top = q("""SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName
               GROUP BY k.shortName ORDER BY 2 DESC LIMIT 6""").fetchall()
    launches = {}
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        launches = dict(q("""SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k
            JOIN CUPTI_ACTIVITY_KIND_RUNTIME r USING (correlationId) JOIN StringIds s ON s.id = r.nameId
            GROUP BY r.nameId ORDER BY 2 DESC""").fetchall())
    return {"count": count, "distinct_names": names, "streams": streams, "launch_calls": calls,
            "per_name": {**spread(per_name), "top10_share": round(sum(per_name[:10]) / max(count, 1), 3)},
            "top_short_names": dict(top), "launched_by": launches,
            "graph": {"column": graph_column, "kernels": graphed, "share": round(graphed / max(count, 1), 3)}}


def _nvtx(conn: sqlite3.Connection) -> dict:
    q = conn.execute
    kinds = dict(q("SELECT eventType, count(*) FROM NVTX_EVENTS GROUP BY 1").fetchall())
    domains = {(thread // 0x1000000, domain): name for domain, thread, _, _, _, name in
               q(f"{NAMES} WHERE n.eventType = {DOMAIN_CREATE}")}
    per_name = q(f"""SELECT domain, thread / {0x1000000} AS process, name, count(*), max(length(name))
                     FROM ({NAMES} WHERE n.eventType IN ({PUSH_POP}, {START_END})) GROUP BY 1, 2, 3""").fetchall()
    prefixes: dict[str, list[int]] = {}
    by_domain: Counter = Counter()
    qualified: set[str] = set()
    lengths: list[int] = []
    with_args = 0
    for domain, process, name, n, length in per_name:
        domain_name = domains.get((process, domain), f"domain {domain}") if domain else None
        by_domain[domain_name or "(default)"] += n
        qualified.add(f"{domain_name}:{name}" if domain_name else str(name))
        prefix = PREFIX.match(str(name or "")).group() or "(none)"
        prefixes.setdefault(prefix, [0, 0])
        prefixes[prefix][0] += n
        prefixes[prefix][1] += 1
        lengths += [length or 0] * n
        with_args += n if re.search(r"#.*=.*#", str(name or "")) else 0
    ranges = sum(kinds.get(kind, 0) for kind in (PUSH_POP, START_END))
    per_thread = [n for (n,) in q(f"""SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN ({PUSH_POP}, {START_END})
                                      GROUP BY globalTid ORDER BY 1 DESC""")]
    depth = dict(q(DEPTH).fetchall())
    top = sorted(prefixes.items(), key=lambda item: -item[1][0])
    return {"ranges": ranges, "push_pop": kinds.get(PUSH_POP, 0), "start_end": kinds.get(START_END, 0),
            "open": q(f"SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN ({PUSH_POP}, {START_END}) AND end IS NULL"
                      ).fetchone()[0],
            "domains": dict(by_domain.most_common()), "distinct_names": len(qualified),
            "names_with_xla_args_share": round(with_args / max(ranges, 1), 3),
            "name_length": {"median": statistics.median(lengths) if lengths else 0, "max": max(lengths, default=0)},
            "threads": len(per_thread), "ranges_per_thread": spread(per_thread),
            "depth": {str(d): n for d, n in depth.items()},
            "max_depth": max(depth, default=0),
            "per_prefix": {p: {"ranges": n, "distinct": d} for p, (n, d) in top[:16]},
            "other_prefixes": len(top) - min(len(top), 16)}


def _steps(conn: sqlite3.Connection, tables: list[str]) -> dict:
    """Ranges named step... on their most common name: how many, how long, kernels launched in each
    (by the start of the launching call on any thread), and before the first."""
    q = conn.execute
    found = q(f"""SELECT name, count(*) FROM ({NAMES} WHERE n.eventType IN ({PUSH_POP}, {START_END}))
                  WHERE lower(name) LIKE 'step%' OR lower(name) LIKE '%train_step' GROUP BY
                  CASE WHEN name GLOB 'step [0-9]*' THEN 'step N' ELSE name END ORDER BY 2 DESC LIMIT 1""").fetchone()
    if not found or not {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"} <= set(tables):
        return {}
    name = found[0]
    pattern = "step [0-9]*" if re.fullmatch(r"step \d+", name) else name
    steps = q(f"SELECT start, end FROM ({NAMES}) WHERE name GLOB ? AND kind IN ({PUSH_POP}, {START_END}) ORDER BY start",
              (pattern.replace("[", "[[]") if pattern == name else pattern,)).fetchall()
    launches = q("""SELECT r.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r USING (correlationId)
                    ORDER BY r.start""").fetchall()
    import bisect
    starts = [t for (t,) in launches]
    kernels = [bisect.bisect_right(starts, end) - bisect.bisect_left(starts, start) for start, end in steps]
    ranges = [q(f"SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN ({PUSH_POP}, {START_END}) AND start > ? AND start <= ?",
                (start, end)).fetchone()[0] for start, end in steps]
    lengths_ms = [round((end - start) / 1e6, 2) for start, end in steps]
    return {"range": "step N" if pattern != name else name, "count": len(steps),
            "first_ms": lengths_ms[0], "rest_ms": spread(lengths_ms[1:]),
            "kernels_before_first": bisect.bisect_left(starts, steps[0][0]),
            "kernels_first": kernels[0], "kernels_rest": spread(kernels[1:]),
            "ranges_before_first": q(f"SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN ({PUSH_POP}, {START_END}) "
                                     "AND start < ?", (steps[0][0],)).fetchone()[0],
            "ranges_first": ranges[0], "ranges_rest": spread(ranges[1:])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", type=Path)
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    text = json.dumps(shape(args.export), indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
