"""Scale benchmark (CPU only) on captures shaped like a real XLA program: nsprof's commands timed on
a real JAX capture pair and on a synthetic pair shaped after it.

    python3 benchmarks/real_scale.py --label after                 # this checkout's nsprof
    python3 benchmarks/real_scale.py --label before --nsprof /tmp/nsprof-before
    python3 benchmarks/real_scale.py --md-only [--label L --note TEXT]  # only rewrite real_scale.md

The captures: (real) the JAX ResNet-50 training loop captured twice on an H200 (.scratch/jax-a and
.scratch/jax-b, not committed: skipped where absent; --real A B for others); (synthetic) two runs
of benchmarks/synthetic_export.write_xla_export at the real capture's counts times --scale (72,080
kernels, 158,910 nested NVTX ranges, 86,508 distinct range names at 1), built in a temporary
directory. Commands, each in a fresh process (`python3 -m nsprof ...`, imports included), stdout to
a file (off a terminal nsprof's tables are COLUMNS wide, else 100: nsprof/console.py):

    analyze A --json | COLUMNS=80 analyze A | COLUMNS=120 analyze A | COLUMNS=120 diff A B |
    timeline A --out DIR | report DIR --from A | roofline DIR --from A | explain roofline --from A

(roofline and explain need ncu data, which these captures lack: they load the capture and exit 1
saying so; their time is that of finding out.) Each command runs --runs times unless a run is cut
off: at --timeout seconds ("> 300 s") or when its resident memory passes --memory-gb (killed, so
that one command cannot take a shared machine's memory); a cut-off run is not repeated. Recorded
per run: wall time (time.perf_counter around the process), exit status, the child's peak resident
memory (os.wait4's rusage), the 1-minute load average before it.

Results go under --label in benchmarks/records/2026-11-26-cpu-real-scale/real_scale.json (the rows measured replace that label's;
its other rows stay if the same nsprof tree and commit measured them, else they go), with the
date, this machine (CPU model and cores from /proc/cpuinfo, memory), Python, pandas, numpy and
SQLite versions, the nsprof tree timed (its path and commit), the command lines, and the shape
statistics of both pairs' A (benchmarks/export_shape.py); real_scale.md is rewritten from it.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from export_shape import shape  # noqa: E402
from synthetic_export import JAX, write_xla_export  # noqa: E402

RESULTS = ROOT / "benchmarks/records/2026-11-26-cpu-real-scale/real_scale.json"
RECORD = ROOT / "benchmarks/records/2026-11-26-cpu-real-scale/real_scale.md"
REAL = (ROOT / ".scratch/jax-a/jax_resnet_train-20261126-003733/nsys.sqlite",
        ROOT / ".scratch/jax-b/jax_resnet_train-20261126-003938/nsys.sqlite")
# name: (environment, arguments); A, B: the pair's captures; OUT: a fresh directory per run
COMMANDS = {
    "analyze --json": ({}, ["analyze", "A", "--json"]),
    "analyze, 80 columns": ({"COLUMNS": "80"}, ["analyze", "A"]),
    "analyze, 120 columns": ({"COLUMNS": "120"}, ["analyze", "A"]),
    "diff A B, 120 columns": ({"COLUMNS": "120"}, ["diff", "A", "B"]),
    "timeline": ({}, ["timeline", "A", "--out", "OUT/timeline.png"]),
    "report": ({}, ["report", "OUT", "--from", "A"]),
    "roofline": ({}, ["roofline", "OUT", "--from", "A"]),
    "explain roofline --from": ({}, ["explain", "roofline", "--from", "A"]),
}
POLL_S = 0.05


def machine() -> dict:
    """This machine: CPU model and cores (/proc/cpuinfo), memory, load."""
    cpu = "unknown"
    with contextlib.suppress(OSError, StopIteration):
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    memory_kb = next((int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal")), 0) if Path("/proc/meminfo").exists() else 0
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(memory_kb / 2**20, 1), "os": platform.platform()}


def environment(nsprof: Path) -> dict[str, str]:
    """The environment every command runs in: this nsprof tree first on PYTHONPATH, no measured
    ceilings of this machine's user, no display."""
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(nsprof), os.environ.get("PYTHONPATH")]))
    env["NSPROF_DATA_DIR"] = tempfile.mkdtemp(prefix="real-scale-data-")
    env["MPLBACKEND"] = "Agg"
    return env


