"""A small PyTorch training loop, as a user would write it, for capturing real Nsight exports.

An fp16-autocast MLP with NVTX push/pop ranges step/forward/backward/optimizer, the batch copied from
pinned host memory and the targets from pageable host memory, the loss copied back. PyTorch runs the
backward pass on its autograd thread, so NVTX's per-thread rule leaves those kernels outside the
`backward` range: the captures show it.

    python3 tests/programs/torch_train_step.py --steps 4
"""

import argparse

import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda")
    model = torch.nn.Sequential(
        torch.nn.Linear(args.width, args.width), torch.nn.GELU(),
        torch.nn.Linear(args.width, args.width), torch.nn.GELU(),
        torch.nn.Linear(args.width, 10),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batch = torch.randn(args.batch, args.width).pin_memory()
    targets = torch.randint(0, 10, (args.batch,))  # pageable
    for step in range(args.steps):
        torch.cuda.nvtx.range_push("step")
        x = batch.to(device, non_blocking=True)
        y = targets.to(device)
        torch.cuda.nvtx.range_push("forward")
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("backward")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("optimizer")
        optimizer.step()
        torch.cuda.nvtx.range_pop()
        value = loss.item()  # a device-to-host copy and a synchronization
        torch.cuda.nvtx.range_pop()
        print(f"step {step}: loss {value:.4f}")


if __name__ == "__main__":
    main()
