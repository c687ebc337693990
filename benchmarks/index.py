"""The index of the benchmark records and experiments: benchmarks/records/README.md, generated from
the folders themselves (tests/test_benchmark_index.py checks that the committed one is current).

    python3 benchmarks/index.py           # rewrites benchmarks/records/README.md
    python3 benchmarks/index.py --check   # exit 1 if it is out of date or a folder breaks the rules

A folder is named DATE-MACHINE-TOPIC (DATE the day it was measured, MACHINE h100, h200 or cpu: a
CPU-only benchmark) and holds one .md, the record's JSON beside it, and its extra runs, pictures
and data. The record's JSON is the one named as its .md, else the first the .md names.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "benchmarks" / "records"
EXPERIMENTS = ROOT / "benchmarks" / "experiments"
INDEX = RECORDS / "README.md"
FOLDER = re.compile(r"(?P<date>\d{4}-\d{2}-\d{2})-(?P<machine>h100|h200|cpu)-(?P<topic>[a-z0-9]+(?:-[a-z0-9]+)*)")

# records whose numbers are only in their .md: no JSON was ever written for them
WITHOUT_JSON = {"2026-11-21-cpu-nsys-scale", "2026-11-24-cpu-diff-scale", "2026-11-24-cpu-timeline-scale"}

# what an experiment without a .md of its own was (one with a .md is described by its first heading)
EXPERIMENT_NOTES = {
    "2026-11-22-h200-hgemm-variants":
        "HGEMM tuning candidates (-D knobs and extra entries of h5, h6, h6b, h12), run by `VARIANTS=1 bash "
        "benchmarks/gpu/hgemm_capture_h200.sh`, and the H200 sweep of them (h200-sweep-20261122.jsonl) that chose the "
        "tuning adopted (the HGEMM record's \"Tuning sweeps\")",
    "2026-11-24-h200-sgemm-tail-probe":
        "Where v8 lost to cuBLAS FP32 at 8192^3 and what closed it: variants timed against cuBLAS in one process, "
        "with ncu's comparison (benchmarks/gpu/experiments/v8_tail_probe.py; the SGEMM record's third pass)",
    "2026-11-26-h100-clocks-under-load":
        "h6 and torch.mm at 4096^3, each alone at the 700 W power limit and then in turn, with the SM clock and power "
        "sampled: what pairing hides (benchmarks/gpu/experiments/clocks_under_load.py)",
}


def markdown_of(folder: Path) -> Path | None:
    found = sorted(folder.glob("*.md"))
    if len(found) > 1:
        raise SystemExit(f"{folder.relative_to(ROOT)}: more than one .md ({', '.join(p.name for p in found)})")
    return found[0] if found else None


def heading(md: Path) -> str:
    return next(line[2:].strip() for line in md.read_text(encoding="utf-8").splitlines() if line.startswith("# "))


def record_json(folder: Path, md: Path) -> Path | None:
    """The JSON named as the .md, else the first JSON of the folder that the .md names."""
    if (folder / f"{md.stem}.json").is_file():
        return folder / f"{md.stem}.json"
    text = md.read_text(encoding="utf-8")
    named = sorted((text.find(p.name), p) for p in folder.glob("*.json") if p.name in text)
    return named[0][1] if named else None


def json_date(doc: dict) -> str | None:
    """The day a JSON says it was measured (date, created or the first of recorded), if it says."""
    value = doc.get("date") or doc.get("created") or (doc.get("recorded") or [None])[0]
    return value[:10] if isinstance(value, str) and re.match(r"\d{4}-\d{2}-\d{2}", value) else None


def card(doc: dict) -> str | None:
    if isinstance(doc.get("card"), str):
        return doc["card"].split(", ")[0]
    for key in ("env", "device"):
        if isinstance(doc.get(key), dict) and doc[key].get("device"):
            return doc[key]["device"]
    versions = doc.get("versions")
    for line in versions if isinstance(versions, list) else []:
        if match := re.match(r"GPU 0: (.*?) \(UUID", line):
            return match.group(1)
    return None


def command(doc: dict, md: Path) -> str:
    """The command from the JSON (command, else script, else commands); else the first benchmarks/*.py script
    the .md names, marked as from the .md."""
    for key in ("command", "script", "commands"):
        value = doc.get(key)
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list):
            return "; ".join(_code(v) for v in value)
        if isinstance(value, str):
            return _code(value)
    if match := re.search(r"benchmarks/[a-z_]+\.py", md.read_text(encoding="utf-8")):
        return f"{_code('python3 ' + match.group(0))} (from the .md)"
    return "–"


def _code(text: str) -> str:
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def folders(parent: Path) -> list[Path]:
    return sorted(p for p in parent.iterdir() if p.is_dir() and not p.name.startswith((".", "__")))


def problems() -> list[str]:
    """What breaks the layout's rules: names, one .md, a JSON beside it, dates, experiments described."""
    found = []
    for folder in folders(RECORDS):
        name = folder.name
        if not FOLDER.fullmatch(name):
            found.append(f"records/{name}: not named DATE-MACHINE-TOPIC")
            continue
        md = markdown_of(folder)
        if md is None:
            found.append(f"records/{name}: no .md")
            continue
        js = record_json(folder, md)
        if js is None and name not in WITHOUT_JSON:
            found.append(f"records/{name}: no JSON beside {md.name} (add it, or the folder to WITHOUT_JSON)")
        if js is not None and name in WITHOUT_JSON:
            found.append(f"records/{name}: has {js.name} but is listed in WITHOUT_JSON")
        if js is not None and (day := json_date(json.loads(js.read_text()))) and day != name[:10]:
            found.append(f"records/{name}: {js.name} says {day}")
    for folder in folders(EXPERIMENTS):
        if not FOLDER.fullmatch(folder.name):
            found.append(f"experiments/{folder.name}: not named DATE-MACHINE-TOPIC")
        elif markdown_of(folder) is None and folder.name not in EXPERIMENT_NOTES:
            found.append(f"experiments/{folder.name}: no .md and no line in EXPERIMENT_NOTES")
    return found


def generate() -> str:
    lines = [
        "# Benchmark records",
        "",
        "Generated by `python3 benchmarks/index.py` from the folders below; do not edit it by hand",
        "(tests/test_benchmark_index.py fails when it is out of date). Each folder is DATE-MACHINE-TOPIC: the day it",
        "was measured, the machine (`h100`, `h200`, or `cpu` for a CPU-only benchmark) and what it measured. It holds",
        "the record's .md, the JSON beside it (the card, versions and command), its extra runs, pictures and data.",
        "Experiments and probes that are not the product's recorded numbers are in",
        "[../experiments/](../experiments/), listed at the end.",
        "",
        "| folder | date | machine: card | what it measured | command | JSON |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for folder in folders(RECORDS):
        match = FOLDER.fullmatch(folder.name)
        md = markdown_of(folder)
        if match is None or md is None:
            continue
        js = record_json(folder, md)
        doc = json.loads(js.read_text()) if js else {}
        doc = doc if isinstance(doc, dict) else {}
        machine = match["machine"] + (f": {name}" if (name := card(doc)) else "")
        others = len([p for p in folder.iterdir() if p.is_file() and p not in (md, js)])
        data = (f"[{js.name}]({folder.name}/{js.name})" if js else "none: the numbers are in the .md") + (
            f" (+{others} file{'s' if others > 1 else ''})" if others else "")
        lines.append(f"| [{folder.name}]({folder.name}/{md.name}) | {match['date']} | {_cell(machine)} | "
                     f"{_cell(heading(md))} | {command(doc, md)} | {data} |")
    lines += ["", "## Experiments", ""]
    for folder in folders(EXPERIMENTS):
        match = FOLDER.fullmatch(folder.name)
        if match is None:
            continue
        md = markdown_of(folder)
        what = heading(md) if md else EXPERIMENT_NOTES.get(folder.name, "?")
        target = f"{folder.name}/{md.name}" if md else f"{folder.name}/"
        lines.append(f"- [{folder.name}](../experiments/{target}) ({match['date']}, {match['machine']}): {what}.")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check: exit 1 if the index is stale or a rule broken")
    args = parser.parse_args()
    found = problems()
    for problem in found:
        print(problem, file=sys.stderr)
    text = generate()
    if args.check:
        stale = not INDEX.is_file() or INDEX.read_text(encoding="utf-8") != text
        if stale:
            print(f"{INDEX.relative_to(ROOT)} is out of date: python3 benchmarks/index.py", file=sys.stderr)
        raise SystemExit(1 if stale or found else 0)
    INDEX.write_text(text, encoding="utf-8")
    print(f"wrote {INDEX.relative_to(ROOT)}")
    raise SystemExit(1 if found else 0)


if __name__ == "__main__":
    main()