def versions(env: dict[str, str], nsprof: Path) -> dict:
    """Python, pandas, numpy, SQLite and the nsprof actually imported (its file, commit, edits)."""
    probe = ("import json, platform, sqlite3, numpy, pandas, nsprof; print(json.dumps({'python': platform.python_version(), "
             "'pandas': pandas.__version__, 'numpy': numpy.__version__, 'sqlite': sqlite3.sqlite_version, "
             "'nsprof_file': nsprof.__file__}))")
    found = json.loads(subprocess.run([sys.executable, "-c", probe], env=env, cwd=tempfile.gettempdir(),
                                      capture_output=True, text=True, check=True).stdout)
    if not Path(found["nsprof_file"]).resolve().is_relative_to(nsprof.resolve()):
        raise SystemExit(f"nsprof imported from {found['nsprof_file']}, not from {nsprof}")

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(nsprof), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    found["nsprof_commit"] = git("rev-parse", "--short", "HEAD")
    found["nsprof_edited"] = bool(git("status", "--porcelain", "--untracked-files=no", "--", "nsprof"))
    return found


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_once(argv: list[str], env: dict[str, str], cwd: Path, timeout: float, memory_mb: float) -> dict:
    """One run: wall seconds, status (ok, exit N, timeout, memory), peak RSS in MB, output size."""
    out_path, err_path = cwd / "stdout.txt", cwd / "stderr.txt"
    load = round(os.getloadavg()[0], 2)
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=cwd, start_new_session=True)
        cut, peak_seen = None, 0.0
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            elapsed = time.perf_counter() - started
            peak_seen = max(peak_seen, rss_mb(process.pid))
            if elapsed > timeout:
                cut = "timeout"
            elif peak_seen > memory_mb:
                cut = "memory"
            if cut:
                os.killpg(process.pid, signal.SIGKILL)
                _, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(POLL_S)
        seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    error = err_path.read_text(errors="replace").strip().splitlines()
    result = {"seconds": round(seconds, 2), "status": cut or ("ok" if process.returncode == 0 else f"exit {process.returncode}"),
              "peak_rss_mb": round(max(usage.ru_maxrss / 1024, peak_seen)), "stdout_bytes": out_path.stat().st_size,
              "load_avg_1min": load}
    if process.returncode and not cut:
        result["stderr"] = (error[-1] if error else "")[:300]
    return result


def measure(name: str, a: Path, b: Path, env: dict[str, str], runs: int, timeout: float, memory_mb: float) -> dict:
    extra, arguments = COMMANDS[name]
    row: dict = {"command": " ".join([*(f"{k}={v}" for k, v in extra.items()), "python3 -m nsprof", *arguments]),
                 "runs": []}
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="real-scale-run-") as tmp:
            cwd = Path(tmp)
            argv = [sys.executable, "-m", "nsprof", *[
                str(a) if arg == "A" else str(b) if arg == "B" else arg.replace("OUT", str(cwd / "out"))
                for arg in arguments]]
            result = run_once(argv, {**env, **extra}, cwd, timeout, memory_mb)
        row["runs"].append(result)
        print(f"  {name}: {describe_run(result, timeout, memory_mb)}", flush=True)
        if result["status"] in ("timeout", "memory"):
            break
    finished = [r["seconds"] for r in row["runs"] if r["status"] not in ("timeout", "memory")]
    row["status"] = row["runs"][-1]["status"] if not finished else (
        "ok" if all(r["status"] == "ok" for r in row["runs"]) else row["runs"][0]["status"])
    if finished:
        row |= {"seconds": round(statistics.median(finished), 2), "seconds_min": min(finished), "seconds_max": max(finished)}
    else:
        row["seconds_cut"] = row["runs"][-1]["seconds"]
    row["peak_rss_mb"] = max(r["peak_rss_mb"] for r in row["runs"])
    if "stderr" in row["runs"][0]:
        row["stderr"] = row["runs"][0]["stderr"]
    return row


