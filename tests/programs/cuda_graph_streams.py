"""A program that replays a CUDA graph and overlaps copies with kernels on two streams, for
capturing real Nsight exports (graph-level against node-level tracing; copy/compute overlap).

    python3 tests/programs/cuda_graph_streams.py --replays 5
"""

import argparse

import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--replays", type=int, default=5)
    parser.add_argument("--n", type=int, default=2048)
    args = parser.parse_args()
    torch.manual_seed(0)
    a = torch.randn(args.n, args.n, device="cuda")
    b = torch.randn(args.n, args.n, device="cuda")
    out = torch.empty_like(a)

    warm = torch.cuda.Stream()
    with torch.cuda.stream(warm):  # capture needs a side stream and a warm-up
        for _ in range(2):
            out.copy_(torch.relu(a @ b) + a)
    torch.cuda.current_stream().wait_stream(warm)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out.copy_(torch.relu(a @ b) + a)

    torch.cuda.nvtx.range_push("graph_replay")
    for _ in range(args.replays):
        graph.replay()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()

    # Copies on one stream overlap matrix products on another.
    copy_stream, compute_stream = torch.cuda.Stream(), torch.cuda.Stream()
    host = [torch.randn(args.n, args.n).pin_memory() for _ in range(4)]
    device_copies = [torch.empty(args.n, args.n, device="cuda") for _ in host]
    torch.cuda.nvtx.range_push("overlap")
    with torch.cuda.stream(copy_stream):
        for h, d in zip(host, device_copies):
            d.copy_(h, non_blocking=True)
    with torch.cuda.stream(compute_stream):
        for _ in range(8):
            out = a @ b
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print(f"checksum {float(out.float().sum()):.3f}")


if __name__ == "__main__":
    main()
