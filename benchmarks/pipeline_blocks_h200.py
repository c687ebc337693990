"""Which row-block partition makes the streamed flow fastest at 1024^3 (cuBLAS), on the GPU."""
import json, sys
import numpy as np
from nsprof.launch import pipeline as P
from nsprof.launch.measure import time_launches
from nsprof.launch.tools import launch_tools
from nsprof.registry import get_stage

tools = launch_tools()
stage = get_stage("sgemm", sys.argv[1] if len(sys.argv) > 1 else "v9")
size = (1024, 1024, 1024)
a, b = P.host_inputs(size, "float32")
def parts(sizes):
    bounds = np.cumsum([0] + sizes)
    return [(int(x), int(y)) for x, y in zip(bounds[:-1], bounds[1:])]
candidates = {
    "uniform4": [256] * 4, "uniform8": [128] * 8, "uniform16": [64] * 16,
    "taper4": [171, 341, 341, 171], "taper5": [128, 256, 256, 256, 128], "taper6": [64, 192, 256, 256, 192, 64],
    "taper7": [64, 128, 192, 256, 192, 128, 64], "grow": [64, 128, 256, 256, 192, 128], "x128": [128, 256, 256, 256, 64, 64],
    "small-first": [64, 192, 256, 256, 256], "ends64": [64, 224, 224, 224, 224, 64],
}
orig = P.row_blocks
for name, sizes in candidates.items():
    P.row_blocks = lambda m, chunks, s=sizes: parts(s)
    pipe = P.Pipeline(stage, size, tools, a, b, len(sizes))
    with pipe.main:
        pipe.streamed()
    pipe.main.synchronize()
    err = P.relative_error(pipe.pinned["C"], a, b)
    with pipe.main:
        t = time_launches(pipe.streamed, 200, None)
    line = {"name": name, "sizes": sizes, "median_ms": round(t.median_ms, 4), "spread": round(t.summary()["spread_pct"], 1), "err": err}
    try:
        pipe.capture_graph()
        with pipe.main:
            g = time_launches(pipe.replay, 200, None)
        line["graph_ms"] = round(g.median_ms, 4)
    except Exception as e:
        line["graph"] = str(e)[:40]
    print(json.dumps(line), flush=True)
