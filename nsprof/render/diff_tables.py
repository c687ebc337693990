"""What `nsprof diff` prints: document blocks (terminal, Markdown, HTML through
nsprof.render.document_writers) and the JSON document (render layer; loads with the command).

Tables fit the width given: names are shortened with an ellipsis, and below NAME_MIN characters
for a name the two median columns go (JSON keeps full names and every figure)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from nsprof.diff import NOT_CALLED, DiffResult
from nsprof.diff.compiled import COMPILED
from nsprof.diff.loop import NOT_CALLED as LOOP_NOT_CALLED
from nsprof.diff.noise import HOST_PACED, MACHINE_PACED, NEVER_CALLED, SHORT_NS
from nsprof.diff.statistics import MIN_SAMPLES
from nsprof.diff.types import DiffDocument, HostChange, Row
from nsprof.kernel_names import short_kernel_name
from nsprof.render import format as fmt
from nsprof.render.document import Block, Bullets, Heading, Image, Paragraph, Table
from nsprof.render.table_names import telling_names

NAME_MIN = 16
NAME_WIDTH = 40  # the widest a name reads in diff's tables and its chart, so that both name a row alike
SECTION_TITLES = {"kernel": "Kernels", "range": "NVTX ranges", "stage": "Stages"}


def telling_labels(names, width: int, kernels: bool = True) -> dict[str, str]:
    """Each of `names` (every row of a section, not only those shown) in at most `width`
    characters, told apart among them all: the chart and the tables call one kernel alike."""
    distinct = list(dict.fromkeys(str(name) for name in names))
    return dict(zip(distinct, telling_names(distinct, width, kernels)))
CHART_FILE = "diff-chart.png"


def diff_json(result: DiffResult) -> str:
    from nsprof.render.document_writers import json_ready

    document: DiffDocument = {
        "a": result.a, "b": result.b, "method": result.method, "min_change_pct": result.min_change_pct,
        "stage_pair": list(result.stage_pair) if result.stage_pair else None, "time_source": result.time_source,
        "runs": result.runs, "noise": {"floor_pct": result.noise.pct, "source": result.noise.source, "short_ns": SHORT_NS,
                                       "never_called": list(NEVER_CALLED),
                                       "not_called_across_gpus": [*MACHINE_PACED, "copies"] if result.apart else []}
        if result.noise else None,
        "warnings": result.warnings, "kernels": result.kernels, "ranges": result.ranges, "stages": result.stages,
        "totals": {"rows": result.totals, "top_contributors": result.contributors}, "host": result.host,
        "loop": result.loop,
    }
    return json.dumps(json_ready(document), indent=2)


def diff_blocks(result: DiffResult, width: int, chart_png: bytes | None = None) -> list[Block]:
    """The answer first (a summary), then warnings, totals, kernels, ranges, stages, and why."""
    blocks: list[Block] = [Heading(1, diff_title(result)),
                           Paragraph(" ".join(summary(result)), emphasis=True)]
    if result.warnings:
        blocks.append(Bullets([f"warning: {line}" for line in result.warnings]))
    if result.totals:
        blocks.append(_totals_table(result))
    if result.host:
        blocks.append(_host_table(result.host))
    if result.contributors:
        blocks.append(_contributors_table(result, width))
    for label, rows in _sections(result):
        if rows:
            blocks.append(_change_table(SECTION_TITLES[label], label, rows, result, width))
    blocks += _why_blocks(result, width)
    if chart_png is not None:
        blocks.append(Image(CHART_FILE, "change in median time per kernel, with its 95% interval", chart_png))
    blocks.append(Paragraph(method_note(result)))
    return blocks


def method_note(result: DiffResult) -> str:
    """How the intervals were made and what a call needs, for this diff's runs."""
    runs = f"A holds {result.runs.get('a', 1)} run{'s' if result.runs.get('a', 1) > 1 else ''}, " \
           f"B {result.runs.get('b', 1)}" if result.runs else ""
    note = f"Intervals: {result.method}. A change is called faster or slower when its interval excludes 0 and it is " \
           f"at least {result.min_change_pct:g}%"
    if result.noise is not None:
        floors = ", ".join(f"{name} {pct:.2g}%" for name, pct in result.noise.pct.items())
        missing = result.noise.missing
        note += (f" and beyond the noise floor of its category ({floors}: {result.noise.source}); "
                 f"{', '.join((*NEVER_CALLED, *missing))} are not called"
                 + (f" ({', '.join(missing)}: the record holds no floor)" if missing else "")
                 + ("; nor, the sides having run on different GPUs, are work of 10-100 us and copies" if result.apart else ""))
    mixed = "unstable: launched in other proportions of its configurations, so that the mix moves its median"
    if max(result.runs.values(), default=1) > 1:
        note += f" ({runs}; n A/B counts launches over all runs); {mixed}, or, between the runs of a side, a kernel " \
                f"launched with other configurations or a range run a different number of times: its medians compare " \
                f"different work, never called, nor are {' and '.join(HOST_PACED)} (their time is the host's or a wait)"
    elif any(row["status"] == "unstable" for row in result.kernels):
        note += f"; {mixed}: its medians compare different work, never called"
    if any(row["status"] == COMPILED for row in result.kernels):
        note += ("; compiled differently: the compiler or its autotuner chose otherwise in the two runs (other ops, "
                 "kernels, configurations or counts: --json's `compiled` says which), never called")
    return note + f"; with fewer than {MIN_SAMPLES} launches (runs) on a side no interval is computed (n<3)."


