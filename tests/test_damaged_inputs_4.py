"""Damaged inputs, round 4 (issue 57): torch.profiler traces with numbers no trace holds, directories
of TensorBoard's traces, and one process's profiler cycles. Each is built in tmp_path from a
committed trace and run as a user runs it (a fresh process with a time and a memory limit: a hang or
a runaway allocation fails the test): one line on stderr naming the cause, a non-zero exit; or,
where the input is sound, the answer the same trace gives alone."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from test_damaged_inputs_2 import nsprof

DATA = Path(__file__).resolve().parent / "data"
TRAIN = DATA / "kineto" / "train.json.gz"
EXPORT = DATA / "kineto" / "train" / "nsys.sqlite.xz"


def trace() -> dict:
    with gzip.open(TRAIN, "rt") as stream:
        return json.load(stream)


def first(document: dict, category: str) -> dict:
    return next(event for event in document["traceEvents"] if event.get("cat") == category)


def written(tmp_path: Path, document, name: str = "damaged.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def refused(result) -> str:
    """The one line a refusal prints, checked: exit 1 (bad data) or 2 (a bad argument), no traceback."""
    assert result.returncode in (1, 2), result.stdout[-500:] + result.stderr[-500:]
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    return result.stderr


DAMAGES = {
    "a kernel's start at 1e300 us": ("kernel", lambda e: e.update(ts=1e300), "a time or duration no trace holds"),
    "a kernel lasting 1e300 us": ("kernel", lambda e: e.update(dur=1e300), "a time or duration no trace holds"),
    "a copy of -121.6 MB": ("gpu_memcpy", lambda e: e["args"].update(bytes=-121_600_000), "bytes -121600000"),
    "a copy of 1e300 bytes": ("gpu_memcpy", lambda e: e["args"].update(bytes=1e300), "bytes 1e+300"),
    "a device past 32 bits": ("kernel", lambda e: e["args"].update(device=2**33), "device 8589934592"),
    "a stream past 32 bits": ("kernel", lambda e: e["args"].update(stream=2**40), "stream 1099511627776"),
    "a grid past 32 bits": ("kernel", lambda e: e["args"].update(grid=[2**32, 1, 1]), "grid[0] 4294967296"),
    "1e300 registers": ("kernel", lambda e: e["args"].update({"registers per thread": 1e300}),
                        "registers per thread 1e+300"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_number_no_trace_holds_is_refused_naming_it(damage, tmp_path):
    """Before: "longest idle 5,018,927,802,302 us", kernels at "-0.0%", "-121.6 MB", ids wrapped
    past 32 bits, OverflowError. Now each command refuses the trace in one line that names it."""
    category, change, named = DAMAGES[damage]
    document = trace()
    change(first(document, category))
    path = written(tmp_path, document)
    for command in (("analyze", path), ("diff", path, TRAIN)):
        said = refused(nsprof(*command)[0])
        assert str(path) in said and named in said and "Trace again" in said


@pytest.mark.parametrize("events", [{"a": 1}, "events", None, 7, [1, 2, 3]],
                         ids=["an object", "a string", "null", "a number", "a list of numbers"])
def test_trace_events_that_hold_no_event_are_refused(events, tmp_path):
    """Before: exit 0 with "no GPU work". Now: the trace holds no event, one line, exit 1."""
    document = trace()
    document["traceEvents"] = events
    said = refused(nsprof("analyze", written(tmp_path, document))[0])
    assert "its traceEvents holds no event" in said


def tensorboard(directory: Path, *stamps: int, worker: str = "gpu-node_4242") -> Path:
    """TensorBoard's handler's files: WORKER.MILLISECONDS.pt.trace.json, one per profiler cycle."""
    directory.mkdir()
    data = gzip.decompress(TRAIN.read_bytes())
    for stamp in stamps:
        (directory / f"{worker}.{stamp}.pt.trace.json").write_bytes(data)
    return directory


def test_a_directory_of_tensorboard_traces_diffs_against_an_export_and_a_directory(tmp_path):
    """Before: TypeError in the diff's statistics. Now the trace directory is a side like any other:
    against the program's nsys export, and against another directory of its traces."""
    one = tensorboard(tmp_path / "one", 1764385035123)
    other = tensorboard(tmp_path / "other", 1764385099456, worker="gpu-node_5151")
    for a, b in ((EXPORT, one), (one, other)):
        result, _ = nsprof("diff", a, b, "--json")
        assert result.returncode == 0, result.stderr
        kernels = json.loads(result.stdout)["kernels"]
        assert kernels
    # the two directories hold one trace twice: nothing moved
    assert not [row for row in kernels if row["status"] in ("faster", "slower")]


