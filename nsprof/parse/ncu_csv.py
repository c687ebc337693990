"""Read `ncu --csv` output into one tidy, wide DataFrame: one row per profiled kernel launch.

Two layouts ("pages") are understood, found by their header row:

- `--page raw`: one row per launch, one column per metric (`gpu__time_duration.sum`, ...), and a
  second row that holds the unit of each column. Numbers carry thousands separators
  ("16,336,583"); a metric that does not apply reads "n/a".
- `--page details` (the default page): one row per launch and metric, with columns "ID",
  "Kernel Name", ..., "Section Name", "Metric Name", "Metric Unit", "Metric Value".

Both start with whatever the profiled program and ncu printed (its stdout, `==PROF==` lines)
before the header row; that text is skipped.

Columns of `LaunchCounters.kernels`:

- `id`: ncu's launch id (int); `kernel`: function name as ncu prints it (demangled);
  `nvtx`: list of the NVTX ranges open at launch, outermost first, `domain:name` outside the
  default domain (see nsprof.parse.ncu_nvtx);
- `process_id`, `process_name`, `host`, `context`, `stream`, `block_size`, `grid_size`,
  `device`, `cc`: launch information, where ncu printed it;
- then one column per metric, named as ncu names it (raw metric names, or the details page's
  display names), converted to base units (ns, byte, .../second, hz; see nsprof.parse.ncu_units).
  `LaunchCounters.units` maps each metric column to its base unit. A metric whose values are not
  numbers (a device name) stays text.

Columns of `LaunchCounters.rules` (ncu's rule results: its own advice, from a details page or a report;
a raw page has none): `id` (the launch), `section`, `rule`, `type` (OPT, WRN, INF, ...), `message`,
`speedup_type` (global: of the whole kernel, local: of the part the rule looks at) and
`speedup_pct` (ncu's estimate, % of the kernel's time; NaN where the rule estimates none).
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

import pandas as pd

from nsprof.errors import ParseError
from nsprof.ncu_log import NO_KERNELS
from nsprof.parse.model import LaunchCounters, rule_frame
from nsprof.parse.ncu_checks import check_metrics
from nsprof.parse.ncu_nvtx import PUSH_POP_COLUMN, START_END_COLUMN, push_pop_ranges, start_end_ranges
from nsprof.parse.ncu_units import base_unit, parse_number
from nsprof.printable import printable

INFO_COLUMNS = {
    "ID": "id", "Kernel Name": "kernel", "Process ID": "process_id", "Process Name": "process_name",
    "Host Name": "host", "Context": "context", "Stream": "stream", "Block Size": "block_size",
    "Grid Size": "grid_size", "Device": "device", "CC": "cc",
}
DETAILS_COLUMNS = ("Metric Name", "Metric Unit", "Metric Value")
# A details page of a capture with rule results ends in these columns; metric rows without a rule
# stop after "Metric Value" (ncu writes them ragged), rule rows fill them.
RULE_COLUMNS = ("Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup")
_TOOL_LINE = re.compile(r"^==[A-Z]+==")  # ==PROF==, ==WARNING==, ==ERROR==
_HEADER_START = ('"ID",', "ID,")
HOW_TO_WRITE = "Write it with ncu --csv --page raw (or --page details) ... > FILE.csv"
SNIFF_BYTES = 1 << 20  # how far into a .csv is_ncu_csv looks for the header row or a line of ncu's


def load_ncu_csv(path: str | Path) -> LaunchCounters:
    """Read an ncu CSV file (raw or details page). Raises ParseError naming the file."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig", errors="replace")
    except OSError as err:
        raise ParseError(f"{path}: cannot read ({err.strerror})") from None
    return parse_ncu_csv(text, source=str(path))


def is_ncu_csv(path: str | Path) -> bool:
    """Whether a .csv file is ncu output, judged from its first SNIFF_BYTES only: a header row as
    the parser finds it, or a line ncu itself printed before one (==PROF==, ==WARNING==...; a run
    that profiled no kernel has only those). Searches for profiles use this to pass over other
    CSV files (a bench table, a roofline.csv); an unreadable file is not ncu output."""
    try:
        with open(path, "rb") as file:
            budget = SNIFF_BYTES
            while budget > 0:
                line = file.readline(budget)  # a header longer than the budget is cut: its start decides
                if not line:
                    return False
                budget -= len(line)
                text = line.decode("utf-8", errors="replace").lstrip("\ufeff")
                if _TOOL_LINE.match(text) or _is_header(text):
                    return True
    except OSError:
        return False
    return False