def diff_title(result: DiffResult) -> str:
    if result.stage_pair and result.a == result.b:
        return f"nsprof diff: {result.a}, stage {result.stage_pair[0]} -> {result.stage_pair[1]}"
    return f"nsprof diff: {result.a} vs {result.b}"


def loop_lines(result: DiffResult) -> list[str]:
    """The loop first, where both sides have one: an iteration's time A -> B with its interval and
    call, then start-up on its own."""
    loop = result.loop
    if loop is None:
        return []
    low, high = loop["ci_low_pct"], loop["ci_high_pct"]
    interval = "" if low is None or high is None else f", 95% interval {low:+.1f}% to {high:+.1f}%"
    lines = [f"Loop: an iteration {fmt.duration_ns(loop['a_median_ns'])} -> {fmt.duration_ns(loop['b_median_ns'])} "
             f"({loop['change_pct']:+.1f}%{interval}; {loop['a_count']:,} and {loop['b_count']:,} steady iterations, "
             f"{_loop_source(loop['a_source'], loop['b_source'])}): "
             + ("not called from one run a side: an iteration's time moves more between runs than within one; "
                f"{RUNS_DECIDE}." if loop["status"] == LOOP_NOT_CALLED else f"{loop['status']}.")]
    startups = loop["a_startup_ns"], loop["b_startup_ns"]
    if startups[0] is not None and startups[1] is not None:
        lines.append(f"Start-up, on its own: {fmt.duration_ns(startups[0])} -> {fmt.duration_ns(startups[1])}.")
    return lines


def _loop_source(a: str, b: str) -> str:
    return f"{a} on both sides" if a == b else f"{a} in A, {b} in B"


def summary(result: DiffResult) -> list[str]:
    """Sentences that answer: faster or not, how sure, and why."""
    lines = loop_lines(result)
    if result.stage_pair:
        return lines + [_stage_sentence(row, result) for row in result.stages]
    for label, rows in _sections(result):
        if rows:
            lines += _section_sentences(label, rows, result.apart)
    return lines + _totals_sentences(result)


def _sections(result: DiffResult) -> tuple[tuple[str, Sequence[Row]], ...]:
    """Each section's row label and rows, in the order the summary and the tables take them."""
    return ("kernel", result.kernels), ("range", result.ranges), ("stage", result.stages)