def test_one_process_s_profiler_cycles_are_one_capture(tmp_path):
    """Two cycles of one process (one worker, two timestamps): before, two "ranks" named by their
    timestamps and no verdict, and `explain gpu-idle --from` found no capture. Now the first cycle
    is analyzed, as the trace alone is, the second is its further run, and explain reads it."""
    cycles = tensorboard(tmp_path / "cycles", 1764385099456, 1764385035123)
    alone, _ = nsprof("analyze", TRAIN, "--json")
    together, _ = nsprof("analyze", cycles, "--json")
    assert together.returncode == 0, together.stderr
    assert json.loads(together.stdout)["host"]["verdict"] == json.loads(alone.stdout)["host"]["verdict"]
    explained, _ = nsprof("explain", "gpu-idle", "--from", cycles)
    assert explained.returncode == 0 and "Host-bound" in explained.stdout
    ranks = tensorboard(tmp_path / "ranks", 1764385035123)
    shutil.copy(TRAIN, ranks / "gpu-node_5151.1764385035123.pt.trace.json.gz")
    result, _ = nsprof("analyze", ranks)
    assert result.returncode == 0 and "2 captures" in result.stdout  # two processes: a directory of captures


def test_control_characters_in_a_trace_s_names_never_reach_the_output(tmp_path):
    """A kernel and an operator named with an escape sequence, a newline and a bidirectional
    override: before, they reached the terminal, diff's Markdown and stderr raw. Now the readers
    spell them out (`\\x1b`), as the nsys and ncu readers do, in every output."""
    document = trace()
    hostile = "evil\x1b[31mred\nline\u202ekernel"
    kernel = first(document, "kernel")
    for event in document["traceEvents"]:
        if event.get("name") == kernel["name"]:
            event["name"] = hostile
    path = written(tmp_path, document, "hostile.json")
    analyzed, _ = nsprof("analyze", path)
    diffed, _ = nsprof("diff", TRAIN, path, "--markdown")
    assert analyzed.returncode == 0 and diffed.returncode == 0, analyzed.stderr + diffed.stderr
    for text in (analyzed.stdout, analyzed.stderr, diffed.stdout, diffed.stderr):
        assert "\x1b" not in text and "\u202e" not in text
    assert "x1b" in diffed.stdout and "u202ekernel" in diffed.stdout  # spelled out (and Markdown-escaped)
    rows = {row["kernel"]: row for row in json.loads(nsprof("diff", TRAIN, path, "--json")[0].stdout)["kernels"]}
    assert rows["evil\\x1b[31mred\\nline\\u202ekernel"]["status"] == "added"  # an eager program's: not compiled


BASE = DATA / "runs" / "ab-base"
PAIR = (BASE / "nsys.sqlite.xz", BASE / "runs" / "nsys-2.sqlite.xz")


def noise_file(tmp_path: Path, **record) -> Path:
    path = tmp_path / "noise.json"
    path.write_text(json.dumps({"source": "measured", "floor_pct": {"10-100 us": 3.0, "over 100 us": 1.5}, **record}))
    return path


