"""A small transformer decoding token by token, as an LLM's generate loop does: for nsprof's host-side
analysis (why the GPU waits). Each token is one NVTX range `decode_step` around one forward pass
of a few decoder layers (layer norm, QKV projection, attention over a static KV cache, MLP) for a
batch of sequences, then the next token chosen on the GPU (no host synchronization per token).

- `--mode eager`: every op launched from Python, a few hundred kernels of a few microseconds per
  token; the host launches slower than the GPU runs them (host-bound, launch overhead).
- `--mode graph`: the same step captured once as a CUDA graph and replayed per token: one launch
  per token, the kernels back to back on the GPU.

It prints the median host time per token over the timed tokens, so the overhead of a profiler's
options can be read off the program's own output.

    python3 tests/programs/host_decode.py --mode eager --tokens 48
"""

import argparse
import statistics
import time

import torch


class Layer(torch.nn.Module):
    def __init__(self, hidden: int, heads: int, batch: int, cache: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.norm1, self.norm2 = torch.nn.LayerNorm(hidden), torch.nn.LayerNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.out = torch.nn.Linear(hidden, hidden)
        self.up, self.down = torch.nn.Linear(hidden, 4 * hidden), torch.nn.Linear(4 * hidden, hidden)
        self.register_buffer("keys", torch.zeros(batch, heads, cache, self.head_dim))
        self.register_buffer("values", torch.zeros(batch, heads, cache, self.head_dim))

    def forward(self, x: torch.Tensor, position: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        batch = x.shape[0]
        q, k, v = self.qkv(self.norm1(x)).view(batch, 3, self.heads, 1, self.head_dim).unbind(1)
        self.keys.index_copy_(2, position, k)  # the cache is written in place: static shapes for a graph
        self.values.index_copy_(2, position, v)
        attended = torch.nn.functional.scaled_dot_product_attention(q, self.keys, self.values, attn_mask=mask)
        x = x + self.out(attended.reshape(batch, -1))
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm2(x))))


class Decoder(torch.nn.Module):
    def __init__(self, layers: int, hidden: int, heads: int, vocab: int, batch: int, cache: int) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.layers = torch.nn.ModuleList(Layer(hidden, heads, batch, cache) for _ in range(layers))
        self.head = torch.nn.Linear(hidden, vocab)
        self.cache = cache

    def step(self, tokens: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
        """The next token of each sequence, from its current token at `position` (a 1-element tensor)."""
        mask = (torch.arange(self.cache, device=tokens.device) <= position).view(1, 1, 1, -1)
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, position, mask)
        return self.head(x).argmax(-1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("eager", "graph"), default="eager")
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--warmup", type=int, default=4)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--batch", type=int, default=4)
    args = parser.parse_args()
    torch.manual_seed(0)
    cache = args.warmup + args.tokens + 1
    model = Decoder(args.layers, args.hidden, 8, 8192, args.batch, cache).cuda().half().eval()
    tokens = torch.randint(0, 8192, (args.batch,), device="cuda")
    position = torch.zeros(1, dtype=torch.long, device="cuda")
    generated = torch.empty(args.batch, cache, dtype=torch.long, device="cuda")
    with torch.inference_mode():
        step = lambda: model.step(tokens, position)  # noqa: E731
        if args.mode == "graph":
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(2):
                    step()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                following = step()
            step = lambda: (graph.replay(), following)[1]  # noqa: E731
        times = []
        for index in range(args.warmup + args.tokens):
            started = time.perf_counter()
            torch.cuda.nvtx.range_push("decode_step")
            following = step()
            generated[:, index].copy_(following)
            tokens.copy_(following)
            position.add_(1)
            torch.cuda.nvtx.range_pop()
            times.append(time.perf_counter() - started)
        torch.cuda.synchronize()
        print(f"{args.mode}: {args.tokens} tokens, median host time per token "
              f"{1e6 * statistics.median(times[args.warmup:]):.1f} us; first sequence ends "
              f"{generated[0, -4:].tolist()}")


if __name__ == "__main__":
    main()
