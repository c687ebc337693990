"""Why the GPU waits (nsprof.analyze.host_side): each program of tests/programs/host_*.py, captured
under nsys on an H200 (benchmarks/gpu/host_side_h200.sh), gets the verdict it was built for, with
its evidence; every saving stays within what it can gain; the figures agree with `nsys stats` and
with plain SQL over the exports; and the rules hold on timelines built by hand."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from manual import page
from typer.testing import CliRunner

from nsprof.analyze.host_calls import KINDS, LAUNCH, OTHER, WAIT, api_kind, host_calls
from nsprof.analyze.host_idle import CAUSES, HOST_WORK, HOST_WORK_NS, LAUNCHING, QUEUED, WAITED
from nsprof.analyze.host_side import host_side
from nsprof.analyze.host_verdict import GPU_BOUND, HOST_BOUND, SYNC_BOUND, TRANSFER_BOUND
from nsprof.analyze.iterations import steady_part
from nsprof.analyze.program_harness import SteadyState
from nsprof.cli import app
from nsprof.parse.nsys_sqlite import COLUMNS, load_nsys

DATA = Path(__file__).resolve().parent / "data"
HOST = DATA / "host-side"
EXAMPLES = Path(__file__).resolve().parents[1] / "profiles" / "examples"
VERDICTS = {"decode-eager": HOST_BOUND, "decode-graph": GPU_BOUND, "copies-pageable": TRANSFER_BOUND,
            "copies-pinned": TRANSFER_BOUND, "gpu-bound": GPU_BOUND, "llama-generate": HOST_BOUND,
            "train-sync": SYNC_BOUND, "train-nosync": GPU_BOUND}


def analyze_json(path: Path) -> dict:
    result = CliRunner().invoke(app, ["analyze", str(path), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# captures whose streams overlap (each stream's busy time summed exceeds the device's): a graph's
# nodes on four streams, and the pipeline's copies beside its kernels
OVERLAPPING_STREAMS = {"graph-node": DATA / "user-programs" / "graph-node.sqlite",
                       "pipeline": EXAMPLES / "h200-pipeline-1024" / "nsys.sqlite"}


def capture_path(name: str) -> Path:
    return OVERLAPPING_STREAMS.get(name, HOST / f"{name}.sqlite")


def host_of(name: str) -> dict:
    export = load_nsys(capture_path(name))
    result = host_side(export, steady_part([export])[1])
    assert result is not None
    return result


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_each_constructed_program_gets_its_verdict(name):
    """The verdict each program was built for, and the books balance: busy and idle make the
    window, the causes make the idle time, and no host saving exceeds the idle time it caused.
    busy + idle == span is bookkeeping only (host_side takes idle as span - busy): the busy time of
    each device and stream is checked against plain SQL by test_busy_time_is_the_union_of_the_gpus_work_by_plain_sql."""
    host = host_of(name)
    assert host["verdict"]["verdict"] == VERDICTS[name], host["verdict"]
    span = host["window"]["span_ns"]
    for device in host["devices"]:
        for part in (device, *device["streams"]):  # the device, and each of its streams
            assert part["busy_ns"] + part["idle_ns"] == span  # bookkeeping
            assert sum(part["idle_causes"].values()) == pytest.approx(part["idle_ns"], abs=1)
        assert max(stream["busy_ns"] for stream in device["streams"]) <= device["busy_ns"]
    idle = host["devices"][0]["idle_causes"]
    for fix in host["fixes"]:
        if fix["kind"] == "host":
            assert 0 < fix["saving_ns"] == idle[fix["cause"]]
        else:  # pageable copies: no more than their own time
            direction = next(d for d in host["copies"]["pageable"] if fix["cause"].endswith(d["direction"]))
            assert 0 <= fix["saving_ns"] <= direction["gpu_ns"]


def test_the_eager_decode_is_launch_bound_and_its_graph_is_not():
    """The eager decode launches a kernel every ~20 us for kernels of ~2 us: the GPU's queue is empty
    at nearly every launch and launch overhead is nearly all of its idle time. Replayed as a CUDA
    graph, the same tokens launch one graph each and the queue is never empty."""
    eager, graph = host_of("decode-eager"), host_of("decode-graph")
    launches = eager["launches"]
    assert launches["median_kernel_ns"] < 5_000 and launches["median_between_ns"] > 4 * launches["median_kernel_ns"]
    assert launches["empty_queue_pct"] > 90
    device = eager["devices"][0]
    assert device["idle_causes"][LAUNCHING] > 0.9 * device["idle_ns"]
    assert eager["fixes"][0]["cause"] == LAUNCHING
    assert graph["launches"]["empty_queue_pct"] < 10 and graph["launches"]["graphs"] == graph["iterations"]["count"]
    assert graph["devices"][0]["busy_pct"] > 90 > eager["devices"][0]["busy_pct"] + 50
    assert graph["window"]["span_ns"] < eager["window"]["span_ns"] / 4  # the same tokens, four times sooner at least


def test_a_loss_read_every_step_is_the_synchronization_that_idles_the_gpu():
    """`.item()` every step: the GPU idles while the host prepares the next batch after each wait, and
    the wait is charged what it blocked; with the losses kept on the GPU the same steps keep it busy."""
    synced, unsynced = host_of("train-sync"), host_of("train-nosync")
    device = synced["devices"][0]
    assert device["idle_causes"][WAITED] > 0.6 * device["idle_ns"]
    assert synced["waits"]["count"] >= synced["iterations"]["count"] > unsynced["waits"]["count"] / 2
    assert "cudaStreamSynchronize" in synced["waits"]["apis"][0]["api"]
    # where: one .item() a step, inside train_step on the main thread (the event waits are in load_batch)
    where = synced["waits"]["where"]
    assert (where[0]["thread"], where[0]["range"], where[0]["count"]) == ("python3", "train_step", 26)
    assert where[1]["range"] == "load_batch"
    assert unsynced["devices"][0]["busy_pct"] > 90 > 80 > device["busy_pct"]
    # the host's fixes together bound what dropping the wait gained
    gained = synced["window"]["span_ns"] - unsynced["window"]["span_ns"]
    assert 0 < gained <= sum(fix["saving_ns"] for fix in synced["fixes"])


def pageable_by_sql(path: Path, start: int, end: int) -> dict[str, tuple[int, int, int]]:
    """Per direction, (count, bytes, GPU ns) of the copies with a pageable side that start in the
    window, by plain SQL over the export and its own enum labels."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT o.label, count(*), sum(m.bytes), sum(m.end - m.start) FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m "
            "JOIN ENUM_CUDA_MEMCPY_OPER AS o ON o.id = m.copyKind JOIN ENUM_CUDA_MEM_KIND AS s ON s.id = m.srcKind "
            "JOIN ENUM_CUDA_MEM_KIND AS d ON d.id = m.dstKind "
            "WHERE 'Pageable' IN (s.label, d.label) AND m.start >= ? AND m.start < ? GROUP BY o.label", (start, end))
        return {label: (count, copied, ns) for label, count, copied, ns in rows}


