"""A GPU-bound benchmark loop, for nsprof's host-side analysis (why the GPU waits: here it does not).
Each iteration (NVTX range `iteration`) launches a few large fp16 matrix products and one reduction;
the host runs ahead, the GPU's queue never empties, and the host synchronizes once at the end.

It prints the median GPU time per iteration, from CUDA events.

    python3 tests/programs/host_gpu_bound.py --iterations 20
"""

import argparse
import statistics

import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--size", type=int, default=4096)
    args = parser.parse_args()
    torch.manual_seed(0)
    a = torch.randn(args.size, args.size, device="cuda", dtype=torch.float16)
    b = torch.randn(args.size, args.size, device="cuda", dtype=torch.float16)
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(args.warmup + args.iterations)]
    total = torch.zeros((), device="cuda", dtype=torch.float32)
    for begin, end in events:
        torch.cuda.nvtx.range_push("iteration")
        begin.record()
        c = a @ b
        for _ in range(3):
            c = torch.relu(c @ b) * 1e-2
        total += c.float().mean()
        end.record()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    times = [begin.elapsed_time(end) for begin, end in events[args.warmup:]]
    print(f"{args.iterations} iterations, median GPU time per iteration {statistics.median(times):.3f} ms; "
          f"checksum {total.item():.4f}")


if __name__ == "__main__":
    main()
