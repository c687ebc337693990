"""The tables of issue 60's HGEMM records (benchmarks/records/2026-11-29-h200-hgemm-sizes, -hgemm-rows-overlap):
per size, the kernel torch.mm ran (library-kernels.json), the library candidate the bench kept, h6's tile, its
rate and its % of the faster library in each run (paired), and its % before the record's change (before-*.json,
one run; or warm-*.json: one run on warm inputs, `nsprof bench --warm-inputs`); h8's % at the squares. Prints
Markdown; the record's page holds what it printed.

    python3 benchmarks/hgemm_sizes_record.py benchmarks/records/2026-11-29-h200-hgemm-rows-overlap
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _rows(path: Path) -> dict[tuple[str, str], dict]:
    return {(r["size"], r["stage"]): r for r in json.loads(path.read_text())["results"]}


def _pct(row: dict | None) -> str:
    if row is None or row.get("status") != "ok" or row.get("pct_cublas_method") != "paired":
        return "-"
    return f"{row['pct_cublas']:.1f}"


def table(folder: Path, half: str) -> tuple[str, list[str]]:
    """The Markdown table of one half (squares or models), and the sizes at or past the library in both runs."""
    runs = [_rows(folder / f"{half}-run{i}.json") for i in (1, 2)]
    other, label = next((path, label) for path, label in ((folder / f"before-{half}.json", "before"),
                                                          (folder / f"warm-{half}.json", "warm")) if path.exists())
    before = _rows(other)
    kernels = {row["size"]: row["kernels"] for row in json.loads((folder / "library-kernels.json").read_text())["sizes"]}
    sizes = list(dict.fromkeys(size for size, stage in runs[0] if stage == "h6"))
    with_h8 = any(stage == "h8" for _, stage in runs[0])
    head = f"| size | torch.mm's kernel | library kept | h6 tile | h6 TFLOP/s | h6 % | h6 % {label} |" + \
        (" h8 % |" if with_h8 else "")
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    past = []
    for size in sizes:
        h6 = [run[(size, "h6")] for run in runs]
        library = runs[0][(size, "h7")]
        main = kernels.get(size, [{"name": "-"}])[0]["name"]
        cells = [size, f"`{main}`", library["tile"], h6[0]["tile"],
                 " / ".join(f"{row['tflops']:.3g}" if row["tflops"] < 100 else f"{row['tflops']:.0f}" for row in h6),
                 " / ".join(_pct(row) for row in h6),
                 _pct(before.get((size, "h6"))) + f" ({before[(size, 'h6')]['tile']})" if (size, "h6") in before else "-"]
        if with_h8:
            cells.append(" / ".join(_pct(run.get((size, "h8"))) for run in runs))
        lines.append("| " + " | ".join(cells) + " |")
        if all(row["status"] == "ok" and row["pct_cublas"] >= 100 for row in h6):
            past.append(size)
    return "\n".join(lines), past


def main() -> None:
    folder = Path(sys.argv[1])
    for half in ("squares", "models"):
        text, past = table(folder, half)
        print(f"### {half}\n\n{text}\n\nAt or past the library in both runs: {len(past)} of "
              f"{text.count(chr(10)) - 1}: {', '.join(past) or 'none'}.\n")


if __name__ == "__main__":
    main()
