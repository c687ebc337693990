"""Assemble h100-flow-handover.json (benchmarks/records/2026-11-26-h100-flow-handover/) from what
benchmarks/gpu/flag_flow_h200.sh and benchmarks/gpu/issue33_probes_h200.sh wrote under $OUT on the
GPU machine, and print the tables of the .md beside it.

    python3 benchmarks/flow_handover_record.py --flags DIR --watched DIR --probes DIR --pipeline DIR DIR [DIR ...] \
        --ncu DIR --clocks DIR

DIR: an unpacked results.tgz (flag-flow-run*.jsonl and host.txt; copy-landing.jsonl and h6-cl2-tma-run*.jsonl).
--flags: the run with the kernel's own product (flags and sentinel flows); --watched: the run with ONLY
set to the bus, cuBLAS's 4-block flows and the watched flows; --pipeline: the runs of
benchmarks/gpu/pipeline_watched_h200.sh, each on its own host (`nsprof pipeline` with its watched variant:
pipeline-profile.tgz holding the first call's pipeline.json, pipeline-1024-run2.json): the first on
watch_rows's first form, the rest on watch_rows as it is now; the second also holds flag-flow-run*.jsonl
(FLOWS=1: the watched flows again, on watch_rows as it is now); --ncu: the profile directory of
`nsprof profile --op hgemm --stage h6,h7 --size 4096 --tool ncu --metrics default,stalls,memory,compute
--repeat 1` (its ncu-raw.csv); --clocks: clocks-4096.json and clocks-8192.json of
benchmarks/gpu/experiments/clocks_under_load.py (each kernel alone at the power limit)."""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paired_record import lines

OUT = Path(__file__).parent / "records" / "2026-11-26-h100-flow-handover" / "h100-flow-handover.json"


def flow_table(folder: Path) -> dict[str, dict]:
    """Per flow and kind: every round's median (two processes), and the largest verified error."""
    table: dict[str, dict] = collections.defaultdict(lambda: {"median_ms": [], "rel_error": None, "ok": None})
    for run in (1, 2):
        for r in lines(folder / f"flag-flow-run{run}.jsonl"):
            row = table[f"{r['flow']} | {r['kind']}"]
            if r["phase"] == "time":
                row["median_ms"].append(r["median_ms"])
            elif "rel_error" in r:
                row["rel_error"] = max(row["rel_error"] or 0.0, r["rel_error"])
                row["ok"] = r["ok"] if row["ok"] is None else row["ok"] and r["ok"]
            else:
                row["ok"], row["message"] = False, r.get("message")
    return dict(table)


def landing(path: Path) -> dict[str, dict]:
    by_case: dict[str, dict] = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in lines(path):
        for key in ("copy_ms", "first_256k_whole_us", "first_1m_whole_us", "last_us"):
            by_case[r["case"]][key].append(r[key])
    return {case: dict(values) for case, values in by_case.items()}


def cluster(folder: Path) -> dict[str, dict]:
    by_size: dict[str, dict] = collections.defaultdict(lambda: collections.defaultdict(list))
    for run in (1, 2):
        for r in lines(folder / f"h6-cl2-tma-run{run}.jsonl"):
            if r["phase"] == "paired":
                for key in ("over_declared", "ratio_torch", "declared_ratio_torch"):
                    by_size[r["size"]][key].append(r[key])
            elif not r.get("ok", False):
                by_size["failed"]["verify"].append(r)
    return {size: dict(values) for size, values in by_size.items()}


