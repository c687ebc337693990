"""The torch.profiler (Kineto) reader, on real traces of three programs taken on an H200
(tests/data/kineto/README.md): a training step with an optimizer, a Llama decode (TensorBoard's
*.pt.trace.json.gz) and a torch.compile block. The oracle is independent of the reader: the
trace's JSON read here with the standard library (numbers as decimals, so times are exact), and
`nsys stats` on an nsys capture of the same program."""

from __future__ import annotations

import csv
import gzip
import json
import os
import shlex
import shutil
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

import pytest
from manual import README, REPO, page, section
from typer.testing import CliRunner

from nsprof import api
from nsprof.cli import app
from nsprof.kernel_names import kernel_key
from nsprof.parse.captures import BENCH, FILE, PROFILE, open_captures
from nsprof.parse.model import timeline_problems
from nsprof.parse.profile import load_file

DATA = Path(__file__).parent / "data" / "kineto"
TRACES = {"train": DATA / "train.json.gz", "decode": DATA / "llama-decode.pt.trace.json.gz",
          "compile": DATA / "compile-block.json.gz"}
NSYS = {"train": DATA / "train", "decode": DATA / "decode"}  # nsprof profile -- the same programs


def _events(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as text:
        return json.load(text, parse_float=Decimal)["traceEvents"]


def _ns(microseconds) -> int:
    return int(Decimal(microseconds) * 1000)


def _oracle_kernels(path: Path) -> dict[str, tuple[int, int]]:
    """Per kernel name: (launches, total ns), from the JSON alone."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for event in _events(path):
        if event.get("ph") == "X" and event.get("cat") == "kernel":
            totals[event["name"]][0] += 1
            totals[event["name"]][1] += _ns(event["dur"])
    return {name: (count, total) for name, (count, total) in totals.items()}


@pytest.mark.parametrize("program", sorted(TRACES))
def test_the_kernel_summary_equals_the_json(program):
    """Counts exactly, and times to the nanosecond (the trace's resolution)."""
    analysis = api.analyze(TRACES[program])
    summary = {row["kernel"]: (row["count"], row["total_ns"]) for row in analysis.kernel_summary.to_dict("records")}
    assert summary == _oracle_kernels(TRACES[program])
    assert analysis.timeline_tool == "torch.profiler"


@pytest.mark.parametrize("program", sorted(TRACES))
def test_the_copy_summary_equals_the_json(program):
    directions = {"HtoD": "Host-to-Device", "DtoH": "Device-to-Host", "DtoD": "Device-to-Device"}
    expected: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for event in _events(TRACES[program]):
        if event.get("ph") == "X" and event.get("cat") in ("gpu_memcpy", "gpu_memset"):
            kind = "memset" if event["cat"] == "gpu_memset" else directions[event["name"].split()[1]]
            row = expected[kind]
            row[0] += 1
            row[1] += event["args"]["bytes"]
            row[2] += _ns(event["dur"])
            row[3] += "Pageable" in event["name"]
    summary = api.analyze(TRACES[program]).memcpy_summary
    got = {row["kind"]: [row["count"], row["bytes"], row["total_ns"], row["pageable_count"]]
           for row in summary.to_dict("records")}
    assert got == dict(expected) and got


def test_every_start_is_exact_and_every_kernel_knows_its_operator():
    """Kineto's microseconds (5e12, three decimals) become exact integer nanoseconds; a kernel's
    operator is the cpu_op with its External id."""
    events = _events(TRACES["train"])
    operators = {e["args"]["External id"]: e["name"] for e in events if e.get("cat") == "cpu_op"}
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    timeline = load_file(TRACES["train"])
    assert timeline_problems(timeline) == []
    assert timeline.kernels["start_ns"].tolist() == [_ns(e["ts"]) for e in kernels]
    assert timeline.kernels["operator"].astype(object).where(timeline.kernels["operator"].notna(), None).tolist() == \
        [operators.get(e["args"]["External id"]) for e in kernels]
    assert "aten::addmm" in set(timeline.kernels["operator"].dropna())
    launches = timeline.runtime["api"].astype(str).value_counts()
    assert launches["cudaLaunchKernel"] == sum(e["name"] == "cudaLaunchKernel" for e in events if e.get("cat") == "cuda_runtime")


def test_ranges_threads_and_the_gpu():
    events = _events(TRACES["train"])
    timeline = load_file(TRACES["train"])
    expected = Counter(e["name"] for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation")
    assert Counter(timeline.nvtx["name"]) == expected and expected["step"] == 30
    assert set(timeline.threads["name"]) == {"python3"}  # Kineto's "thread 508 (python3)", named as nsys names it
    assert timeline.gpus["name"].tolist() == ["NVIDIA H200"] and int(timeline.gpus["sm_count"].iloc[0]) == 132
    assert set(timeline.syncs["sync_type"]) == {"Stream sync", "Context sync"}


def _nsys_stats(program: str) -> dict[str, tuple[int, int]]:
    with open(DATA / f"{program}-stats_cuda_gpu_kern_sum.csv", newline="") as rows:
        return {kernel_key(row["Name"]): (int(row["Instances"]), int(row["Total Time (ns)"])) for row in csv.DictReader(rows)}


@pytest.mark.parametrize("program", sorted(NSYS))
def test_nsys_and_torch_profiler_captures_pair_kernel_by_kernel(program):
    """The same program under each tool (separate runs): every kernel pairs by name as both
    demangle it, launches equal nsys stats' instances, and a kernel's total time is within 5% of
    nsys's where it is 10 us or more (15% below: two launches of 1 us), the whole within 1%."""
    result = api.diff(NSYS[program], TRACES[program])
    stats = _nsys_stats(program)
    assert all(row["status"] not in ("added", "removed") for row in result.kernels)
    assert len(result.kernels) == len(stats)
    for row in result.kernels:
        assert (row["a_count"], row["a_total_ns"]) == stats[kernel_key(row["kernel"])]
        assert row["b_count"] == row["a_count"]
        assert abs(row["b_total_ns"] / row["a_total_ns"] - 1) < (0.05 if row["a_total_ns"] >= 10_000 else 0.15)
    total_a, total_b = (sum(row[f"{side}_total_ns"] for row in result.kernels) for side in "ab")
    assert abs(total_b / total_a - 1) < 0.01
    assert any(line.startswith("two tools: A traced by nsys, B by torch.profiler") for line in result.warnings)
    assert result.time_source == {"a": "nsys", "b": "torch.profiler"}


@pytest.mark.parametrize("program", sorted(NSYS))
def test_the_host_verdict_agrees_with_nsys(program):
    nsys, kineto = api.analyze(NSYS[program]).host, api.analyze(TRACES[program]).host
    assert kineto["verdict"]["verdict"] == nsys["verdict"]["verdict"]
    assert kineto["untraced"] == ["module loading"] and nsys["untraced"] == []


def test_the_front_door_tells_a_trace_from_a_bench_record(tmp_path):
    trace = tmp_path / "trace.json"
    trace.write_bytes(gzip.decompress(TRACES["train"].read_bytes()))
    record = tmp_path / "bench.json"
    record.write_text(json.dumps({"results": []}))
    assert open_captures(trace).kind == FILE and open_captures(TRACES["decode"]).kind == FILE
    assert open_captures(record).kind == BENCH


def test_analyze_prints_the_tool_as_each_table_source():
    result = CliRunner().invoke(app, ["analyze", str(TRACES["train"])], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert "Kernels by total time (torch.profiler)" in result.output
    assert "from torch.profiler, computed as nsys stats -r cuda_gpu_kern_sum" in result.output
    assert "not traced by torch.profiler" in result.output
    assert "(nsys)" not in result.output
    assert "│ aten::_foreach_add_ " in result.output  # the trace alone names each hot kernel's operator too


@pytest.mark.parametrize("damage, says", [
    (lambda raw: raw[: len(raw) // 2], "unreadable torch.profiler trace"),
    (lambda raw: gzip.compress(gzip.decompress(raw)[:5000]), "unreadable torch.profiler trace"),
    (lambda raw: gzip.compress(b'{"traceEvents": [{"ph": "X", "cat": "gc", "name": "x", "ts": 1, "dur": 1}]}'),
     "a Chrome trace, but not torch.profiler's"),
    (lambda raw: gzip.compress(b'[1, 2]'), "holds a JSON list, not the JSON object torch.profiler writes"),
    (lambda raw: gzip.compress(gzip.decompress(raw).replace(b'"dur": 0.800', b'"dur": -0.800', 1)), "negative duration"),
    (lambda raw: gzip.compress(gzip.decompress(raw).replace(b'"grid": [3, 1, 1]', b'"grid": ["x", 1, 1]', 1)),
     "a size or id no GPU has (the first: grid[0] x)"),
])
def test_a_damaged_trace_is_one_line(tmp_path, damage, says):
    path = tmp_path / "bad.json.gz"
    path.write_bytes(damage(TRACES["train"].read_bytes()))
    result = CliRunner().invoke(app, ["analyze", str(path)], env={"COLUMNS": "100"})
    assert result.exit_code != 0 and says in result.output, result.output
    assert "Traceback" not in result.output


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_like_a_trace_is_never_read(tmp_path):
    fifo = tmp_path / "trace.json.gz"
    os.mkfifo(fifo)
    result = CliRunner().invoke(app, ["analyze", str(fifo)], env={"COLUMNS": "100"})
    assert result.exit_code != 0 and "FIFO" in result.output


def test_a_trace_beside_an_nsys_capture_names_the_operator_of_each_hot_kernel(tmp_path):
    """analyze DIR holding both: nsys's times (the trace is not counted twice) and, per hot kernel,
    the PyTorch operator that launched most of its launches in the trace (the JSON's External ids)."""
    profile = tmp_path / "train"
    shutil.copytree(NSYS["train"], profile)
    alone = api.analyze(profile)
    shutil.copy(TRACES["train"], profile / "trace.json.gz")
    assert open_captures(profile).kind == PROFILE
    joined = api.analyze(profile)
    assert joined.kernel_summary.equals(alone.kernel_summary) and joined.timeline_tool == "nsys"
    events = _events(TRACES["train"])
    operators = {e["args"]["External id"]: e["name"] for e in events if e.get("cat") == "cpu_op"}
    launched: dict[str, Counter] = defaultdict(Counter)
    for event in events:
        if event.get("cat") == "kernel":
            launched[kernel_key(event["name"])][operators.get(event["args"]["External id"])] += 1
    hot = joined.hot_kernels
    assert hot["operator"].notna().all()
    assert hot["operator"].tolist() == [launched[kernel_key(name)].most_common(1)[0][0] for name in hot["kernel"]]
    assert "aten::_foreach_add_" in set(hot["operator"])
    assert "operator" not in alone.hot_kernels


def _printed(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return result.output


def test_the_readme_and_the_manual_show_what_the_commands_print(tmp_path, monkeypatch):
    """The README's trace block is the command it shows, then the first lines of what it prints and
    '...'; the manual page's blocks are the start of, or a run of lines in, the commands' real output."""
    monkeypatch.chdir(REPO)
    readme = section(README, "Your own program")
    command, *shown, more = readme[readme.index("A PyTorch profiler trace"):].split("```")[1].strip().splitlines()
    assert command == "$ nsprof analyze tests/data/kineto/train.json.gz" and more == "..."
    printed = _printed(*shlex.split(command.removeprefix("$ nsprof "))).splitlines()
    assert shown and shown == printed[:len(shown)] and len(printed) > len(shown)
    blocks = page("pytorch-profiler.md").split("```")[1::2]  # analyze, diff, the joined profile
    assert blocks[0].strip() == "\n".join(printed[:len(blocks[0].strip().splitlines())])
    differ = _printed("diff", "tests/data/kineto/train", "tests/data/kineto/train.json.gz")
    assert differ.startswith(blocks[1].strip()) and "two tools: A traced by nsys" in blocks[1]
    profile = tmp_path / "torch_train_step-20261128-142638"
    shutil.copytree(NSYS["train"], profile)
    shutil.copy(TRACES["train"], profile)
    assert f"\n{blocks[2].strip()}\n" in f"\n{_printed('analyze', str(profile))}" and "aten::_foreach_add_" in blocks[2]


def test_timeline_report_diff_and_history_take_a_trace(tmp_path):
    trace = str(TRACES["train"])
    assert _printed("timeline", trace, "--out", str(tmp_path / "t.png")) and (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"
    same = api.diff(trace, trace)
    assert len(same.kernels) == 20 and all(row["status"] == "same" for row in same.kernels)
    _printed("report", str(tmp_path / "r"), "--from", trace)
    assert list((tmp_path / "r").glob("*/index.html"))
    added = _printed("history", "add", trace, "--db", str(tmp_path / "h.db"), "--commit", "abc")
    assert "added entry 1" in added and "20 kernels" in _printed("history", "show", "--db", str(tmp_path / "h.db"))
