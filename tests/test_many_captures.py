"""`nsprof analyze DIR` over several captures: the real H200 training exports of
tests/data/diff-pairs (train-a, train-b: 30 NVTX `step` ranges each) stand in for two ranks."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof import api
from nsprof.cli import app
from nsprof.many import ranks

DATA = Path(__file__).parent / "data" / "diff-pairs"
RANK_FILES = {"train-rank0.sqlite": DATA / "train-a.sqlite", "train-rank1.sqlite": DATA / "train-b.sqlite"}
LATE_STEPS = (10, 20)  # 1-based instances of `step` on which rank 1 is made late
LATE_NS = 200_000_000
COLLECTIVE_NS = 1_000_000
runner = CliRunner()


@pytest.fixture(scope="module")
def scheduler():
    """An in-process Dask cluster the tests pass with --scheduler (its address)."""
    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    yield cluster.scheduler_address
    cluster.close()


@pytest.fixture(scope="module")
def ranks_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("ranks")
    for name, source in RANK_FILES.items():
        shutil.copyfile(source, directory / name)
    return directory


def _steps(conn: sqlite3.Connection) -> list[tuple[int, int, int, int]]:
    return conn.execute("SELECT rowid, start, end, globalTid FROM NVTX_EVENTS WHERE text = 'step' ORDER BY start").fetchall()


def _make_straggler(path: Path, late: bool) -> None:
    """Every step ends in an `allreduce` range (1 ms). On LATE_STEPS both ranks' steps run LATE_NS
    longer (and every range after them starts that much later): rank 1 (late) computes that long,
    rank 0 waits that long in its allreduce."""
    insert = "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?, ?, 59, 'allreduce', ?)"
    conn = sqlite3.connect(path)
    steps = list(enumerate(_steps(conn), start=1))
    for n, (_, _, end, thread) in steps:
        if n not in LATE_STEPS:
            conn.execute(insert, (end - COLLECTIVE_NS, end, thread))
    for n, (rowid, _, end, thread) in reversed(steps):  # the latest first: each shift moves what follows it
        if n in LATE_STEPS:
            conn.execute("UPDATE NVTX_EVENTS SET start = start + ?, end = end + ? WHERE start >= ?", (LATE_NS, LATE_NS, end))
            conn.execute("UPDATE NVTX_EVENTS SET end = ? WHERE rowid = ?", (end + LATE_NS, rowid))
            wait = COLLECTIVE_NS + (0 if late else LATE_NS)
            conn.execute(insert, (end + LATE_NS - wait, end + LATE_NS, thread))
    conn.commit()
    conn.close()


@pytest.fixture(scope="module")
def straggler_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("straggler")
    for rank, (name, source) in enumerate(RANK_FILES.items()):
        shutil.copyfile(source, directory / name)
        _make_straggler(directory / name, late=rank == 1)
    return directory


@pytest.fixture(scope="module")
def local(ranks_dir):
    """The default path: a LocalCluster of 2 worker processes."""
    return api.analyze_many(ranks_dir, workers=2)


def _sql(path: Path, query: str):
    conn = sqlite3.connect(path)
    try:
        return conn.execute(query).fetchall()
    finally:
        conn.close()


def test_each_rank_equals_its_export_analyzed_alone(local, ranks_dir):
    assert list(local.captures["file"]) == list(RANK_FILES) and list(local.captures["rank"]) == [0, 1]
    for row in local.captures.to_dict("records"):
        alone = api.analyze(ranks_dir / row["file"])
        [device] = alone.gpu_utilization
        assert row["kernel_ns"] == alone.kernel_summary["total_ns"].sum()
        assert row["copy_ns"] == alone.memcpy_summary["total_ns"].sum()
        assert row["gpu_busy_pct"] == pytest.approx(device["pct"])
        assert row["idle_ns"] == device["span_ns"] - device["busy_ns"]
        assert row["top_kernel"] == alone.kernel_summary["kernel"].iloc[0]
        # and independently of nsprof, against the export itself
        [(kernel_ns,)] = _sql(ranks_dir / row["file"], "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL")
        [(copy_ns,)] = _sql(ranks_dir / row["file"], "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY")
        assert (row["kernel_ns"], row["copy_ns"]) == (kernel_ns, copy_ns)
        assert row["comm_ns"] == 0 and row["comm_source"] == "none"  # one process, no collectives


def test_kernels_merge_across_ranks_with_their_spread(local, ranks_dir):
    query = ("SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
             "JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value")
    per_rank = [{name: (count, ns) for name, count, ns in _sql(ranks_dir / name, query)} for name in RANK_FILES]
    merged = local.kernels.set_index("kernel")
    assert set(merged.index) == set(per_rank[0]) | set(per_rank[1])
    for name, row in merged.iterrows():
        totals = [rank[name][1] for rank in per_rank if name in rank]
        assert row["count"] == sum(rank[name][0] for rank in per_rank if name in rank)
        assert (row["total_ns"], row["min_ns"], row["max_ns"]) == (sum(totals), min(totals), max(totals))
        assert row["captures"] == len(totals)


def test_the_late_rank_and_its_steps_are_named(straggler_dir, scheduler):
    result = api.analyze_many(straggler_dir, scheduler=scheduler)
    assert result.step_range == "step" and result.scheduler == scheduler
    late = result.stragglers.set_index("step")
    assert len(late) == 30
    for step in LATE_STEPS:
        assert late.loc[step, "rank"] == 1
        assert late.loc[step, "late_by_ns"] > LATE_NS * 0.9  # the copies' own steps differ by a few ms
        assert late.loc[step, "others_wait_ns"] == COLLECTIVE_NS + LATE_NS  # rank 0's allreduce on that step
    latest = result.stragglers.sort_values("late_by_ns", ascending=False)["step"].head(2)
    assert set(latest) == set(LATE_STEPS)
    comm = result.captures.set_index("rank")
    assert comm.loc[1, "comm_ns"] == 30 * COLLECTIVE_NS
    assert comm.loc[0, "comm_ns"] == 30 * COLLECTIVE_NS + len(LATE_STEPS) * LATE_NS
    assert set(comm["comm_source"]) == {"nvtx ranges"}


def test_cli_json_and_tables(ranks_dir, scheduler):
    result = runner.invoke(app, ["analyze", str(ranks_dir), "--json", "--scheduler", scheduler])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [row["file"] for row in doc["captures"]] == list(RANK_FILES)
    assert {"file", "rank", "gpu_busy_pct", "kernel_ns", "copy_ns", "comm_ns", "comm_overlap_pct", "idle_ns",
            "top_kernel"} <= set(doc["captures"][0])
    assert doc["step_range"] == "step" and len(doc["stragglers"]) == 30
    tables = runner.invoke(app, ["analyze", str(ranks_dir), "--scheduler", scheduler], env={"COLUMNS": "80"})
    assert tables.exit_code == 0, tables.output
    assert max(len(line) for line in tables.stdout.splitlines()) <= 80
    assert "rank 0" in tables.stdout and "Stragglers per 'step' step" in tables.stdout


def test_one_capture_keeps_its_meaning(tmp_path):
    shutil.copyfile(DATA / "train-a.sqlite", tmp_path / "rank0.sqlite")
    result = runner.invoke(app, ["analyze", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    assert "kernel_summary" in json.loads(result.stdout) and "captures" not in json.loads(result.stdout)


def test_a_scheduler_that_is_not_there_is_one_line(ranks_dir):
    result = runner.invoke(app, ["analyze", str(ranks_dir), "--scheduler", "tcp://127.0.0.1:9"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "cannot reach the Dask scheduler" in result.output


def test_a_damaged_rank_on_the_local_cluster_is_one_line_naming_it(tmp_path):
    """The default local cluster: the workers' own logs of the failed task stay silent; nsprof names the file."""
    for rank in (0, 1):
        shutil.copy(f"tests/data/ranks/rank{rank}.sqlite", tmp_path / f"rank{rank}.sqlite")
    (tmp_path / "rank2.sqlite").write_bytes(Path("tests/data/ranks/rank2.sqlite").read_bytes()[:200_000])
    # a real process: the workers write to its stderr, which CliRunner would not see
    result = subprocess.run([sys.executable, "-m", "nsprof", "analyze", str(tmp_path), "--workers", "2"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "rank2.sqlite" in lines[0] and "malformed" in lines[0], result.stderr


def test_report_has_the_section_and_the_chart(ranks_dir, tmp_path, scheduler, monkeypatch):
    from nsprof.render.captures import CHART_FILE

    result = api.analyze_many(ranks_dir, scheduler=scheduler)
    written = api.write_captures_report(result, tmp_path / "ranks")
    assert {path.name for path in written} == {"index.html", "report.md", CHART_FILE}
    markdown = (tmp_path / "ranks" / "report.md").read_text()
    assert f"]({CHART_FILE})" in markdown and "rank 1" in markdown
    assert (tmp_path / "ranks" / CHART_FILE).read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("names, expected", [
    (["rank0.sqlite", "rank1.sqlite"], [0, 1]),
    (["run_rank_3.sqlite", "run_rank_12.sqlite"], [3, 12]),
    (["train-r0.nsys-rep", "train-r1.nsys-rep"], [0, 1]),
    (["trace.0.sqlite", "trace.1.sqlite"], [0, 1]),  # nsys -o trace.%q{RANK}
    (["host7-gpu.2.sqlite", "host7-gpu.5.sqlite"], [2, 5]),
    (["sweep-a.sqlite", "sweep-b.sqlite"], [None, None]),
])
def test_ranks_from_file_names(names, expected):
    assert ranks(names) == expected


RANKS = Path(__file__).parent / "data" / "ranks"  # four real ranks (gloo on one H200); rank 1 slow on steps 5, 9, 13 (0-based)


def test_the_real_four_rank_run(scheduler):
    import pandas as pd

    result = api.analyze_many(RANKS, scheduler=scheduler)
    assert list(result.captures["rank"]) == [0, 1, 2, 3]
    latest = result.stragglers.sort_values("late_by_ns", ascending=False).head(3)
    assert set(latest["step"]) == {6, 10, 14} and set(latest["rank"]) == {1}  # 1-based instances of `step`
    assert set(result.captures["comm_source"]) == {"nvtx ranges"}  # gloo's allreduce, wrapped in NVTX
    merged = result.kernels.set_index("kernel")
    stats = [pd.read_csv(RANKS / f"stats-rank{rank}_cuda_gpu_kern_sum.csv") for rank in range(4)]
    for row in result.captures.to_dict("records"):  # each rank's kernel time as nsys stats gives it
        assert row["kernel_ns"] == stats[row["rank"]]["Total Time (ns)"].sum()
    totals = pd.concat(stats).groupby("Name")["Total Time (ns)"]
    assert (merged["total_ns"].sort_index() == totals.sum().sort_index()).all()
    assert (merged["max_ns"].sort_index() == totals.max().sort_index()).all()


RANKS_NCCL = Path(__file__).parent / "data" / "ranks-nccl"  # two real ranks, one H200 each, NCCL; rank 1 slow likewise


def test_the_real_two_gpu_nccl_run(scheduler):
    """The other rank waits inside NCCL's all-reduce kernel on its GPU: comm is read from the NCCL
    kernels, the steps it waited longest in are rank 1's slow ones, and its kernel time is nsys's."""
    import pandas as pd

    result = api.analyze_many(RANKS_NCCL, scheduler=scheduler)
    assert list(result.captures["rank"]) == [0, 1]
    assert set(result.captures["comm_source"]) == {"nccl kernels"}
    waited = result.stragglers.sort_values("others_wait_ns", ascending=False).head(3)
    assert set(waited["step"]) == {6, 10, 14} and set(waited["rank"]) == {1}
    assert (waited["others_wait_ns"] > 100e6).all()  # 40 extra 4096^2 matmuls: over 100 ms each
    by_rank = result.captures.set_index("rank")
    assert by_rank.loc[0, "comm_ns"] > 50 * by_rank.loc[1, "comm_ns"]  # rank 0 did the waiting
    for rank in (0, 1):
        stats = pd.read_csv(RANKS_NCCL / f"stats-rank{rank}_cuda_gpu_kern_sum.csv")
        assert by_rank.loc[rank, "kernel_ns"] == stats["Total Time (ns)"].sum()
        nccl = stats[stats["Name"].str.startswith("ncclDevKernel_AllReduce")]
        assert by_rank.loc[rank, "comm_ns"] == nccl["Total Time (ns)"].sum()


def test_ranks_without_markers_are_compared_by_their_loops():
    """The four-rank run with its NVTX ranges stripped, as a capture with no markers is: each rank's
    step is its loop's iteration (found in its GPU work). The three ranks that ran alike agree on
    their loop, and their steps are compared; rank 1 ran 40 extra products in three of its steps,
    which repeat into a loop of their own, so with it the ranks' loops are not one loop and no step
    is compared rather than wrong ones."""
    from dataclasses import replace

    from nsprof.analyze.captures import LOOP_STEP, communication, step_table, stragglers
    from nsprof.parse.nsys_sqlite import load_nsys

    steps = {}
    for rank in range(4):
        export = load_nsys(RANKS / f"rank{rank}.sqlite")
        plain = replace(export, nvtx=export.nvtx.iloc[0:0])
        steps[rank] = step_table(plain, communication(plain))
    alike = [0, 2, 3]
    counts = {rank: len(steps[rank]) for rank in alike}
    assert set(counts.values()) == {counts[0]} and counts[0] >= 18  # 20 steps ran
    name, table = stragglers([steps[rank] for rank in alike], [(f"rank{rank}", rank) for rank in alike])
    assert name == LOOP_STEP and len(table) == counts[0]
    assert len(steps[1]) > 2 * counts[0]
    assert stragglers(list(steps.values()), [(f"rank{rank}", rank) for rank in steps])[0] is None
