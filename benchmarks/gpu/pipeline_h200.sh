#!/usr/bin/env bash
# `nsprof pipeline` on the H200: the bus measured by `nsprof ceilings`, the whole flow of a matrix
# product at 1024^3 and 4096^3 in every variant with its nsys breakdown, a sweep of the row-block
# count, the bus with both directions busy, other schedules, and the GPU tests of the pipeline and the ceilings.
# Run from the repository root on the GPU machine with .devkit and .whl carried.
set -uo pipefail
source .devkit/setup.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
export PYTHONUNBUFFERED=1 COLUMNS=100
R=$OUT/run; mkdir -p "$R"
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.width.current --format=csv; nsys --version; python3 -c "import cupy; print('cupy', cupy.__version__)"; } > "$R/versions.txt" 2>&1
# the bus, measured and merged into the committed ceilings (other values untouched)
python3 -m nsprof ceilings --no-save --json > "$R/ceilings.json" 2> "$R/ceilings.err"
python3 - "$R/ceilings.json" <<'PY'
import json, sys
new = json.load(open(sys.argv[1]))["ceilings"]
path = "profiles/ceilings-nvidia-h200.json"
doc = json.load(open(path))
for key in ("h2d_tbyte_per_s", "d2h_tbyte_per_s"):
    doc["ceilings"][key] = new[key]
json.dump(doc, open(path, "w"), indent=2); open(path, "a").write("\n")
print({k: new[k]["value"] for k in new})
PY
cp profiles/ceilings-nvidia-h200.json "$R/"
python3 -m nsprof pipeline --size 1024 --out /tmp/pipe > "$R/pipeline-1024.txt" 2>&1; echo "exit $?" >> "$R/pipeline-1024.txt"
python3 -m nsprof pipeline --size 4096 --no-cold --out /tmp/pipe4 > "$R/pipeline-4096.txt" 2>&1; echo "exit $?" >> "$R/pipeline-4096.txt"
for st in v9 v10; do for c in 1 2 3 4 5 6 8; do
  python3 -m nsprof pipeline --stage $st --size 1024 --chunks $c --no-cold --no-nsys --json > "$R/sweep-$st-c$c.json" 2>&1
done; done
python3 - "$R" <<'PY' > "$R/sweep.txt"
import json, glob, sys
for f in sorted(glob.glob(sys.argv[1] + "/sweep-*.json")):
    try: d = json.load(open(f))
    except Exception as e: print(f, "unreadable", e); continue
    print(f.split("/")[-1], [(r["variant"], r["status"], round(r["median_ms"] or 0, 4), (r.get("message") or "")[:50]) for r in d["records"]])
PY
# the bus with both directions at once, and the schedules tried beside the default (benchmarks/records/2026-11-22-h200-pipeline/h200-pipeline.md)
PYTHONPATH=$PWD:$PYTHONPATH python3 benchmarks/gpu/experiments/pipeline_tiles.py direct > "$R/direct.txt" 2>&1
PYTHONPATH=$PWD:$PYTHONPATH python3 benchmarks/gpu/experiments/pipeline_tiles.py > "$R/tiles.txt" 2>&1
timeout 300 python3 -m pytest -q -m gpu tests/test_pipeline.py tests/test_ceilings.py -p no:cacheprovider > "$R/gpu-tests.txt" 2>&1; echo "gpu tests exit $?" >> "$R/gpu-tests.txt"
tar czf "$OUT/run.tgz" -C "$OUT" run
tar czf "$OUT/captures.tgz" --exclude=nsys.nsys-rep -C /tmp pipe pipe4
ls -la "$OUT"
