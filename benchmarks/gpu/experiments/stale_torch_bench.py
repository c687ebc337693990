"""`nsprof bench` as it ran before torch.mm read the problem's current arrays: PyTorch's launch keeps
the arrays it was made on (the library stage's), while each later stage's refresh draws new ones, so
in the pairing torch.mm and the stage ran on different buffers. The same arguments as `nsprof bench`;
for measuring the bench's method before and after in one call.

    python3 benchmarks/gpu/experiments/stale_torch_bench.py --op hgemm --stage h6 --size 2048x14336x4096
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def main() -> None:
    from nsprof.cli import app
    from nsprof.ladder_runs import torch_baseline

    current = torch_baseline.torch_launch

    def stale(call, precision):
        frozen = call.arrays()  # the arrays at the launch's making, kept
        return current(dataclasses.replace(call, arrays=lambda: frozen), precision)

    torch_baseline.torch_launch = stale
    app(["bench", *sys.argv[1:]], prog_name="nsprof")


if __name__ == "__main__":
    main()
