"""`nsprof explain cold-inputs`' page: per size, the bytes one product touches (its inputs and output) against
the profile GPU's L2, what a launch on one set of buffers would find there, and how many sets `nsprof bench`
rotates among (nsprof.launch.rotation's rule, the one the bench applies)."""

from __future__ import annotations

from nsprof.explain.explain_types import InputsRow, InputsSectionJson
from nsprof.explain.page import section
from nsprof.explain.waves import SIZES as WAVE_SIZES
from nsprof.ladder.op_model import Op
from nsprof.launch.rotation import ROTATE_BELOW_L2S, set_count
from nsprof.render.document import Block, Bullets, Table
from nsprof.sizes import size_label

H200_L2_MIB = 60.0  # what CUDA reports for an H200, where no profile names its GPU
MIB = 2**20
# per ladder, sizes from inside the L2 to many times past it: the matrix products' squares and model shapes,
# and SGEMV's matrices
SIZES = {"hgemm": (*WAVE_SIZES, (1, 4096, 4096), (1, 4096, 14336), (128, 4096, 14336)),
         "sgemm": ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
                   (1000, 1200, 808)),
         "sgemv": ((1024, 1024), (4096, 4096), (8192, 8192), (16384, 16384), (2**20, 256))}
_COLUMNS = (("size", "size", ""), ("touches\nMiB", "footprint_mib", ",.1f"), ("L2s", "l2s", ",.2f"),
            ("on one set, a launch\nfinds in the L2", "one_set", ""), ("sets", "sets", "d"),
            ("MiB between\nuses of a set", "apart_mib", ",.0f"))
_DROP_ORDER = ("apart_mib", "footprint_mib")  # where the terminal is narrow: what the L2 holds and the sets stay


def l2_of(manifest: dict | None) -> tuple[float, str]:
    """The L2 (MiB) of the profile's GPU (its manifest's device), else an H200's; and where that came from."""
    device = (manifest or {}).get("device") or {}
    if device.get("l2_mib"):
        return float(device["l2_mib"]), f"{device.get('name', 'the GPU')}, from the profile's manifest"
    return H200_L2_MIB, "an H200's: no profile's manifest names its GPU"


def inputs_section(op: Op, manifest: dict | None) -> tuple[list[Block], InputsSectionJson]:
    """The table of SIZES[op] against the L2, and what it means for timing them."""
    l2_mib, source = l2_of(manifest)
    rows = [_row(op, size, l2_mib) for size in SIZES[op.name]]
    records: InputsSectionJson = {"l2_mib": l2_mib, "l2_source": source, "inputs": rows}
    table = Table(f"{op.name}: one product's buffers against a {l2_mib:g} MiB L2 ({source})", _COLUMNS, rows, None,
                  _DROP_ORDER)
    return section("What a timed launch finds in the L2", [table, Bullets(_summary(rows))]), records


def _row(op: Op, size: tuple[int, ...], l2_mib: float) -> InputsRow:
    footprint = op.min_bytes(size)  # each matrix once: A, B (x) and C (y), what the buffers hold
    sets = set_count(footprint, int(l2_mib * MIB))
    l2s = footprint / (l2_mib * MIB)
    one_set = ("all of it" if l2s <= 1 else "its partner's last reads" if l2s < ROTATE_BELOW_L2S
               else "a small share")
    return {"size": size_label(size), "footprint_mib": footprint / MIB, "l2s": l2s, "one_set": one_set,
            "sets": sets, "apart_mib": (sets - 1) * footprint / MIB}


def _summary(rows: list[InputsRow]) -> list[str]:
    inside = [r["size"] for r in rows if r["l2s"] <= 1]
    near = [r["size"] for r in rows if 1 < r["l2s"] < ROTATE_BELOW_L2S]
    lines = []
    if inside:
        lines.append(f"{', '.join(inside)}: the whole product fits in the L2. Timed on one set, each launch reads "
                     "its inputs from the L2, not DRAM, as a program rarely does with weights it last read a layer "
                     "ago.")
    if near:
        lines.append(f"{', '.join(near)}: the L2 keeps part of the product. On one set, a launch starts on what "
                     "the launch before it read last, which rewards a kernel whose order of reads suits its partner's "
                     "in a pair.")
    lines.append(f"From {ROTATE_BELOW_L2S} L2s up the bench keeps one set: what a launch finds left over is a small "
                 "share of what it moves.")
    return lines
