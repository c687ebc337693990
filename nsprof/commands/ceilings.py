"""`nsprof ceilings`: measure this GPU's roofs and save them for `nsprof roofline` and `nsprof report`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from nsprof import api
from nsprof.console import progress_line, stderr, stdout
from nsprof.paths import DATA_DIR_ENV


def ceilings(
    out: Path | None = typer.Option(
        None, "--out", metavar="DIR",
        help=f"Directory for ceilings-<gpu>.json. Default: nsprof's data directory (${DATA_DIR_ENV} if set, "
             "else the user data directory, ~/.local/share/nsprof on Linux), where the other commands look."),
    save: bool = typer.Option(True, "--save/--no-save", help="Write the file (a file measured earlier "
                                                             "is kept beside it, renamed by its date)."),
    as_json: bool = typer.Option(False, "--json", help="Print the measurements as JSON instead of a table."),
    cpu: bool = typer.Option(False, "--cpu", help="Measure this machine's CPU instead (no GPU needed): FP32 with "
                                                  "its BLAS, memory bandwidth with a streaming copy, cores, SIMD."),
) -> None:
    """Measure this GPU's roofs for `nsprof roofline` and `nsprof report` (a few seconds).

    DRAM bandwidth (a device-to-device copy), L2 bandwidth (reads of an L2-resident buffer), FP32
    peak (an FMA microbenchmark), tensor-core peak (cuBLAS HGEMM at 8192^3) and the bus each way
    (pinned copies), each the median of timed runs after warm-up. The reports use them in place
    of the datasheet's values; `nsprof pipeline` puts its floor against the bus.

    The file is saved in nsprof's data directory, never the current one: the ceilings belong to
    the GPU. Captures (`nsprof profile`, `nsprof pipeline`) copy them into the profile's manifest,
    so a profile keeps the ceilings it was captured under; --ceilings on the report commands
    overrides both."""
    with progress_line() as progress:
        document, written = (api.measure_cpu_ceilings if cpu else api.measure_ceilings)(out, save, progress)
    if as_json:
        typer.echo(json.dumps(document, indent=2))
    elif cpu:
        from nsprof.render.document_writers import to_terminal

        to_terminal([cpu_ceilings_table(document)], stdout())
    else:
        from nsprof.render.document_writers import to_terminal

        to_terminal([ceilings_table(document)], stdout())
    for path in written:
        stderr().print(f"ceilings written to {path}")


def cpu_ceilings_table(document: Mapping[str, Any]):
    """The host CPU's measured roofs, as a document table."""
    from nsprof.render import format as fmt
    from nsprof.render.document import Table

    host, measured = document["device"], document["ceilings"]
    rows = [{"ceiling": "FP32 (its BLAS)", "value": fmt.flops_per_s(measured["fp32_tflops"]["value"] * 1e12),
             "how": measured["fp32_tflops"]["method"]},
            {"ceiling": "memory bandwidth", "value": fmt.bytes_per_s(measured["dram_tbyte_per_s"]["value"] * 1e12),
             "how": measured["dram_tbyte_per_s"]["method"]}]
    return Table(f"{host['device']}: {host['cpu_cores']} threads, {host.get('cpu_simd') or 'no known SIMD'}, "
                 f"{host.get('blas')}", (("ceiling", "ceiling", ""), ("measured", "value", ""), ("how", "how", "")), rows,
                 "the CPU rung's roofs (v0, v0b, v0blas; s0, s0b, s0blas), measured on the wall clock", ("how",))


def ceilings_table(document: Mapping[str, Any]):
    """What was measured beside the datasheet, as a document table (nsprof.render.document)."""
    from nsprof.analyze.roofline import LEVELS, UNITS
    from nsprof.ceilings.peaks import MEASURABLE, datasheet_ceiling
    from nsprof.render import format as fmt
    from nsprof.render.document import Table

    names = {**{level.ceiling_field: (level.name, fmt.bytes_per_s) for level in LEVELS},  # field -> (name, formatter)
             **{unit.ceiling_field: (unit.name, fmt.flops_per_s) for unit in UNITS if unit.ceiling_field},
             "h2d_tbyte_per_s": ("host to device (pinned)", fmt.bytes_per_s),
             "d2h_tbyte_per_s": ("device to host (pinned)", fmt.bytes_per_s)}
    device = document["device"]
    datasheet = datasheet_ceiling(device["device"])
    rows = []
    for name in MEASURABLE:
        entry = document["ceilings"].get(name)
        if entry is None:
            continue
        label, shown = names[name]
        listed = getattr(datasheet, name) if datasheet else None
        rows.append((label, shown(entry["value"] * 1e12), shown(listed * 1e12 if listed else None),
                     fmt.percent(100 * entry["value"] / listed if listed else None, 0), fmt.percent(entry.get("spread_pct")),
                     entry["method"]))
    return Table.preformatted(("ceiling", "measured", "datasheet", "% of datasheet", "spread", "method"), rows,
                              (False, True, True, True, True, False),
                              title=f"{device['device']} ({device['sm_count']} SMs, {device['l2_mib']:g} MiB L2), "
                                    f"CuPy {device['cupy']}, CUDA {device['runtime_cuda']}")
