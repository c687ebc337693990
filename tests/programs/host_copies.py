"""A loop that moves data through pageable host memory, for nsprof's host-side analysis (why the GPU
waits). Each iteration (NVTX range `iteration`) copies a batch from a numpy array (pageable memory)
to the GPU, scales it with one kernel and copies the result back into numpy: the copies go through
the driver's staging buffers at a fraction of the bus's rate and block the host (transfer-bound).

- `--memory pageable` (default): plain numpy arrays and `torch.from_numpy`.
- `--memory pinned`: the same through page-locked host buffers, copies asynchronous.

It prints the median host time per iteration over the timed iterations.

    python3 tests/programs/host_copies.py --iterations 12
"""

import argparse
import statistics
import time

import numpy as np
import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory", choices=("pageable", "pinned"), default="pageable")
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--mib", type=int, default=64)
    args = parser.parse_args()
    count = args.mib * 2**20 // 4
    host_in = np.random.default_rng(0).standard_normal(count, dtype=np.float32)
    host_out = np.empty_like(host_in)
    pinned = args.memory == "pinned"
    source = torch.from_numpy(host_in).pin_memory() if pinned else torch.from_numpy(host_in)
    target = torch.empty(count).pin_memory() if pinned else torch.from_numpy(host_out)
    device = torch.empty(count, device="cuda")
    times = []
    for _ in range(args.warmup + args.iterations):
        started = time.perf_counter()
        torch.cuda.nvtx.range_push("iteration")
        device.copy_(source, non_blocking=pinned)
        device.mul_(0.5)
        target.copy_(device, non_blocking=pinned)
        if pinned:
            torch.cuda.current_stream().synchronize()  # the host reads the result, as the pageable loop does
        torch.cuda.nvtx.range_pop()
        times.append(time.perf_counter() - started)
    result = target.numpy()
    assert np.allclose(result[:1000], host_in[:1000] * 0.5), "the copies lost data"
    print(f"{args.memory}: {args.iterations} iterations of {args.mib} MiB each way, median host time per "
          f"iteration {1e3 * statistics.median(times[args.warmup:]):.2f} ms")


if __name__ == "__main__":
    main()
