"""Plain-text pictures of one warp's access: which bank serves each lane, in which wavefront; which
sectors of which cache lines a request touches. Lines of text, for a terminal or a Markdown code block."""

from __future__ import annotations

from nsprof.access import lane_elements
from nsprof.explain.bank_model import BANKS, BankAnalysis
from nsprof.explain.coalescing import LINE_BYTES, SECTOR_BYTES, SectorAnalysis
from nsprof.render.document import Drawing

USED, UNUSED = "█", "·"  # a 4-byte word a lane asked for / fetched with its sector but not asked for


def bank_drawing(title: str, analysis: BankAnalysis) -> Drawing:
    """The bank grid, and for a narrow terminal the same grid in two halves of 16 banks."""
    return Drawing(title, bank_grid(analysis), narrow=bank_grid(analysis, halves=True))


def bank_grid(analysis: BankAnalysis, halves: bool = False) -> list[str]:
    """One row per lane, one column per bank: the wavefront (1, 2, ...) in which the bank serves the
    lane's word, '·' where the lane does not touch the bank. Phases are separated by a rule; a
    column with several numbers inside one phase is a bank conflict. With `halves`, banks 0-15 and
    then banks 16-31, every lane in each (a terminal of 80 columns holds 16 banks a row)."""
    elements = lane_elements(analysis.access)
    half = BANKS // 2
    lines: list[str] = []
    for banks in ([range(half), range(half, BANKS)] if halves else [range(BANKS)]):
        header = "bank    " + "".join(f"{bank:>3}" for bank in banks)
        lines += ([""] if lines else []) + [header]
        for index, phase in enumerate(analysis.phases):
            if index:
                lines.append("-" * len(header))
            for lane in phase:
                served = dict(zip(analysis.lanes[lane].banks, analysis.lanes[lane].wavefronts))
                cells = "".join(f"{served[bank]:>3}" if bank in served else f"{UNUSED:>3}" for bank in banks)
                row, col = elements[lane]
                lines.append(f"lane {lane:>2} {cells}   [{row}][{col}]")
    per_phase = " + ".join(map(str, analysis.phase_wavefronts))
    total = f"{per_phase} = {analysis.wavefronts}" if len(analysis.phases) > 1 else per_phase
    lines.append(f"wavefronts: {total} (minimum {analysis.min_wavefronts})")
    return lines


def sector_map(analysis: SectorAnalysis) -> list[str]:
    """One row per 128-byte line touched: its four 32-byte sectors, one character per 4 bytes
    (█ asked for, · fetched but unused, blank: sector not touched), and the lanes that touch it."""
    words_per_sector = SECTOR_BYTES // 4  # 8: one character each, as wide as "sector 0"
    asked = {byte // 4 for start, end in analysis.lane_ranges for byte in range(start, end)}
    rows, cols = analysis.access.shape
    label_width = len(f"[{rows}][{cols}]")
    lines = [f"{'line':<{label_width}}  " + " ".join(f"sector {s}" for s in range(LINE_BYTES // SECTOR_BYTES)) + "  lanes"]
    for line in analysis.lines:
        cells = []
        for sector in range(line * LINE_BYTES // SECTOR_BYTES, (line + 1) * LINE_BYTES // SECTOR_BYTES):
            words = range(sector * words_per_sector, (sector + 1) * words_per_sector)
            touched = sector in analysis.sectors
            cells.append("".join(USED if w in asked else UNUSED for w in words) if touched else " " * words_per_sector)
        lanes = [lane for lane, (start, _) in enumerate(analysis.lane_ranges) if start // LINE_BYTES == line]
        element = line * LINE_BYTES // analysis.access.element_bytes
        label = f"[{element // cols}][{element % cols}]"
        lines.append(f"{label:<{label_width}}  " + " ".join(cells) + f"  {lane_ranges(lanes)}")
    return lines


def lane_ranges(lanes: list[int]) -> str:
    """[0, 1, 2, 3, 8, 9] -> '0-3, 8-9'."""
    runs: list[list[int]] = []
    for lane in lanes:
        if runs and lane == runs[-1][1] + 1:
            runs[-1][1] = lane
        else:
            runs.append([lane, lane])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