def _stage_sentence(row: Row, result: DiffResult) -> str:
    """One stage of a stage pair: its time A -> B, change, verdict and the counters that moved most."""
    counters = "".join(f"; {_counter_phrase(name, values)}" for name, values in _top_counters(row.get("metrics", {})))
    return (f"{row_label(row)}: time {fmt.duration_ns(row['a_median_ns'])} -> "
            f"{fmt.duration_ns(row['b_median_ns'])}, {_change(row)} ({_verdict(row, result)}){counters}.")


def _section_sentences(label: str, rows: Sequence[Row], apart: bool) -> list[str]:
    """A section's statuses counted, its notable rows, and what could not be decided or tested."""
    section = f"{label}s"  # kernels, ranges, stages
    views = [view for row in rows for view in (_range_views(row) if label == "range" else [row])]
    return [_status_counts(section, rows), *_notable_sentences(label, views),
            *_undecided_sentences(section, views, apart), *_untestable_sentences(section, rows)]


def _status_counts(section: str, rows: Sequence[Row]) -> str:
    """'3 kernels: 1 slower, 2 same.'"""
    counts = {status: sum(row["status"] == status for row in rows)
              for status in ("faster", "slower", "same", "unstable", COMPILED, "added", "removed", NOT_CALLED)}
    return f"{_counted(len(rows), section)}: " + ", ".join(f"{n} {status}" for status, n in counts.items() if n) + "."


def _notable_sentences(label: str, views: Sequence[Row]) -> list[str]:
    """Up to three rows each: called faster or slower, unstable (kernels), compiled differently,
    and own durations that moved (not called)."""
    def first(*statuses: str) -> list[Row]:
        return [view for view in views if view["status"] in statuses][:3]

    lines = [f"{row_label(row) if label == 'stage' else short_kernel_name(row[label], 40)} {row['status']}: {_change(row)}."
             for row in first("faster", "slower")]
    if label == "kernel":
        lines += [f"{short_kernel_name(row[label], 40)} unstable: its medians compare other work (other "
                  f"configurations, or other shares of them), not called." for row in first("unstable")]
    lines += [f"{short_kernel_name(row[label], 40)} compiled differently: {row['compiled']}; not called."
              for row in first(COMPILED)]
    return lines + [f"{row[label]}'s own duration (CPU, not called): {_change(row)}."
                    for row in [view for view in views if view["status"] == NOT_CALLED and view["significant"]][:3]]


def _undecided_sentences(section: str, views: Sequence[Row], apart: bool) -> list[str]:
    """How many rows moved past --min-change within the noise floor, and what would decide them."""
    undecided = sum(bool(view.get("undecided")) for view in views)
    if not undecided:
        return []
    its, it = ("its", "it") if undecided == 1 else ("their", "them")
    moved = f"{_counted(undecided, section)} moved past --min-change within the noise floor of {its} category"
    if apart:
        return [f"{moved}, or in work two GPUs cannot compare: capture both sides on one machine, with "
                f"several runs (nsprof profile --runs 5), to decide {it}."]
    return [f"{moved}: one run a side cannot decide {it}; {RUNS_DECIDE}."]


def _untestable_sentences(section: str, rows: Sequence[Row]) -> list[str]:
    """How many rows ran on both sides too few times for an interval."""
    untestable = sum(not row["testable"] and row["a_count"] and row["b_count"] for row in rows)
    if not untestable:
        return []
    return [f"{_counted(untestable, section)} ran fewer than {MIN_SAMPLES} times on a side: nothing can be "
            f"called for {'it' if untestable == 1 else 'them'}."]


def _totals_sentences(result: DiffResult) -> list[str]:
    """The total kernel time A -> B, and the host side's verdict where it changed."""
    lines = []
    kernel_time = next((row for row in result.totals if row["quantity"] == "kernel_ns"), None)
    if kernel_time and kernel_time["change_pct"] is not None:
        lines.append(f"Total kernel time {fmt.duration_ns(kernel_time['a_ns'])} -> "
                     f"{fmt.duration_ns(kernel_time['b_ns'])} ({fmt.change(kernel_time['change_pct'])}).")
    if result.host and result.host["a_verdict"] != result.host["b_verdict"]:  # figures, untested: the table has them
        lines.append(host_sentence(result.host))
    return lines


