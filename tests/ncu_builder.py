"""ncu CSV text in the layout ncu writes, for tests: program output and ==PROF== lines first, then
the raw page (with its units row) or the details page (one row per metric), for the same three
kernels, printed with base units or auto-scaled units."""

from __future__ import annotations

import csv
import io

PUSH_POP = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
START_END = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
LAUNCH_COLUMNS = ["ID", "Process ID", "Process Name", "Host Name", PUSH_POP, START_END, "Kernel Name",
                  "Context", "Stream", "Block Size", "Grid Size", "Device", "CC"]
PREAMBLE = ("verify: max relative error 3.1e-07\n"
            "==PROF== Connected to process 545 (/usr/bin/python3.12)\n"
            '==PROF== Profiling "sgemm_v6" - 0: 0%....50%....100% - 9 passes\n'
            "==PROF== Disconnected from process 545\n")
LADDER = '"<default domain>:ladder:none:none:RGB:0xff:REGISTERED:ladder"'
STAGE = '"nsprof:sgemm/v6/512x512x512:none:none:RGB:0xff00:REGISTERED:sgemm/v6/512x512x512"'
CONFLICT = '"hold:conflict:none:none:RGB:0xff0000:REGISTERED:conflict"'

# metric: (base unit as printed, auto-scaled unit, scale of the auto unit)
METRICS = {
    "gpu__time_duration.sum": ("nsecond", "usecond", 1e3),
    "dram__bytes_read.sum": ("byte", "Mbyte", 1e6),
    "dram__bytes_write.sum": ("byte", "Kbyte", 1e3),
    "dram__bytes_read.sum.per_second": ("byte/second", "Gbyte/second", 1e9),
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": ("inst", "inst", 1),
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": ("", "", 1),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": ("%", "%", 1),
}
# id, kernel, push/pop cell, metric values in base units (None: ncu printed n/a)
KERNELS = [
    (0, "sgemm_v6", f"545  {LADDER}  {STAGE} ", [72640, 3_150_000, 1_050_000, 43.4e9, 16_777_216, 0, 61.5]),
    (1, "void transpose<32>(const float *, float *, int)", f"545  {LADDER}  {CONFLICT} ",
     [18_880, 67_110_000, 48_000_000, 3.55e12, 0, 31_457_280, 88.25]),
    (2, "cupy_fill", "545", [2_180, 20_000, None, 7.35e9, 0, 0, 1.5]),
]
NVTX = [["ladder", "nsprof:sgemm/v6/512x512x512"], ["ladder", "hold:conflict"], []]


def write_csv(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return out.getvalue()


def launch_cells(kernel_id: int, name: str, push_pop: str) -> list[str]:
    return [str(kernel_id), "545", "python3.12", "h200", push_pop, "", name, "1", "7", "(256, 1, 1)",
            "(64, 64, 1)", "0", "9.0"]


def printed(value: float | None, scale: float, auto: bool) -> str:
    """A value as ncu prints it: thousands separators, or scaled to the auto unit."""
    if value is None:
        return "n/a"
    if auto and scale != 1:
        return f"{value / scale:,.2f}"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def raw_page(auto: bool) -> str:
    header = LAUNCH_COLUMNS + list(METRICS)
    units = [""] * len(LAUNCH_COLUMNS) + [auto_unit if auto else base for base, auto_unit, _ in METRICS.values()]
    rows = [launch_cells(i, name, cell) + [printed(v, scale, auto) for v, (_, _, scale) in zip(values, METRICS.values())]
            for i, name, cell, values in KERNELS]
    return PREAMBLE + write_csv([header, units, *rows])


def details_page() -> str:
    header = [*LAUNCH_COLUMNS, "Section Name", "Metric Name", "Metric Unit", "Metric Value", "Rule Name",
              "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup"]
    rows = [header]
    for i, name, cell, values in KERNELS:
        for metric, value, (_, unit, scale) in zip(METRICS, values, METRICS.values()):
            rows.append([*launch_cells(i, name, cell), "Command line profiler metrics", metric, unit,
                         printed(value, scale, True), "", "", "", "", ""])
        rows.append([*launch_cells(i, name, cell), "SOL", "", "", "", "SOLBottleneck", "OPT",
                     "Compute is the bottleneck, sentence, with a comma", "local", "12"])
    return PREAMBLE + write_csv(rows)


PAGES = {"raw": raw_page(auto=False), "raw-auto": raw_page(auto=True), "details": details_page()}
