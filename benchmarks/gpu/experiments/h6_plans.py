"""Issue 60's probe of h6's launch plans: each plan verified, then timed paired with torch.mm (--against
library: with the faster, paired, of torch.mm and the library stage's kept cuBLASLt candidate, as nsprof
bench pairs), on cold inputs as nsprof bench times (--warm-inputs: one set of buffers).

A plan is TILE[/SPLIT][@TAIL] (SPLIT "auto": the launcher's split for that tile): a declared tile shape ("128x256") or a kernel entry (declared, or one of
candidates(): "hgemm_h6_sk_64x256"), a split-K factor, and for a stream-K tile how many of the last tiles
its blocks share out by k steps (0: none; the launcher's own rule shares a last wave at most 0.6
full). "auto" is the launcher's choice. Prints one JSON line a point
(appended to --out too) and a table; a plan that fails to launch or verify is a failed row, not a
failed probe. A knob that deepens a ring past the shared memory its tile declares needs +SMEM=BYTES in the plan;
without it the point is refused before launch (a launch would fault and end the process).

    python3 benchmarks/gpu/experiments/h6_plans.py --sizes 3072,4096 \\
        --plans auto,128x256@0,128x256@156,128x256@288 --out $OUT/h6-plans.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import itertools
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def candidates(declared):
    """Undeclared h6 entries (kernels/hgemm/h6_wgmma_tma.cu), each the declared tile of its shape as the
    kernel runs it: the stream-K forms of the 64-row tiles and of 128 x 128 (persistent, sharing tiles by
    k steps), 128 x 256 split over K like hgemm_h6_split_128x128, the ping-pong 128 x 128 tile with C staged
    through shared memory (hgemm_h6_pp_128x128) and its cooperative form (hgemm_h6_128x128), the ping-pong ones
    in clusters of two (hgemm_h6_pp_cl2_256x128, hgemm_h6_pp_cl2_128x256; the declared hgemm_h6_pp_cl2_tma_256x128 stores C by TMA), ping-pong 64 x 64 with C stored by TMA
    (hgemm_h6_pp_tma_64x64: a warpgroup's staging box in place of the warps' 2 KB tiles), 128 x 192 with C
    stored by the threads through a staging tile (hgemm_h6_128x192), tiles in side-by-side pairs that share A
    (hgemm_h6_cl2a_*, named by the pair's shape), and three tiles that take their tensor maps by value
    (hgemm_h6_byval_*)."""
    by_entry = {tile.entry: tile for tile in declared}

    def sk(entry):
        # persistent, a block's tiles are not all its last: C goes out through the 16 KB staging tile (H6_EPI 1),
        # which a declared tile that is not persistent stores from the registers (the kernel's ALL_DIRECT) and so
        # leaves out of its shared memory
        tile = by_entry[entry]
        smem = tile.dynamic_smem_bytes + (0 if tile.persistent else 16384)
        return dataclasses.replace(tile, entry=entry.replace("hgemm_h6_", "hgemm_h6_sk_"), persistent=True,
                                   stream_k=True, sums_in_workspace=True, max_split_k=1, dynamic_smem_bytes=smem)

    split = dataclasses.replace(by_entry["hgemm_h6_split_128x128"], bn=256, entry="hgemm_h6_split_128x256")
    # the declared 128 x 128 tile is the ping-pong one that stores C by TMA; its form with C staged through 16 KB
    # of shared memory and stored by the threads, that form's cooperative twin (both warpgroups on one tile) and
    # its stream-K entry, and the ping-pong one in clusters of two that multicast B (a unit of 256 x 128)
    ping_pong = dataclasses.replace(by_entry["hgemm_h6_pp_tma_128x128"], entry="hgemm_h6_pp_128x128", tma_store=False,
                                    takes_over=None, dynamic_smem_bytes=1024 + 6 * 32768 + 16384 + 256)
    by_entry["hgemm_h6_128x128"] = dataclasses.replace(ping_pong, entry="hgemm_h6_128x128")
    # 128 x 192 with C staged through 16 KB of shared memory and stored by the threads (before TMA stores)
    staged_192 = dataclasses.replace(by_entry["hgemm_h6_tma_128x192"], entry="hgemm_h6_128x192", tma_store=False,
                                     dynamic_smem_bytes=1024 + 5 * 40960 + 16384 + 256)
    # ping-pong 64 x 64 with C stored by TMA: 13 stages of 16 KB and one 8 KB staging box per warpgroup
    small_tma = dataclasses.replace(by_entry["hgemm_h6_pp_64x64"], entry="hgemm_h6_pp_tma_64x64", tma_store=True,
                                    dynamic_smem_bytes=1024 + 13 * 16384 + 2 * 8192 + 256)
    # side-by-side pairs that share A (each block fetches 64 of A's rows and multicasts them): the 128 x 64 tile in
    # pairs (a unit of 128 x 128, K split as 128 x 64), the persistent cooperative 128 x 128 and 128 x 256 (TMA stores)
    pairs = (dataclasses.replace(by_entry["hgemm_h6_128x64"], entry="hgemm_h6_cl2a_128x128", bn=128, cluster=2,
                                 tma_boxes=((64, 64), (64, 64))),
             dataclasses.replace(by_entry["hgemm_h6_tma_128x256"], entry="hgemm_h6_cl2a_tma_128x256", bn=256, cluster=2,
                                 tma_boxes=((64, 64), (64, 64)), dynamic_smem_bytes=1024 + 6 * 32768 + 2 * 2 * 8192 + 256),
             dataclasses.replace(by_entry["hgemm_h6_tma_128x256"], entry="hgemm_h6_cl2a_tma_128x512", bn=512, cluster=2,
                                 tma_boxes=((64, 64), (64, 64))))
    # tensor maps passed by value (const __grid_constant__ parameters), not as device addresses: on cold inputs
    by_value = tuple(dataclasses.replace(by_entry[entry], entry=entry.replace("hgemm_h6_", "hgemm_h6_byval_"),
                                         maps_by_value=True, takes_over=None)
                     for entry in ("hgemm_h6_128x64", "hgemm_h6_16x256", "hgemm_h6_pp_tma_128x128"))
    return (*pairs, *by_value, small_tma, sk("hgemm_h6_64x256"), sk("hgemm_h6_64x128"), sk("hgemm_h6_128x128"), split,
            by_entry["hgemm_h6_128x128"], ping_pong, dataclasses.replace(ping_pong, entry="hgemm_h6_pp_cl2_256x128", bm=256, cluster=2),
            # ping-pong 64 x 256 warpgroup tiles in clusters of two (a unit of 128 x 256) that multicast B
            dataclasses.replace(ping_pong, entry="hgemm_h6_pp_cl2_128x256", bm=128, bn=256, cluster=2,
                                tma_boxes=((64, 64), (64, 64)), dynamic_smem_bytes=1024 + 5 * 40960 + 16384 + 256),
            staged_192)


KERNEL = Path(__file__).resolve().parents[3] / "kernels" / "hgemm" / "h6_wgmma_tma.cu"


@functools.cache
def kernel_source() -> str:
    return KERNEL.read_text()


def body_arguments(entry: str) -> tuple[str, list[str]] | None:
    """The body an h6 entry runs (h6_body or h6_pp_body) and its template arguments as the kernel's source writes
    them; None for an entry of another body. h6_body<BN, STAGES, PERSISTENT, CLUSTER, EPI[, SHARE[, BM[, A_ROWS[,
    PAIR_N]]]]>, h6_pp_body<WM, BN, STAGES, CLUSTER, EPI[, PAIR_N]>."""
    found = re.search(rf"\b{entry}\([^)]*\) \{{\s*H6_SM90A_ONLY\(\((h6_body|h6_pp_body)<([^>]*)>", kernel_source())
    return (found.group(1), [a.strip() for a in found.group(2).split(",")]) if found else None


def ring_bytes(entry: str, defines: tuple[str, ...]) -> int | None:
    """The shared memory an h6 entry's ring takes under `defines` (its depth a -D knob or the kernel's default), with
    the 1 KB of alignment slack: what the launch must give it at least (a staging tile of C comes on top). None for
    an entry whose body this does not read. A deeper ring than the tile declares, launched with the tile's bytes,
    writes past its shared memory (an illegal address that ends the probe's process): a plan that deepens a ring
    names SMEM too."""
    found = body_arguments(entry)
    if not found:
        return None
    body, args = found
    if body == "h6_body":  # a stage: A_ROWS rows of A (BM, else 128) and BN columns of B
        bn, depth = int(args[0]), args[1]
        a_rows = int(args[7]) if len(args) > 7 else int(args[6]) if len(args) > 6 else 128
    else:  # WM rows of A and BN columns of B
        a_rows, bn, depth = int(args[0]), int(args[1]), args[2]
    knobs = dict(d.split("=", 1) for d in defines if "=" in d)
    default = re.search(rf"#define {depth} (\d+)", kernel_source())
    stages = int(knobs.get(depth) or (default.group(1) if default else depth))
    return 1024 + stages * (a_rows + bn) * 128


def refuse_short_ring(launcher, defines: tuple[str, ...]) -> None:
    """Raise, before anything is launched, where the launch gives an h6 entry less shared memory than its ring takes
    under `defines` (ring_bytes): such a launch faults and takes the process with it, every later point lost."""
    needed = ring_bytes(launcher.entry, defines) if launcher.entry and launcher.plan else None
    if needed and launcher.plan.tile.dynamic_smem_bytes < needed:
        raise ValueError(f"{launcher.entry}'s ring needs {needed} bytes of shared memory under {defines}, the tile "
                         f"gives {launcher.plan.tile.dynamic_smem_bytes}: add +SMEM=BYTES to the plan")


def parse_plan(text: str) -> tuple[str | None, int | None, int | None]:
    if text == "auto":
        return None, None, None
    head, _, tail = text.partition("@")
    shape, _, split = head.partition("/")
    return shape, None if split == "auto" else int(split or 1), int(tail) if tail else None


def plan_knobs(text: str) -> tuple[str, tuple[str, ...], int | None]:
    """PLAN+KNOB=V+...: the plan, its own compile-time knobs, and the shared memory its kernel is launched
    with where a knob SMEM=BYTES sets it (a knob that deepens a ring needs more than the tile declares)."""
    plan, *knobs = text.split("+")
    smem = [int(k.split("=", 1)[1]) for k in knobs if k.startswith("SMEM=")]
    return plan, tuple(k for k in knobs if not k.startswith("SMEM=")), smem[-1] if smem else None


def resolve_plan(stage, text: str):
    """A plan's stage (with only that tile where the plan names a kernel entry), tile shape, split and tail."""
    shape, split, tail = parse_plan(text)
    if shape and shape.startswith("hgemm_"):  # one entry: the stage with that tile alone
        tile = next(t for t in stage.tiles + candidates(stage.tiles) if t.entry == shape)
        return dataclasses.replace(stage, tiles=(tile,)), tile.shape, split, tail
    return stage, shape, split, tail


def knob_sets(defines: str) -> list[tuple[str, ...]]:
    """--defines "A=1,2;B=3" as every combination: [("A=1", "B=3"), ("A=2", "B=3")]; none: [()]."""
    if not defines:
        return [()]
    return list(itertools.product(*[[f"{name}={v}" for v in values.split(",")]
                                    for name, values in (p.split("=", 1) for p in defines.split(";"))]))


def h6_and_library(tools, problem, size, own=None):
    """h6's launcher (the launcher's own plan) on `own` (default `problem`), verified against the float64 reference,
    and the library stage's kept cuBLASLt candidate on `problem`: the pair the experiments time side by side."""
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.ladder_runs.stage_launch import stage_launcher
    from nsprof.launch.measure import verify

    h6 = get_stage("hgemm", "h6")
    own = problem if own is None else own
    ours = get_op("hgemm").workload.launcher(h6, own, tools)
    assert verify(ours, own) <= h6.tolerance(size)
    return ours, stage_launcher(get_stage("hgemm", "h7"), problem, tools)


def emit(row: dict, out: str | None) -> None:
    """One point: printed as a JSON line, and appended to `out`."""
    print(json.dumps(row), flush=True)
    if out:
        with open(out, "a") as sink:
            sink.write(json.dumps(row) + "\n")


def probe_size(args, size, problem, stage, library, tools, promotions: list[int]) -> list[dict]:
    """Every plan, knob set and L2 promotion (`promotions`, --l2 read) at one size: its rows."""
    from nsprof.ladder.registry import get_op
    from nsprof.ladder_runs.stage_launch import stage_launcher
    from nsprof.ladder_runs.torch_baseline import torch_launch
    from nsprof.launch import tensor_map
    from nsprof.launch.measure import paired_medians, verify
    from nsprof.sizes import size_label

    op, key = get_op("hgemm"), "torch" if args.against == "torch" else "library"
    rows: list[dict] = []
    base = torch_launch(op.workload.library_call(library, problem), "fp16")
    against = "torch.mm"
    if args.against == "library":
        kept = stage_launcher(library, problem, tools)
        kept_ms, torch_ms = paired_medians(kept.run, base)
        if kept_ms < torch_ms:
            base, against = kept.run, f"cuBLAS {kept.tile_label}"
    sm_counts = [int(v) for v in args.sms.split(",")] if args.sms else [tools.sm_count]  # checked in main
    for text, defines, promotion, sms in itertools.product(args.plans.split(","), knob_sets(args.defines), promotions,
                                                           sm_counts):
        plan, own, smem = plan_knobs(text)
        defines = own + defines
        variant, shape, split, tail = resolve_plan(stage, plan)
        if smem:
            variant = dataclasses.replace(variant, tiles=tuple(dataclasses.replace(t, dynamic_smem_bytes=smem)
                                                               for t in variant.tiles))
        tensor_map.L2_PROMOTION_BYTES = promotion  # read when the launcher encodes its maps
        label = (plan + "".join(f" {d}" for d in defines) + (f" SMEM={smem}" if smem else "")
                 + (f" L2={promotion}" if args.l2 != "128" else "") + (f" SMS={sms}" if args.sms else ""))
        row = {"size": size_label(size), "plan": label, "against": against}
        try:
            told = tools if sms == tools.sm_count else dataclasses.replace(tools, sm_count=sms)
            launcher = op.workload.launcher(variant, problem, told, tile_shape=shape, split_k=split, tail=tail,
                                            defines=defines)
            refuse_short_ring(launcher, defines)
            problem.refresh()
            err = verify(launcher, problem)
            row.update(tile=launcher.tile_label, entry=launcher.entry, err=err, ok=err <= stage.tolerance(size))
            if row["ok"]:
                ms, their_ms = paired_medians(launcher.run, base)
                row.update({"ms": ms, f"{key}_ms": their_ms, f"pct_{key}": 100 * their_ms / ms,
                            "tflops": op.flops(size) / ms / 1e9})
        except Exception as exc:  # one failed point, not a failed probe
            row.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
        rows.append(row)
        emit(row, args.out)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--plans", default="auto")
    ap.add_argument("--stage", default="h6")
    ap.add_argument("--out")
    ap.add_argument("--defines", default="", help='compile-time knobs, "A=1,2;B=3": every combination')
    ap.add_argument("--against", choices=("torch", "library"), default="torch",
                    help="pair with torch.mm, or with the faster (paired) of it and the library stage's kept "
                         "cuBLASLt candidate, as nsprof bench pairs (pct_library)")
    ap.add_argument("--warm-inputs", action="store_true",
                    help="every launch on one set of buffers (default: cold inputs, as nsprof bench times)")
    ap.add_argument("--l2", default="128", help="the tensor maps' L2 promotion in bytes (0, 64, 128, 256): "
                                                "each value a point of every plan")
    ap.add_argument("--sms", default="", help="SM counts the launcher is told of (the grid of a persistent tile, "
                                              "and what the plan is chosen for): each value a point of every plan; "
                                              "default the GPU's")
    args = ap.parse_args()
    key = "torch" if args.against == "torch" else "library"  # the rows' pct_torch or pct_library
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.launch import tensor_map
    from nsprof.launch.rotation import rotating_inputs
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes

    promotions = [int(v) for v in args.l2.split(",") if v.isdigit()]
    if len(promotions) != len(args.l2.split(",")) or not set(promotions) <= set(tensor_map.CU_TENSOR_MAP_L2_PROMOTION):
        ap.error(f"--l2 {args.l2}: each value one of {sorted(tensor_map.CU_TENSOR_MAP_L2_PROMOTION)} (bytes)")
    if args.sms and not all(v.isdigit() and int(v) > 0 for v in args.sms.split(",")):
        ap.error(f"--sms {args.sms}: each value a positive number of SMs")
    tools, op = launch_tools(), get_op("hgemm")
    stage, library = get_stage("hgemm", args.stage), get_stage("hgemm", "h7")
    rows = []
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        with contextlib.nullcontext() if args.warm_inputs else rotating_inputs(problem):
            rows += probe_size(args, size, problem, stage, library, tools, promotions)
    print(f"{'size':>18} {'plan':>16} {'tile':>24} {'TFLOP/s':>8} {'%' + key:>8} {'ok':>3}  against")
    for r in rows:
        print(f"{r['size']:>18} {r['plan']:>16} {r.get('tile', '-'):>24} {r.get('tflops', float('nan')):>8.1f} "
              f"{r.get('pct_' + key, float('nan')):>8.1f} {'yes' if r.get('ok') else 'NO':>3}  {r['against']}")


if __name__ == "__main__":
    main()
