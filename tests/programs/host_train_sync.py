"""A training loop that synchronizes every step, for nsprof's host-side analysis (why the GPU waits).

Each step (NVTX range `train_step`) prepares its batch on the CPU (numpy, as a data loader in the
main process would: a few milliseconds, less than the GPU's step), copies it through pinned memory
to the GPU, runs forward, backward and an AdamW step of an MLP, and then reads the loss with
`.item()`: a device-to-host copy that waits for the whole step. With the wait, the CPU's work on the
next batch cannot overlap the GPU's work on this one, so the GPU idles while the host prepares data
(synchronization-bound). `--prep-ms` sets the CPU's share: the host draws and transforms rows of
features for that long (a data loader's decoding and augmenting), and the GPU tiles them to the batch.

- `--sync item` (default): `loss.item()` every step.
- `--sync none`: the losses are kept on the GPU and read once at the end.

It prints the median host time per step over the timed steps.

    python3 tests/programs/host_train_sync.py --steps 24
"""

import argparse
import statistics
import time

import numpy as np
import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sync", choices=("item", "none"), default="item")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--width", type=int, default=8192)
    parser.add_argument("--batch", type=int, default=8192)
    parser.add_argument("--prep-ms", type=float, default=2.5)
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--features", type=int, default=1024)
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(args.features, args.width), torch.nn.GELU(),
        torch.nn.Linear(args.width, args.width), torch.nn.GELU(),
        torch.nn.Linear(args.width, 16),
    ).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    # two pinned staging buffers, each reused only once its last copy to the GPU has finished
    staging = [torch.empty(args.rows, args.features).pin_memory() for _ in range(2)]
    copied = [torch.cuda.Event() for _ in range(2)]
    losses = []
    times = []
    for step in range(args.warmup + args.steps):
        started = time.perf_counter()
        torch.cuda.nvtx.range_push("train_step")
        torch.cuda.nvtx.range_push("load_batch")
        prepared = time.perf_counter()
        while True:  # the CPU's share of the step: a data loader's decoding and augmenting, for --prep-ms
            drawn = np.tanh(rng.standard_normal((args.rows, args.features), dtype=np.float32)) * 2
            if time.perf_counter() - prepared >= args.prep_ms / 1e3:
                break
        buffer = step % 2
        copied[buffer].synchronize()  # the copy of two steps ago: long done unless the GPU is behind
        staging[buffer].copy_(torch.from_numpy(drawn))
        x = staging[buffer].to("cuda", non_blocking=True).repeat(args.batch // args.rows, 1)
        copied[buffer].record()
        torch.cuda.nvtx.range_pop()
        y = x[:, :16].sum(1).round().long().clamp(0, 15)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item() if args.sync == "item" else loss.detach())
        torch.cuda.nvtx.range_pop()
        times.append(time.perf_counter() - started)
    torch.cuda.synchronize()
    final = float(losses[-1])
    print(f"sync {args.sync}: {args.steps} steps, median host time per step "
          f"{1e3 * statistics.median(times[args.warmup:]):.2f} ms; last loss {final:.4f}")


if __name__ == "__main__":
    main()