def _counted(count: int, section: str) -> str:
    """"1 kernel", "2 kernels": `section` is a plural (kernels, ranges, stages)."""
    return f"{count} {section[:-1] if count == 1 else section}"


def _verdict(row: Row, result: DiffResult) -> str:
    if row["status"] == "unstable":
        return "launched a different number of times between runs: not called"
    if row["status"] == COMPILED:
        return f"compiled differently ({row['compiled']}): not called"
    if not row["testable"]:
        return f"fewer than {MIN_SAMPLES} launches on a side: not testable"
    if row["status"] in ("faster", "slower"):
        return row["status"]
    if row.get("undecided"):
        return f"past --min-change but within the noise floor of its category: {UNDECIDED} with one run a side; {RUNS_DECIDE}"
    if row["significant"]:
        floor = " or the noise floor" if result.noise is not None else ""
        return f"a real change, its interval excludes 0, but under --min-change {result.min_change_pct:g}%{floor}"
    return "no change the launches can tell apart from noise"


def _change(row: Row) -> str:
    if row["change_pct"] is None:
        return row["status"]
    if row["ci_low_pct"] is None:
        return fmt.change(row["change_pct"])
    return f"{fmt.change(row['change_pct'])} [{fmt.change(row['ci_low_pct'])}, {fmt.change(row['ci_high_pct'])}]"


def _top_counters(metrics: dict) -> list[tuple[str, dict]]:
    """The bank conflicts first (the ladder's teaching counter), then the largest moves."""
    shown = {name: values for name, values in metrics.items()
             if name not in ("smem_ld_conflicts", "smem_st_conflicts") or "bank_conflicts_per_launch" not in metrics}
    ranked = sorted(shown.items(), key=lambda item: (item[0] != "bank_conflicts_per_launch",
                                                      -abs(item[1]["change_pct"] or 1e9)))
    return ranked[:3]


def _counter_phrase(name: str, values: dict) -> str:
    label = name.replace("_per_launch", "").replace("_", " ")
    return f"{label} {_counter_value(name, values['a'])} -> {_counter_value(name, values['b'])}"


def _counter_value(name: str, value) -> str:
    if name.endswith("_bytes"):
        return fmt.byte_count(value)
    if name.endswith("_pct"):
        return fmt.percent(value)
    if name == "gflops_per_s":
        return fmt.flops_per_s(value * 1e9)
    if name == "tflops_per_s":
        return fmt.flops_per_s(value * 1e12)
    if name.endswith("_nway") or name.startswith("stall_"):
        return fmt.ratio(value)
    return fmt.count(value)


def row_label(row: Row) -> str:
    """A stage row's op, stage and size; a kernel's or range's full name."""
    if "label" in row:
        return f"{row['op']} {row['label']} {fmt.problem_size(row['size'])}"
    return str(row.get("kernel") or row.get("range"))


def _interval(row: Row) -> str:
    if row["a_count"] and row["b_count"] and not row["testable"]:
        return "n<3"
    if row["ci_low_pct"] is None:
        return fmt.MISSING
    return f"[{fmt.signed(row['ci_low_pct'])}, {fmt.signed(row['ci_high_pct'])}]%"


UNDECIDED = "undecided"
RUNS_DECIDE = "capture several runs (nsprof profile --runs 5) to decide"


def _status(row: Row) -> str:
    if row.get("undecided"):
        return UNDECIDED
    return "same*" if row["status"] == "same" and row["significant"] else row["status"]


CHANGE_ROWS = 25  # about a screenful of the largest changes (the rows come ordered); the rest in --json


