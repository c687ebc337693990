"""Fingerprints of stretches of a program's GPU operations (symbols: nsprof.analyze.loop_operations),
from one prefix sum of hashed neighbouring pairs, and the stretch each symbol repeats most: the
candidates for its loop (nsprof.analyze.iterations)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

CHUNK = 1 << 20  # operations (or stretches' operations) compared at a time

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(values: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer over uint64s: a hash whose sums tell sequences apart."""
    x = values.astype(np.uint64) + _GOLDEN
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _pair_prefix(symbols: np.ndarray) -> np.ndarray:
    """prefix[i]: the sum (mod 2**64) of the hashes of the pairs (symbols[j], symbols[j+1]), j < i."""
    pairs = _mix(_mix(symbols[:-1]) ^ symbols[1:].astype(np.uint64))
    return np.concatenate([np.zeros(1, dtype=np.uint64), np.cumsum(pairs, dtype=np.uint64)])


def _prints(prefix: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The fingerprint of each stretch [start, start + length): its pairs' hashes and its length."""
    inner = prefix[start + length - 1] - prefix[start]
    return _mix(inner ^ _mix(length.astype(np.uint64)))


@dataclass(frozen=True)
class Candidate:
    """A symbol's most repeated stretch (from a launch of it to its next): a candidate for the loop."""

    symbol: int
    key: int  # the repeated stretch's fingerprint
    length: int  # its operations
    repeats: int  # how many of the symbol's stretches are it
    covered: float  # the GPU time of the operations those hold
    launches: int  # how often the symbol is launched in all
    at: int  # where one of those stretches starts


def loop_candidates(symbols: np.ndarray, durations: np.ndarray, repeats: int) -> list[Candidate]:
    """Per symbol, the stretch (from a launch of it to its next) it repeats most, by the GPU time of
    the operations covered (a graph launch is one operation but a whole step's work), repeated at
    least `repeats` times; best first."""
    if len(symbols) <= repeats:
        return []
    order = np.argsort(symbols, kind="stable")
    grouped = symbols[order]
    follows = np.flatnonzero(grouped[1:] == grouped[:-1])
    first, following = order[follows], order[follows + 1]
    del order, grouped, follows
    length = following - first
    keys = _prints(_pair_prefix(symbols), first, length)
    work = np.r_[0.0, np.cumsum(durations, dtype=np.float64)]
    stretches = pd.DataFrame({"symbol": symbols[first], "key": keys.view(np.int64), "length": length,
                              "work": work[following] - work[first], "at": first})
    counted = stretches.groupby(["symbol", "key"], sort=False).agg(
        size=("length", "size"), first=("length", "first"), covered=("work", "sum"), at=("at", "first"))
    counted = counted[counted["size"] >= repeats]
    if counted.empty:
        return []
    launches = pd.Series(symbols).value_counts()
    best = counted.sort_values("covered", ascending=False).reset_index().drop_duplicates("symbol")  # each symbol's
    return [Candidate(int(row.symbol), int(row.key), int(row.first), int(row.size), float(row.covered),
                       int(launches[row.symbol]), int(row.at)) for row in best.itertuples(index=False)]


def matches(symbols: np.ndarray, positions: np.ndarray, candidate: Candidate) -> np.ndarray:
    """Which launches of the candidate's symbol start a stretch of its repeated sequence (the last
    one too, though no launch of the symbol follows it), fingerprinted a chunk at a time."""
    length = candidate.length
    fits = positions + length <= len(symbols)
    matched = np.zeros(len(positions), dtype=bool)
    for low in range(0, len(symbols), CHUNK):
        here = np.flatnonzero(fits & (positions >= low) & (positions < low + CHUNK))
        if not len(here):
            continue
        stop = min(len(symbols), low + CHUNK + length)
        prefix = _pair_prefix(symbols[low:stop])
        keys = _prints(prefix, positions[here] - low, np.full(len(here), length, dtype=np.int64))
        matched[here] = keys.view(np.int64) == candidate.key
    # a stretch that matches but holds another launch of the symbol is the same sequence only by chance
    nxt = np.r_[positions[1:], np.iinfo(np.int64).max]
    return matched & (nxt >= positions + length)
