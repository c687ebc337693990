"""The copies in NVTX ranges: each range's memcpy and memset time (`copy_ns`) beside its
kernel time (`kernel_ns`), `gpu_time_ns` their sum, so that a range that only copies has GPU time;
checked against plain SQL on every real export, and the ranges table at 80 columns."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from nsys_builder import global_pid, global_tid, write_export
from typer.testing import CliRunner

from nsprof.analyze.nvtx_attribution import range_summary
from nsprof.cli import app
from nsprof.parse.nsys_sqlite import load_nsys
from nsprof.render.range_tables import RANGE_COLUMNS, RANGE_DROP_ORDER

ROOT = Path(__file__).resolve().parents[1]
USER = ROOT / "tests" / "data" / "user-programs"
EXAMPLES = ROOT / "profiles" / "examples"
H200 = ROOT / "tests" / "data" / "h200" / "nsys-sgemm-ladder-1024.sqlite"
EXPORTS = [USER / "train.sqlite", USER / "graph.sqlite", USER / "graph-node.sqlite",
           EXAMPLES / "h200-program-torch-train" / "nsys.sqlite", EXAMPLES / "h200-pipeline-1024" / "nsys.sqlite",
           EXAMPLES / "h200-sgemm-1024" / "nsys.sqlite",
           ROOT / "tests" / "data" / "nsys-pipit" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite",  # nsys 2022.2
           H200]  # each unpacked beside its tracked .xz by tests/conftest.py (packed_data.py): a missing one fails

# The thread rule in plain SQL: the memcpys and memsets whose runtime call started on the thread
# that pushed the range while it was open (matched by correlation id within the process). These
# exports hold push/pop ranges only (asserted below).
COPIES_PER_RANGE_SQL = """
WITH ranges AS (
    SELECT n.rowid AS id, n.globalTid AS tid, n.start, n."end",
           CASE WHEN n.domainId = 0 THEN COALESCE(n.text, s.value)
                ELSE d.text || ':' || COALESCE(n.text, s.value) END AS range
    FROM NVTX_EVENTS n
    LEFT JOIN StringIds s ON s.id = n.textId
    LEFT JOIN NVTX_EVENTS d ON d.eventType = 75 AND d.domainId = n.domainId
    WHERE n.eventType = 59),
copies AS ({copies}),
received AS (  -- DISTINCT: older exports record some calls twice under one correlation id
    SELECT DISTINCT ranges.id AS range_id, copies.kind, copies.id, copies.duration
    FROM ranges
    JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.globalTid = ranges.tid AND r.start >= ranges.start AND r.start < ranges."end"
    JOIN copies ON copies.correlationId = r.correlationId AND copies.globalPid / 16777216 = r.globalTid / 16777216)
SELECT ranges.range, count(received.id), coalesce(sum(received.duration), 0)
FROM ranges LEFT JOIN received ON received.range_id = ranges.id
GROUP BY ranges.range
"""


def copies_per_range(path: Path) -> dict[str, tuple[int, int]]:
    """{range: (memcpys and memsets, their summed duration in ns)} by COPIES_PER_RANGE_SQL."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert not conn.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 60").fetchone()[0]
        copies = " UNION ALL ".join(
            f"SELECT '{kind}' AS kind, rowid AS id, correlationId, globalPid, \"end\" - start AS duration FROM {table}"
            for kind, table in (("memcpy", "CUPTI_ACTIVITY_KIND_MEMCPY"), ("memset", "CUPTI_ACTIVITY_KIND_MEMSET"))
            if table in tables)
        return {name: (count, ns) for name, count, ns in conn.execute(COPIES_PER_RANGE_SQL.format(copies=copies))}