def test_a_noise_record_s_damage_and_limits_are_said(tmp_path):
    """`true` for a floor read as 1%: now refused. A record without a 10-100 us floor silently
    called nothing there: now the note says so. A 900 kB source was printed whole: now shortened.
    An H100's record applied to an H200 diff: now a warning names both."""
    said = refused(nsprof("diff", *PAIR, "--noise", noise_file(tmp_path, floor_pct={"10-100 us": True}))[0])
    assert "not a percentage" in said
    partial, _ = nsprof("diff", *PAIR, "--noise", noise_file(tmp_path, floor_pct={"over 100 us": 1.5}), "--json")
    assert partial.returncode == 0, partial.stderr
    shown, _ = nsprof("diff", *PAIR, "--noise", noise_file(tmp_path, floor_pct={"over 100 us": 1.5}))
    assert "10-100 us: the record holds no floor" in " ".join(shown.stdout.split())
    long_source, _ = nsprof("diff", *PAIR, "--noise", noise_file(tmp_path, source="x" * 900_000))
    assert long_source.returncode == 0 and len(long_source.stdout) < 20_000
    assert "x" * 199 + "…" in long_source.stdout.replace("\n", "")
    h100, _ = nsprof("diff", *PAIR, "--noise", noise_file(tmp_path, gpu="NVIDIA H100 80GB HBM3"), "--json")
    warnings = " ".join(json.loads(h100.stdout)["warnings"])
    assert "measured on an NVIDIA H100 80GB HBM3" in warnings and "NVIDIA H200" in warnings


def test_noise_runs_of_two_kinds_of_gpu_are_refused(tmp_path):
    """`diff --noise DIR` pooled an H200 run and an H100 run into one floor without a word: now
    refused, naming both (one of the two committed H200 runs relabelled as an H100's)."""
    import lzma
    import sqlite3

    runs = tmp_path / "runs"
    runs.mkdir()
    for index, packed in enumerate(PAIR):
        (runs / f"run{index}.sqlite").write_bytes(lzma.decompress(packed.read_bytes()))
    with sqlite3.connect(runs / "run1.sqlite") as db:
        db.execute("UPDATE TARGET_INFO_GPU SET name = 'NVIDIA H100 80GB HBM3'")
    said = refused(nsprof("diff", *PAIR, "--noise", runs)[0])
    assert "2 GPUs" in said and "NVIDIA H100 80GB HBM3" in said and "NVIDIA H200" in said


@pytest.mark.parametrize("damage", ["all last 0 ns", "all start at one instant"])
def test_gpu_work_that_lost_its_times_is_refused(damage, tmp_path):
    """Before: "GPU-bound. GPU 0 busy 0.0%", or a ValueError in analyze, explain and diff. Now the
    trace is refused in one line by every command."""
    document = trace()
    start = None
    for event in document["traceEvents"]:
        if event.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            if damage == "all last 0 ns":
                event["dur"] = 0
            else:
                start = start or event["ts"]
                event["ts"] = start
    path = written(tmp_path, document)
    for command in (("analyze", path), ("explain", "gpu-idle", "--from", path), ("diff", TRAIN, path)):
        said = refused(nsprof(*command)[0])
        assert f"lost its GPU work's times: its 1,300 GPU operations {damage}" in said


def without_links(tmp_path: Path, how: str) -> Path:
    """train-b's export with its runtime table dropped, or its correlation ids cleared."""
    import lzma
    import sqlite3

    path = tmp_path / f"{how}.sqlite"
    path.write_bytes(lzma.decompress((DATA / "diff-pairs" / "train-b.sqlite.xz").read_bytes()))
    with sqlite3.connect(path) as db:
        if how == "no runtime table":
            db.execute("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME")
        else:
            for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY"):
                db.execute(f"UPDATE {table} SET correlationId = NULL")
    return path


