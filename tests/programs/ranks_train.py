"""Data-parallel training, one rank per process, for capturing one Nsight Systems report per rank
(`nsprof analyze DIR` across ranks, stragglers).

Each rank trains the same fp16-autocast MLP on its own batch and averages its gradients with the
others. With --backend gloo (the default) the ranks may share one GPU: gloo stages the CUDA gradients
through host memory, there are no NCCL kernels, and the communication is the NVTX range `allreduce`.
With --backend nccl each rank takes GPU `rank` and the all-reduce is an NCCL kernel on it.
Ranges per step: step > forward, backward, allreduce, optimizer. On the steps of --slow-steps, rank
--slow-rank does extra GPU work in its forward pass, so it reaches the all-reduce late and the other
ranks wait inside it: the straggler to find.

    python3 tests/programs/ranks_train.py --rank 0 --world 2 --port 29512 &
    python3 tests/programs/ranks_train.py --rank 1 --world 2 --port 29512
"""

import argparse
import datetime

import torch
import torch.distributed as dist


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--port", type=int, default=29512)
    parser.add_argument("--backend", choices=("gloo", "nccl"), default="gloo")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--slow-rank", type=int, default=1)
    parser.add_argument("--slow-steps", default="5,9,13")
    parser.add_argument("--slow-matmuls", type=int, default=40, help="extra 4096^2 matmuls on a slow step")
    args = parser.parse_args()
    slow_steps = {int(step) for step in args.slow_steps.split(",") if step}
    if args.backend == "nccl":
        torch.cuda.set_device(args.rank)  # NCCL: one GPU per rank
    dist.init_process_group(args.backend, init_method=f"tcp://127.0.0.1:{args.port}", rank=args.rank,
                            world_size=args.world, timeout=datetime.timedelta(minutes=5))
    torch.manual_seed(0)  # the same initial weights on every rank
    device = torch.device("cuda")
    model = torch.nn.Sequential(
        torch.nn.Linear(args.width, args.width), torch.nn.GELU(),
        torch.nn.Linear(args.width, args.width), torch.nn.GELU(),
        torch.nn.Linear(args.width, 10),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    generator = torch.Generator().manual_seed(1000 + args.rank)  # each rank its own data
    batch = torch.randn(args.batch, args.width, generator=generator).pin_memory()
    targets = torch.randint(0, 10, (args.batch,), generator=generator).pin_memory()
    extra = torch.randn(4096, 4096, device=device)
    for step in range(args.steps):
        torch.cuda.nvtx.range_push("step")
        x, y = batch.to(device, non_blocking=True), targets.to(device, non_blocking=True)
        torch.cuda.nvtx.range_push("forward")
        if args.rank == args.slow_rank and step in slow_steps:
            for _ in range(args.slow_matmuls):  # the straggler's extra work
                extra = torch.tanh(extra @ extra * 1e-3)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("backward")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("allreduce")
        grads = torch.cat([p.grad.flatten() for p in model.parameters()])
        dist.all_reduce(grads)  # gloo waits here for the slowest rank; NCCL's kernel waits on the GPU
        grads /= args.world
        offset = 0
        for p in model.parameters():
            p.grad.copy_(grads[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("optimizer")
        optimizer.step()
        torch.cuda.nvtx.range_pop()
        value = loss.item()
        torch.cuda.nvtx.range_pop()
        if args.rank == 0:
            print(f"step {step}: loss {value:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
