"""Issue 60: where an h6 tile's time goes, from the clocks its consumer warpgroups record (H6_TRACE=1,
kernels/hgemm/h6_wgmma_tma.cu). For each size and plan (as h6_plans.py: "auto", a tile shape or a kernel
entry) and each set of --defines, one verified, warmed launch is traced: per block, consumer warpgroup and
tile, the clock before its first MMAs are issued and when its last are done, and the cycles spent waiting for
full stages and for MMAs. Printed and written (--out, JSON lines) per point, medians over the tiles:

  tile cycles     first issue -> last MMAs done, and per k tile
  gap             a warpgroup's last MMAs done -> its next tile's first issue (the tensor cores' share of it
                  idle unless the other warpgroup's MMAs run then)
  skew            the second consumer's last-MMAs-done clock minus the first's, on the same tile
  full wait       cycles per tile waiting for TMA to fill a stage (the producer behind)
  mma wait        cycles per tile in wgmma.wait_group 1 (the tensor cores busy: the expected wait)

and per block (medians): the cycles from the kernel's start to its first MMAs (prologue: thread 0's steps
to its first loads, then the first stage's wait) and from its last MMAs
done to its end (epilogue: the last stores), the SM clock (cycles over the global timer's ns), and over the
launch, the span from the first block's start to the last one's end against the launch's CUDA-event time, and
the median block's end and the 90th percentile's (end50, end90: how far the last block trails the rest).
With --cold every launch runs on the next of the sets of buffers nsprof bench rotates among (cold inputs).
In the ping-pong entries each warpgroup takes its own tiles: "gap" then spans the other warpgroup's turn, "skew"
compares two different tiles, and the block's row is the first warpgroup's (its end is not the block's end).

    python3 benchmarks/gpu/experiments/h6_timeline.py --sizes 4096,2048x14336x4096 --defines "H6_STAGGER=0,1"
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # h6_plans

TILES, FIELDS, BLOCKS, SLOTS = 64, 4, 160, 20  # H6_TRACE_TILES, values per tile, blocks traced, clocks a block


def median(values) -> float:
    """The median, NaN where nothing was traced."""
    return statistics.median(values) if values else float("nan")


def summarize(trace, k_tiles: int) -> dict:
    """Medians over the traced tiles of one launch; trace is (blocks, 2, TILES, FIELDS) of clocks."""
    tiles, gaps, skews, full, mma = [], [], [], [], []
    for block in trace:
        for c in (0, 1):
            rows = [r for r in block[c] if r[1] > 0]
            tiles += [int(r[1] - r[0]) for r in rows]
            full += [int(r[2]) for r in rows]
            mma += [int(r[3]) for r in rows]
            gaps += [int(b[0] - a[1]) for a, b in itertools.pairwise(rows)]
        both = [(a, b) for a, b in zip(block[0], block[1]) if a[1] > 0 and b[1] > 0]
        skews += [int(b[1]) - int(a[1]) for a, b in both]
    return {"tiles_traced": len(tiles), "tile_cycles": median(tiles), "cycles_per_k_tile": median(tiles) / k_tiles,
            "gap": median(gaps), "gap_p90": sorted(gaps)[int(0.9 * len(gaps))] if gaps else float("nan"),
            "skew": median(skews), "abs_skew": median([abs(v) for v in skews]), "full_wait": median(full),
            "mma_wait": median(mma)}


def block_ends(rows) -> dict:
    """The blocks' ends in us from the grid's first start (global timer): the median block's, the 90th
    percentile's and the last one's (span_us). A block ends with the later of its consumers (slot 5, consumer
    0's; slot 19, consumer 1's): the ping-pong block with consumer 1."""
    if not rows:
        return {"end_p50_us": float("nan"), "end_p90_us": float("nan"), "span_us": float("nan")}
    first = min(r[4] for r in rows)
    ends = sorted((max(r[5], r[19]) - first) / 1000 for r in rows)
    return {"end_p50_us": median(ends), "end_p90_us": ends[int(0.9 * (len(ends) - 1))], "span_us": ends[-1]}


def summarize_blocks(blocks, event_ms: float) -> dict:
    """Block-level medians of one launch; blocks is (BLOCKS, SLOTS): start, first MMAs, last MMAs done, end (clocks),
    start and end (global ns), then thread 0's clocks (kernels/hgemm/h6_wgmma_tma.cu, trace_producer): the producer's
    start, its first stage's loads issued, the barriers set up, past the block's barrier, past the wait for the grid
    before, thread 0's start. The prologue (start -> first MMAs) splits into thread 0's steps from its own start
    (init, sync, wait, producer: each from the step before; in that order only), thread 0's start to its first
    loads issued (first_loads, in either order) and the first stage's wait (its loads issued -> first MMAs). The
    epilogue splits at consumer 0's clocks 12 and 13: h6_body's fragments packed (to_stores) and its staged stores
    issued (stores); the ping-pong body's stores issued (to_stores) and the wait for the TMA stores' reads (stores);
    then the rest to the end (to_end). Consumer 1's (clocks 15-17: its last MMAs done, then as consumer 0's 12 and
    13): c1_to_stores and c1_stores; in the ping-pong body its end is the block's."""
    rows = [[int(v) for v in r] for r in blocks if r[3] > 0 and r[1] > 0]  # blocks that ran a tile
    steps = [r for r in rows if r[11] > 0 and r[7] >= r[6] >= r[10] >= r[9] >= r[8] >= r[11]]
    ends = [r for r in rows if r[3] >= r[13] >= r[12] >= r[2]]
    c1_ends = [r for r in rows if r[17] >= r[16] >= r[15] > 0]
    return {"prologue": median([r[1] - r[0] for r in rows]), "epilogue": median([r[3] - r[2] for r in rows]),
            "to_stores": median([r[12] - r[2] for r in ends]), "stores": median([r[13] - r[12] for r in ends]),
            "to_end": median([r[3] - r[13] for r in ends]),
            "c1_to_stores": median([r[16] - r[15] for r in c1_ends]), "c1_stores": median([r[17] - r[16] for r in c1_ends]),
            "thread0_start": median([r[11] - r[0] for r in steps]), "init": median([r[8] - r[11] for r in steps]), "sync": median([r[9] - r[8] for r in steps]),
            "wait": median([r[10] - r[9] for r in steps]), "producer_start": median([r[6] - r[10] for r in steps]),
            "issue": median([r[7] - r[6] for r in steps]),
            # in either order of thread 0's steps (H6_EARLY_ISSUE issues before the block's barrier)
            "first_loads": median([r[7] - r[11] for r in rows if r[11] > 0 and r[7] >= r[11]]),
            "first_stage": median([r[1] - r[7] for r in rows if r[7] > 0]),
            "mhz": median([1000 * (r[3] - r[0]) / max(1, r[5] - r[4]) for r in rows]),
            "start_spread_us": (max(r[4] for r in rows) - min(r[4] for r in rows)) / 1000 if rows else float("nan"),
            **block_ends(rows),
            "event_us": 1000 * event_ms}