@pytest.mark.parametrize("how", ["no runtime table", "no correlation ids"])
def test_a_side_that_links_no_work_to_calls_calls_no_range(how, tmp_path):
    """Before: diff called every range "-100.0% faster" (no GPU time could be linked to it), and
    analyze of the side with no runtime table dropped its verdict without a word. Now the ranges
    are compared by their own durations, not called, a warning says why, the host side's causes
    are not compared with an undecided side's, and analyze says why it has no verdict."""
    b = without_links(tmp_path, how)
    result, _ = nsprof("diff", DATA / "diff-pairs" / "train-a.sqlite.xz", b, "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["ranges"] and all(row["status"] == "not called" for row in doc["ranges"])
    assert any("B links the GPU's work to no CUDA call" in warning for warning in doc["warnings"])
    shown, _ = nsprof("diff", DATA / "diff-pairs" / "train-a.sqlite.xz", b)
    assert "-100.0%" not in shown.stdout
    if how == "no runtime table":
        analyzed, _ = nsprof("analyze", b)
        assert analyzed.stdout.startswith("No verdict on why the GPU waits: the capture holds no CUDA call")


BENCH = DATA / "runs" / "bench-a.json"


def bench(tmp_path: Path, change) -> Path:
    document = json.loads(BENCH.read_text())
    change(document)
    return written(tmp_path, document, "bench.json")


def test_round_5_s_bench_and_history_leftovers_are_one_line(tmp_path):
    """A bench record whose "runs" is "five" (ValueError in diff before); medians of 1e305 ms
    (stored as inf before, and then `history show` blamed the database); `--db` below a regular
    file ("File exists" before): each one line naming it, and nothing written."""
    said = refused(nsprof("diff", BENCH, bench(tmp_path, lambda d: d.update(runs="five")))[0])
    assert "its \"runs\" is 'five', not a count of runs" in said

    def huge(document):
        document["results"][0].update(median_ms=1e305, run_medians_ms=[1e305] * 5)
    database = tmp_path / "history" / "h.sqlite"
    said = refused(nsprof("history", "add", bench(tmp_path, huge), "--db", database)[0])
    assert "has median_ms 1e+305, not a positive time in milliseconds" in said and not database.exists()
    afile = tmp_path / "afile"
    afile.write_text("mine")
    said = refused(nsprof("history", "add", BENCH, "--db", afile / "h.sqlite")[0])
    assert f"{afile} is a file, not a directory" in said and afile.read_text() == "mine"


def test_many_runs_are_compared_in_a_sample_of_pairs_that_meets_every_run():
    """200 runs were compared pair by pair (19,900 comparisons, about 6 minutes): now up to 10 runs
    every pair, and past that two pairs a run, each run among them, near and far."""
    from itertools import combinations

    from nsprof.diff.noise import compared_pairs

    assert compared_pairs(10) == list(combinations(range(10), 2))
    pairs = compared_pairs(200)
    assert len(pairs) <= 400 and len(set(pairs)) == len(pairs)
    assert {run for pair in pairs for run in pair} == set(range(200))
    assert {b - a for a, b in pairs} >= {1, 100}


@pytest.mark.parametrize("record", ['{"floor_pct": {"10-100 us"', "[" * 200_000 + "]" * 200_000],
                         ids=["cut short", "nested 200,000 deep"])
def test_a_damaged_noise_record_in_a_history_database_is_one_line(record, tmp_path):
    """Before: JSONDecodeError or RecursionError from `diff --noise DB`. Now one line naming the
    database and the GPU whose record is damaged."""
    import sqlite3

    from nsprof.history.store import NOISE_SCHEMA

    database = tmp_path / "h.sqlite"
    added, _ = nsprof("history", "add", BENCH, "--db", database)
    assert added.returncode == 0, added.stderr
    with sqlite3.connect(database) as db:
        db.execute(NOISE_SCHEMA)
        db.execute("INSERT INTO noise VALUES ('NVIDIA H200', '2026-11-29', ?)", (record,))
    said = refused(nsprof("diff", *PAIR, "--noise", database)[0])
    assert str(database) in said and "NVIDIA H200's noise record is damaged" in said


def test_a_program_s_report_carries_its_verdict_and_names_where_the_rest_is(tmp_path):
    """`report --from` a data-loader-bound program's capture: its verdict and the data loader's
    fix are in report.md, and the kernels left out are said to be in `nsprof analyze --json`
    (report has no --json)."""
    result, _ = nsprof("report", tmp_path / "out", "--from", DATA / "loops" / "dataloader.sqlite.xz")
    assert result.returncode == 0, result.stderr
    report = next((tmp_path / "out").rglob("report.md")).read_text()
    assert "Verdict: host-bound (the host's own work)" in report and "DataLoader(num_workers=N" in report
    assert "more in `nsprof analyze --json`" in report and "more in --json" not in report


def test_charts_of_captures_with_one_name_never_replace_each_other(tmp_path):
    """Three captures named raw.sqlite in three directories: before, each chart replaced the last as
    timeline-raw.png without a word. Now each keeps its own (timeline-raw.png, -2, -3), its PNG
    naming the capture it shows, and drawing one again replaces its own chart only."""
    import lzma

    from nsprof.timeline import chart_source

    data = lzma.decompress((DATA / "diff-pairs" / "train-a.sqlite.xz").read_bytes())
    captures = []
    for name in ("one", "two", "three"):
        (tmp_path / name).mkdir()
        captures.append(tmp_path / name / "raw.sqlite")
        captures[-1].write_bytes(data)
    out = tmp_path / "charts"
    out.mkdir()
    for capture in (*captures, captures[0]):
        result, _ = nsprof("timeline", capture, "--out", out)
        assert result.returncode == 0, result.stderr
    charts = sorted(out.glob("*.png"))
    assert [chart.name for chart in charts] == ["timeline-raw-2.png", "timeline-raw-3.png", "timeline-raw.png"]
    assert {chart_source(chart) for chart in charts} == {str(capture) for capture in captures}
    assert chart_source(out / "timeline-raw.png") == str(captures[0])


def test_a_lane_of_sparse_short_kernels_is_drawn_no_busier_than_it_was():
    """Kernels of a few microseconds, far apart, drawn two pixels wide at the least: each bar is as
    opaque as the share of its width they filled, so the lane's ink, weighted by opacity, is about
    the GPU's busy time, not the bars' drawn widths."""
    import numpy as np
    import pandas as pd

    from nsprof.render.timeline import MIN_BAR_PIXELS, MIN_DENSITY, _shaded

    starts = pd.Series(range(0, 100_000_000, 1_000_000))  # 100 kernels of 1.7 us, one a millisecond
    group = pd.DataFrame({"start_ns": starts, "end_ns": starts + 1_700})
    pixel = 100_000_000 / 1500
    colors = _shaded("#1f77b4", group, group["start_ns"].to_numpy(), group["end_ns"].to_numpy(), MIN_BAR_PIXELS * pixel)
    alpha = [int(color[-2:], 16) / 255 for color in colors]
    assert all(share == pytest.approx(MIN_DENSITY, abs=0.01) for share in alpha)  # 1.7 us of 133 us drawn: the palest
    dense = pd.DataFrame({"start_ns": [0, 1_000], "end_ns": [1_000, 200_000]})
    [solid] = _shaded("#1f77b4", dense, np.array([0]), np.array([200_000]), MIN_BAR_PIXELS * pixel)
    assert solid.endswith("ff")


def test_history_check_never_calls_the_host_s_figures(tmp_path):
    """The CI recipe's second push, one baseline entry: two runs of one training step (train-a,
    train-b). Before, `history check` called "host time between launches +27.6%" slower; the host's
    figures are CPU time and waits, which diff never calls. Now they are shown, not called, and the
    check passes."""
    database = tmp_path / "h.sqlite"
    for capture in ("train-a", "train-b"):
        added, _ = nsprof("history", "add", DATA / "diff-pairs" / f"{capture}.sqlite.xz", "--db", database)
        assert added.returncode == 0, added.stderr
    result, _ = nsprof("history", "check", "--db", database, "--fail-if-slower", "5", "--json")
    assert result.returncode == 0, result.stdout[-800:] + result.stderr
    rows = json.loads(result.stdout)["rows"]
    host = [row for row in rows if row["key"].startswith("host ")]
    assert host and all(row["status"] == "not called" for row in host)
    assert any(abs(row["change_pct"]) > 10 for row in host)  # they did move: shown, not called


def test_the_pinned_rate_is_labelled_with_the_source_json_names():
    """The pageable copies' pinned rate said "as nsprof ceilings measured it" while --json said the
    ceiling's h2d rate is the datasheet's: now the label names the same source."""
    result, _ = nsprof("analyze", DATA / "diff-pairs" / "train-a.sqlite.xz", "--json")
    doc = json.loads(result.stdout)
    source = doc["ceiling"]["sources"].get("h2d_tbyte_per_s", doc["ceiling"]["source"])
    [pageable] = doc["host"]["copies"]["pageable"]
    assert ("datasheet" in pageable["rate_source"]) == (source == "datasheet")
    assert "measured" not in pageable["rate_source"] or source != "datasheet"


def test_every_command_s_help_fits_80_columns_without_breaking_a_word():
    """`diff --help` at 80 columns broke a record's path in two. Each help page's lines fit, and no
    word of the help's own text is longer than the column it wraps in (so none is cut)."""
    import os
    import re
    import subprocess
    import sys

    commands = json.loads(subprocess.run([sys.executable, "-c", (
        "import json, typer.main; from nsprof.cli import app; group = typer.main.get_command(app); "
        "print(json.dumps(sorted(group.commands)))")], capture_output=True, text=True, check=True).stdout)
    def helped(command: str, columns: int) -> str:
        return subprocess.run([sys.executable, "-m", "nsprof", command, "--help"], capture_output=True, text=True,
                              env={**os.environ, "COLUMNS": str(columns)}, timeout=60).stdout

    for command in commands:
        narrow, wide = helped(command, 80), helped(command, 400)
        assert max(map(len, narrow.splitlines())) <= 80, command
        # a word cut across lines at 80 columns is missing whole there (box-drawing lines aside)
        cut = set(re.findall(r"[^\s\u2500-\u257f]+", wide)) - set(re.findall(r"[^\s\u2500-\u257f]+", narrow))
        assert not cut, (command, sorted(cut)[:5])


def test_a_capture_without_nvtx_ranges_says_so_in_a_line_not_an_empty_table():
    """A program captured with nsys's defaults marks nothing: before, an empty table with its header.
    Now one line that says so and where its kernels ran."""
    result, _ = nsprof("analyze", DATA / "loops" / "cupy-heat.sqlite.xz")
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split())
    assert "NVTX ranges (nsys): none in this capture: its 3,900 kernels ran in none" in said
    assert "┃ range" not in result.stdout


