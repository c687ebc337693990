"""Kernel names on a capture of a program nsprof did not write (pipit's CloverLeaf, Kokkos-style
templates whose telling part is a template argument's function name): the label keeps that name
at 80 columns, and a table fitted twice names its left-out columns once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.kernel_names import base_name, kernel_label

PIPIT = Path(__file__).parent / "data" / "nsys-pipit"
CLOVERLEAF = PIPIT / "perlmutter-cloverleaf-cuda.sqlite"


def _kernel_names(path: Path) -> list[str]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return [name for (name,) in conn.execute(
            "SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName")]


def test_labels_drop_parameter_lists_inside_template_arguments():
    names = _kernel_names(CLOVERLEAF)
    pdv = [name for name in names if "<PdV_kernel(" in name]
    assert len(pdv) == 2  # two lambdas of one function: instance 1 and 2
    labels = sorted(kernel_label(name) for name in pdv)
    assert labels == ["par_ranged2d_kernel<PdV_kernel::[lambda (instance 1)]>",
                      "par_ranged2d_kernel<PdV_kernel::[lambda (instance 2)]>"]
    assert {base_name(name) for name in pdv} == {"par_ranged2d_kernel"}
    assert all("Buffer2D" not in kernel_label(name) for name in names)  # no parameter list is left anywhere


def test_the_telling_function_survives_80_columns():
    result = CliRunner().invoke(app, ["analyze", str(PIPIT)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    table = result.output.split("Kernels across captures")[1]
    rows = [line for line in table.splitlines() if line.startswith("│")]
    # the 19.4 ms kernel is PdV's second lambda: it used to read "…2)]>"
    pdv = [row for row in rows if "PdV_kernel" in row]
    assert len(pdv) == 2 and "19.40" in pdv[0] and "2)]>" in pdv[0] and "1)]>" in pdv[1]
    assert all(any(c.isalpha() for c in row.split("│")[1]) for row in rows)  # every label names something


def test_columns_left_out_twice_are_named_once():
    """The per-capture table is fitted when made and again by the terminal: one note names both."""
    result = CliRunner().invoke(app, ["analyze", str(PIPIT)], env={"COLUMNS": "80"})
    caption = " ".join(result.output.split("2 captures")[1].split("Kernels across captures")[0].split())
    assert caption.count("left out to fit the terminal") == 1
    left = caption.split("left out to fit the terminal: ")[1].split(" (in --json)")[0].split(", ")
    assert left == ["copy ms", "idle ms", "top kernel"]  # overlap %, empty (no communication), is no loss