def parse_ncu_csv(text: str, source: str = "<ncu csv>") -> LaunchCounters:
    """Parse the text of `ncu --csv` output; `source` names it in error messages."""
    header, rows = _table(text, source)
    details = [column for column in DETAILS_COLUMNS if column in header]
    if len(details) == len(DETAILS_COLUMNS):
        return _details(header, rows, source)
    if details:  # a details page with a column cut out: as a raw page it would hold no metric at all
        missing = ", ".join(f'"{column}"' for column in DETAILS_COLUMNS if column not in details)
        raise ParseError(f"{source}: a details page without its {missing} column", HOW_TO_WRITE)
    if not any("__" in name for name in header):
        raise ParseError(f"{source}: ncu CSV with no metric: neither a raw page (no metric column such as "
                         f"gpu__time_duration.sum) nor a details page (no {', '.join(DETAILS_COLUMNS)} columns)",
                         HOW_TO_WRITE)
    return _raw(header, rows, source)


def _table(text: str, source: str) -> tuple[list[str], list[list[str]]]:
    """The header row and the data rows, skipping everything printed before the header."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if _is_header(line)), None)
    if start is None and NO_KERNELS in text:
        raise ParseError(f"{source}: ncu profiled no kernel (it printed \"{NO_KERNELS}\")",
                         "Check the --nvtx-include, --kernel-name and --launch-skip/--launch-count filters")
    if start is None:
        raise ParseError(f"{source}: not Nsight Compute CSV (no header row starting \"ID\" with a \"Kernel Name\" column)",
                         HOW_TO_WRITE)
    body = "".join(line for line in lines[start:] if not _TOOL_LINE.match(line))
    try:
        header, *rows = [[printable(cell) for cell in row] for row in csv.reader(io.StringIO(body))
                         if any(cell.strip() for cell in row)]
    except csv.Error as err:
        raise ParseError(f"{source}: malformed CSV ({err})", HOW_TO_WRITE) from None
    if not rows:
        raise ParseError(f"{source}: Nsight Compute CSV with a header and no kernel rows",
                         "Profile at least one kernel (check ncu's filters), then export again: " + HOW_TO_WRITE)
    metric_end = header.index("Metric Value") + 1 if all(c in header for c in (*DETAILS_COLUMNS, *RULE_COLUMNS)) else None
    for number, row in enumerate(rows, start=2):
        if metric_end and len(row) in (metric_end, metric_end + 1):  # a metric row without a rule: ncu
            row.extend([""] * (len(header) - len(row)))  # stops after "Metric Value" (and one empty field)
        if len(row) != len(header):
            raise ParseError(f"{source}: CSV row {number} has {len(row)} fields, the header {len(header)} (truncated file?)",
                             HOW_TO_WRITE)
    return header, rows


def _is_header(line: str) -> bool:
    if not line.startswith(_HEADER_START):
        return False
    try:
        return "Kernel Name" in next(csv.reader([line]))
    except csv.Error:
        return False


def _raw(header: list[str], rows: list[list[str]], source: str) -> LaunchCounters:
    if rows and not rows[0][header.index("ID")].strip():  # the units row
        units_row, rows = rows[0], rows[1:]
    else:
        units_row = [""] * len(header)
    metric_columns = [i for i, name in enumerate(header) if "__" in name]  # ncu metrics: unit__counter...
    twice = next((name for name in header if header.count(name) > 1), None)
    if twice is not None:
        raise ParseError(f"{source}: the column {twice!r} appears {header.count(twice)} times; the file is damaged",
                         HOW_TO_WRITE)
    values, units = {}, {}
    for i in metric_columns:
        unit, factor = base_unit(units_row[i])
        values[header[i]] = _values([row[i] for row in rows], factor)
        units[header[i]] = unit
    kernels = _with_metrics(_launch_info(header, rows, source), values)
    repeated = kernels["id"][kernels["id"].duplicated()]
    if len(repeated):  # two launches under one id: which one a stage or kernel means is anyone's guess
        raise ParseError(f"{source}: launch id {repeated.iloc[0]} names {int((kernels['id'] == repeated.iloc[0]).sum())} "
                         "rows; the file is damaged (two exports joined?)", HOW_TO_WRITE)
    check_metrics(kernels, units, source)
    return LaunchCounters(source, "raw", kernels, units)


def _details(header: list[str], rows: list[list[str]], source: str) -> LaunchCounters:
    name_at, unit_at, value_at, id_at = (header.index(c) for c in (*DETAILS_COLUMNS, "ID"))
    metric_rows = [row for row in rows if row[name_at].strip()]  # rule rows have no metric
    _check_each_metric_once(header, metric_rows, source)
    first_row_of_launch: dict[str, list[str]] = {}
    for row in metric_rows:
        first_row_of_launch.setdefault(row[id_at], row)
    kernels = _launch_info(header, list(first_row_of_launch.values()), source)
    launch_position = {launch_id: i for i, launch_id in enumerate(first_row_of_launch)}
    values: dict[str, list] = {}
    units: dict[str, str] = {}
    for row in metric_rows:
        name = row[name_at]
        unit, factor = base_unit(row[unit_at])
        column = values.setdefault(name, [math.nan] * len(launch_position))
        units.setdefault(name, unit)
        position = launch_position[row[id_at]]
        if isinstance(column[position], float) and math.isnan(column[position]):  # first value wins
            number = parse_number(row[value_at])
            column[position] = row[value_at] if number is None else number * factor
    values = {name: column if all(isinstance(v, float) for v in column) else [_text(v) for v in column]
              for name, column in values.items()}
    kernels = _with_metrics(kernels, values)
    check_metrics(kernels, units, source)
    return LaunchCounters(source, "details", kernels, units, _rules(header, rows, source))


def _check_each_metric_once(header: list[str], metric_rows: list[list[str]], source: str) -> None:
    """A details page names a metric once per launch and section (one metric may appear in two
    sections, in two units: "Memory Throughput" is % in one and byte/second in the other)."""
    at = [header.index(column) for column in ("ID", "Section Name", "Metric Name") if column in header]
    seen: set[tuple[str, ...]] = set()
    for row in metric_rows:
        key = tuple(row[i] for i in at)
        if key in seen:
            raise ParseError(f"{source}: launch {key[0]} has two {key[-1]!r} rows"
                             f"{f' in section {key[1]!r}' if len(key) == 3 else ''}; the file is damaged "
                             "(two exports joined?)", HOW_TO_WRITE)
        seen.add(key)


def _rules(header: list[str], rows: list[list[str]], source: str) -> pd.DataFrame:
    """The rule rows of a details page (a capture without rules has no rule columns)."""
    needed = (*RULE_COLUMNS, "ID", "Section Name")
    if not all(name in header for name in needed):
        return rule_frame([])
    at = {name: header.index(name) for name in needed}
    return rule_frame([{
        "id": _launch_id(row[at["ID"]], source), "section": row[at["Section Name"]], "rule": row[at["Rule Name"]],
        "type": row[at["Rule Type"]], "message": row[at["Rule Description"]],
        "speedup_type": row[at["Estimated Speedup Type"]] or None, "speedup_pct": parse_number(row[at["Estimated Speedup"]]),
    } for row in rows if row[at["Rule Name"]].strip()])


def _launch_info(header: list[str], rows: list[list[str]], source: str) -> pd.DataFrame:
    """id, kernel, nvtx and the other launch columns ncu printed, one row per launch."""
    info: dict[str, list] = {INFO_COLUMNS[name]: [row[i] for row in rows]
                             for i, name in enumerate(header) if name in INFO_COLUMNS}
    info["id"] = [_launch_id(value, source) for value in info["id"]]
    info["nvtx"] = [_nvtx(header, row) for row in rows]
    ordered = ["id", "kernel", "nvtx"] + [c for c in INFO_COLUMNS.values() if c in info and c not in ("id", "kernel")]
    return pd.DataFrame({column: info[column] for column in ordered})


def _launch_id(cell: str, source: str) -> int:
    try:
        return int(cell)
    except ValueError:
        raise ParseError(f"{source}: an \"ID\" cell is not a launch number", HOW_TO_WRITE) from None


def _with_metrics(launches: pd.DataFrame, metrics: dict[str, list]) -> pd.DataFrame:
    """Launch columns then metric columns, joined at once (hundreds of metrics in a raw page)."""
    metric_frame = pd.DataFrame(metrics, index=launches.index, columns=[m for m in metrics if m not in launches])
    return pd.concat([launches, metric_frame], axis=1)


def _nvtx(header: list[str], row: list[str]) -> list[str]:
    ranges = []
    for name, cell in zip(header, row):
        if name.startswith(PUSH_POP_COLUMN):
            ranges += push_pop_ranges(cell)
        elif name.startswith(START_END_COLUMN):
            ranges += start_end_ranges(cell)
    return ranges


def _values(cells: list[str], factor: float) -> list:
    """Numbers in base units; a column with any non-number (a device name) stays text."""
    numbers = [number for number in map(parse_number, cells) if number is not None]
    if len(numbers) < len(cells):
        return [cell.strip() for cell in cells]
    return [number * factor for number in numbers]


def _text(value) -> str | None:
    return None if isinstance(value, float) and math.isnan(value) else str(value)