def test_the_ctrl_c_tests_pass_when_the_suite_starts_with_sigint_ignored():
    """`nohup pytest &` ignores SIGINT, and four Ctrl-C tests failed under it; the suite now hears
    SIGINT as Python does by default (conftest). Run here in a child started with SIGINT ignored."""
    import signal
    import subprocess
    import sys

    def ignore_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_capture.py",
                             "-k", "ctrl_c_stops_the_tool"], capture_output=True, text=True, timeout=300,
                            cwd=Path(__file__).resolve().parents[1], preexec_fn=ignore_sigint)
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout[-1500:]


def test_an_unknown_stage_gets_a_guess_and_only_the_choices_that_work():
    """`explain bank-conflicts --stage v55` offered 'all', which it then rejected; `bench --stage
    v0,v0bb` offered no guess. Now: the closest stage, and 'all' only where a list is accepted."""
    from typer.testing import CliRunner

    from nsprof.cli import app

    one = CliRunner().invoke(app, ["explain", "bank-conflicts", "--stage", "v55"])
    said = " ".join(one.output.split())
    assert one.exit_code != 0 and "Did you mean v5?" in said and "'all'" not in said
    listed = CliRunner().invoke(app, ["bench", "--stage", "v0,v0bb"])
    said = " ".join(listed.output.split())
    assert listed.exit_code != 0 and "Did you mean v0b?" in said and "or 'all'" in said


