"""Triton's fused-softmax tutorial kernel benchmarked against torch.softmax with triton.testing.do_bench:
a benchmark harness's loops for nsprof to find from the GPU work alone (captured with nsys's defaults
and no NVTX range of the program's own). The kernel is the tutorial's first form: one program per row,
the row loaded whole (BLOCK_SIZE the next power of two of its length, masked), its maximum subtracted,
exponentiated, divided by its sum; num_warps 4, 8 or 16 by BLOCK_SIZE. For each size (`--rows` x each
of `--cols`, float32) the program checks the kernel against torch.softmax once (one call of each, the
first call of the kernel compiling it), then do_bench times the kernel, then torch.softmax: do_bench's
own loops (one call, five for its estimate with an L2 flush before each, its warm-up calls, then each
timed call after a 256 MB L2 flush, timed with CUDA events).

`--markers` wraps each call of either function (the check's, and each of do_bench's) in an NVTX range
`step` (torch.cuda.nvtx); without it the program opens no NVTX range of its own. The calls are counted:
"iterations" is the number of calls of both functions over all sizes, "warmup" those that do_bench did
not time (the checks' included). median_ms, min_ms and max_ms are the kernel's at the largest size, of
do_bench's timed calls (CUDA events, from do_bench with return_mode="all", so no timing of the
program's own). "sizes" lists each size's rows, cols, both medians, the calls and timed calls of each,
and the check's largest difference. At its end the program prints one JSON line.

    python3 tests/programs/loop_softmax_bench.py --rows 4096 --cols 1024,2048,4096,8192
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics

import torch
import triton
import triton.language as tl
import triton.testing


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_cols
    x = tl.load(input_ptr + row * input_row_stride + offsets, mask=mask, other=-float("inf"))
    numerator = tl.exp(x - tl.max(x, axis=0))
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(output_ptr + row * output_row_stride + offsets, y, mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    num_warps = 16 if block >= 4096 else 8 if block >= 2048 else 4
    y = torch.empty_like(x)
    softmax_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK_SIZE=block, num_warps=num_warps)
    return y


class Counted:
    """`fn(x)` as do_bench calls it (no arguments), counted, each call in an NVTX range `step` if `markers`."""

    def __init__(self, fn, x: torch.Tensor, markers: bool) -> None:
        self.fn, self.x, self.markers, self.calls = fn, x, markers, 0

    def __call__(self) -> torch.Tensor:
        self.calls += 1
        with torch.cuda.nvtx.range("step") if self.markers else contextlib.nullcontext():
            return self.fn(self.x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", default="1024,2048,4096,8192", help="comma-separated row lengths")
    parser.add_argument("--warmup-ms", type=float, default=25, help="do_bench's warmup (ms)")
    parser.add_argument("--rep-ms", type=float, default=100, help="do_bench's rep (ms)")
    parser.add_argument("--markers", action="store_true", help="an NVTX range `step` around each call")
    args = parser.parse_args()
    torch.manual_seed(0)
    sizes, iterations, timed_total, largest = [], 0, 0, []
    for cols in sorted(int(c) for c in args.cols.split(",")):
        x = torch.randn(args.rows, cols, device="cuda")
        ours, theirs = Counted(softmax, x, args.markers), Counted(lambda t: torch.softmax(t, dim=-1), x, args.markers)
        difference = (ours() - theirs()).abs().max().item()
        ours_ms = triton.testing.do_bench(ours, warmup=args.warmup_ms, rep=args.rep_ms, return_mode="all")
        theirs_ms = triton.testing.do_bench(theirs, warmup=args.warmup_ms, rep=args.rep_ms, return_mode="all")
        sizes.append({"rows": args.rows, "cols": cols, "triton_ms": round(statistics.median(ours_ms), 5),
                      "torch_ms": round(statistics.median(theirs_ms), 5), "triton_calls": ours.calls,
                      "triton_timed": len(ours_ms), "torch_calls": theirs.calls, "torch_timed": len(theirs_ms),
                      "max_abs_diff": difference})
        iterations += ours.calls + theirs.calls
        timed_total += len(ours_ms) + len(theirs_ms)
        largest = ours_ms
    print(json.dumps({
        "program": "loop_softmax_bench", "variant": "triton-vs-torch", "iterations": iterations,
        "warmup": iterations - timed_total, "median_ms": round(statistics.median(largest), 5),
        "min_ms": round(min(largest), 5), "max_ms": round(max(largest), 5),
        "matches_torch": all(size["max_abs_diff"] < 1e-5 for size in sizes), "sizes": sizes}))


if __name__ == "__main__":
    main()
