"""Read an Nsight Compute report (`.ncu-rep`) into the same LaunchCounters the CSV pages give.

NVIDIA's `ncu-report` package (PyPI) reads the report file itself: it bundles its native library,
so neither ncu nor a GPU is needed. Checked on reports written by ncu 2025.3.1 with ncu-report
2026.3.1.

A report holds thousands of metrics per launch; nsprof reads the ones its metric catalogue knows
(nsprof.metric_catalog: every column analyze, roofline and explain use) and the GPU's name, so
the columns match a raw CSV page of the same capture. Rule results (ncu's advice) come out as
LaunchCounters.rules, as from a details page.
"""

from __future__ import annotations

import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from nsprof import metric_catalog
from nsprof.errors import ParseError
from nsprof.parse.model import LaunchCounters, rule_frame
from nsprof.parse.ncu_checks import check_metrics
from nsprof.parse.ncu_rep_file import REWRITE_HINT, declared_launches
from nsprof.parse.ncu_units import base_unit
from nsprof.printable import printable
from nsprof.ranges import qualify

INSTALL_HINT = ("Install NVIDIA's reader with `pip install ncu-report`, or export CSV instead: "
                "ncu --import FILE.ncu-rep --csv --page raw > FILE.csv")
GPU_NAME_METRIC = "device__attribute_display_name"
_LAUNCH_METRICS = ("launch__stream_id", "launch__context_id", "launch__device_id",
                   "device__attribute_compute_capability_major", "device__attribute_compute_capability_minor")
# ncu's message markup: @section:Id:Title@ and @url:Text:Address@ (the CSV page prints them as here)
_SECTION_LINK = re.compile(r"@section:[^:@]*:([^@]*)@")
_URL_LINK = re.compile(r"@url:([^:@]*):([^@]*)@")
_MESSAGE_TYPES = {0: "", 1: "INF", 2: "OPT", 3: "WRN", 4: "ERR"}  # ncu_report.MsgType_*
_SPEEDUP_TYPES = {1: "local", 2: "global"}  # ncu_report.SpeedupType_*


def reader_available() -> bool:
    """Whether NVIDIA's ncu-report can be imported here (it has no wheel for some platforms)."""
    try:
        import ncu_report  # noqa: F401
    except ImportError:
        return False
    return True


def load_ncu_rep(path: str | Path) -> LaunchCounters:
    """Every kernel launch of an .ncu-rep file. Raises ParseError naming the file."""
    path = Path(path)
    declared = declared_launches(path)  # an empty, foreign or cut file, named before the reader is needed
    try:
        import ncu_report
    except ImportError:
        raise ParseError(f"{path}: reading an .ncu-rep file needs the ncu-report package", INSTALL_HINT) from None
    with _native_stderr_silenced():  # the reader logs protobuf failures straight to fd 2
        try:
            context = ncu_report.load_report(str(path))
        except Exception as err:  # the native reader raises its own types for unreadable files
            raise ParseError(f"{path}: not a readable Nsight Compute report ({err})",
                             "Check the file was written completely by ncu -o; " + INSTALL_HINT) from None
        actions = [context.range_by_idx(r).action_by_idx(a)
                   for r in range(context.num_ranges()) for a in range(context.range_by_idx(r).num_actions())]
        readable = [action for action in actions if action.name() is not None and action.metric_names()]
    if declared == 0 and not actions:
        raise ParseError(f"{path}: the report holds no profiled kernel",
                         "Check ncu's filters (--kernel-name, --nvtx-include, --launch-skip/--launch-count)")
    if len(readable) < max(declared, len(actions)):
        raise ParseError(f"{path}: damaged: {len(readable)} of the {max(declared, len(actions))} kernel launches it "
                         "holds can be read", REWRITE_HINT)
    wanted = sorted({metric.name for metric in metric_catalog.METRICS} | {GPU_NAME_METRIC})
    launches: list[dict] = []
    values: dict[str, list] = {name: [] for name in wanted}
    units: dict[str, str] = {}
    rules: list[dict] = []
    for launch_id, action in enumerate(actions):
        launches.append(_launch_info(launch_id, action, ncu_report))
        for name in wanted:
            value, unit = _value(action.metric_by_name(name))
            values[name].append(value)
            if unit is not None:
                units.setdefault(name, unit)
        rules += _rules(launch_id, action)
    values = {name: column for name, column in values.items() if any(v is not None for v in column)}
    metrics = pd.DataFrame({name: _column(column) for name, column in values.items()})
    kernels = pd.concat([pd.DataFrame(launches), metrics], axis=1)
    units = {name: units.get(name, "") for name in values}
    check_metrics(kernels, units, str(path))
    return LaunchCounters(str(path), "report", kernels, units, rule_frame(rules))


