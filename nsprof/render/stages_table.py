"""`nsprof stages`'s table: a ladder's stages as the op declares them (nsprof.ladder.op_model), fitted to
the terminal's width."""

from __future__ import annotations

from pathlib import PurePosixPath

from nsprof.ladder.op_model import Op
from nsprof.render.document import Table
from nsprof.render.terminal_table import table_width
from nsprof.triton_config import TritonConfig

# Where the changes must wrap, these columns are left out, in this order, while the changes would
# wrap narrower than terminal_table.PROSE_MIN (all in --json)
NARROW_DROP_ORDER = ("precision", "ragged", "title")
COLUMNS = tuple((heading, key, "") for heading, key in (("stage", "stage"), ("title", "title"), ("kernel file", "file"),
                                                         ("ragged", "ragged"), ("precision", "precision"),
                                                         ("changes", "changes")))


def stages_table(op: Op, width: int) -> Table:
    """One row per stage; the caption states each precision's tolerance. Narrower than the table,
    kernel files lose their folder (said once in the caption) and columns drop in NARROW_DROP_ORDER."""
    ladder = op.stages
    caption = "Passes when the relative error against float64 is at most: " + "; ".join(
        f"{p.name} ({p.description}) {p.rule}" for p in op.precisions.values())
    rows = [{"stage": s.stage, "title": s.title, "file": _file(s, op), "ragged": s.ragged,
             "precision": s.precision.name, "changes": s.changes} for s in ladder]
    folders = sorted({str(PurePosixPath(s.kernel_file).parent) for s in ladder if s.kernel_file})
    drop_order: tuple[str, ...] = ()
    if table_width(list(COLUMNS), rows) > width:  # the changes wrap: make room for them
        # a file name whole rather than its path split across lines: the folder goes to the caption
        rows = [{**row, "file": PurePosixPath(row["file"]).name if row["file"].startswith(tuple(folders)) else row["file"]}
                for row in rows]
        caption = f"Kernel files in {', '.join(f + '/' for f in folders)}. " + caption
        drop_order = NARROW_DROP_ORDER
    tuned = [f"{s.stage}: {', '.join(tile.shape for tile in s.tiles)}" for s in ladder
             if any(isinstance(tile, TritonConfig) for tile in s.tiles)]
    if tuned:  # what a Triton stage is tuned over, declared with it (no Triton needed to list it)
        caption += "; Triton stages tuned over (BLOCK sizes, warps, stages): " + "; ".join(tuned)
    return Table(f"{op.name} ladder: {op.description}", COLUMNS, rows, caption, drop_order, whole=("title",))


def _file(stage, op) -> str:
    """A stage's source file, or what a library stage calls."""
    if stage.kernel_file:
        return stage.kernel_file
    return f"({op.library} call, tuned)" if stage.kind.vendor_library else "(NumPy's BLAS)"
