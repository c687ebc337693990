"""nsprof's noise claims on runs the floors were never learned from (issue 59): the corpus's programs
run again, unchanged, on an H200 and a day the corpus never saw, and kept out of it. Two steps:

    python3 benchmarks/noise_heldout.py --extract /tmp/heldout   # captures -> benchmarks/records/2026-11-29-h200-noise-heldout/
    python3 benchmarks/noise_heldout.py                          # -> noise_heldout.md/.json beside them

The captures come from `LEASE=heldout BACK_TO_BACK=2 BUDGET=430 bash benchmarks/gpu/noise_corpus_h200.sh`
(one lease, unpacked under one folder as corpus-heldout/PROGRAM/). The second step, on CPU, diffs
each program's held-out runs as `nsprof diff` does (benchmarks/noise_corpus.py's called_as_diff):

- one run a side, every pair of one program's held-out runs, with nsprof's floors as shipped
  (nsprof/diff/noise_floor.json) and with the floors learned from the corpus without the program;
- one run a side across days and machines: each held-out run against each of the program's corpus
  runs of 2026-11-28, with nsprof's floors;
- runs: two held-out runs a side, disjoint (the programs with four), and three held-out runs
  against three of the corpus's day.

A pair or split "calls" when any row is called faster or slower. The largest |change| of a
significant row over the floor it met says how close the floors came to calling (1.0 would call).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import noise_corpus as corpus

from nsprof.diff.noise import NOISE_RECORD, noise_record

HELD_OUT = corpus.ROOT / "benchmarks" / "records" / "2026-11-29-h200-noise-heldout"
OFFSET = 100_000  # held-out run ids, apart from the corpus's in one runs table
CAPTURED = "LEASE=heldout BACK_TO_BACK=2 BUDGET=430 bash benchmarks/gpu/noise_corpus_h200.sh"


def both() -> tuple[pd.DataFrame, dict]:
    """The corpus's runs and the held-out runs in one table (held-out ids offset), with their frames."""
    runs, frames = corpus.load()
    held_runs, held_frames = corpus.load(HELD_OUT)
    held_runs["run"] += OFFSET
    frames.update({run + OFFSET: frame for run, frame in held_frames.items()})
    return pd.concat([runs.assign(held_out=False), held_runs.assign(held_out=True)], ignore_index=True), frames


def diffed(runs: pd.DataFrame, frames: dict, a: list[int], b: list[int], floors) -> pd.DataFrame:
    """Both tables of a diff of runs `a` against runs `b`, called as `nsprof diff` calls them
    (noise_corpus.called_as_diff)."""
    return pd.concat([corpus.called_as_diff(runs, (a, b), corpus.table_side(frames, a, table),
                                            corpus.table_side(frames, b, table), floors) for table in corpus.TABLES])


def _decided(called: pd.DataFrame) -> pd.DataFrame:
    """The significant rows a floor decided (not those unstable, compiled differently or on one side
    only, which are never called)."""
    return called[called["status"].isin(["same", "faster", "slower"]) & called["significant"].fillna(False).astype(bool)]


def closest(called: pd.DataFrame) -> float:
    """The largest |change| over its threshold among the significant rows a finite floor decided."""
    decided = _decided(called)
    threshold = decided["floor_pct"].astype(float)
    held = decided[np.isfinite(threshold) & (threshold > 0)]
    return float((held["change_pct"].abs() / held["floor_pct"].astype(float)).max()) if len(held) else 0.0


def largest(called: pd.DataFrame) -> dict[str, float]:
    """Per class of a floor (10-100 us, over 100 us), the largest |change| of a significant row it decided."""
    decided = _decided(called)
    decided = decided[decided["floor"].isin(["10-100 us", "over 100 us"])]
    return decided.groupby("floor")["change_pct"].agg(lambda change: float(change.abs().max())).to_dict()


def tally(runs: pd.DataFrame, frames: dict, sides: list[tuple[list[int], list[int]]], floors) -> dict:
    calling, nearest, worst, most = 0, 0.0, "", {}
    for a, b in sides:
        called = diffed(runs, frames, a, b, floors)
        hits = called[called["status"].isin(["faster", "slower"])]
        if len(hits):
            calling += 1
            row = hits.loc[hits["change_pct"].abs().idxmax()]
            worst = f"{str(row.name)[:60]}: {row['change_pct']:+.1f}%"
        nearest = max(nearest, closest(called))
        most = {name: max(most.get(name, 0.0), value) for name, value in {**most, **largest(called)}.items()}
    return {"pairs": len(sides), "calling": calling, "closest": round(nearest, 3),
            "largest_significant_pct": {name: round(value, 2) for name, value in sorted(most.items())}, "last_call": worst}


