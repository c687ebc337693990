"""The Triton stages' record (issue 29): h200-triton.json and .md in benchmarks/records/2026-11-26-h200-triton/,
from the bench results files of benchmarks/gpu/triton_stages_h200.sh (two runs per ladder, copied into that folder).

    python3 benchmarks/triton_record.py
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "benchmarks" / "records" / "2026-11-26-h200-triton"  # the bench results files, beside the record
RECORD = RUNS / "h200-triton"  # .md and .json
TARGETS = {"h8": ("hgemm", 90), "v12t": ("sgemm", 80), "s8": ("sgemv", 90)}  # issue 29: % of cuBLAS
SHOWN = {"sgemm": ("v8", "v9", "v11", "v9t", "v12", "v12t"), "hgemm": ("h6", "h7", "h8"), "sgemv": ("s6", "s7", "s8"),
         "sgemv-shapes": ("s6", "s7", "s8")}  # sgemv-shapes: the README table's SGEMV shapes, a later call


def load() -> dict:
    runs = {name: [json.loads((RUNS / f"bench-{name}-{run}.json").read_text()) for run in (1, 2)] for name in SHOWN}
    first = runs["sgemm"][0]
    rows = []
    for name, docs in runs.items():
        op = name.split("-")[0]
        for stage in SHOWN[name]:
            for size in dict.fromkeys(r["size"] for r in docs[0]["results"]):
                found = [next(r for r in doc["results"] if r["stage"] == stage and r["size"] == size) for doc in docs]
                rows.append({"op": op, "stage": stage, "title": found[0]["title"], "size": size,
                             "runs": [_run(r) for r in found]})
    return {"recorded": sorted(doc["created"] for docs in runs.values() for doc in docs), "device": first["env"],
            "versions": (RUNS / "versions.txt").read_text(),
            "commands": sorted({doc["command"] for docs in runs.values() for doc in docs}),
            "script": "benchmarks/gpu/triton_stages_h200.sh", "targets": TARGETS, "rows": rows,
            "gpu_tests": (RUNS / "gpu-tests.txt").read_text().strip().splitlines()[-2]}


def _run(r: dict) -> dict:
    details = r.get("details") or {}
    compiled = details.get("compiled") or {}
    return {"status": r["status"], "tile": r["tile"], "median_ms": r["median_ms"], "spread_pct": r["spread_pct"],
            "tflops": r["tflops"], "tbytes_per_s": r["tbytes_per_s"], "pct_cublas": r["pct_cublas"],
            "rel_error": r["rel_error"], "steps_ms": r.get("steps_ms"),
            "tried": len(details["autotune"]["trials"]) if details else None,
            "registers": compiled.get("registers"), "spills": compiled.get("spills"),
            "shared_bytes": compiled.get("shared_bytes"), "sass": compiled.get("sass")}


def markdown(doc: dict) -> str:
    env = doc["device"]
    lines = [
        "# Triton stages on the NVIDIA H200 (issue 29)", "",
        f"Recorded {doc['recorded'][0]} to {doc['recorded'][-1]} on the lent H200 ({env['device']}, "
        f"{env['sm_count']} SMs, driver {env['driver']}, "
        f"CUDA runtime {env['runtime_cuda']}, CuPy {env['cupy']}; Triton 3.6.0, PyTorch 2.11.0 for Triton's driver) by "
        f"`{doc['script']}`: two runs of each command, in fresh processes:", "",
        *[f"    {command}" for command in doc["commands"]], "",
        "Each Triton stage is tuned by nsprof before it is timed (every declared configuration compiled, verified "
        "against float64 with a poisoned output, timed for 20 launches after 5; the fastest kept), then verified on "
        "fresh inputs and timed like every stage: CUDA events around each launch after warm-up, median and "
        "interquartile spread. % cuBLAS is against cuBLAS in the stage's precision in the same run. "
        f"GPU tests in the same session: {doc['gpu_tests']} (every stage at square, ragged, tiny and tall/flat "
        "sizes).", "",
        "| stage | title | size | run | kept configuration | median ms | spread | TFLOP/s | GB/s | % cuBLAS |",
        "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in doc["rows"]:
        for index, run in enumerate(row["runs"], 1):
            lines.append(f"| {row['stage']} | {row['title']} | {row['size']} | {index} | {run['tile']} | "
                         f"{run['median_ms']:.4f} | {run['spread_pct']:.1f}% | {run['tflops']:.1f} | "
                         f"{run['tbytes_per_s'] * 1e3:,.0f} | {run['pct_cublas']:.0f} |")
    lines += ["", "## Against the targets", ""]
    for stage, (op, target) in doc["targets"].items():
        found = [(row["size"], run["pct_cublas"]) for row in doc["rows"] if row["stage"] == stage for run in row["runs"]]
        said = "; ".join(f"{size}: {pct:.0f}%" for size, pct in found)
        lines.append(f"- **{stage}** ({op}, target at least {target}% of cuBLAS): {said}.")
    lines += ["", "## What Triton compiled (the kept configuration, first run)", "",
              "| stage | size | registers | spills | shared KB | HGMMA (wgmma) | UTMALDG (TMA) | LDGSTS (cp.async) | FFMA |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in doc["rows"]:
        run = row["runs"][0]
        if run["registers"] is None:
            continue
        sass = run["sass"] or {}
        lines.append(f"| {row['stage']} | {row['size']} | {run['registers']} | {run['spills']} | "
                     f"{run['shared_bytes'] / 1024:.0f} | {sass.get('wgmma', 0)} | {sass.get('tma_load', 0)} | "
                     f"{sass.get('cp_async', 0)} | {sass.get('ffma', 0)} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    doc = load()
    RECORD.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")
    RECORD.with_suffix(".md").write_text(markdown(doc) + NOTES)


NOTES = """
## Notes