def describe_run(result: dict, timeout: float, memory_mb: float) -> str:
    if result["status"] == "timeout":
        return f"> {timeout:.0f} s (killed), peak {result['peak_rss_mb']:,} MB"
    if result["status"] == "memory":
        return f"killed above {memory_mb / 1024:.0f} GB after {result['seconds']:.0f} s"
    return f"{result['seconds']:.2f} s, {result['status']}, peak {result['peak_rss_mb']:,} MB"


def cell(row: dict | None, limits: dict) -> str:
    """One table cell: median (min-max) s, peak MB, or how the run was cut off."""
    if row is None:
        return ""
    if row["status"] == "timeout":
        return f"**> {limits['timeout_s']:.0f} s** (peak {row['peak_rss_mb']:,} MB)"
    if row["status"] == "memory":
        return f"**killed above {limits['memory_limit_gb']:g} GB** after {row['seconds_cut']:.0f} s"
    spread = f" ({row['seconds_min']:.2f}-{row['seconds_max']:.2f})" if len(row["runs"]) > 1 else ""
    status = "" if row["status"] == "ok" else f", {row['status']}"
    return f"{row['seconds']:.2f}{spread}, {row['peak_rss_mb']:,} MB{status}"


SHAPE_ROWS = (  # (label, path in export_shape's JSON)
    ("kernels", "kernels.count"), ("distinct kernel names", "kernels.distinct_names"),
    ("launches per kernel name: median / max", ("kernels.per_name.median", "kernels.per_name.max")),
    ("kernels launched through graphs (graphNodeId)", "kernels.graph.share"),
    ("CUDA API calls / threads", ("runtime.calls", "runtime.threads")),
    ("memsets / memcpys", ("tables.CUPTI_ACTIVITY_KIND_MEMSET", "tables.CUPTI_ACTIVITY_KIND_MEMCPY")),
    ("NVTX ranges (push/pop)", "nvtx.push_pop"), ("distinct range names", "nvtx.distinct_names"),
    ("ranges with XLA `#k=v#` arguments", "nvtx.names_with_xla_args_share"),
    ("name length: median / max", ("nvtx.name_length.median", "nvtx.name_length.max")),
    ("threads with ranges", "nvtx.threads"),
    ("ranges per thread: min / median / max", ("nvtx.ranges_per_thread.min", "nvtx.ranges_per_thread.median",
                                              "nvtx.ranges_per_thread.max")),
    ("ranges at depth 1 / 2 / 3 / 4 / 5 / 6 / 7", tuple(f"nvtx.depth.{d}" for d in range(1, 8))),
    ("XlaPass ranges / distinct", ("nvtx.per_prefix.XlaPass.ranges", "nvtx.per_prefix.XlaPass.distinct")),
    ("XlaPassPipeline ranges / distinct", ("nvtx.per_prefix.XlaPassPipeline.ranges",
                                           "nvtx.per_prefix.XlaPassPipeline.distinct")),
    ("Thunk ranges / distinct", ("nvtx.per_prefix.Thunk.ranges", "nvtx.per_prefix.Thunk.distinct")),
    ("XlaModule ranges / distinct", ("nvtx.per_prefix.XlaModule.ranges", "nvtx.per_prefix.XlaModule.distinct")),
    ("steps; first step ms / others' median ms", ("steps.count", "steps.first_ms", "steps.rest_ms.median")),
    ("kernels before the first step / in it / per later step", ("steps.kernels_before_first", "steps.kernels_first",
                                                                "steps.kernels_rest.median")),
    ("ranges before the first step / in it / per later step", ("steps.ranges_before_first", "steps.ranges_first",
                                                               "steps.ranges_rest.median")),
    ("range names shared by A and B / in A or B", ("pair.shared_names", "pair.union_names")),
)


def lookup(data: dict, path: str):
    for key in path.split("."):
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def shape_cell(data: dict, paths) -> str:
    values = [lookup(data, path) for path in ((paths,) if isinstance(paths, str) else paths)]
    return " / ".join("-" if v is None else f"{v:,}" if isinstance(v, int) else f"{v:g}" for v in values)


def pair_names(a: Path, b: Path) -> dict:
    """How many range names the two captures share (diff matches ranges by name)."""
    import sqlite3

    def names(path: Path) -> set:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        found = {row[0] for row in conn.execute("SELECT COALESCE(n.text, s.value) FROM NVTX_EVENTS n LEFT JOIN "
                                                "StringIds s ON s.id = n.textId WHERE n.eventType IN (59, 60)")}
        conn.close()
        return found

    first, second = names(a), names(b)
    return {"shared_names": len(first & second), "union_names": len(first | second)}