@pytest.mark.parametrize("path", EXPORTS, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_copy_time_per_range_equals_plain_sql(path):
    ours = range_summary(load_nsys(path)).set_index("range")
    theirs = copies_per_range(path)
    assert set(ours.index) == set(theirs)
    for name, (count, ns) in theirs.items():
        assert (ours.loc[name, "memcpy_count"] + ours.loc[name, "memset_count"], ours.loc[name, "copy_ns"]) == (count, ns), name
    assert (ours["gpu_time_ns"] == ours["kernel_ns"] + ours["copy_ns"]).all()


def test_the_training_step_range_holds_its_host_to_device_copies():
    """The PyTorch step uploads its batch and targets: 18 copies in 4 steps, 121 us of copy time that
    the range's GPU time now holds (it held only the kernels' 264.5 us)."""
    step = range_summary(load_nsys(EXAMPLES / "h200-program-torch-train" / "nsys.sqlite")).set_index("range").loc["step"]
    copied = copies_per_range(EXAMPLES / "h200-program-torch-train" / "nsys.sqlite")["step"][1]
    assert (step["memcpy_count"], step["copy_ns"]) == (18, copied)
    assert step["copy_ns"] > 100_000 and step["gpu_time_ns"] == step["kernel_ns"] + step["copy_ns"]


def test_a_range_that_only_copies_has_gpu_time(tmp_path):
    """An `h2d` range with 5 copies (0.77 ms) and no kernel used to show GPU time 0."""
    thread = global_tid(100, 100)
    path = write_export(
        tmp_path / "copies.sqlite", {1: "k(float*)", 2: "cudaLaunchKernel", 3: "cudaMemcpyAsync", 4: "h2d", 5: "compute"},
        kernels=[(2_000_000, 2_050_000, 6, global_pid(100), 1)],
        memcpys=[(1_000_000 + 160_000 * i, 1_154_000 + 160_000 * i, 1 + i, global_pid(100), 4 << 20, 1) for i in range(5)],
        runtime=[(10 + i, 11 + i, thread, 1 + i, 3) for i in range(5)] + [(30, 31, thread, 6, 2)],
        nvtx=[(5, 20, 59, None, thread, 4, 0), (25, 40, 59, None, thread, 5, 0)],
    )
    h2d = range_summary(load_nsys(path)).set_index("range").loc["h2d"]
    assert h2d[["kernels", "memcpy_count", "kernel_ns", "copy_ns", "gpu_time_ns"]].tolist() == [0, 5, 0, 770_000, 770_000]
    result = CliRunner().invoke(app, ["analyze", str(path), "--json"])
    assert result.exit_code == 0, result.output
    record = next(row for row in json.loads(result.stdout)["ranges"] if row["range"] == "h2d")
    assert (record["gpu_time_ns"], record["kernel_ns"], record["copy_ns"]) == (770_000, 0, 770_000)
    row = next(line for line in ranges_table(path, 80) if line.startswith("│ h2d "))
    # range, count, kernels, GPU, kernel
    assert [cell.strip() for cell in row.split("│")[1:6]] == ["h2d", "1", "0", "770.0", "0.0"]
    assert row.split("│")[6].strip() == "770.0"  # copy us


def ranges_table(path: Path, width: int) -> list[str]:
    """The lines of analyze's NVTX ranges table, title to caption, at a `width`-column terminal."""
    result = CliRunner().invoke(app, ["analyze", str(path)], env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("NVTX ranges (nsys)"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("└"))
    caption = []
    for line in lines[end + 1:]:
        if line[:1] in "┏" or line.startswith(("Kernels (ncu)", "Stages")):
            break
        caption.append(line)
    return lines[start:end + 1] + caption


@pytest.mark.parametrize("profile", ["h200-program-torch-train", "h200-pipeline-1024"])
def test_the_ranges_table_fits_80_columns_with_whole_names_and_numbers(profile):
    """At 80 columns the table leaves out columns in RANGE_DROP_ORDER and keeps the end of long range
    names (one line each, told apart); the three times always stay; the caption says what GPU time
    is and names what was left out."""
    path = EXAMPLES / profile
    lines = ranges_table(path, 80)
    assert max(len(line) for line in lines) <= 80
    names = list(range_summary(load_nsys(path / "nsys.sqlite"))["range"])
    rows = [line for line in lines if line.startswith("│")]
    assert len(rows) == len(names)  # one line per range: nothing folded
    shown = [row.split("│")[1].strip() for row in rows]
    assert len(set(shown)) == len(shown)
    for text, name in zip(shown, names):
        assert text == name or (text.startswith("…") and name.endswith(text[1:]))
    bottom = next(i for i, line in enumerate(lines) if line.startswith("└"))
    caption = " ".join(line.strip() for line in lines[bottom + 1:])
    assert "GPU time = kernel (kernels, graph launches) + copy (memcpys, memsets)" in caption
    headings = {heading.replace("\n", " "): key for heading, key, _ in RANGE_COLUMNS}
    left_out = caption.split("left out to fit the terminal: ")[1].split(" (in --json)")[0].split(", ")
    assert {headings[heading] for heading in left_out} == set(RANGE_DROP_ORDER[:len(left_out)])  # the first ones
    header = " ".join(line for line in lines if line.startswith("┃"))
    assert all(word in header for word in ("GPU", "kernel", "copy"))