def _change_table(title: str, label: str, rows: Sequence[Row], result: DiffResult, width: int) -> Table:
    """One row per kernel or stage; a range has a row for its GPU time and one for its own
    duration (`time`: GPU or own), the range alone having no GPU work only the latter. The first
    CHANGE_ROWS (significant changes first, then added and removed, then the rest)."""
    more = len(rows) - CHANGE_ROWS
    among = [str(row[label]) for row in rows] if label != "stage" else []
    headers = [label, "n A/B", "A median", "B median", "change", "95% CI", "status"]
    if label == "range":
        headers.insert(1, "time")
    shown = _change_rows(label, rows[:CHANGE_ROWS])
    cells = [[name] + ([] if kind is None else [kind]) +
             [f"{row['a_count']}/{row['b_count']}", fmt.duration_ns(row["a_median_ns"]), fmt.duration_ns(row["b_median_ns"]),
              fmt.change(row["change_pct"]), _interval(row), _status(row)]
             for row, name, kind in shown]
    medians = (headers.index("A median"), headers.index("B median"))
    headers, cells = _fitted(headers, cells, width, drop=medians, kernels=label == "kernel", among=among)
    notes = _status_notes([_status(row) for row, _, _ in shown], result)
    if label == "range":
        notes.append("GPU: the kernels, graphs and copies the range launched; own: the range's own duration, "
                     "CPU time, which drifts between runs more than its interval (from one run) says: never called")
    if more > 0:
        notes.append(f"the {CHANGE_ROWS} largest changes; {more:,} more {label}s in --json ({label}s)")
    if "A median" not in headers:  # _fitted gave the names their room
        notes.append("left out to fit the terminal: A median, B median (in --json: a_median_ns, b_median_ns)")
    return Table.preformatted(headers, cells, [header not in (label, "time") for header in headers], title=title,
                              caption="; ".join(notes) or None)


def _change_rows(label: str, rows: Sequence[Row]) -> list[tuple[Row, str, str | None]]:
    """Each row with its name and, for a range, which time it holds: its GPU time, or its own
    duration (a row of its own where the range also has GPU time)."""
    shown: list[tuple[Row, str, str | None]] = [(row, row_label(row) if label == "stage" else str(row[label]), None)
                                                 for row in rows]
    if label == "range":
        shown = [(view, name, "own" if view is not row or row["basis"] == "duration" else "GPU")
                 for row, name, _ in shown for view in _range_views(row)]
    return shown


def _status_notes(statuses: list[str], result: DiffResult) -> list[str]:
    """What same* and undecided mean, where a table shows them."""
    notes = []
    if "same*" in statuses:
        floor = " or the noise floor of its category" if result.noise is not None else ""
        notes.append(f"same*: a real change (its interval excludes 0) under --min-change {result.min_change_pct:g}%{floor}")
    if UNDECIDED in statuses:
        notes.append(f"{UNDECIDED}: past --min-change {result.min_change_pct:g}% but within the noise floor of its category, "
                     f"which one run a side cannot tell apart: {RUNS_DECIDE}")
    return notes


def _range_views(row: Row) -> list[dict]:
    """A range row, then its own duration where that is not the row already."""
    own = row.get("duration")
    return [row] + ([{**own, "range": row["range"]}] if row["basis"] == "gpu_time" and own else [])


def _totals_table(result: DiffResult) -> Table:
    names = {"gpu_busy_ns": "GPU busy", "kernel_ns": "kernels", "copy_ns": "copies and memsets", "idle_ns": "GPU idle"}
    cells = [[names[row["quantity"]], fmt.duration_ns(row["a_ns"]), fmt.duration_ns(row["b_ns"]),
              fmt.change(row["change_pct"])] for row in result.totals]
    return Table.preformatted(["total", "A", "B", "change"], cells, [False, True, True, True], title="Totals")


def _host_value(value, unit: str) -> str:
    if value is None:
        return fmt.MISSING
    if unit == "pct":
        return f"{value:.1f}%"
    if unit == "count":  # per iteration: a wait every few iterations is a fraction
        return f"{value:,.2f}" if value < 10 else f"{value:,.1f}"
    return fmt.duration_ns(value)


def _host_change(row: Row) -> str:
    return fmt.change(row["change_pct"], " pt" if row["unit"] == "pct" else "%")