def pipeline_runs(folder: Path) -> dict:
    """The warm records of the two `nsprof pipeline` runs: median ms, spread, and the first run's nsys
    breakdown."""
    with tarfile.open(folder / "pipeline-profile.tgz") as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("pipeline.json"))
        first = json.load(archive.extractfile(member))  # type: ignore[arg-type]
    second = json.loads((folder / "pipeline-1024-run2.json").read_text())
    keep = ("median_ms", "spread_pct", "h2d_ms", "kernel_ms", "d2h_ms", "overlap_ms", "idle_ms")
    return {"host": (folder / "host.txt").read_text(),
            "bus": first.get("floor"),
            **{f"run {n}": [{"stage": r["stage"], "variant": r["variant"], **{k: r.get(k) for k in keep}}
                            for r in run["records"] if r["variant"] != "cold"] for n, run in ((1, first), (2, second))}}


NCU_METRICS = {"gpu__time_duration.sum": "duration_ns", "lts__t_bytes.sum": "l2_bytes", "dram__bytes_read.sum":
               "dram_read_bytes", "dram__bytes_write.sum": "dram_write_bytes", "launch__cluster_size": "cluster_size",
               "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_throughput_pct"}


def ncu_kernels(folder: Path) -> list[dict]:
    """One launch of each kernel, as ncu replayed it: the numbers the record quotes."""
    import csv

    rows = list(csv.DictReader((folder / "ncu-raw.csv").open()))[1:]  # the first row holds the units
    return [{"kernel": row["Kernel Name"], **{key: float(row[metric].replace(",", "")) for metric, key in NCU_METRICS.items()}}
            for row in rows]


def alone(folder: Path) -> dict[str, dict]:
    """Per size and kernel: each phase's median ms, SM clock and power, in the order they ran."""
    out: dict[str, dict] = {}
    for size in ("4096", "8192"):
        document = json.loads((folder / f"clocks-{size}.json").read_text())
        by_kernel: dict[str, dict] = collections.defaultdict(lambda: collections.defaultdict(list))
        for phase in document["phases"]:
            kernel = phase["phase"].removesuffix(" alone")
            for key, value in (("median_ms", phase[f"{kernel}_median_ms"]), ("sm_clock_mhz", phase["sm_clock_mhz"]),
                               ("power_w", phase["power_w"])):
                by_kernel[kernel][key].append(value)
        out[size] = {kernel: dict(values) for kernel, values in by_kernel.items()}
    return out


