"""The host's Python time for one h6 launch through nsprof.launch.dependent_launch, the CUDA driver and CuPy
mocked (so it runs without a GPU): this tree's module against a git revision's, interleaved, medians of 7 rounds
of 5000 launches with the arguments the GEMM launcher passes at 2048^3.

    python3 benchmarks/launch_cost.py [--against main]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import timeit
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODULE = "nsprof/launch/dependent_launch.py"
SIZES = (np.int32(2048), np.int32(2048), np.int32(2048))
MAPS = (np.uint64(1 << 40), np.uint64(1 << 41), np.uint64(1 << 42))  # cached by the launcher: the same objects


class _Driver:
    def cuLaunchKernelEx(self, *_args):
        return 0


def _launch(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.driver = _Driver
    module.check_result = lambda *_a: None
    return module.DependentLaunch(types.SimpleNamespace(ptr=1234))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", default="main", help="the git revision whose module is timed beside this tree's")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    stream = types.SimpleNamespace(ptr=0)
    sys.modules["cupy"] = types.SimpleNamespace(cuda=types.SimpleNamespace(get_current_stream=lambda: stream))
    with tempfile.TemporaryDirectory() as scratch:
        before = Path(scratch) / "before.py"
        before.write_text(subprocess.run(["git", "show", f"{args.against}:{MODULE}"], cwd=ROOT, check=True,
                                         capture_output=True, text=True).stdout)
        launches = {args.against: _launch(before, "before"), "this tree": _launch(ROOT / MODULE, "now")}
    times: dict[str, list[float]] = {name: [] for name in launches}
    for _ in range(7):
        for name, launch in launches.items():  # a fresh no-workspace 0 each launch, as the launcher passes it
            times[name].append(timeit.timeit(
                lambda launch=launch: launch((132, 1, 1), (384, 1, 1), (*SIZES, *MAPS, np.uint64(0)), 200000),
                number=5000) / 5000 * 1e6)
    for name, values in times.items():
        print(f"{name}: {statistics.median(values):.1f} us a launch (median; {min(values):.1f}-{max(values):.1f})")


if __name__ == "__main__":
    main()
