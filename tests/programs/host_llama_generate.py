"""A Hugging Face transformers Llama (random weights, nothing downloaded) generating text with
`model.generate`, eager, fp16: the workload most PyTorch users profile first, for nsprof's host-side
analysis. Each `generate` call is one NVTX range `generate`; the first is the warm-up.

    python3 tests/programs/host_llama_generate.py --tokens 32 --calls 3
"""

import argparse
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=4)
    args = parser.parse_args()
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=8192, hidden_size=512, intermediate_size=1536, num_hidden_layers=args.layers,
                         num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=512)
    model = LlamaForCausalLM(config).cuda().half().eval()
    prompt = torch.randint(0, 8192, (args.batch, 16), device="cuda")
    for call in range(args.calls):
        started = time.perf_counter()
        torch.cuda.nvtx.range_push("generate")
        with torch.inference_mode():
            out = model.generate(prompt, max_new_tokens=args.tokens, min_new_tokens=args.tokens, do_sample=False,
                                 pad_token_id=0)
        torch.cuda.nvtx.range_pop()
        print(f"call {call}: {out.shape[1] - prompt.shape[1]} tokens in {1e3 * (time.perf_counter() - started):.1f} ms")


if __name__ == "__main__":
    main()