def trace_launch(tools, stage, launcher, traced: tuple[str, ...], size, rotation) -> dict:
    """Five launches to warm up, then one traced and timed: its summaries. With `rotation` (--cold) each launch
    first steps the problem to its next set of buffers, outside the timed interval."""
    def run() -> None:
        if rotation:
            rotation.step()
        launcher.run()

    for _ in range(5):
        run()
    trace = tools.module_global(stage.kernel_path(), "h6_trace", arch="sm_90a", defines=traced)
    per_block = tools.module_global(stage.kernel_path(), "h6_trace_blocks", arch="sm_90a", defines=traced)
    buffer = tools.xp.ndarray((BLOCKS, 2, TILES, FIELDS), dtype=tools.xp.uint64, memptr=trace)
    blocks = tools.xp.ndarray((BLOCKS, SLOTS), dtype=tools.xp.uint64, memptr=per_block)
    buffer.fill(0)
    blocks.fill(0)
    start, end = tools.xp.cuda.Event(), tools.xp.cuda.Event()
    if rotation:
        rotation.step()
    start.record()
    launcher.run()
    end.record()
    end.synchronize()
    return {**summarize(buffer.get(), -(-size[2] // 64)),
            **summarize_blocks(blocks.get(), tools.xp.cuda.get_elapsed_time(start, end))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--plans", default="auto")
    ap.add_argument("--defines", default="", help='compile-time knobs, "A=1,2;B=3": every combination')
    ap.add_argument("--out")
    ap.add_argument("--cold", action="store_true",
                    help="each launch on the next of the sets of buffers nsprof bench rotates among (cold inputs)")
    args = ap.parse_args()
    from h6_plans import emit, knob_sets, refuse_short_ring, resolve_plan

    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.launch.measure import verify
    from nsprof.launch.rotation import rotating_inputs
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    tools, op, stage = launch_tools(), get_op("hgemm"), get_stage("hgemm", "h6")
    rows = []
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        for plan, defines in itertools.product(args.plans.split(","), knob_sets(args.defines)):
            variant, shape, split, tail = resolve_plan(stage, plan)
            traced = (*defines, "H6_TRACE=1")
            row = {"size": size_label(size), "plan": plan + "".join(f" {d}" for d in defines)}
            try:
                launcher = op.workload.launcher(variant, problem, tools, tile_shape=shape, split_k=split, tail=tail,
                                                defines=traced)
                refuse_short_ring(launcher, traced)
                problem.refresh()
                err = verify(launcher, problem)
                row.update(tile=launcher.tile_label, entry=launcher.entry, ok=err <= stage.tolerance(size))
                if not row["ok"]:  # a wrong kernel is reported as failed, never traced as if it worked
                    raise ValueError(f"did not verify (error {err:.2e})")
                with rotating_inputs(problem) if args.cold else contextlib.nullcontext() as rotation:
                    row.update(trace_launch(tools, stage, launcher, traced, size, rotation))
            except Exception as exc:  # one failed point, not a failed probe
                row.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
            rows.append(row)
            emit(row, args.out)
    print(f"{'size':>16} {'plan':>22} {'tile cyc':>9} {'/k tile':>7} {'gap':>6} {'gap90':>6} {'|skew|':>6} "
          f"{'full':>6} {'mma':>5} {'prolog':>6} {'init':>5} {'sync':>5} {'wait':>5} {'prod':>5} {'issue':>5} {'to ld':>6} {'1st stg':>7} "
          f"{'epilog':>6} {'to st':>5} {'st':>5} {'end':>5} {'1:tost':>6} {'1:st':>5} {'MHz':>5} {'span us':>7} "
          f"{'event us':>8} {'end50':>6} {'end90':>6}")
    for r in rows:
        if "tile_cycles" not in r:
            print(f"{r['size']:>16} {r['plan']:>22}  failed: {r.get('error', 'did not verify')}")
            continue
        print(f"{r['size']:>16} {r['plan']:>22} {r['tile_cycles']:>9.0f} {r['cycles_per_k_tile']:>7.0f} {r['gap']:>6.0f} "
              f"{r['gap_p90']:>6.0f} {r['abs_skew']:>6.0f} {r['full_wait']:>6.0f} {r['mma_wait']:>5.0f} "
              f"{r['prologue']:>6.0f} {r['init']:>5.0f} {r['sync']:>5.0f} {r['wait']:>5.0f} {r['producer_start']:>5.0f} "
              f"{r['issue']:>5.0f} {r['first_loads']:>6.0f} {r['first_stage']:>7.0f} {r['epilogue']:>6.0f} "
              f"{r['to_stores']:>5.0f} {r['stores']:>5.0f} {r['to_end']:>5.0f} "
              f"{r['c1_to_stores']:>6.0f} {r['c1_stores']:>5.0f} {r['mhz']:>5.0f} "
              f"{r['span_us']:>7.2f} {r['event_us']:>8.1f} {r['end_p50_us']:>6.2f} {r['end_p90_us']:>6.2f}")


if __name__ == "__main__":
    main()