def test_pageable_copies_are_bounded_by_the_pinned_rate(tmp_path):
    """The pageable loop's copies are the fix; held against the H200's measured bus (55 GB/s) their
    saving is their time less their bytes at that rate, which the pinned loop's copies of the same
    bytes confirm: it moved them in less than the bound leaves."""
    ceilings = Path(__file__).resolve().parents[1] / "profiles" / "ceilings-nvidia-h200.json"
    result = CliRunner().invoke(app, ["analyze", str(HOST / "copies-pageable.sqlite"), "--json", "--ceilings",
                                      str(ceilings)])
    assert result.exit_code == 0, result.output
    host = json.loads(result.stdout)["host"]
    fixes = [fix for fix in host["fixes"] if fix["kind"] == "copy"]
    assert [fix["cause"] for fix in fixes] == ["pageable copies Host-to-Device", "pageable copies Device-to-Host"]
    measured = json.loads(ceilings.read_text())["ceilings"]
    by_sql = pageable_by_sql(HOST / "copies-pageable.sqlite", host["window"]["start_ns"], host["window"]["end_ns"])
    for fix, direction in zip(fixes, sorted(host["copies"]["pageable"], key=lambda d: -d["gpu_ns"])):
        count, copied, gpu_ns = by_sql[direction["direction"]]  # the export's own rows, apart from nsprof's reader
        assert (direction["count"], direction["bytes"], direction["gpu_ns"]) == (count, copied, gpu_ns)
        rate = 1e12 * measured["h2d_tbyte_per_s" if direction["direction"] == "Host-to-Device" else "d2h_tbyte_per_s"][
            "value"]
        assert fix["saving_ns"] == int(gpu_ns - 1e9 * copied / rate)
        assert "measured" in fix["evidence"] and fix["bound"] == f"their time at {rate / 1e9:,.1f} GB/s"
    pinned = host_of("copies-pinned")["copies"]
    floor = host["copies"]["pageable_gpu_ns"] - sum(fix["saving_ns"] for fix in fixes)
    assert pinned["bytes"] == host["copies"]["bytes"] and pinned["gpu_ns"] >= floor  # the bound is not beaten


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_calls_by_kind_agree_with_nsys_stats(name):
    """Every CUDA API name of `nsys stats -r cuda_api_sum`, with its count and total time, as the
    reader reads it; host_calls keeps every call of a kind it uses (launches, waits, copies, loading,
    allocation) and drops the rest; launches and waits are the kinds their names say."""
    stats = pd.read_csv(HOST / f"{name}-stats_cuda_api_sum.csv")
    export = load_nsys(HOST / f"{name}.sqlite")
    calls = host_calls(export)
    runtime = export.runtime.assign(name=export.runtime["api"].astype(str).str.replace(r"_v\d{4}$", "", regex=True))
    kept = calls.others["api"].astype(str).value_counts()
    launches = pd.Series(calls.api[calls.kind == KINDS.index(LAUNCH)]).astype(str).value_counts()
    for row in stats.itertuples():  # nsys stats drops 4-digit versions from the names
        mine = runtime[runtime["name"] == row.Name]
        assert (len(mine), int(mine["duration_ns"].sum())) == (row._3, row._2), row.Name
        for api, count in mine["api"].astype(str).value_counts().items():
            expected = {OTHER: (0, 0), LAUNCH: (0, count)}.get(api_kind(api), (count, 0))
            assert (kept.get(api, 0), launches.get(api, 0)) == expected, api
    assert (calls.others["start_ns"].diff().dropna() >= 0).all()
    assert api_kind("cudaLaunchKernel_v7000") == api_kind("cuGraphLaunch") == LAUNCH
    assert api_kind("cudaStreamSynchronize_v3020") == api_kind("cuCtxSynchronize") == WAIT
    assert api_kind("cuKernelGetName") == OTHER and api_kind("cuLibraryLoadData") == api_kind("cuKernelSetAttribute")