def test_nsprof_stages_lists_what_each_triton_stage_is_tuned_over():
    """docs/ladders/triton.md says `nsprof stages` lists the Triton stages' configurations; it listed
    none. Now the caption gives each tuned stage's, as declared (no Triton needed)."""
    from typer.testing import CliRunner

    from nsprof.cli import app
    from nsprof.ladder.registry import get_stage

    shown = " ".join(CliRunner().invoke(app, ["stages", "--op", "sgemm"], env={"COLUMNS": "100"}).stdout.split())
    for name in ("v12", "v12t"):
        shapes = ", ".join(tile.shape for tile in get_stage("sgemm", name).tiles)
        assert f"{name}: {shapes}" in shown


def test_a_cupy_program_s_fixes_name_cupy_s_apis_not_torch_s():
    """The CuPy heat loop (launch-bound; its fused variant, one cupy.RawKernel a step, ran 0.275 ->
    0.009 ms an iteration in the found-loops record): its fixes named DataLoader and
    torch.cuda.CUDAGraph. Now they name CuPy's fusion and graph capture, and pinned copies."""
    result, _ = nsprof("analyze", DATA / "loops" / "cupy-heat.sqlite.xz", "--json")
    host = json.loads(result.stdout)["host"]
    assert host["framework"] == "CuPy"
    fixes = " ".join(fix["fix"] for fix in host["fixes"])
    assert "cupy.fuse" in fixes and "cupy.RawKernel" in fixes and "torch" not in fixes and "DataLoader" not in fixes