def _host_table(host: HostChange) -> Table:
    """The host side of each capture (nsprof.diff.host), per iteration where both have them."""
    cells = [[row["label"], _host_value(row["a"], row["unit"]), _host_value(row["b"], row["unit"]), _host_change(row)]
             for row in host["rows"]]
    return Table.preformatted(["host side", "A", "B", "change"], cells, [False, True, True, True],
                              title=f"Host side ({host['basis']})",
                              caption=f"A: {host['a_verdict']}; B: {host['b_verdict']} (nsprof analyze says why); "
                                      "idle: the GPU's idle time by cause; host time between launches: the median; "
                                      "figures of each side, not tested for significance")


def host_sentence(host: HostChange) -> str:
    """The host side's change of verdict in one sentence, with the idle causes that moved most."""
    rows = {row["quantity"]: row for row in host["rows"]}
    moved = [f"{rows[key]['label'].removeprefix('idle: ')} {_host_change(rows[key])}"
             for key in ("launch_overhead_ns", "synchronization_ns", "host_work_ns", "gpu_idle_ns")
             if (change := rows[key]["change_pct"]) is not None and rows[key]["a"] and abs(change) >= 10]
    return (f"Host side {host['a_verdict']} -> {host['b_verdict']}" + (f" ({host['basis']}: {', '.join(moved)})" if moved
                                                                     else "") + ".")


def _contributors_table(result: DiffResult, width: int) -> Table:
    cells = [[row["kernel"], ("+" if row["delta_ns"] > 0 else "-") + fmt.duration_ns(abs(row["delta_ns"])),
              fmt.percent(row["share_pct"])] for row in result.contributors]
    headers, cells = _fitted(["kernel", "time change", "share"], cells, width, among=[row["kernel"] for row in result.kernels])
    return Table.preformatted(headers, cells, [False, True, True], title="Top contributors (kernel time)",
                              caption="share: of the summed absolute changes of every kernel")


def _why_blocks(result: DiffResult, width: int) -> list[Block]:
    cells, rules = [], []
    tables: tuple[tuple[str, Sequence[Row]], ...] = (("kernel", result.kernels), ("stage", result.stages))
    for label, rows in tables:
        for row in rows:
            name = row_label(row) if label == "stage" else str(row[label])
            for counter, values in (row.get("metrics") or {}).items():
                change = values["change_pct"]
                cells.append([name, counter, _counter_value(counter, values["a"]), _counter_value(counter, values["b"]),
                              fmt.change(change)])
            for key, word in (("rules_appeared", "appeared"), ("rules_gone", "went away")):
                if row.get(key):
                    rules.append(f"{name}: ncu rule{'s' if len(row[key]) > 1 else ''} {', '.join(row[key])} {word}")
    blocks: list[Block] = []
    if cells:
        headers, cells = _fitted(["what", "counter", "A", "B", "change"], cells, width,
                                 among=[row["kernel"] for row in result.kernels])
        blocks.append(Table.preformatted(headers, cells, [False, False, True, True, True],
                                         title="Why: the ncu counters that moved (per launch)"))
    if rules:
        blocks.append(Bullets(rules))
    return blocks


def _fitted(headers: list[str], cells: list[list[str]], width: int, drop: tuple[int, ...] = (),
            kernels: bool = True, among: list[str] | tuple = ()) -> tuple[list, list]:
    """Shorten the first column's names (telling_labels, told apart among `among` too: every
    name of the section) to at most NAME_WIDTH, so the table fits `width`; below NAME_MIN for
    them, drop the `drop` columns first."""
    def others(columns: list[int]) -> int:
        return sum(max(len(headers[i]), *(len(row[i]) for row in cells)) for i in columns) + 3 * (len(columns) + 1) + 1

    kept = list(range(1, len(headers)))
    if drop and width - others(kept) < NAME_MIN:
        kept = [i for i in kept if i not in drop]
    name_width = min(NAME_WIDTH, max(NAME_MIN, width - others(kept)))
    kept = [0, *kept]
    labels = telling_labels([*among, *(row[0] for row in cells)], name_width, kernels)
    return [headers[i] for i in kept], [[labels[row[0]]] + [row[i] for i in kept[1:]] for row in cells]
