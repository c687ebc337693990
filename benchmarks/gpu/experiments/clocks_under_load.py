"""Is a stage slower alone than in turn with the library because of its own power draw? Runs HGEMM kernels at
one size, each alone for a few seconds of back-to-back launches (and, with --in-turn, the first two
alternating), while nvidia-smi samples the SM clock and the power draw every 50 ms and NVML's energy counter
is read at each phase's ends; prints each phase's median clock, power, energy per launch, per-launch times and
its wall time per launch (well past the kernel's time, the host could not keep up and the GPU idled between
launches: the phase does not measure the kernel's own draw).
Each cycle runs every phase once; the cycles repeat the order.

Kernels (--kernels, comma separated): library (the h7 stage as `nsprof bench` tunes it: the fastest verified of
CuPy's call and cuBLASLt's algorithms; its pick is printed), cublaslt-3 (cuBLASLt's algorithm 3 alone, the pick
of the HGEMM record at 4096^3), torch.mm, and h6 plans as h6_plans.py names them, with compile-time knobs after
"+": "h6:auto", "h6:hgemm_h6_pp_128x128+H6_PP_STAGES=5" ("h6" is h6:auto, "h6-cl2-tma"
h6:hgemm_h6_cl2_tma_256x256).

    python3 benchmarks/gpu/experiments/clocks_under_load.py --out $OUT/clocks.json
        [--size 2048] [--kernels h6,torch.mm] [--in-turn] [--cycles 2] [--phase-s 3]

The defaults are the first run's (benchmarks/experiments/2026-11-26-h100-clocks-under-load/h100-clocks-under-load.json):
h6 and torch.mm at 4096^3, in turn, two cycles.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

PHASE_S = 3.0


ALIASES = {"h6": "h6:auto", "h6-cl2-tma": "h6:hgemm_h6_cl2_tma_256x256"}


def h6_launcher(spec: str, problem, tools, op):
    """h6:PLAN[+KNOB=V...]: the plan as h6_plans.py resolves it, built with those knobs."""
    from benchmarks.gpu.experiments.h6_plans import plan_knobs, resolve_plan
    from nsprof.ladder.registry import get_stage

    plan, knobs, _ = plan_knobs(spec.split(":", 1)[1])
    variant, shape, split, tail = resolve_plan(get_stage("hgemm", "h6"), plan)
    return op.workload.launcher(variant, problem, tools, tile_shape=shape, split_k=split, tail=tail, defines=knobs)


def kernels(names: list[str], problem, size, tools, op):
    """name -> a launch of it, each verified first."""
    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.stage_launch import stage_launcher
    from nsprof.ladder_runs.torch_baseline import torch_launch
    from nsprof.launch.measure import verify

    h6, h7 = get_stage("hgemm", "h6"), get_stage("hgemm", "h7")
    found = {}
    for name in names:
        if name == "torch.mm":
            found[name] = torch_launch(op.workload.library_call(h7, problem), "fp16")
            continue
        if name in ("library", "cublaslt-3"):
            launcher = stage_launcher(h7, problem, tools, "cuBLASLt 3" if name == "cublaslt-3" else None)
        else:
            launcher = h6_launcher(ALIASES.get(name, name), problem, tools, op)
        assert verify(launcher, problem) <= h6.tolerance(size), name
        print(name, "runs", getattr(launcher, "tile_label", None) or getattr(launcher, "label", ""),
              getattr(launcher, "entry", ""), flush=True)
        found[name] = launcher.run
    return found


def energy_mj():
    """NVML's energy counter of GPU 0 (millijoules since the driver loaded), or None where NVML will not say."""
    import ctypes
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        handle, value = ctypes.c_void_p(), ctypes.c_ulonglong()
        if nvml.nvmlInit_v2() or nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)):
            return None
        return None if nvml.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(value)) else value.value
    except OSError:
        return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", default="4096")
    ap.add_argument("--kernels", default="h6,torch.mm")
    ap.add_argument("--in-turn", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--cycles", type=int, default=2)
    ap.add_argument("--phase-s", type=float, default=PHASE_S)
    args = ap.parse_args()
    import cupy as cp
    import numpy as np

    from nsprof.ladder.registry import get_op
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes

    tools, op = launch_tools(), get_op("hgemm")
    size = parse_sizes([args.size], op.dims)[0]
    problem = op.workload.problem(tools.xp, size)
    names = args.kernels.split(",")
    launch = kernels(names, problem, size, tools, op)
    sampler = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw", "--format=csv,noheader,nounits",
                                "-lms", "50"], stdout=subprocess.PIPE, text=True)
    phases = []

    def run(name, chosen: list[str]):
        events = []
        joules = energy_mj()
        start = time.time()
        while time.time() - start < args.phase_s:  # chunks of 100 launches queued ahead, one wait per chunk
            chunk = []
            for _ in range(100 // len(chosen)):
                for kernel in chosen:
                    a, b = cp.cuda.Event(), cp.cuda.Event()
                    a.record()
                    launch[kernel]()
                    b.record()
                    chunk.append((kernel, a, b))
            if events:
                events[-1][2].synchronize()  # the previous chunk: this one is queued behind it, the GPU never idles
            events += chunk
        events[-1][2].synchronize()
        end = time.time()
        spent = energy_mj()
        times = {k: [cp.cuda.get_elapsed_time(a, b) for kernel, a, b in events if kernel == k] for k in chosen}
        # the phase's time per launch, the longer of the host's queuing and the GPU's: well past the kernel's own
        # time, the GPU idled between launches and the phase is not the kernel's power draw (h6 at 2048^3:
        # 47.6-49.7 us against 28; benchmarks/records/2026-12-01-h200-hgemm-decode-rings, section 5)
        phases.append({"phase": name, "start": start, "end": end, "launches": len(events),
                       "wall_us_per_launch": (end - start) / len(events) * 1e6,
                       "mj_per_launch": (spent - joules) / len(events) if joules is not None and spent is not None
                       else None, **{f"{k}_median_ms": float(np.median(v)) for k, v in times.items() if v}})
        time.sleep(1.0)  # the clock settles between phases

    time.sleep(1.0)
    for _ in range(args.cycles):
        for name in names:
            run(f"{name} alone", [name])
        if args.in_turn:
            run("in turn", names[:2])
    sampler.terminate()
    samples = []
    for line in sampler.stdout.read().splitlines():
        parts = [p.strip() for p in line.split(",")]
        try:
            stamp = time.mktime(time.strptime(parts[0].split(".")[0], "%Y/%m/%d %H:%M:%S")) + float("0." + parts[0].split(".")[1])
            samples.append((stamp, float(parts[1]), float(parts[2])))
        except (ValueError, IndexError):
            continue
    offset = 0.0  # nvidia-smi prints local time; the machine runs in UTC like time.time()
    for phase in phases:
        inside = [(c, p) for t, c, p in samples if phase["start"] + 0.3 <= t + offset <= phase["end"]]
        phase["sm_clock_mhz"] = float(np.median([c for c, _ in inside])) if inside else None
        phase["power_w"] = float(np.median([p for _, p in inside])) if inside else None
        phase["samples"] = len(inside)
        print(phase, flush=True)
    Path(args.out).write_text(json.dumps({"size": args.size, "kernels": names, "phases": phases, "samples": samples},
                                         indent=1))


if __name__ == "__main__":
    main()
