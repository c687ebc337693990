"""nsprof's own noise floors (nsprof/analyze/diff/noise_floor.json) from real unchanged runs: those
in tests/data/runs, captured on the GPU machine by benchmarks/gpu/runs_h200.sh, and the no-change
pairs of tests/data/diff-pairs (README there):

    python3 benchmarks/noise_record.py   # writes the floors and benchmarks/noise.md and noise.json

Per program with runs (an unchanged program run again in fresh processes), the largest change of
a median between two of its runs, per kind of work (nsprof.analyze.diff.noise); nsprof's floor of
a kind is the largest over the programs. Runs from CPU data alone: no GPU needed.

The JAX pair (tests/data/real-programs jax-a, jax-b) is measured and shown but not in nsprof's
floor: XLA's autotuner picks other algorithms in each run, and a floor that wide would blind every
other diff. Such programs want runs, or their own floors (`nsprof diff --noise`).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from dataclasses import replace  # noqa: E402

from packed_data import unpack  # noqa: E402

from nsprof import api  # noqa: E402
from nsprof.analyze.diff import Capture, run_frames  # noqa: E402
from nsprof.analyze.diff.noise import KINDS, NOISE_RECORD, measure_noise  # noqa: E402

DATA = ROOT / "tests" / "data"
RUNS = DATA / "runs"
PROGRAMS = {  # name: (its runs: a profile with runs, or the files of a no-change pair), what ran
    "ab-base": ((RUNS / "ab-base",), "tests/programs/ab_spin.py --steps 40 (a spin kernel, a memory-bound kernel, "
                                     "a 64 MiB copy), back to back"),
    "torch": ((RUNS / "torch",), "tests/programs/torch_compile_block.py --steps 20 (torch.compile, CUDA graphs, "
                                 "cuDNN attention), back to back"),
    "ladder": ((RUNS / "ladder",), "nsprof profile --stage v5,v6 --size 1024 (nsprof bench under nsys), back to back"),
    "train": ((DATA / "diff-pairs" / "train-a.sqlite", DATA / "diff-pairs" / "train-b.sqlite"),
              "tests/programs/torch_train_step.py --steps 30, two captures 2026-11-24"),
    "ladder-days": ((DATA / "diff-pairs" / "sgemm-ladder-1024-before-v8-cp-async.sqlite",
                     DATA / "h200" / "nsys-sgemm-ladder-1024.sqlite"), "the SGEMM ladder at 1024, captured on two days"),
}
APART = {"jax": ((DATA / "real-programs" / "jax-a", DATA / "real-programs" / "jax-b"),
                 "tests/programs/jax_resnet_train.py --steps 30, two captures 2026-11-26 (not in the floor)")}


def side(paths: tuple[Path, ...]) -> Capture:
    """One program's runs: a profile with runs, or the captures of a pair as first and further run."""
    first, *rest = (api.diff_side(path) for path in paths)
    return replace(first, runs=(*first.runs, *rest)) if rest else first


def main() -> None:
    unpack()
    measured = {}
    for name, (paths, what) in {**PROGRAMS, **APART}.items():
        runs = side(tuple(_unpacked(path) for path in paths))
        measured[name] = {"what": what, "runs": runs.run_count(),
                          "floor_pct": measure_noise(run_frames(runs), name).pct}
    floors = {kind: max(measured[name]["floor_pct"][kind] for name in PROGRAMS) for kind in KINDS}
    card = (RUNS / "versions.txt").read_text().splitlines()[1].split(" (UUID")[0]
    source = f"nsprof's floors, measured on {card.split(': ', 1)[-1]} (benchmarks/noise.md)"
    record = {"created": dt.date.today().isoformat(), "card": card, "command": "python3 benchmarks/noise_record.py",
              "captured_by": "PART=main and PART=torch bash benchmarks/gpu/runs_h200.sh",
              "versions": (RUNS / "versions.txt").read_text().splitlines(),
              "source": source, "floor_pct": floors, "programs": measured}
    NOISE_RECORD.write_text(json.dumps({"source": source, "floor_pct": floors}, indent=2) + "\n")
    (ROOT / "benchmarks" / "noise.json").write_text(json.dumps(record, indent=2) + "\n")
    (ROOT / "benchmarks" / "noise.md").write_text(_markdown(record))
    print(json.dumps(floors))


def _unpacked(path: Path) -> Path:
    """A real-programs capture (its export kept xz-packed) as a profile directory under /tmp."""
    if not (path / "nsys.sqlite.xz").is_file():
        return path
    import lzma
    import shutil

    target = Path("/tmp/nsprof-noise") / path.name
    target.mkdir(parents=True, exist_ok=True)
    with lzma.open(path / "nsys.sqlite.xz") as packed, open(target / "nsys.sqlite", "wb") as out:
        shutil.copyfileobj(packed, out)
    return target


def _markdown(record: dict) -> str:
    rows = "\n".join(f"| {name} | {program['runs']} | " + " | ".join(f"{program['floor_pct'][kind]:.2f}%" for kind in KINDS)
                     + f" | {program['what']} |" for name, program in record["programs"].items())
    floors = " | ".join(f"**{record['floor_pct'][kind]:.2f}%**" for kind in KINDS)
    return f"""# Noise floors: how far an unchanged program moves between runs

{record['card']}, captured {record['created']} by `{record['captured_by']}`; this table by
`{record['command']}` from the runs committed in tests/data/runs. Versions: {'; '.join(record['versions'][2:])}.

Each program ran again in fresh processes, unchanged. A floor is the largest change of a median between two of its
runs, over every pair of runs and every kernel or range tested in both (3 launches or more, the same count in each).
`nsprof diff` with one run a side calls a change only beyond the floor of its kind (nsprof.analyze.diff.noise);
`--noise PATH` replaces these with floors measured on your own runs.

| program | runs | kernels | copies | ranges | what ran |
| --- | --- | --- | --- | --- | --- |
{rows}
| **nsprof's floor** | | {floors} | |
"""


if __name__ == "__main__":
    main()