def test_a_trace_of_two_gpu_models_names_both(tmp_path):
    """A torch.profiler trace whose deviceProperties list an H200 and an H100: the second was never
    named. Now analyze warns of both, and whose ceilings it used."""
    document = trace()
    second = dict(document["deviceProperties"][0], id=1, name="NVIDIA H100 80GB HBM3")
    document["deviceProperties"].append(second)
    result, _ = nsprof("analyze", written(tmp_path, document))
    said = " ".join(result.stdout.split())
    assert result.returncode == 0, result.stderr
    assert "the capture holds 2 GPU models (NVIDIA H200, NVIDIA H100 80GB HBM3); ceilings and % of peak are the first's" in said


@pytest.mark.parametrize("reader", ["torch.profiler", "jax.profiler"])
def test_a_trace_nested_200000_deep_is_refused_in_seconds_and_little_memory(reader, tmp_path):
    """A 400 kB event nested 200,000 deep: before, 3.97 GB (24 GB here) and minutes. Now refused as
    it is read, within the test's 2 GB limit and 60 seconds."""
    source = DATA / "jax" / "mlp-a1.trace.json.gz" if reader == "jax.profiler" else TRAIN
    document = json.loads(gzip.decompress(source.read_bytes()))
    # the last event, after the metadata a reader sniffs
    document["traceEvents"].append({"ph": "X", "cat": "kernel", "name": "x", "ts": 1, "dur": 1, "args": {"deep": "DEEP"}})
    path = tmp_path / f"deep{'.trace' if reader == 'jax.profiler' else ''}.json"
    path.write_text(json.dumps(document).replace('"DEEP"', "[" * 200_000 + "]" * 200_000))
    said = refused(nsprof("analyze", path)[0])  # nsprof() kills it past its time and memory limits
    assert f"unreadable {reader} trace (JSON nested more than 64 deep)" in said


def test_the_nesting_guard_counts_brackets_outside_strings_in_any_chunking():
    """Brackets inside strings (escaped quotes, runs of backslashes) do not count; the depth, the
    open string and the trailing backslashes carry across chunks of any size."""
    import io

    from nsprof.parse.chrome_trace import MAX_NESTING, NestingGuard

    def read(data: bytes, size: int) -> NestingGuard:
        guard = NestingGuard(io.BytesIO(data))
        while guard.read(size):
            pass
        return guard

    document = {"a": ["[[[{{{", 'q\\"[', "back\\\\", "\\\\\\\"[{", "x" * 5], "b": {"c": [[1, [2, {"d": "]]]}}"}]]]}}
    for size in (1, 2, 3, 7, 64, 10_000):
        guard = read(json.dumps(document).encode(), size)
        assert (guard._depth, guard._inside, guard._backslashes) == (0, 0, 0), size
    read(b"[" * MAX_NESTING + b"]" * MAX_NESTING, 3)
    with pytest.raises(ValueError, match="nested more than 64 deep"):
        read(b'["]]]]", ' + b"[" * MAX_NESTING + b"]" * (MAX_NESTING + 1), 5)