def test_synchronizations_and_thread_names_are_read_as_sql_finds_them():
    path = HOST / "decode-eager.sqlite"
    export = load_nsys(path)
    with sqlite3.connect(path) as conn:
        syncs = conn.execute("SELECT count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION").fetchone()
        labels = dict(conn.execute("SELECT id, label FROM ENUM_CUPTI_SYNC_TYPE").fetchall())
        kinds = conn.execute("SELECT syncType, count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION GROUP BY syncType")
        expected_kinds = {labels[kind]: count for kind, count in kinds}
        main = conn.execute("SELECT s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId "
                            "WHERE t.globalTid % 16777216 = t.globalTid / 16777216 % 16777216").fetchall()
    assert (len(export.syncs), int(export.syncs["duration_ns"].sum())) == syncs
    assert export.syncs["sync_type"].astype(str).value_counts().to_dict() == expected_kinds
    assert list(export.syncs.columns) == list(COLUMNS["syncs"]) and list(export.threads.columns) == list(COLUMNS["threads"])
    main_threads = export.threads[export.threads["pid"] == export.threads["tid"]]
    assert sorted(main_threads["name"]) == sorted(name for (name,) in main)


def test_analyze_leads_with_the_verdict_and_fits_80_columns():
    result = CliRunner().invoke(app, ["analyze", str(HOST / "decode-eager.sqlite")], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Verdict: {HOST_BOUND}. GPU 0 busy")
    assert max(len(line) for line in lines) <= 80
    table = lines.index("What to fix first, host and GPU together")
    assert re.search(r"│ 1 │ launch overhead", "\n".join(lines[table:table + 8]))
    assert not any(re.search(r"-0\.0\b", line) for line in lines)


def test_no_ranked_saving_exceeds_its_headroom_on_the_committed_captures(real_program):
    """Every kernel ranked, on every committed capture with ncu's findings: the saving is at most
    ncu's estimate and at most time x (1 - the kernel's highest fraction of a roof)."""
    examples = Path(__file__).resolve().parents[1] / "profiles" / "examples"
    captures = [real_program("triton"), examples / "h200-program-torch-train", examples / "h200-program-torch-compile"]
    checked = 0
    for path in captures:
        for row in analyze_json(path)["hot_kernels"]:
            if row["saving_ns"] is None:
                continue
            achieved = [row[key] for key in ("pct_of_roof", "sm_throughput_pct", "memory_throughput_pct")
                        if row[key] is not None]
            assert row["saving_ns"] <= row["ncu_saving_ns"] + 1e-6
            if achieved:
                assert row["saving_ns"] <= row["total_ns"] * (1 - max(achieved) / 100) + 1e-6
            checked += 1
    assert checked >= 10


# Timelines built by hand: one thread launching on one stream, times in microseconds.

def timeline(kernels: list[tuple[int, int, int]], calls: list[tuple[int, int, str, int | None]]):
    """A GpuTimeline of `kernels` (start, end, correlation id) and `calls` (start, end, API name,
    correlation id), on the decode capture's schema (its GPUs, no NVTX ranges)."""
    template = load_nsys(HOST / "copies-pinned.sqlite")
    tid = (1 << 24) * 100 + 100
    us = 1_000
    kernel_rows = pd.DataFrame({
        "start_ns": [s * us for s, _, _ in kernels], "end_ns": [e * us for _, e, _ in kernels],
        "device_id": 0, "stream_id": 7, "correlation_id": pd.array([c for _, _, c in kernels], dtype="Int64"),
        "global_pid": pd.array([(1 << 24) * 100] * len(kernels), dtype="Int64"), "kernel": "k",
        "mangled_name": None, "grid_x": 1, "grid_y": 1, "grid_z": 1, "block_x": 32, "block_y": 1, "block_z": 1,
        "dynamic_smem_bytes": 0})
    kernel_rows["duration_ns"] = kernel_rows["end_ns"] - kernel_rows["start_ns"]
    runtime = pd.DataFrame({"start_ns": [s * us for s, _, _, _ in calls], "end_ns": [e * us for _, e, _, _ in calls],
                            "correlation_id": pd.array([c for _, _, _, c in calls], dtype="Int64"),
                            "global_tid": pd.array([tid] * len(calls), dtype="Int64"),
                            "api": pd.Categorical([name for _, _, name, _ in calls])})
    runtime["duration_ns"] = runtime["end_ns"] - runtime["start_ns"]
    return replace(template, kernels=kernel_rows, memcpys=template.memcpys.head(0), memsets=template.memsets.head(0),
                   graphs=template.graphs.head(0), runtime=runtime, syncs=template.syncs.head(0),
                   nvtx=template.nvtx.head(0))


def test_a_gap_after_a_synchronization_is_charged_no_more_than_the_wait_was_blocked():
    """Kernel 1 runs 0-100; the host waits in a synchronization from 40 until it ends (100), then works
    until 400 and launches kernel 2 (400-500). Without the wait the host could have worked from 40:
    the wait is charged 60 us of the 300 us gap, the host's own work the other 240 (over HOST_WORK_NS)."""
    export = timeline([(0, 100, 1), (402, 500, 3)],
                      [(0, 5, "cudaLaunchKernel", 1), (40, 101, "cudaStreamSynchronize", 2), (400, 402, "cudaLaunchKernel", 3)])
    host = host_side(export, SteadyState("step", 3, 0))
    causes = host["devices"][0]["idle_causes"]
    assert causes[WAITED] == 60_000 and causes[HOST_WORK] == 242_000 and HOST_WORK_NS < 242_000
    assert host["verdict"]["verdict"] == "host-bound (the host's own work)"


def test_short_gaps_before_late_launches_are_launch_overhead_and_queued_work_is_not():
    """Kernels of 2 us launched every 20 us: each gap is the host launching (18 us). A kernel launched
    long before it ran (queued behind a dependency) idles the GPU for another reason."""
    kernels = [(20 * i + 3, 20 * i + 5, i) for i in range(10)] + [(300, 310, 10)]
    calls = [(20 * i, 20 * i + 3, "cudaLaunchKernel_v7000", i) for i in range(10)] + [(181, 182, "cuLaunchKernel", 10)]
    host = host_side(timeline(kernels, calls), None)
    causes = host["devices"][0]["idle_causes"]
    assert causes[LAUNCHING] == 9 * 18_000 and causes[QUEUED] == 300_000 - 185_000
    # the window opens with the GPU's first work: the first launch call is before it
    assert host["launches"]["count"] == 10 and host["launches"]["median_between_ns"] == 20_000
    assert host["launches"]["empty_queue_pct"] == pytest.approx(100 * 10 / 11)
    assert np.isclose(host["devices"][0]["busy_ns"], 10 * 2_000 + 10_000)


def test_diff_of_the_eager_and_graphed_decode_says_the_launch_overhead_went_away():
    result = CliRunner().invoke(app, ["diff", str(HOST / "decode-eager.sqlite"), str(HOST / "decode-graph.sqlite"),
                                      "--json"])
    assert result.exit_code == 0, result.output
    host = json.loads(result.stdout)["host"]
    rows = {row["quantity"]: row for row in host["rows"]}
    assert (host["a_verdict"], host["b_verdict"]) == (HOST_BOUND, GPU_BOUND)
    assert host["basis"] == "per iteration of decode_step"
    assert rows["launch_overhead_ns"]["change_pct"] < -99 and rows["gpu_idle_ns"]["change_pct"] < -95
    assert rows["launches"]["a"] > 30 * rows["launches"]["b"] and rows["gpu_busy_pct"]["change_pct"] > 50
    eager, graph = host_of("decode-eager"), host_of("decode-graph")
    assert rows["window_ns"]["a"] == eager["window"]["span_ns"] / eager["iterations"]["count"]
    assert rows["window_ns"]["b"] == graph["window"]["span_ns"] / graph["iterations"]["count"]
    text = CliRunner().invoke(app, ["diff", str(HOST / "decode-eager.sqlite"), str(HOST / "decode-graph.sqlite")],
                              env={"COLUMNS": "100"}).stdout
    assert re.search(r"Host side host-bound \(launch overhead\) -> GPU-bound \(per iteration of decode_step: launch "
                     r"overhead -100\.0%", " ".join(text.split()))


def test_explain_gpu_idle_tells_the_story_of_the_capture_it_reads():
    result = CliRunner().invoke(app, ["explain", "gpu-idle", "--from", str(HOST / "train-sync.sqlite"), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    host = host_of("train-sync")
    assert doc["measured"]["verdict"] == host["verdict"] and doc["evidence"]["reason"] == "given with --from"
    assert doc["facts"][1].startswith("**Synchronization-bound**")
    waited = host["devices"][0]["idle_causes"][WAITED]
    assert f"Idle {waited / 1e6:,.2f} ms" in "\n".join(doc["facts"])
    default = CliRunner().invoke(app, ["explain", "gpu-idle", "--json"])
    assert default.exit_code == 0, default.output
    assert "committed capture" in json.loads(default.stdout)["evidence"]["reason"]
    ladder = CliRunner().invoke(app, ["explain", "gpu-idle", "--from", str(Path(__file__).resolve().parents[1] / "profiles"
                                                                           / "examples" / "h200-sgemm-1024")])
    assert ladder.exit_code == 1 and "no program's nsys capture" in ladder.stderr and "Traceback" not in ladder.output
    assert len(ladder.stderr.strip().splitlines()) == 1


def test_the_readme_shows_what_analyze_and_diff_print():
    """The manual's host-side example (docs/host-side.md) is the commands' own output at 100 columns."""
    readme = page("host-side.md")
    shown = readme.split("$ nsprof analyze tests/data/host-side/decode-eager.sqlite\n", 1)[1].split("\n```", 1)[0]
    printed = CliRunner().invoke(app, ["analyze", str(HOST / "decode-eager.sqlite")], env={"COLUMNS": "100"}).stdout
    assert printed.startswith(shown + "\n")
    table = readme.split("$ nsprof diff tests/data/host-side/decode-eager.sqlite", 1)[1].split("...\n", 1)[1]
    table = table.split("\n```", 1)[0]
    diffed = CliRunner().invoke(app, ["diff", str(HOST / "decode-eager.sqlite"), str(HOST / "decode-graph.sqlite")],
                                env={"COLUMNS": "100"}).stdout
    assert table in diffed


def per_iteration_by_sql(name: str, window_start: int) -> dict[str, float]:
    """One decode capture's host-side times per iteration of decode_step, by plain SQL over its export
    and the idle rules of nsprof.analyze.host_idle's docstring written out (the window's first
    iteration is taken from host_side: where the warm-up ends is its judgement). The window runs from
    that decode_step's start to the end of the last GPU work; each gap in the GPU's work (operations
    overlapping the window, clipped to it) is charged by the launch call of the operation that ends
    it, matched by correlation id and process: made before the GPU ran dry, to launch overhead if the
    call had not returned, else to queued; made after, first to a synchronization of that thread the
    GPU ran dry in (returned within 5 us of the gap's start and before the launch call) for the time
    it was blocked, the rest to host work if over 200 us, else to launch overhead. Host time between
    launches: the median, per thread, of the time between the starts of consecutive launch calls in
    the window. (These windows hold no module loading and no blocking copy, whose rules are left out.)"""
    with sqlite3.connect(HOST / f"{name}.sqlite") as conn:
        steps = [start for (start,) in conn.execute("SELECT start FROM NVTX_EVENTS WHERE text = 'decode_step' ORDER BY start")]
        tables = [table for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                  if table in GPU_TABLES]
        end = max(conn.execute(f"SELECT max(end) FROM {table}").fetchone()[0] for table in tables)
        work = sorted(row for table in tables for row in conn.execute(
            f"SELECT max(start, ?), end, correlationId, globalPid / 16777216 FROM {table} WHERE end > ? AND start < ?",
            (window_start, window_start, end)))
        calls = {(correlation, thread // 16777216): (start, stop, thread) for correlation, thread, start, stop in conn.execute(
            "SELECT correlationId, globalTid, start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME")}
        named = ("SELECT r.globalTid, r.start, r.end FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN StringIds AS s "
                 "ON s.id = r.nameId WHERE {} ORDER BY r.globalTid, r.start")
        waits = conn.execute(named.format("s.value LIKE '%Synchronize%'")).fetchall()
        launches = conn.execute(named.format("(s.value LIKE 'cu%LaunchKernel%' OR s.value LIKE 'cu%GraphLaunch%') "
                                             "AND r.start >= ? AND r.start < ?"), (window_start, end)).fetchall()
    idle = {LAUNCHING: 0, HOST_WORK: 0, WAITED: 0, QUEUED: 0}
    reach = window_start  # the end of the GPU's work so far
    for start, stop, correlation, process in work:
        if start > reach:
            gap = start - reach
            call_start, call_end, thread = calls[correlation, process]
            if call_start <= reach:
                idle[LAUNCHING if call_end > reach else QUEUED] += gap
            else:
                before = [(wait_start, wait_end) for tid, wait_start, wait_end in waits if tid == thread and wait_start < reach]
                blocked = min(reach - before[-1][0], gap) if before and reach - 5_000 <= before[-1][1] <= call_start else 0
                idle[WAITED] += blocked
                idle[HOST_WORK if gap - blocked > 200_000 else LAUNCHING] += gap - blocked
        reach = max(reach, stop)
    iterations = len(steps) - steps.index(window_start)
    between = [b[1] - a[1] for a, b in pairwise(launches) if a[0] == b[0]]
    return {"time per iteration": (end - window_start) / iterations,
            "GPU idle per iteration": sum(idle.values()) / iterations,
            **{f"idle: {cause} per iteration": idle[cause] / iterations for cause in (LAUNCHING, WAITED, HOST_WORK)},
            "host time between launches (median)": float(np.median(between))}


def test_history_keeps_the_host_side_per_iteration(tmp_path):
    """`history add` of the eager and the graphed decode: each entry holds the host side's times per
    iteration as SQL over the export finds them (per_iteration_by_sql), and `history show` reads the
    launch overhead's fall to none (the graphed decode's gaps are a synchronization's and queued work)."""
    from nsprof.history.store import measurements, opened

    db = tmp_path / "history.sqlite"
    for name, commit in (("decode-eager", "a1"), ("decode-graph", "b2")):
        result = CliRunner().invoke(app, ["history", "add", str(HOST / f"{name}.sqlite"), "--db", str(db),
                                          "--commit", commit, "--branch", "main"])
        assert result.exit_code == 0, result.output
    with opened(db) as conn:
        stored = measurements(conn)
    host = stored[stored["kind"] == "host"].set_index(["entry", "name"])["median_ns"]
    by_sql = {name: per_iteration_by_sql(name, host_of(name)["window"]["start_ns"]) for name in ("decode-eager", "decode-graph")}
    for entry, name in ((1, "decode-eager"), (2, "decode-graph")):
        for quantity, expected in by_sql[name].items():
            assert host[(entry, quantity)] == pytest.approx(expected, rel=1e-12), (name, quantity)
    eager, graph = (by_sql[name][f"idle: {LAUNCHING} per iteration"] for name in ("decode-eager", "decode-graph"))
    assert eager > 1e6 and graph == 0
    shown = CliRunner().invoke(app, ["history", "show", "--db", str(db)], env={"COLUMNS": "100"})
    change = re.escape(f"{100 * (graph / eager - 1):.1f}")
    assert shown.exit_code == 0 and re.search(rf"│ host +│ idle: launch overhead per iteration +│ +2 │ +0 ns │ +{change} │",
                                               shown.stdout)


def gaps_by_sql(path: Path, start: int, end: int) -> list[tuple[int, int | None]]:
    """The gaps in one device's GPU work in the window [start, end) (its operations overlapping it,
    clipped, by start then end), each as (length, the correlation id of the operation ending it), by
    plain SQL over the export."""
    with sqlite3.connect(path) as conn:
        tables = [table for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                  if table in GPU_TABLES]
        work = sorted((row for table in tables for row in conn.execute(
            f"SELECT max(start, ?), end, correlationId FROM {table} WHERE end > ? AND start < ?", (start, start, end))),
            key=lambda row: row[:2])
    gaps, reach = [], start
    for begin, stop, correlation in work:
        if begin > reach:
            gaps.append((begin - reach, correlation))
        reach = max(reach, stop)
    return gaps


TRAIN_SYNC = HOST / "train-sync.sqlite"
UNLINKED = "undecided: the capture links most of the GPU's work to no launch call (its correlation ids are missing)"


@pytest.mark.parametrize("damage", [
    "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = NULL",
    "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL, correlationId = NULL",
    "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = NULL",
    "DROP TABLE ThreadNames", "DROP TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "DELETE FROM NVTX_EVENTS",
    "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME",
])
def test_a_damaged_capture_still_gets_an_honest_host_side(damage, tmp_path):
    """Links between GPU work and its calls cut, names or tables gone: analyze, explain and diff
    still answer, with no traceback, and the host side says what the damaged capture still shows.
    Correlation ids cut from the calls: nothing links the work to its calls, so all the idle time is
    unmatched (every gap, by SQL), no host cause is a fix and the verdict says why it is undecided;
    cut from the kernels alone: exactly the gaps a kernel ends are unmatched (by SQL), the rest is
    still judged. Thread names dropped: every figure is the intact capture's, its waits' thread named
    by its id. The synchronization table dropped: the host side is the intact one's (waits are read
    from the CUDA calls). NVTX ranges deleted: the loop is found in the GPU work instead, and the
    waits have no range. Every busy time is the union of the damaged export's work by SQL."""
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(TRAIN_SYNC.read_bytes())
    with sqlite3.connect(damaged) as conn:
        conn.execute(damage)
    for argv in (["analyze", str(damaged)], ["explain", "gpu-idle", "--from", str(damaged)],
                 ["diff", str(damaged), str(TRAIN_SYNC)]):
        result = CliRunner().invoke(app, argv, env={"COLUMNS": "100"})
        assert "Traceback" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), (argv, result.exception)
        if argv[0] == "explain" and "RUNTIME" in damage and damage.startswith("DELETE"):
            assert result.exit_code == 1 and "no program's nsys capture" in result.stderr
        else:
            assert result.exit_code == 0, (argv, result.output)
    analyzed = CliRunner().invoke(app, ["analyze", str(damaged)], env={"COLUMNS": "100"}).stdout
    if damage.startswith("DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        assert "Verdict" not in analyzed and "host" not in analyze_json(damaged)  # no CUDA calls: no host side to tell
        return
    host, intact = analyze_json(damaged)["host"], analyze_json(TRAIN_SYNC)["host"]
    window, [device] = host["window"], host["devices"]
    assert (device["busy_ns"], device["copy_busy_ns"]) == busy_by_sql(damaged, 0, window["start_ns"], window["end_ns"])
    gaps = gaps_by_sql(damaged, window["start_ns"], window["end_ns"])
    assert sum(gap for gap, _ in gaps) == device["idle_ns"]
    unmatched = device["idle_causes"]["unmatched"]
    if "RUNTIME SET" in damage:
        assert " ".join(analyzed.split()).startswith(f"Verdict: {UNLINKED}") and host["verdict"]["verdict"] == UNLINKED
        assert unmatched == device["idle_ns"] > 0 and host["verdict"]["evidence"]["top_idle_cause"] == "unmatched"
        assert not any(fix["kind"] == "host" for fix in host["fixes"])
        if "globalTid" in damage:
            assert {place["thread"] for place in host["waits"]["where"]} == {"an unnamed thread"}
    elif "KERNEL" in damage:
        assert unmatched == sum(gap for gap, correlation in gaps if correlation is None) > 0
        assert analyzed.startswith("Verdict: synchronization-bound") and unmatched < device["idle_ns"] / 4
    elif "ThreadNames" in damage:
        with sqlite3.connect(TRAIN_SYNC) as conn:
            (thread,) = conn.execute("SELECT DISTINCT r.globalTid % 16777216 FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
                                     "JOIN StringIds AS s ON s.id = r.nameId WHERE s.value LIKE '%Synchronize%'").fetchone()
        assert {place["thread"] for place in host["waits"]["where"]} == {f"thread {thread}"}
        for place in (*host["waits"]["where"], *intact["waits"]["where"]):
            place.pop("thread")
        assert host == intact
    elif "SYNCHRONIZATION" in damage:
        assert host == intact
    else:  # NVTX ranges gone
        assert host["iterations"]["source"] == "found" and intact["iterations"]["source"] == "markers"
        assert {place["range"] for place in host["waits"]["where"]} == {None}
        assert host["verdict"]["verdict"] == intact["verdict"]["verdict"]


def test_the_timeline_marks_why_the_gpu_waited():
    """The timeline of a program's capture has a lane per GPU of its idle gaps by cause: in the
    steady state of the synchronized training loop, the gap after each step's `.item()` is marked
    synchronization; no marked gap overlaps GPU work."""
    from nsprof.api import load_timeline
    from nsprof.render.timeline import timeline_figure

    view = load_timeline(HOST / "train-sync.sqlite", None, None)
    idle = view.idle
    assert idle is not None and set(idle["cause"]) <= set(CAUSES)
    steady = idle[idle["start_ns"] >= host_of("train-sync")["window"]["start_ns"]]
    assert (steady["cause"] == WAITED).sum() >= 20  # one a step, 26 steps (a wait that took less of a gap is not)
    events = view.events
    for gap in idle.sample(min(len(idle), 200), random_state=0).itertuples():
        overlapping = events[(events["start_ns"] < gap.end_ns) & (events["end_ns"] > gap.start_ns)]
        assert overlapping.empty, gap
    figure = timeline_figure(view.events, view.ranges, view.window, view.capture[0], "t", idle=idle)
    assert "GPU 0 idle: why" in [label.get_text() for label in figure.axes[0].get_yticklabels()]
    assert any(text.get_text() == f"idle: {WAITED}" for text in figure.axes[0].get_legend().get_texts())


GPU_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
              "CUPTI_ACTIVITY_KIND_GRAPH_TRACE")


def busy_by_sql(path: Path, device: int, start: int, end: int, stream: int | None = None) -> tuple[int, int]:
    """(busy, copy-busy) ns of one device, or one stream of it, in the window [start, end), from plain
    SQL over the export: the union of the intervals of its operations that overlap the window, each
    clipped to it (work that began before the window and runs into it counts for its part inside),
    copies and memsets alone for the second."""
    on_stream = "" if stream is None else f" AND streamId = {int(stream)}"
    with sqlite3.connect(path) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        spans = {table: conn.execute(f"SELECT max(start, ?), min(end, ?) FROM {table} WHERE deviceId = ? AND end > ? "
                                     f"AND start < ?{on_stream}", (start, end, device, start, end)).fetchall()
                 for table in GPU_TABLES if table in tables}

    def union(intervals: list[tuple[int, int]]) -> int:
        total, reach = 0, None
        for lo, hi in sorted(intervals):
            if reach is None or lo > reach:
                total, reach = total + hi - lo, hi
            elif hi > reach:
                total, reach = total + hi - reach, hi
        return total

    copies = [span for table in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET") for span in spans.get(table, [])]
    return union([span for found in spans.values() for span in found]), union(copies)


@pytest.mark.parametrize("name", [*sorted(VERDICTS), *OVERLAPPING_STREAMS])
def test_busy_time_is_the_union_of_the_gpus_work_by_plain_sql(name):
    """Each device's and each stream's busy and copy-busy time in the window against the union of its
    kernels, graphs, copies and memsets read by SQL: an oracle apart from nsprof's reader and interval
    merge, on the constructed programs (one stream each) and on two captures whose streams overlap,
    where summing the operations instead of merging them would count time twice."""
    host = host_of(name)
    window = host["window"]
    for device in host["devices"]:
        for part, stream in ((device, None), *((each, each["stream_id"]) for each in device["streams"])):
            busy, copy_busy = busy_by_sql(capture_path(name), device["device_id"], window["start_ns"], window["end_ns"],
                                          stream)
            assert (part["busy_ns"], part["copy_busy_ns"]) == (busy, copy_busy), (name, device["device_id"], stream)
        if name in OVERLAPPING_STREAMS:
            assert sum(stream["busy_ns"] for stream in device["streams"]) > 1.1 * device["busy_ns"]
