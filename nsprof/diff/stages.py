"""The stage rows of a diff: per ladder stage range, over its instances, its GPU time called and
its own duration beside it (never called); every stage of two captures or two `nsprof bench`
records, or stage X of A against stage Y of B (`stage_pair`)."""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd

from nsprof.diff.judge import Judge, not_called
from nsprof.diff.rows import ROW_FIELDS, plain, records, values
from nsprof.diff.types import StageRow
from nsprof.diff.why import add_why, stage_counters
from nsprof.errors import UsageError
from nsprof.ladder_analysis.capture import stages_of
from nsprof.ranges import parse_stage_range


def capture_stage_rows(analyses: dict, instances: dict, rules: dict, judge: Judge,
                       stage_pair: tuple[str, str] | None) -> list[StageRow]:
    """The stage rows of two captures (`analyses` and `instances`: sides.side_instances, of each side;
    `rules`: why.capture_rules of each): every stage, or the two of `stage_pair`."""
    stage_a, stage_b = (instances[side]["stages"] for side in ("a", "b"))
    if stage_pair:
        stage_a, stage_b = rekeyed(stage_a, stage_pair[0], stage_pair), rekeyed(stage_b, stage_pair[1], stage_pair)
    counters = {side: stage_counters(stages_of(analyses[side])) for side in ("a", "b")}
    if stage_pair:
        counters = {side: _rekeyed_index(counters[side], stage, stage_pair) for side, stage in zip(("a", "b"), stage_pair)}
    main_kernels = {side: _main_kernels(stages_of(analyses[side]), stage_pair[index] if stage_pair else None, stage_pair)
                    for index, side in enumerate(("a", "b"))}
    return stage_rows(judge.called(judge.compare(*values(stage_a, stage_b, "gpu_time_ns")), "ranges"),
                      counters, rules, judge, stage_pair, main_kernels, judge.compare(*values(stage_a, stage_b, "duration_ns")))


def stage_rows(stats: pd.DataFrame, counters: dict, rules: dict, judge: Judge,
               stage_pair: tuple[str, str] | None, main_kernels: dict, durations: pd.DataFrame | None = None) -> list[StageRow]:
    """Stage rows from `stats` already called (judge.called); `durations`, the stages' own
    durations, not yet."""
    stats = stats.loc[sorted(stats.index, key=_stage_order)]
    rows = []
    for record in records(stats, "stage"):
        key = record["stage"]
        parsed = parse_stage_range(key) or {}
        record.update({"op": parsed.get("op"), "size": parsed.get("size"), "label": _stage_label(parsed, stage_pair)})
        add_why(record, counters, rules, {"a": key, "b": key},
                {side: main_kernels.get(side, {}).get(key) for side in ("a", "b")})
        duration = _own_duration(durations, key, judge)
        if duration is not None:
            record["duration"] = duration
        rows.append(record)
    return cast(list[StageRow], rows)  # records() builds them from the called frame's columns


def _own_duration(durations: pd.DataFrame | None, key: str, judge: Judge) -> dict | None:
    """A stage's own duration, compared but never called, where both sides have it."""
    if durations is None or key not in durations.index or not durations.at[key, "a_count"] \
            or not durations.at[key, "b_count"]:
        return None
    own = not_called(judge.called(durations.loc[[key]], "ranges"))
    return {column: plain(value) for column, value in own.iloc[0].items() if column in ROW_FIELDS}


def _stage_label(parsed: dict, stage_pair: tuple[str, str] | None) -> str:
    """The stage part of a row's name: v5, or v5 -> v6 for a stage pair."""
    return f"{stage_pair[0]} -> {stage_pair[1]}" if stage_pair else parsed.get("stage", "?")


def _stage_order(key: str) -> tuple:
    """Stage rows in order: by op, size, then stage number; other keys after them."""
    parsed = parse_stage_range(key)
    if not parsed:
        return (1, key)
    from nsprof.sizes import parse_label

    digits = "".join(ch for ch in parsed["stage"] if ch.isdigit())
    return (0, parsed["op"], int(np.prod(parse_label(parsed["size"]))), int(digits or 0), key)


def _pair_key(key: str, stage_pair: tuple[str, str]) -> str:
    """A stage range re-keyed so that stage X of A and stage Y of B compare in one row."""
    parsed = parse_stage_range(key)
    assert parsed is not None  # rekeyed keeps only stage ranges
    return f"nsprof:{parsed['op']}/{stage_pair[0]}->{stage_pair[1]}/{parsed['size']}"


def rekeyed(frame: pd.DataFrame, stage: str, stage_pair: tuple[str, str]) -> pd.DataFrame:
    """The rows of `frame` (key, ...) of stage `stage`, re-keyed by _pair_key; a usage error where there are none."""
    keep = [(parse_stage_range(key) or {}).get("stage") == stage for key in frame["key"]]
    chosen = frame[np.array(keep, dtype=bool)] if len(frame) else frame
    if chosen.empty:
        raise UsageError(f"no stage {stage} in the capture", "name stages the capture ran (see `nsprof analyze`)")
    return chosen.assign(key=[_pair_key(key, stage_pair) for key in chosen["key"]])


def _rekeyed_index(counters: pd.DataFrame, stage: str, stage_pair: tuple[str, str]) -> pd.DataFrame:
    """The rows of `counters` (indexed by stage range) of stage `stage`, re-keyed by _pair_key."""
    keep = [(parse_stage_range(str(key)) or {}).get("stage") == stage for key in counters.index]
    chosen = counters[np.array(keep, dtype=bool)]
    return chosen.set_axis([_pair_key(key, stage_pair) for key in chosen.index])


def _main_kernels(stages: pd.DataFrame, stage: str | None, stage_pair) -> dict:
    """Stage key (re-keyed for a stage pair) -> the stage's main kernel (its rules are the stage's)."""
    if stages is None or stages.empty or "kernel" not in stages:
        return {}
    pairs = zip(stages["key"], stages["kernel"])
    if stage_pair:
        return {_pair_key(key, stage_pair): kernel for key, kernel in pairs
                if (parse_stage_range(key) or {}).get("stage") == stage}
    return dict(pairs)
