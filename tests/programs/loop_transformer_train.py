"""A small transformer trained with AdamW, its loss read with `loss.item()` every step for logging: a
loop for nsprof to find from the GPU work alone (captured with nsys's defaults and no NVTX range of the
program's own). Each step copies its batch (next-token pairs, from a pool on the GPU) into the model's
input tensors, runs the forward pass of a few pre-norm encoder layers (torch.nn.TransformerEncoderLayer:
attention through scaled_dot_product_attention, a GELU MLP) and a vocabulary head, cross-entropy,
backward, and AdamW's step, then waits for the loss.

- `--variant eager` (default): every op launched from Python, a few hundred kernels of a few
  microseconds a step; the host launches slower than the GPU runs them (launch-bound).
- `--variant graphs`: the same step (forward, backward, AdamW with capturable=True) captured once as
  a CUDA graph and replayed per step, as PyTorch's whole-network capture recipe does: before the loop,
  `--graph-warmup` eager steps on a side stream (they are on the GPU before the loop's first step), the
  gradients set to None, the capture; in the loop the batch is copied into the static input tensors,
  the graph replayed and the loss read, one graph launch a step.

`--markers` wraps each step in an NVTX range `step` (torch.cuda.nvtx); without it the program opens no
NVTX range of its own. `--torch-profiler DIR` runs the loop under torch.profiler (CPU and CUDA
activities, `prof.step()` after each step, as its recipe does) and writes its trace to DIR/trace.json.
The loop runs `--steps` iterations, the first `--warmup` of them untimed; as each step waits for its
loss, the time of an iteration (time.perf_counter, from the previous iteration's end to its own) is
the step's time, without an added synchronization. At its end the program prints one JSON line:
program, variant, iterations, warmup, median_ms, min_ms, max_ms (over the timed iterations),
and the first and last losses.

    python3 tests/programs/loop_transformer_train.py --variant eager --steps 60
    python3 tests/programs/loop_transformer_train.py --variant graphs --steps 60 --markers
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import time

import torch
import torch.nn.functional as F
from loop_summary import summary


class Model(torch.nn.Module):
    def __init__(self, vocab: int, hidden: int, heads: int, layers: int, seq: int) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.position = torch.nn.Parameter(0.02 * torch.randn(seq, hidden))
        layer = torch.nn.TransformerEncoderLayer(hidden, heads, 4 * hidden, dropout=0.0, activation="gelu",
                                                 batch_first=True, norm_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = torch.nn.LayerNorm(hidden)
        self.head = torch.nn.Linear(hidden, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(self.encoder(self.embed(tokens) + self.position)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=("eager", "graphs"), default="eager")
    parser.add_argument("--steps", type=int, default=60, help="loop iterations, the warm-up included")
    parser.add_argument("--warmup", type=int, default=5, help="the first iterations, not timed")
    parser.add_argument("--graph-warmup", type=int, default=3, help="eager steps on a side stream before the capture")
    parser.add_argument("--markers", action="store_true", help="an NVTX range `step` around each iteration")
    parser.add_argument("--torch-profiler", metavar="DIR", help="trace the loop with torch.profiler into DIR")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--vocab", type=int, default=1024)
    args = parser.parse_args()
    assert args.steps > args.warmup >= 0
    torch.manual_seed(0)
    model = Model(args.vocab, args.hidden, args.heads, args.layers, args.seq).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=args.variant == "graphs")
    # a pool of batches on the GPU; the target of each token a fixed function of it, so the loss falls
    pool_tokens = torch.randint(0, args.vocab, (8, args.batch, args.seq), device="cuda")
    pool_targets = (7 * pool_tokens + 3) % args.vocab
    tokens = torch.empty(args.batch, args.seq, dtype=torch.long, device="cuda")  # the step's (static) inputs
    targets = torch.empty_like(tokens)

    def forward_backward_step() -> torch.Tensor:
        loss = F.cross_entropy(model(tokens).view(-1, args.vocab), targets.view(-1))
        loss.backward()
        optimizer.step()
        return loss.detach()

    def eager_step() -> torch.Tensor:
        optimizer.zero_grad(set_to_none=True)
        return forward_backward_step()

    step = eager_step
    if args.variant == "graphs":
        tokens.copy_(pool_tokens[0])
        targets.copy_(pool_targets[0])
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up on a side stream: the optimizer's state, cuBLAS's workspaces
            for _ in range(args.graph_warmup):
                eager_step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        optimizer.zero_grad(set_to_none=True)  # backward allocates .grad from the graph's private pool
        with torch.cuda.graph(graph):
            static_loss = forward_backward_step()

        def graph_step() -> torch.Tensor:
            graph.replay()
            return static_loss

        step = graph_step
    losses = []
    profiler = contextlib.nullcontext()
    if args.torch_profiler:
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        profiler = torch.profiler.profile(activities=activities)
    with profiler as profiling:
        marks = loop(args, step, tokens, targets, pool_tokens, pool_targets, losses, profiling)
    if args.torch_profiler:
        profiling.export_chrome_trace(f"{args.torch_profiler}/trace.json")
    times = [b - a for a, b in itertools.pairwise(marks)]
    print(summary("loop_transformer_train", args.variant, times, args.warmup, graph_warmup_steps=(
        args.graph_warmup if args.variant == "graphs" else 0), first_loss=round(losses[0], 4),
        last_loss=round(losses[-1], 4)))


def loop(args, step, tokens, targets, pool_tokens, pool_targets, losses: list[float], profiling) -> list[float]:
    """The training loop: the time at its start and after each step."""
    marks = [time.perf_counter()]
    for index in range(args.steps):
        with torch.cuda.nvtx.range("step") if args.markers else contextlib.nullcontext():
            tokens.copy_(pool_tokens[index % len(pool_tokens)])
            targets.copy_(pool_targets[index % len(pool_targets)])
            losses.append(step().item())  # logging: the host waits for the step
        if profiling is not None:
            profiling.step()
        marks.append(time.perf_counter())
    return marks


if __name__ == "__main__":
    main()
