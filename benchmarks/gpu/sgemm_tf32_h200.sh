#!/usr/bin/env bash
# SGEMM's TF32 stages on the H200 (issue 22), in one run of under 8 minutes; installs nothing (the
# device has CuPy and CUDA 13) and writes to $OUT only. Run from the repository root:
#   bash benchmarks/gpu/sgemm_tf32_h200.sh
# 1. verify: v11 (each of its tiles, forced) and v9t (cuBLAS TF32) at square, ragged and extreme
#    shapes, each point on fresh inputs against float64 (verify.jsonl; a kernel that breaks the CUDA
#    context costs only its own stage: one process per stage);
# 2. the GPU-marked pytest tests of v9t and v11 (gpu-tests.txt);
# 3. nsprof bench of every SGEMM stage and both baselines at 1024, 4096, 8192, 1000x1200x800 and the
#    nearest aligned size 1024x1280x768 (bench-sgemm.json; v11 alone in bench-sgemm-v11.json, so that
#    a fault there cannot stop the others' records);
# 4. a small knob sweep of v11 with benchmarks/gpu/tune_stage.py (tune-v11-*.txt);
# then a compact summary (also in summary.txt).
set -uo pipefail
[ -f .devkit/setup.sh ] && source .devkit/setup.sh
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 COLUMNS=120 NSPROF_DATA_DIR=/tmp/nsprof-data
OUT=${OUT:?set OUT to the results directory}
mkdir -p "$OUT"
START=$SECONDS
BUDGET=${BUDGET:-460}  # seconds for all steps; the summary needs a few more
left() { local l=$((BUDGET - (SECONDS - START))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() {  # step NAME CAP COMMAND...: run with a timeout of min(CAP, what is left), note the exit status
    local name=$1 cap=$2; shift 2
    local t; t=$(left "$cap")
    if [ "$t" -le 5 ]; then echo "$name: skipped (out of time)" >> "$OUT/steps.txt"; return; fi
    timeout "$t" "$@"; echo "$name: exit $? after $((SECONDS - START)) s (limit $t s)" >> "$OUT/steps.txt"
}

{ date -u; nvidia-smi -L; python3 -c "import cupy; print('cupy', cupy.__version__)"; git log -1 --oneline 2>/dev/null; } \
    > "$OUT/versions.txt" 2>&1

SHAPES="1024 4096 1000x1200x800 1000x1200x808 17x33x9 4095x4097x4093 1x1x1 128x4096x1024 4096x128x1024"
for stage in v11 v9t; do
    step "verify $stage" 80 python3 - "$stage" $SHAPES >> "$OUT/verify.jsonl" 2>> "$OUT/verify.err" <<'EOF'
import json, sys
from nsprof.ladder_runs.bench import unavailable_reason
from nsprof.launch.measure import verify
from nsprof.launch.tools import launch_tools
from nsprof.ladder.registry import get_op, get_stage
from nsprof.sizes import parse_sizes

name, shapes = sys.argv[1], sys.argv[2:]
tools, op = launch_tools(), get_op("sgemm")
stage = get_stage("sgemm", name)
reason = unavailable_reason(stage, tools)
tiles = [t.shape for t in stage.tiles] or [None]
for size in parse_sizes([",".join(shapes)], op.dims):
    for tile in tiles:
        row = {"stage": name, "size": "x".join(map(str, size)), "tile": tile}
        if reason:
            print(json.dumps({**row, "status": "not available", "message": reason}), flush=True)
            continue
        problem = op.workload.problem(tools.xp, size, seed=sum(size))
        launcher = op.workload.launcher(stage, problem, tools, tile_shape=tile)
        err = verify(launcher, problem)
        ok = err <= stage.tolerance(size)
        print(json.dumps({**row, "plan": launcher.tile_label, "padded": launcher.padded_shape is not None,
                          "rel_error": err, "status": "ok" if ok else "FAILED"}), flush=True)
        del problem, launcher
        tools.xp.get_default_memory_pool().free_all_blocks()
EOF
done

step "gpu tests" 100 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_stages.py \
    -k "v11 or v9t or tf32 or cublas" > "$OUT/gpu-tests.txt" 2>&1

SIZES=1024,4096,8192,1000x1200x800,1024x1280x768
step "bench sgemm" 200 python3 -m nsprof bench --op sgemm --stage 1,2,3,4,5,6,7,8,9,9t,10 --size $SIZES \
    --save-as "$OUT/bench-sgemm.json" > "$OUT/bench-sgemm.txt" 2>&1
step "bench v11" 60 python3 -m nsprof bench --op sgemm --stage v11 --size $SIZES \
    --save-as "$OUT/bench-sgemm-v11.json" > "$OUT/bench-sgemm-v11.txt" 2>&1

step "tune v11 tiles" 45 python3 benchmarks/gpu/tune_stage.py --stage v11 --sizes 4096,8192,1000x1200x800 \
    --plans auto,128x256/1,128x128/1,128x64/1 > "$OUT/tune-v11-tiles.txt" 2>&1
step "tune v11 128x256" 50 python3 benchmarks/gpu/tune_stage.py --stage v11 --sizes 4096,8192 --plans 128x256/1 \
    --knobs "V11_STAGES_256=3,4;V11_GROUP_ROWS=1024,2048,4096" > "$OUT/tune-v11-256.txt" 2>&1
step "tune v11 128x128" 40 python3 benchmarks/gpu/tune_stage.py --stage v11 --sizes 4096,8192 --plans 128x128/1 \
    --knobs "V11_STAGES_128=4,6,7" > "$OUT/tune-v11-128.txt" 2>&1

python3 - "$OUT" <<'EOF' | tee "$OUT/summary.txt"
import json, pathlib, sys

out = pathlib.Path(sys.argv[1])
print("== verify (v11 per tile, v9t): failures and worst errors")
rows = [json.loads(line) for line in (out / "verify.jsonl").read_text().splitlines() if line.startswith("{")] \
    if (out / "verify.jsonl").exists() else []
for stage in ("v11", "v9t"):
    mine = [r for r in rows if r["stage"] == stage]
    bad = [r for r in mine if r["status"] != "ok"]
    worst = max((r for r in mine if r.get("rel_error") is not None), key=lambda r: r["rel_error"], default=None)
    print(f"{stage}: {len(mine)} points, {len(bad)} not ok"
          + (f"; worst {worst['rel_error']:.2e} at {worst['size']} {worst['tile']}" if worst else ""))
    for r in bad[:8]:
        print(f"  {r['size']} {r['tile']}: {r['status']} {r.get('rel_error', r.get('message'))}")
records = []
for name in ("bench-sgemm.json", "bench-sgemm-v11.json"):
    if (out / name).exists():
        records += [r for r in json.loads((out / name).read_text())["results"] if not (r.get("baseline_only") and name.endswith("v11.json"))]
print("== bench: TFLOP/s (% of the baseline named)")
sizes = list(dict.fromkeys(r["size"] for r in records))
print(f"{'stage':6}" + "".join(f"{s:>22}" for s in sizes))
for stage in dict.fromkeys(r["stage"] for r in records):
    cells = []
    for size in sizes:
        r = next((r for r in records if r["stage"] == stage and r["size"] == size), None)
        if r is None or r["status"] != "ok":
            cells.append(f"{(r or {}).get('status', '-'):>22}")
        else:
            pct = f"{r['pct_cublas']:.0f}% {r['baseline']}" if r["pct_cublas"] is not None else "-"
            cells.append(f"{r['tflops']:>9.1f} ({pct:>9})")
    print(f"{stage:6}" + "".join(cells))
for r in records:
    if r.get("steps_ms"):
        print(f"{r['stage']} {r['size']}: {r['median_ms']:.4f} ms, of which "
              + ", ".join(f"{k} {v:.4f} ms ({100 * v / r['median_ms']:.0f}%)" for k, v in r["steps_ms"].items()))
print("== ragged against the nearest aligned size (1000x1200x800 vs 1024x1280x768, TFLOP/s)")
for stage in dict.fromkeys(r["stage"] for r in records):
    got = {r["size"]: r["tflops"] for r in records if r["stage"] == stage and r["status"] == "ok"}
    if "1000x1200x800" in got and "1024x1280x768" in got:
        print(f"{stage}: {got['1000x1200x800']:.1f} vs {got['1024x1280x768']:.1f} ({100 * got['1000x1200x800'] / got['1024x1280x768']:.0f}%)")
print("== tuning sweeps (best verified point per size)")
for name in sorted(out.glob("tune-v11-*.txt")):
    points = [json.loads(line) for line in name.read_text().splitlines() if line.startswith("{")]
    for size in dict.fromkeys(p["size"] for p in points):
        ok = [p for p in points if p["size"] == size and p["tflops"] == p["tflops"]]
        best = max(ok, key=lambda p: p["tflops"], default=None)
        print(f"{name.stem} {size}: {len(ok)}/{sum(p['size'] == size for p in points)} verified"
              + (f"; best {best['tflops']:.1f} TFLOP/s ({best['pct_cublas']:.0f}% {best['baseline']}) {best['plan']} {best['knobs']}" if best else ""))
print("== steps"); print((out / "steps.txt").read_text() if (out / "steps.txt").exists() else "none")
EOF
