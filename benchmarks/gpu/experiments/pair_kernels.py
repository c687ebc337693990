"""Inside the kernels or between them? Reads an nsys export of a paired timing (h6_plans.py or nsprof bench under
`nsys profile -t cuda,nvtx --export sqlite`) and finds each stretch where two kernels alternate (ABAB ...): per
stretch, each kernel's own median duration on the GPU, the first's as % of the second's (their kernel times alone,
without the events and launches the paired timing also holds), and the median gap on the GPU before each.

    python3 benchmarks/gpu/experiments/pair_kernels.py pair.sqlite --ours hgemm_h6 --theirs nvjet_sm90 \
        [--min-pairs 20] [--csv $OUT/pair-kernels.csv]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def stretches(kernels, ours: str, theirs: str, min_pairs: int):
    """Rows of (stretch, side, name, launches, median duration ns, median gap before it ns): the runs of
    consecutive kernels that alternate between a name containing `ours` and one containing `theirs`."""
    import pandas as pd

    k = kernels.sort_values("start_ns").reset_index(drop=True)
    name = k["short_name"].astype(str)
    side = pd.Series(pd.NA, index=k.index, dtype="object")
    side[name.str.contains(ours, regex=False)] = "ours"
    side[name.str.contains(theirs, regex=False)] = "theirs"
    gap = k["start_ns"] - k["end_ns"].shift()
    # a stretch runs on while each kernel is on the other side from the one before it
    alternates = side.notna() & side.shift().notna() & (side != side.shift())
    stretch = (~alternates).cumsum()
    frame = pd.DataFrame({"stretch": stretch, "side": side, "name": name, "dur": k["end_ns"] - k["start_ns"],
                          "gap": gap.where(alternates)})
    frame = frame[side.notna()]
    sizes = frame.groupby("stretch")["side"].transform("size")
    frame = frame[sizes >= 2 * min_pairs]
    rows = frame.groupby(["stretch", "side"]).agg(name=("name", "first"), launches=("dur", "size"),
                                                  median_ns=("dur", "median"), gap_before_ns=("gap", "median"))
    return rows.reset_index()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("export", help="the nsys export (.sqlite)")
    ap.add_argument("--ours", default="hgemm_h6", help="a part of the first kernel's name")
    ap.add_argument("--theirs", default="nvjet_sm90", help="a part of the other kernel's name")
    ap.add_argument("--min-pairs", type=int, default=20, help="shorter stretches are left out")
    ap.add_argument("--csv", help="write the rows here too")
    args = ap.parse_args()
    from nsprof.parse.nsys_sqlite import load_nsys

    kernels = load_nsys(args.export, columns={"kernels": ["start_ns", "end_ns", "short_name"]}).kernels
    rows = stretches(kernels, args.ours, args.theirs, args.min_pairs)
    if args.csv:
        rows.to_csv(args.csv, index=False)
    for number, stretch in rows.groupby("stretch"):
        by_side = stretch.set_index("side")
        if {"ours", "theirs"} - set(by_side.index):
            continue
        ours, theirs = by_side.loc["ours"], by_side.loc["theirs"]
        print(f"stretch {number}: {ours['launches']} + {theirs['launches']} launches; "
              f"{ours['name'][:36]} {ours['median_ns'] / 1e3:.2f} us (gap before {ours['gap_before_ns'] / 1e3:.2f}), "
              f"{theirs['name'][:36]} {theirs['median_ns'] / 1e3:.2f} us (gap before "
              f"{theirs['gap_before_ns'] / 1e3:.2f}): {100 * theirs['median_ns'] / ours['median_ns']:.1f}%")


if __name__ == "__main__":
    main()