def span(values: list[float], digits: int = 4) -> str:
    return f"{min(values):.{digits}f}-{max(values):.{digits}f}" if values else "-"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flags", type=Path, required=True)
    ap.add_argument("--watched", type=Path, required=True)
    ap.add_argument("--probes", type=Path, required=True)
    ap.add_argument("--pipeline", type=Path, nargs="+", required=True,
                    help="the runs of pipeline_watched_h200.sh: watch_rows's first form, then as it is now")
    ap.add_argument("--ncu", type=Path, required=True, help="the h6 and h7 ncu profile directory at 4096^3")
    ap.add_argument("--clocks", type=Path, required=True, help="the folder of clocks_under_load.py's two runs")
    args = ap.parse_args()
    document = {
        "card": "NVIDIA H100 80GB HBM3 (lent as nvidia-h200: an H100 came)",
        "date": "2026-11-26",
        "host": (args.flags / "host.txt").read_text(),
        "commands": {
            "flags": "ROUNDS=3 bash benchmarks/gpu/flag_flow_h200.sh",
            "watched": 'ROUNDS=4 ONLY="bus|, 4 row blocks|watched" bash benchmarks/gpu/flag_flow_h200.sh',
            "probes": "bash benchmarks/gpu/issue33_probes_h200.sh",
            "pipeline": "bash benchmarks/gpu/pipeline_watched_h200.sh (three hosts; FLOWS=1 on the second)",
            "clocks": "python3 benchmarks/gpu/experiments/clocks_under_load.py --size S --kernels "
                      "h6,h6-cl2-tma,cublaslt-3,library,torch.mm --no-in-turn --cycles 3 (S = 4096, 8192)",
            "ncu": "nsprof profile --op hgemm --stage h6,h7 --size 4096 --tool ncu --metrics default,stalls,memory,compute "
                   "--repeat 1",
        },
        "note": "1024^3 float32 flows, host memory to host memory; each flow verified on poisoned buffers against "
                "float64 first (tolerance 1e-4 FP32, 5e-3 TF32), then timed: median of 300 flows between CUDA events "
                "after warm-up, per round; rounds interleave the flows; two processes",
        "flags_run": flow_table(args.flags),
        "watched_run": flow_table(args.watched),
        "copy_landing": landing(args.probes / "copy-landing.jsonl"),
        "h6_cluster_tma": cluster(args.probes),
        "nsprof_pipeline": {f"host {n}, watch_rows {'first form' if n == 1 else 'as now'}": pipeline_runs(folder)
                            for n, folder in enumerate(args.pipeline, 1)},
        "watched_rerun": flow_table(args.pipeline[1]),
        "h6_and_library_under_ncu": ncu_kernels(args.ncu),
        "hgemm_alone_at_the_power_limit": alone(args.clocks),
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    for name in ("flags_run", "watched_run", "watched_rerun"):
        print(f"\n{name}\n\n| flow | kind | median ms (min-max of rounds) | error |\n| --- | --- | --- | --- |")
        for key, row in document[name].items():
            flow, kind = key.split(" | ")
            error = "not verified" if row["rel_error"] is None and row["ok"] is None else \
                f"{row['rel_error']:.1e}" if row["ok"] else f"FAILED {row.get('message', '')}"
            print(f"| {flow} | {kind} | {span(row['median_ms'])} | {error} |")
    print("\n| copy | copy ms | first 256 KiB whole, us | first 1 MiB, us | last piece, us |\n| --- | --- | --- | --- | --- |")
    for case, values in document["copy_landing"].items():
        print(f"| {case} | {statistics.median(values['copy_ms']):.3f} | {span(values['first_256k_whole_us'], 1)} | "
              f"{span(values['first_1m_whole_us'], 1)} | {span(values['last_us'], 1)} |")
    print("\n| watch_rows | stage | variant | run 1 ms (spread) | run 2 ms (spread) |\n| --- | --- | --- | --- | --- |")
    for form, runs in document["nsprof_pipeline"].items():
        for one, two in zip(runs["run 1"], runs["run 2"]):
            print(f"| {form} | {one['stage']} | {one['variant']} | {one['median_ms']:.3f} ({one['spread_pct']:.1f}%) | "
                  f"{two['median_ms']:.3f} ({two['spread_pct']:.1f}%) |")
    print("\n| kernel | us | L2 GB | DRAM read MB | cluster |\n| --- | --- | --- | --- | --- |")
    for k in document["h6_and_library_under_ncu"]:
        print(f"| {k['kernel'][:40]} | {k['duration_ns'] / 1e3:.2f} | {k['l2_bytes'] / 1e9:.3f} | "
              f"{k['dram_read_bytes'] / 1e6:.1f} | {k['cluster_size']:.0f} |")
    print("\n| size | kernel | ms per launch (3 phases) | median | SM MHz | W |\n| --- | --- | --- | --- | --- | --- |")
    for size, by_kernel in document["hgemm_alone_at_the_power_limit"].items():
        for kernel, v in by_kernel.items():
            print(f"| {size}³ | {kernel} | {span(v['median_ms'])} | {statistics.median(v['median_ms']):.4f} | "
                  f"{span(v['sm_clock_mhz'], 0)} | {span(v['power_w'], 0)} |")
    print("\n| size | cluster / declared | cluster / torch.mm | declared / torch.mm |\n| --- | --- | --- | --- |")
    for size, values in document["h6_cluster_tma"].items():
        if size != "failed":
            print(f"| {size} | {span(values['over_declared'], 3)} | {span(values['ratio_torch'], 3)} | "
                  f"{span(values['declared_ratio_torch'], 3)} |")


if __name__ == "__main__":
    main()
