"""A transformer block compiled with torch.compile(mode="reduce-overhead"), as a user would run it,
for capturing real Nsight exports: Triton kernels replayed inside CUDA graphs, cuDNN attention
(scaled_dot_product_attention), fp16 GEMMs, NVTX ranges in a domain of the program's own, and an
`h2d` range that only copies.

    python3 tests/programs/torch_compile_block.py --steps 20
    python3 tests/programs/torch_compile_block.py --steps 20 --eager   # the same block without compiling
"""

import argparse
import contextlib

import torch
import torch.nn.functional as F

try:  # the nvtx package names a domain; PyTorch's own ranges are in the default one
    import nvtx

    def nvtx_range(name):
        return nvtx.annotate(message=name, domain="block")
except ImportError:  # pragma: no cover - the program still runs, its ranges in the default domain
    @contextlib.contextmanager
    def nvtx_range(name):
        torch.cuda.nvtx.range_push(name)
        try:
            yield
        finally:
            torch.cuda.nvtx.range_pop()


class Block(torch.nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
        self.qkv, self.proj = torch.nn.Linear(width, 3 * width), torch.nn.Linear(width, width)
        self.up, self.down = torch.nn.Linear(width, 4 * width), torch.nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(batch, tokens, 3, self.heads, width // self.heads).unbind(2)
        attention = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.proj(attention.transpose(1, 2).reshape(batch, tokens, width))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--eager", action="store_true", help="run the block without torch.compile")
    args = parser.parse_args()
    torch.manual_seed(0)
    block = Block(args.width, args.heads).cuda().half().eval()
    step = block if args.eager else torch.compile(block, mode="reduce-overhead")
    host = [torch.randn(args.batch, args.tokens, args.width, dtype=torch.float16).pin_memory() for _ in range(5)]
    with nvtx_range("h2d"):  # copies only: five batches to the GPU
        batches = [h.to("cuda", non_blocking=True) for h in host]
    torch.cuda.synchronize()
    with torch.no_grad():
        for i in range(args.steps):
            with nvtx_range("step"):
                out = step(batches[i % len(batches)])
            torch.cuda.synchronize()
        with nvtx_range("d2h"):
            checksum = out.float().sum().item()
    print(f"{args.steps} steps ({'eager' if args.eager else 'compiled'}), checksum {checksum:.3f}")


if __name__ == "__main__":
    main()
