"""A Hugging Face transformers Llama (random weights, nothing downloaded) generating greedily with
`model.generate`, fp16: the decode loop for nsprof to find from the GPU work alone (captured with
nsys's defaults and no NVTX range of the program's own). Each call prefills the prompt, then decodes
`--tokens` tokens, one forward pass a token; `--calls` calls, the first one untimed (warm-up).

- `--variant eager` (default): a dynamic KV cache that grows each token, every op launched from
  Python: a few hundred small kernels a token, launch-bound.
- `--variant static`: a static KV cache (`cache_implementation="static"`), with which generate
  compiles the decode step with torch.compile(mode="reduce-overhead", fullgraph=True) (its
  `compile_config`; the prefill stays eager), so each decode step replays a CUDA graph: transformers'
  own recipe for fast decoding. Compilation takes seconds, in the first call. (Compiling
  `model.forward` by hand instead fails in transformers 5.17: the static cache, made lazily inside
  the compiled prefill, is a CUDA graph's output that the next replay overwrites.)

`--markers` puts an NVTX range `step` around each forward pass (a forward pre-hook and hook on the
model) and `generate` around each call: the truth to check the found loop against. Per-token times
come from a streamer (transformers calls its `put` once per token, after the host has read the token,
so the interval between two puts is one decode step). The program prints one JSON line last: the
decode steps it ran (calls x (tokens - 1)), the timed calls' median, min and max ms per decode step,
and the first call's time (its compilation included).

    python3 tests/programs/loop_llm_generate.py --variant eager
    python3 tests/programs/loop_llm_generate.py --variant static --tokens 64 --calls 4
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time

import torch
from transformers import CompileConfig, LlamaConfig, LlamaForCausalLM


class TokenClock:
    """A streamer: the time of each token's arrival on the host, per call."""

    def __init__(self) -> None:
        self.calls: list[list[float]] = []

    def start(self) -> None:
        self.calls.append([])

    def put(self, value: torch.Tensor) -> None:
        self.calls[-1].append(time.perf_counter())

    def end(self) -> None:
        pass


def push_step(module, inputs) -> None:
    torch.cuda.nvtx.range_push("step")  # a hook that returned range_push's depth would replace the inputs


def pop_step(module, inputs, output) -> None:
    torch.cuda.nvtx.range_pop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=("eager", "static"), default="eager")
    parser.add_argument("--tokens", type=int, default=64, help="new tokens a call")
    parser.add_argument("--calls", type=int, default=4, help="generate calls, the first untimed")
    parser.add_argument("--markers", action="store_true", help="NVTX ranges `step` per forward, `generate` per call")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--prompt", type=int, default=16, help="prompt tokens")
    args = parser.parse_args()
    assert args.calls >= 2 and args.tokens >= 3
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=8192, hidden_size=512, intermediate_size=1536, num_hidden_layers=args.layers,
                         num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=512)
    model = LlamaForCausalLM(config).cuda().half().eval()
    options = {}
    if args.variant == "static":
        options = {"cache_implementation": "static",
                   "compile_config": CompileConfig(fullgraph=True, mode="reduce-overhead")}
    if args.markers:
        model.register_forward_pre_hook(push_step)
        model.register_forward_hook(pop_step)
    prompt = torch.randint(0, config.vocab_size, (args.batch, args.prompt), device="cuda")
    clock = TokenClock()
    call_ms = []
    for _ in range(args.calls):
        clock.start()
        started = time.perf_counter()
        if args.markers:
            torch.cuda.nvtx.range_push("generate")
        with torch.inference_mode():
            out = model.generate(prompt, max_new_tokens=args.tokens, min_new_tokens=args.tokens, do_sample=False,
                                 pad_token_id=0, streamer=clock, **options)
        if args.markers:
            torch.cuda.nvtx.range_pop()
        call_ms.append(1e3 * (time.perf_counter() - started))
        assert out.shape[1] == args.prompt + args.tokens
    # a call's puts: the prompt, then each new token; the intervals after the first new token are decode steps
    steps = [1e3 * (b - a) for call in clock.calls[1:] for a, b in itertools.pairwise(call[2:])]
    print(json.dumps({
        "program": "loop_llm_generate", "variant": args.variant, "iterations": args.calls * (args.tokens - 1),
        "warmup": args.tokens - 1, "calls": args.calls, "tokens": args.tokens,
        "median_ms": round(statistics.median(steps), 4), "min_ms": round(min(steps), 4),
        "max_ms": round(max(steps), 4), "first_call_ms": round(call_ms[0], 1),
        "timed_call_ms": [round(ms, 1) for ms in call_ms[1:]],
        "compiled": getattr(model, "_compiled_call", None) is not None}))


if __name__ == "__main__":
    main()
