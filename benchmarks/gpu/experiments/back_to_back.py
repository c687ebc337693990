"""Issue 60: h6 and the library run back to back. nsprof bench times each launch between its own CUDA events;
an event between two kernels keeps the second from starting before the first has finished, so what h6's
programmatic dependent launch hides (the gap between kernels, and a block's set-up) never shows there. Here,
per size, h6 as the launcher starts it, the same plan launched plainly ("h6 plain", as CuPy launches), torch.mm
and the library stage's kept cuBLASLt candidate are each queued --count times in a chain behind one hold of the
GPU (nsprof.launch.measure.hold_gpu), one event before the first launch and one after the last, the four chains
in turn for --rounds rounds: per launch, the median over the rounds (us), the spread (max - min over the
median), and h6's % of the faster library's speed. --cold: every launch on the next of the sets of buffers
nsprof bench rotates among. One JSON line a size (appended to --out).

--dependent-vs-plain pairs h6 as launched with the same plan launched plainly (no library), both ways: each
launch between its own events (paired_medians, as the bench pairs) and chains of each in turn.

--variant DEFINES pairs h6 as declared with h6 built with the compile definitions DEFINES (as A=1;B=2), the same two
ways, both orders (declared first, then the variant first).

--pairs times h6 paired with the kept cuBLASLt candidate and with torch.mm, each launch between its own events
(paired_medians, as nsprof bench pairs), for a capture under nsys that shows where the pairs' time goes.

Under nsys (`nsys profile -t cuda`) every chain or chunk of pairs starts with the hold kernel (nsprof_hold), and
--analyze SQLITE reads the export: per queue, each kernel's median duration and the median and least gap from one
kernel's end to the next one's start (negative where a kernel was placed before the one ahead of it had ended);
then over the held queues (at most HELD_QUEUE kernels), per kernel, its median duration and the median gap before it.

    python3 benchmarks/gpu/experiments/back_to_back.py --sizes 1024,2048 --cold --out $OUT/b2b.jsonl
    python3 benchmarks/gpu/experiments/back_to_back.py --sizes 1024 --cold --dependent-vs-plain --out $OUT/dvp.jsonl
    python3 benchmarks/gpu/experiments/back_to_back.py --sizes 1024 --cold --variant "H6_EARLY_PREFETCH=1"
    nsys profile -t cuda -o $OUT/b2b python3 benchmarks/gpu/experiments/back_to_back.py --sizes 1024 --cold
    nsys profile -t cuda -o $OUT/pairs python3 benchmarks/gpu/experiments/back_to_back.py --sizes 1024 --cold --pairs
    python3 benchmarks/gpu/experiments/back_to_back.py --analyze $OUT/b2b.sqlite
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import sqlite3
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

HOLD_KERNEL = "nsprof_hold"
HELD_QUEUE = 64  # kernels in a queue behind one hold: a chunk of the bench's timing (CHUNK launches) or a chain


def chain(run, count: int) -> tuple[float, bool]:
    """`count` launches of `run` in a chain behind a 20 ms hold of the GPU (nsprof.launch.back_to_back.time_chain):
    the span (ms), and whether the host had queued them all before the hold ended."""
    from nsprof.launch.back_to_back import time_chain

    span, _, ahead = time_chain(run, count, 0.02)
    return span, ahead


def plain_h6(tools, problem, size, defines=()):
    """h6's plan launched as CuPy launches (cuLaunchKernel), not as a programmatic dependent launch: its
    griddepcontrol instructions are then no-ops. Verified."""
    import dataclasses

    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.launch.measure import verify

    def load(*a, **kw):
        return tools.load_kernel(*a, **{**kw, "dependent_launch": False})

    h6 = get_stage("hgemm", "h6")
    launcher = get_op("hgemm").workload.launcher(h6, problem, dataclasses.replace(tools, load_kernel=load),
                                                 defines=defines)
    error = verify(launcher, problem)
    assert error <= h6.tolerance(size), error
    return launcher


def run_sizes(args) -> None:
    from benchmarks.gpu.experiments.h6_plans import emit, h6_and_library
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.ladder_runs.torch_baseline import torch_launch
    from nsprof.launch.measure import warm_up
    from nsprof.launch.rotation import rotating_inputs
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    tools, op = launch_tools(), get_op("hgemm")
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        ours, kept = h6_and_library(tools, problem, size)
        runs = {"h6": ours.run, "h6 plain": plain_h6(tools, problem, size).run,
                "torch.mm": torch_launch(op.workload.library_call(get_stage("hgemm", "h7"), problem), "fp16"),
                "cublasLt": kept.run}
        chains: dict[str, list[float]] = {name: [] for name in runs}
        behind = 0
        with rotating_inputs(problem) if args.cold else contextlib.nullcontext():
            for run in runs.values():  # the clocks up, every kernel loaded
                warm_up(run)
            for _ in range(args.rounds):  # a chain of each in turn: the four meet the same clocks
                for name, run in runs.items():
                    span, ahead = chain(run, args.count)
                    chains[name].append(1e3 * span / args.count)
                    behind += not ahead
        chain_us = {name: statistics.median(t) for name, t in chains.items()}
        library = min(chain_us["torch.mm"], chain_us["cublasLt"])
        emit({"size": size_label(size), "h6": ours.tile_label, "cublasLt": kept.tile_label, "cold": args.cold,
              "count": args.count, "rounds": args.rounds, "chain_us": chain_us,
              "spread_pct": {name: 100 * (max(t) - min(t)) / statistics.median(t) for name, t in chains.items()},
              "pct_of_library": 100 * library / chain_us["h6"], "plain_pct_of_library": 100 * library / chain_us["h6 plain"],
              "host_behind": behind}, args.out)


def _time_two(args, size, problem, first, second) -> dict:
    """`first` and `second` (launchers) both ways: each launch between its own events, the two in turn
    (paired_medians, as nsprof bench pairs), and chains of --count launches, a chain of each in turn for --rounds
    rounds. Medians (us, first then second) and the first's speed as % of the second's, each way."""
    from nsprof.launch.measure import paired_medians
    from nsprof.launch.rotation import rotating_inputs
    from nsprof.sizes import size_label

    with rotating_inputs(problem) if args.cold else contextlib.nullcontext():
        each = paired_medians(first.run, second.run)
        chains: tuple[list[float], list[float]] = ([], [])
        for _ in range(args.rounds):
            for spans, launcher in zip(chains, (first, second)):
                spans.append(chain(launcher.run, args.count)[0] / args.count)
    chain_ms = [statistics.median(c) for c in chains]
    return {"size": size_label(size), "h6": first.tile_label, "cold": args.cold, "count": args.count,
            "each_us": [1e3 * t for t in each], "each_pct": 100 * each[1] / each[0],
            "chain_us": [1e3 * t for t in chain_ms], "chain_pct": 100 * chain_ms[1] / chain_ms[0]}


def _defines(text: str | None) -> tuple[str, ...]:
    return tuple(text.split(";")) if text else ()


def dependent_against_plain(args) -> None:
    """Per size, h6 as the launcher starts it against the same plan launched plainly (both with --defines), timed
    both ways (_time_two): one JSON line a size."""
    from benchmarks.gpu.experiments.h6_plans import emit
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.launch.measure import verify
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes

    tools, op = launch_tools(), get_op("hgemm")
    h6 = get_stage("hgemm", "h6")
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        defines = _defines(args.defines)
        dependent = op.workload.launcher(h6, problem, tools, defines=defines)
        assert verify(dependent, problem) <= h6.tolerance(size)
        plain = plain_h6(tools, problem, size, defines)
        emit({**_time_two(args, size, problem, dependent, plain), "defines": defines}, args.out)


def variant_against_declared(args) -> None:
    """Per size, h6 built with the --variant definitions against h6 as declared (the launcher's plan for each),
    both verified, timed both ways (_time_two) in both orders: one JSON line a size, "variant_pct" the variant's
    % of the declared one's speed in pairs and in chains, averaged over the two orders."""
    from benchmarks.gpu.experiments.h6_plans import emit
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.launch.measure import verify
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes

    tools, op = launch_tools(), get_op("hgemm")
    h6 = get_stage("hgemm", "h6")
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        declared = op.workload.launcher(h6, problem, tools)
        variant = op.workload.launcher(h6, problem, tools, defines=_defines(args.variant))
        for launcher in (declared, variant):
            assert verify(launcher, problem) <= h6.tolerance(size)
        first = _time_two(args, size, problem, variant, declared)   # % = variant's speed over the declared one's
        second = _time_two(args, size, problem, declared, variant)  # % = the declared one's over the variant's
        emit({"size": first["size"], "h6": declared.tile_label, "variant": args.variant, "cold": args.cold,
              "variant_first": first, "declared_first": second,
              "variant_pct": {way: (first[way] + 1e4 / second[way]) / 2 for way in ("each_pct", "chain_pct")}},
             args.out)


def paired_for_capture(args) -> None:
    """Per size, h6 paired with the kept cuBLASLt candidate, then with torch.mm, as nsprof bench pairs (each launch
    between its own events, the host held ahead): the medians (us), for a capture under nsys to break down."""
    from benchmarks.gpu.experiments.h6_plans import emit, h6_and_library
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.ladder_runs.torch_baseline import torch_launch
    from nsprof.launch.measure import paired_medians
    from nsprof.launch.rotation import rotating_inputs
    from nsprof.launch.tools import launch_tools
    from nsprof.sizes import parse_sizes, size_label

    tools, op = launch_tools(), get_op("hgemm")
    for size in parse_sizes([args.sizes], op.dims):
        problem = op.workload.problem(tools.xp, size)
        ours, kept = h6_and_library(tools, problem, size)
        torch_mm = torch_launch(op.workload.library_call(get_stage("hgemm", "h7"), problem), "fp16")
        with rotating_inputs(problem) if args.cold else contextlib.nullcontext():
            with_kept = paired_medians(ours.run, kept.run)
            with_torch = paired_medians(ours.run, torch_mm)
        emit({"size": size_label(size), "h6": ours.tile_label, "cublasLt": kept.tile_label, "cold": args.cold,
              "with_cublasLt_us": [1e3 * t for t in with_kept], "with_torch_us": [1e3 * t for t in with_torch]},
             args.out)


def analyze(path: str) -> None:
    """Per queue of an nsys export of this script (the kernels from one hold kernel to the next), each kernel's
    median duration and the gaps between neighbours (us)."""
    db = sqlite3.connect(path)
    rows = db.execute("SELECT k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                      "JOIN StringIds s ON s.id = k.shortName ORDER BY k.start").fetchall()
    queues: list[list[tuple[int, int, str]]] = []
    for start, end, name in rows:
        if name == HOLD_KERNEL:
            queues.append([])
        elif queues:
            queues[-1].append((start, end, name))
    every: dict[str, tuple[list[float], list[float]]] = {}  # name: durations, gaps before
    for i, kernels in enumerate(queues):
        if len(kernels) < 8:  # the bench's own holds while the library stage picks its candidate
            continue
        durations: dict[str, list[float]] = {}
        for start, end, name in kernels:
            durations.setdefault(name[:60], []).append((end - start) / 1e3)
        gaps = [(b[0] - a[1]) / 1e3 for a, b in itertools.pairwise(kernels)]
        overlaps = sum(g < 0 for g in gaps)
        print(f"queue {i}: {len(kernels)} kernels, gap median {statistics.median(gaps):.2f} us, least "
              f"{min(gaps):.2f}, {overlaps} overlapping")
        for name, d in durations.items():
            q = statistics.quantiles(d) if len(d) > 1 else d * 3
            print(f"  {name}: {len(d)} x median {statistics.median(d):.2f} us (q1 {q[0]:.2f}, q3 {q[2]:.2f})")
        if len(kernels) > HELD_QUEUE:  # launches the host queued behind the GPU (warm-ups), not a held chunk
            continue
        for (start, _, name), (_, end, _) in zip(kernels[1:], kernels):
            every.setdefault(name[:60], ([], []))[1].append((start - end) / 1e3)
        for name, d in durations.items():
            every.setdefault(name, ([], []))[0].extend(d)
    print(f"over the queues of at most {HELD_QUEUE} kernels (held chunks): kernel, launches, median duration (us), "
          "median gap before it from the kernel ahead (us)")
    for name, (d, gaps) in every.items():
        gap = f"{statistics.median(gaps):.2f}" if gaps else "-"
        print(f"  {name}: {len(d)} x {statistics.median(d):.2f}, gap before {gap}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes")
    ap.add_argument("--count", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--analyze", metavar="SQLITE")
    ap.add_argument("--dependent-vs-plain", action="store_true",
                    help="h6 as launched against the same plan launched plainly, paired (no library)")
    ap.add_argument("--defines", help="with --dependent-vs-plain: the kernel's compile definitions, as A=1;B=2")
    ap.add_argument("--variant", metavar="DEFINES", help="h6 built with these definitions (A=1;B=2) against h6 as declared")
    ap.add_argument("--pairs", action="store_true", help="h6 paired with each library as nsprof bench pairs (for nsys)")
    args = ap.parse_args()
    if args.analyze:
        analyze(args.analyze)
    elif args.sizes and args.dependent_vs_plain:
        dependent_against_plain(args)
    elif args.sizes and args.variant:
        variant_against_declared(args)
    elif args.sizes and args.pairs:
        paired_for_capture(args)
    elif args.sizes:
        run_sizes(args)
    else:
        ap.error("give --sizes, or --analyze an export")


if __name__ == "__main__":
    main()