def write_record(recorded: dict) -> None:
    labels = list(recorded.get("labels", {}))
    lines = ["# nsprof on captures shaped like a real XLA program",
             "",
             "`benchmarks/real_scale.py` (written from `real_scale.json`; re-run it to add a label): each command in a",
             "fresh process, stdout to a file, median (min-max) wall seconds over the runs and the peak resident",
             "memory. A run cut off at the time limit is shown as `> limit`, one whose memory passed the limit as",
             "killed; neither is repeated. roofline and explain exit 1 on these captures (no ncu data): their time",
             "is that of finding out.",
             ""]
    for capture, title in (("real", "Real: JAX ResNet-50 training loop, two runs (nsys 2025.3.1, H200)"),
                           ("synthetic", "Synthetic: `write_xla_export` pair (run 0 and run 1)")):
        rows = {label: {row["name"]: row for row in recorded["labels"][label]["rows"] if row["capture"] == capture}
                for label in labels}
        names = list(dict.fromkeys(name for label in labels for name in rows[label]))
        if not names:
            continue
        lines += [f"## {title}", "", "| command | " + " | ".join(f"{label}: s, peak MB" for label in labels) + " |",
                  "| --- |" + " ---: |" * len(labels)]
        for name in names:
            lines.append(f"| {name} | " + " | ".join(cell(rows[label].get(name), recorded["labels"][label])
                                                    for label in labels) + " |")
        lines.append("")
    lines += ["## Runs", ""]
    for label in labels:
        info = recorded["labels"][label]
        v, m = info["versions"], info["machine"]
        edited = ", with uncommitted edits" if v.get("nsprof_edited") else ""
        lines += [f"- **{label}** ({info['date']}): nsprof at `{v['nsprof_file'].rsplit('/nsprof/', 1)[0]}` "
                  f"(commit {v.get('nsprof_commit') or '?'}{edited}); {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB; "
                  f"Python {v['python']}, pandas {v['pandas']}, numpy {v['numpy']}, SQLite {v['sqlite']}; "
                  f"{info['runs_per_command']} runs a command, limits {info['timeout_s']:.0f} s and "
                  f"{info['memory_limit_gb']:g} GB; 1-minute load average {info['load_range']}."]
        for capture, files in info["captures"].items():
            lines.append(f"  - {capture}: A = `{files['a']}`, B = `{files['b']}`")
        if info.get("note"):
            lines.append(f"  - {info['note']}")
    if labels:
        commands = recorded["labels"][labels[-1]]["rows"]
        lines += ["", "Command lines (A and B the pair's captures, OUT a fresh directory):", ""]
        lines += [f"    {row}" for row in dict.fromkeys(r["command"] for r in commands)]
    shapes = recorded.get("shapes", {})
    if shapes:
        lines += ["", "## Shape: real against synthetic", "",
                  "`benchmarks/export_shape.py` on each pair's A (full output: `jax_export_shape.json` for the real",
                  "one, `shapes` in `real_scale.json` for both).", "",
                  "| statistic | real | synthetic |", "| --- | ---: | ---: |"]
        lines += [f"| {label} | {shape_cell(shapes.get('real', {}), paths)} | {shape_cell(shapes.get('synthetic', {}), paths)} |"
                  for label, paths in SHAPE_ROWS]
        lines += ["", "The real export also holds tables nsprof does not read (scheduling, sampling, CUDA events, "
                  "synchronizations: 69 MB against the synthetic one's 37 MB)."]
    RECORD.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="current", help="the results' name in real_scale.json (replaced)")
    parser.add_argument("--nsprof", type=Path, default=ROOT, help="the nsprof tree to time (a checkout or worktree)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300, help="seconds before a run is killed")
    parser.add_argument("--memory-gb", type=float, default=8, help="resident memory above which a run is killed")
    parser.add_argument("--real", type=Path, nargs=2, default=REAL, metavar=("A", "B"))
    parser.add_argument("--scale", type=float, default=1.0, help="the synthetic pair's size against the real one")
    parser.add_argument("--captures", nargs="+", default=["real", "synthetic"], choices=["real", "synthetic"])
    parser.add_argument("--commands", nargs="+", default=list(COMMANDS), choices=list(COMMANDS), metavar="COMMAND")
    parser.add_argument("--note", help="a remark printed under the label's runs (with --md-only: set on a recorded label)")
    parser.add_argument("--md-only", action="store_true", help=f"only rewrite {RECORD.name} from {RESULTS.name}")
    args = parser.parse_args()
    recorded = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if args.md_only:
        if args.note is not None and args.label in recorded.get("labels", {}):
            recorded["labels"][args.label]["note"] = args.note
            RESULTS.write_text(json.dumps(recorded, indent=1) + "\n")
        write_record(recorded)
        return
    env = environment(args.nsprof)
    found = versions(env, args.nsprof)
    print(f"nsprof: {found['nsprof_file']} (commit {found['nsprof_commit']}{', edited' if found['nsprof_edited'] else ''})")
    rows, captures, shapes = [], {}, recorded.get("shapes", {})
    with tempfile.TemporaryDirectory(prefix="real-scale-") as tmp:
        pairs = {}
        if "real" in args.captures:
            if all(path.exists() for path in args.real):
                pairs["real"] = tuple(args.real)
            else:
                print(f"real captures not found ({args.real[0]}): skipped")
        if "synthetic" in args.captures:
            a, b = Path(tmp) / "xla-a.sqlite", Path(tmp) / "xla-b.sqlite"
            sizes = {key: round(JAX[key] * args.scale) for key in ("kernels", "ranges", "names")}
            started = time.perf_counter()
            for path, run in ((a, 0), (b, 1)):
                write_xla_export(path, **sizes, run=run)
            print(f"synthetic pair {sizes} built in {time.perf_counter() - started:.1f} s")
            pairs["synthetic"] = (a, b)
        for capture, (a, b) in pairs.items():
            shapes[capture] = {**shape(a), "pair": pair_names(a, b)}
            captures[capture] = {"a": str(a), "b": str(b)} if capture == "real" else {
                "a": f"write_xla_export(A, {', '.join(f'{k}={v}' for k, v in sizes.items())}, run=0)",
                "b": f"write_xla_export(B, {', '.join(f'{k}={v}' for k, v in sizes.items())}, run=1)"}
            for path in (a, b):  # into the page cache: every run reads them warm
                with open(path, "rb") as f:
                    while f.read(1 << 24):
                        pass
            print(f"{capture}: {a.name}, {b.name}")
            for name in args.commands:
                rows.append({"capture": capture, "name": name, **measure(
                    name, a, b, env, args.runs, args.timeout, args.memory_gb * 1024),
                    "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds")})
    shutil.rmtree(env["NSPROF_DATA_DIR"], ignore_errors=True)
    labels = recorded.setdefault("labels", {})
    old = labels.get(args.label, {})
    same = (old.get("versions", {}).get("nsprof_file"), old.get("versions", {}).get("nsprof_commit")) == (
        found["nsprof_file"], found["nsprof_commit"])
    if same:  # the same nsprof again: the rows measured now replace theirs, the others stay
        measured = {(row["capture"], row["name"]) for row in rows}
        rows += [row for row in old["rows"] if (row["capture"], row["name"]) not in measured]
        captures = old.get("captures", {}) | captures
    order = {name: i for i, name in enumerate(COMMANDS)}
    rows.sort(key=lambda row: (row["capture"] != "real", order.get(row["name"], len(order))))
    loads = [r["load_avg_1min"] for row in rows for r in row["runs"]]
    labels[args.label] = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "machine": machine(),
        "versions": found, "runs_per_command": args.runs, "timeout_s": args.timeout, "memory_limit_gb": args.memory_gb,
        "load_range": f"{min(loads, default=0)}-{max(loads, default=0)}", "captures": captures, "rows": rows,
        **({"note": note} if (note := args.note or (old.get("note") if same else None)) else {})}
    recorded["shapes"] = shapes
    RESULTS.write_text(json.dumps(recorded, indent=1) + "\n")
    write_record(recorded)
    print(f"wrote {RESULTS.relative_to(ROOT)} ({args.label}) and {RECORD.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