@contextmanager
def _native_stderr_silenced():
    """File descriptor 2 sent to /dev/null: a damaged report is named once, by nsprof, in one line."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _launch_info(launch_id: int, action, ncu_report) -> dict:
    def metric(name: str):
        return _value(action.metric_by_name(name))[0]

    def dims(kind: str) -> str | None:
        parts = [metric(f"launch__{kind}_dim_{axis}") for axis in "xyz"]
        return None if None in parts else "({}, {}, {})".format(*(int(p) for p in parts))

    stream, context, device, major, minor = (metric(name) for name in _LAUNCH_METRICS)
    return {
        "id": launch_id, "kernel": printable(action.name(ncu_report.IAction.NameBase_DEMANGLED)), "nvtx": _nvtx(action),
        "context": _whole(context), "stream": _whole(stream), "block_size": dims("block"), "grid_size": dims("grid"),
        "device": _whole(device), "cc": None if major is None or minor is None else f"{int(major)}.{int(minor)}",
    }


def _whole(value) -> str | None:
    """An id as the CSV pages print it."""
    return None if value is None else str(int(value))


def _value(metric) -> tuple[object, str | None]:
    """A metric's value in nsprof's base units and that unit; (None, None) when not collected."""
    if metric is None or not metric.has_value():
        return None, None
    value = metric.value()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        unit, factor = base_unit(metric.unit())
        return float(value) * factor, unit
    return (printable(str(value)) if value is not None else None), ""


def _column(values: list) -> list:
    """Numbers as floats (NaN where a launch lacks the metric); a column with text stays text."""
    if all(v is None or isinstance(v, float) for v in values):
        return [float("nan") if v is None else v for v in values]
    return [None if v is None else str(v) for v in values]


def _nvtx(action) -> list[str]:
    """The NVTX ranges open at launch, outermost first, named as the CSV parser names them."""
    state = action.nvtx_state()
    if state is None:
        return []
    ranges = []
    for domain_id in state.domains():
        domain = state.domain_by_id(domain_id)
        name = domain.name()
        domain_name = None if name in ("", "<default domain>") else name
        ranges += [qualify(domain_name, entry) for entry in domain.push_pop_ranges()]
        ranges += [qualify(domain_name, entry) for entry in domain.start_end_ranges()]
    return [printable(name) for name in ranges]


def _rules(launch_id: int, action) -> list[dict]:
    rows = []
    for result in action.rule_results_as_dicts():
        message: dict = result.get("rule_message") or {}
        speedup: dict = result.get("speedup_estimation") or {}
        text = _URL_LINK.sub(r"\1 (\2)", _SECTION_LINK.sub(r"\1", message.get("message", "")))
        if not text and not speedup:
            continue
        rows.append({"id": launch_id, "section": result.get("section_identifier", ""),
                     "rule": result.get("rule_identifier", ""), "type": _MESSAGE_TYPES.get(message.get("type", 0), ""),
                     "message": text, "speedup_type": _SPEEDUP_TYPES.get(speedup.get("type", 0)),
                     "speedup_pct": speedup.get("speedup")})
    return rows
