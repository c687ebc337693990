"""Run a Python program under torch.profiler, as a PyTorch user profiles first, and write its
Chrome trace (Kineto). The program is run unchanged; its NVTX push/pop ranges are also opened as
`record_function` ranges, so the trace holds the same ranges an nsys capture of the program shows.

    python3 tests/programs/kineto_trace.py --out train.json -- tests/programs/torch_train_step.py --steps 6
    python3 tests/programs/kineto_trace.py --out traces/ --gzip -- PROGRAM ARGS  # TensorBoard's *.pt.trace.json.gz
"""

import argparse
import runpy
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function, tensorboard_trace_handler


def _ranges_also_recorded() -> None:
    """torch.cuda.nvtx.range_push/range_pop also open and close a record_function range."""
    open_ranges: list[record_function] = []
    push, pop = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop

    def range_push(message):
        scope = record_function(message)
        scope.__enter__()
        open_ranges.append(scope)
        return push(message)

    def range_pop():
        if open_ranges:
            open_ranges.pop().__exit__(None, None, None)
        return pop()

    torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop = range_push, range_pop


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True, help="the trace (.json), or with --gzip a directory")
    parser.add_argument("--gzip", action="store_true", help="TensorBoard's handler: <dir>/*.pt.trace.json.gz")
    parser.add_argument("program", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    _ranges_also_recorded()
    handler = tensorboard_trace_handler(args.out, use_gzip=True) if args.gzip else None
    config = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                 experimental_config=config, on_trace_ready=handler) as prof:
        sys.argv = program
        runpy.run_path(program[0], run_name="__main__")
        torch.cuda.synchronize()
    if not args.gzip:
        prof.export_chrome_trace(args.out)


if __name__ == "__main__":
    main()