- **v12t (TF32)** reads B K-major: TF32 wgmma takes only K-major operands from shared memory, and fed
  the row-major B, Triton 3.6 ran at 24% of cuBLAS TF32 (an earlier run of this script, the same day). B is
  transposed to N x K first by a small Triton kernel, timed with the stage and alone (`steps_ms`).
- **The TMA configurations** ("tma": a persistent kernel reading through tensor descriptors) were added after
  `benchmarks/gpu/experiments/triton_hgemm_tma.py` measured them on this H200 (50 launches after 10, each
  configuration): at 4096^3, cuBLAS 0.1826 ms, h8's cp.async kernel 0.1909 ms (96%), TMA 0.1874 ms, persistent
  TMA 0.1845 ms (99%); at 8192^3, cuBLAS 1.6034 ms (7% spread; 1.7105 ms when timed again after), cp.async
  1.7472 ms, persistent TMA 1.6593 ms.
- **Host time per launch.** The first record with the TMA kernel (the same day) had h8 at 88-89% of cuBLAS
  at 4096^3: it built its three tensor descriptors at every launch, and Triton encodes a TMA descriptor on
  the host for each, so the launches did not keep the GPU fed. Built once per set of arrays (this record),
  h8 runs 0.1995-0.2081 ms there (93-100%; cuBLAS itself spread 11-12% in those runs).
- **s8 at 256 x 2^20** reaches 52% of cuBLAS (2.21 TB/s) against 110% at 32768^2: it does not split K, so
  256 rows make 256 programs, about two per SM, too few loads in flight; s6 splits K there (103%).
- **BF16, FP8 and INT8 tensor counters** (`tensor-counters.json`, ncu on a 1024^3 product of
  each through PyTorch): a bf16 `torch.mm` (cuBLAS `nvjet_sm90_tst`, wgmma) read 2,147,483,648 =
  2*1024^3 by `sm__ops_path_tensor_src_bf16_dst_fp32`; an e4m3 `torch._scaled_mm` (`nvjet_sm90_qqtst`)
  the same by `sm__ops_path_tensor_src_fp8`; a `torch._int_mm` (CUTLASS IMMA) the same by
  `sm__ops_path_tensor_src_int8`. All three joined nsprof's default metrics; each counts against its
  own roof (FP8 and INT8: 1,979 dense TFLOP/s and TOPS on the H200's datasheet).
- At 1024^3 every Triton stage is host-bound: Triton's Python launch takes 30-40 us (analyze's stage table,
  `profiles/examples/h200-*-triton-*`), longer than the kernel.
"""

if __name__ == "__main__":
    main()