def evaluate(runs: pd.DataFrame, frames: dict) -> list[dict]:
    shipped = noise_record(NOISE_RECORD)
    in_corpus = runs[~runs["held_out"]]
    changes = corpus.one_run_pairs(in_corpus, frames)
    rows = []
    for program in corpus.PROGRAMS:
        held = runs.loc[runs["held_out"] & (runs["program"] == program), "run"].tolist()
        day = in_corpus.loc[(in_corpus["program"] == program) & (in_corpus["day"] == corpus.CORPUS_DAY), "run"].tolist()
        pairs = [([a], [b]) for a, b in combinations(held, 2)]
        regimes = {
            "one run a side, nsprof's floors": (pairs, shipped),
            "one run a side, floors without the program": (pairs, corpus.floors_without(changes, program)),
            "one run a side, against the corpus's day": ([([c], [h]) for c in day for h in held], shipped),
            "2 runs a side": ([(list(a), [r for r in held if r not in a]) for a in combinations(held, 2)
                               if held[0] in a] if len(held) == 4 else [], shipped),
            "3 runs a side, against the corpus's day": ([(list(c), held[:3]) for c in _triples(day)]
                                                         if len(held) >= 3 else [], shipped),
        }
        for regime, (sides, floors) in regimes.items():
            if sides:
                rows.append({"program": program, "runs": len(held), "regime": regime, **tally(runs, frames, sides, floors)})
                print(rows[-1], flush=True)
    return rows


def _triples(day: list[int]) -> list[tuple[int, ...]]:
    """Up to 10 disjoint-ish triples of the corpus day's runs, in order (reproducible, no sampling)."""
    triples = list(combinations(day, 3))
    return triples[:: max(1, len(triples) // 10)][:10]


def markdown(record: dict) -> str:
    lines = [
        "# nsprof's noise floors on held-out runs", "",
        f"{record['card']}, {record['date']}: the corpus's programs ({corpus.HERE}/noise_corpus.md) captured again, "
        f"unchanged, by `{CAPTURED}` on {record['gpu']}, a card and a day the corpus never saw, and kept out of it "
        "(nothing here sets a floor). Runs per program: "
        + ", ".join(f"{name} {count}" for name, count in record["runs"].items())
        + f". The table is `{record['command']}` on CPU, from this record's runs.csv, keys.csv.xz and launches.csv.xz "
        "(nsprof.diff.run_frames' form, extracted by `--extract`).", "",
        "Each pair or split is diffed as `nsprof diff` calls rows (benchmarks/noise_corpus.py's called_as_diff: with one "
        "run or fewer than 5 a side the floors apply; across GPUs work of 10-100 us and copies are not called). "
        "**calling**: pairs or splits with any row called faster or slower, of those compared. **closest**: the "
        "largest |change| of a significant row over the threshold it met (its floor, or the 2% minimum change "
        "where that is higher; 1.0 would be called). **largest significant change**: per floor, the largest "
        "|change| of a significant row it decided.", "",
        "| program | regime | calling | closest | largest significant change | last call |",
        "| --- | --- | --- | ---: | --- | --- |",
    ]
    lines += [f"| {r['program']} | {r['regime']} | {r['calling']}/{r['pairs']} | {r['closest']:.2f} | "
              + ", ".join(f"{name} {value:.2f}%" for name, value in r["largest_significant_pct"].items())
              + f" | {r['last_call']} |" for r in record["results"]]
    calls = sum(r["calling"] for r in record["results"])
    compared = sum(r["pairs"] for r in record["results"])
    lines += ["", f"In all, {calls} of {compared} comparisons of unchanged runs call a row.", "",
              "What this does not show: with nsprof's floors set to zero (the 2% minimum change alone) these "
              "runs still call nothing one run a side, so they show the floors are not too low, not that they "
              "are no higher than needed. And one row is kept from a call by a rule, not by the floors: the "
              "Triton benchmark's matmul_kernel ran at 12.5 us in corpus run 7 and 24.6 us in the first held-out "
              "run (+96%, significant). Two of its autotuning configurations share grid and block (256x1x1 by "
              "128x1x1: 11.4 and 26.0 us), so the mix of launch configurations (nsprof.diff.mix) cannot see "
              "their shares move; the sides ran on different GPUs, where 10-100 us work is not called. On one "
              "machine the mix rule caught every pair, here and in the corpus.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extract", type=Path, metavar="FOLDER", help="the unpacked captures (corpus-heldout/PROGRAM/)")
    args = parser.parse_args()
    if args.extract:
        corpus.extract(args.extract, HELD_OUT, ())
        return
    runs, frames = both()
    held = runs[runs["held_out"]]
    record = {"date": dt.date.today().isoformat(), "card": "NVIDIA H200 (nvidia-h200)",
              "gpu": ", ".join(sorted(held["gpu"].unique())), "command": "python3 benchmarks/noise_heldout.py",
              "captured": CAPTURED, "floors": json.loads(NOISE_RECORD.read_text()),
              "runs": held.groupby("program", sort=False).size().to_dict(), "results": evaluate(runs, frames)}
    (HELD_OUT / "noise_heldout.json").write_text(json.dumps(record, indent=1, default=str) + "\n")
    (HELD_OUT / "noise_heldout.md").write_text(markdown(record))
    print(markdown(record))


if __name__ == "__main__":
    main()
