"""Synthetic nsys exports of any size, built from a real export's schema and rows (for the scale
benchmarks: diff_scale.py, analyze_scale.py, analyze_many_scale.py; real_scale.py).

    write_export(path, kernels=1_000_000, memcpys=100_000, ranges=100_000)
    write_xla_export(path, kernels=72_080, ranges=158_910, names=86_508, steps=30, run=0)
    python3 benchmarks/synthetic_export.py --xla OUT.sqlite [--kernels N --ranges N --names N --steps N --run K]

write_xla_export writes an export shaped like a real JAX/XLA capture instead (nested ranges with
many distinct per-instance names, a compile-and-autotune first step, steady steps of CUDA graph
launches): see "XLA-shaped exports" below. What follows is write_export's.

The export is a copy of tests/data/timeline/nsys-12000-kernels.sqlite (nsys 2025.3.1 on an H200:
its full schema, strings, GPU table; 30 NVTX ranges `step N` of 400 CuPy kernels each). Its
kernels, CUDA API calls and NVTX ranges are repeated, shifted in time and correlation id, until it
holds `kernels` kernels. Everything is done by SQLite (INSERT ... SELECT over a counter), so a
10M-kernel export takes seconds, not a Python loop over rows.

- `memcpys`: host-to-device copies in CUPTI_ACTIVITY_KIND_MEMCPY (schema and one template row from
  tests/data/diff-pairs/train-a.sqlite, the same nsys version), spread evenly over the capture, each
  launched by its own cudaMemcpyAsync call on the thread that launches the kernels.
- `ranges`: NVTX ranges in all; beyond the tiled `step N` ranges, `phase` ranges nested evenly in them.
- `slower_name_id`: kernels of this StringIds id run 5% longer (diff_scale's changed side).
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests/data/timeline/nsys-12000-kernels.sqlite"
COPIES_SOURCE = ROOT / "tests/data/diff-pairs/train-a.sqlite"  # the memcpy table's schema and a template row
COPY_BYTES = 4 << 20
COPY_NS = 2_000
PHASE = "phase"


def write_export(path: Path, kernels: int, memcpys: int = 0, ranges: int | None = None,
                 slower_name_id: int | None = None) -> None:
    """Write the export described in the module docstring at `path` (replacing it)."""
    shutil.copyfile(SOURCE, path)
    conn = sqlite3.connect(path)
    conn.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-200000;")
    base = conn.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    repeats = -(-kernels // base)
    first, span = conn.execute("SELECT min(start), max(end) - min(start) + 1000 FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    ids = conn.execute("SELECT max(correlationId) + 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
    longer = "" if slower_name_id is None else \
        f" + CASE WHEN demangledName = {int(slower_name_id)} THEN (end - start) / 20 ELSE 0 END"
    _tile(conn, "CUPTI_ACTIVITY_KIND_KERNEL", repeats, span, ids, kernels, {"end": f"end + k * {span}{longer}"})
    _tile(conn, "CUPTI_ACTIVITY_KIND_RUNTIME", repeats, span, ids, None, {})
    _tile(conn, "NVTX_EVENTS", repeats, span, ids, None, {})
    if ranges is not None:
        _phases(conn, ranges)
    if memcpys:
        _copies(conn, memcpys, first, repeats * span, repeats * ids)
    conn.commit()
    conn.close()


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _tile(conn: sqlite3.Connection, table: str, repeats: int, span: int, ids: int, limit: int | None,
          overrides: dict[str, str]) -> None:
    """Replace `table` by `repeats` copies of its rows, copy k shifted by k * span in time and by
    k * ids in correlation id (the first `limit` rows in time order)."""
    columns = _columns(conn, table)
    shifted = {"start": f"start + k * {span}", "end": f"end + k * {span}"}
    if "correlationId" in columns:
        shifted["correlationId"] = f"correlationId + k * {ids}"
    shifted |= overrides
    select = ", ".join(shifted.get(column, f"[{column}]") for column in columns)
    conn.execute(f"CREATE TEMP TABLE base AS SELECT * FROM {table}")
    conn.execute(f"DELETE FROM {table}")
    conn.execute(f"""INSERT INTO {table}
        WITH RECURSIVE copies(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM copies WHERE k + 1 < {repeats})
        SELECT {select} FROM copies, base ORDER BY k, start {'' if limit is None else f'LIMIT {int(limit)}'}""")
    conn.execute("DROP TABLE base")


def _phases(conn: sqlite3.Connection, ranges: int) -> None:
    """Nest `phase` ranges evenly in the tiled ranges until there are `ranges` in all."""
    steps = conn.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59").fetchone()[0]
    extra = ranges - conn.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60)").fetchone()[0]
    if extra <= 0 or steps == 0:
        return
    per_step = -(-extra // steps)
    columns = _columns(conn, "NVTX_EVENTS")
    values = {"start": f"start + j * (end - start) / {per_step}", "end": f"start + (j + 1) * (end - start) / {per_step} - 1",
              "text": f"'{PHASE}'", "textId": "NULL"}
    select = ", ".join(values.get(column, f"[{column}]") for column in columns)
    conn.execute(f"""INSERT INTO NVTX_EVENTS
        WITH RECURSIVE parts(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM parts WHERE j + 1 < {per_step})
        SELECT {select} FROM (SELECT * FROM NVTX_EVENTS WHERE eventType = 59), parts LIMIT {int(extra)}""")


def _copies(conn: sqlite3.Connection, memcpys: int, first: int, span: int, first_id: int) -> None:
    """`memcpys` host-to-device copies spread over [first, first + span), each with its
    cudaMemcpyAsync call on the kernel-launching thread, correlation ids from `first_id` on."""
    conn.execute("ATTACH DATABASE ? AS real", (f"{COPIES_SOURCE.resolve().as_uri()}?mode=ro",))
    (schema,) = conn.execute("SELECT sql FROM real.sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_MEMCPY'").fetchone()
    conn.execute(schema)
    columns = _columns(conn, "CUPTI_ACTIVITY_KIND_MEMCPY")
    device, context, stream, pid, thread = conn.execute(
        "SELECT k.deviceId, k.contextId, k.streamId, k.globalPid, r.globalTid FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r USING (correlationId) LIMIT 1").fetchone()
    gap = span // memcpys
    copy = {"start": f"{first} + i * {gap} + 500", "end": f"{first} + i * {gap} + 500 + {COPY_NS}",
            "deviceId": str(device), "contextId": str(context), "streamId": str(stream),
            "correlationId": f"{first_id} + i", "globalPid": str(pid), "bytes": str(COPY_BYTES)}
    select = ", ".join(copy.get(column, f"t.[{column}]") for column in columns)
    counter = f"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {int(memcpys)})"
    conn.execute(f"""INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY {counter}
        SELECT {select} FROM n, (SELECT * FROM real.CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 LIMIT 1) AS t""")
    name = "cudaMemcpyAsync_v3020"
    row = conn.execute("SELECT id FROM StringIds WHERE value = ?", (name,)).fetchone()
    name_id = row[0] if row else conn.execute("SELECT max(id) + 1 FROM StringIds").fetchone()[0]
    if not row:
        conn.execute("INSERT INTO StringIds VALUES (?, ?)", (name_id, name))
    runtime = _columns(conn, "CUPTI_ACTIVITY_KIND_RUNTIME")
    call = {"start": f"{first} + i * {gap}", "end": f"{first} + i * {gap} + 400", "globalTid": str(thread),
            "correlationId": f"{first_id} + i", "nameId": str(name_id)}
    select = ", ".join(call.get(column, f"t.[{column}]") for column in runtime)
    conn.execute(f"""INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME {counter}
        SELECT {select} FROM n, (SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1) AS t""")
    conn.commit()
    conn.execute("DETACH DATABASE real")


# XLA-shaped exports (write_xla_export) ----------------------------------------------------------
#
# An export shaped after a real JAX capture (benchmarks/records/2026-11-26-cpu-real-scale/jax_export_shape.json, measured by
# benchmarks/export_shape.py on a JAX ResNet-50 training loop of 30 jitted steps on an H200: XLA with
# cuDNN and command buffers, nsys 2025.3.1). Unlike write_export's `step N` ranges of a few names,
# it has what made `nsprof analyze` and `nsprof diff` slow on the real one:
#
# - NVTX push/pop ranges nested up to 7 deep on 17 threads, in XLA's TSL domain, tens of thousands
#   of distinct names carrying per-instance arguments (`XlaPass:#name=rematerialization,
#   module=cudnn-conv.12,program_id=935911#`, `Thunk:#name=...,hlo_op=...,unique_hlo_op_id=...#`);
# - a warm-up on the main thread (whole jitted functions compiled, a few run: ~0.5% of the kernels,
#   ~17% of the ranges), then a first `step` (NVTX domain `train`) that compiles and autotunes: 17
#   threads running XLA's backend pipelines on small modules and timing cuDNN candidates
#   (RedzoneAllocatorKernelImpl, DelayKernel, comparison kernels, candidate convolutions: ~46% of
#   the kernels), and then runs the step once;
# - steady steps repeating one body: `step` > `XlaModule:#hlo_module=jit_train_step,...#` > thunks,
#   80% of its kernels launched by cuGraphLaunch (command buffers: a thunk holding one thunk per
#   graph node, each a cuGraphExecKernelNodeSetParams call, then one launch whose kernels share its
#   correlation id and carry a graphNodeId), the rest one launch each;
# - CUDA API calls, 4.2 per kernel (cuCtxSetCurrent, synchronizations, host allocations, ... on 22
#   threads), memsets (0.31 per kernel) and device-to-host copies (0.025 per kernel).
#
# Counts scale with the arguments (defaults: the real capture's). `run` stands for another run of
# the same program: the warm-up's and the steps' names are the same in every run, the autotuning
# compiles get other program ids (the real pair shares 24% of its range names), the GPU work
# other noise. Events are generated in Python lists (a few seconds at the defaults).

JAX = {"kernels": 72_080, "ranges": 158_910, "names": 86_508, "steps": 30}  # jax_export_shape.json
BODY_KERNELS, BODY_RANGES = 1_276, 1_313  # one steady step: kernels, ranges (step, module, thunks)
WARM_KERNELS, WARM_RANGES = 382, 26_271  # before the first step
BODY_GPU_NS, BODY_EPILOGUE_NS = 20.9e6, 1.8e6  # one steady step's kernel time; its host time after the GPU's
CANDIDATES = 230  # cuDNN engine kernels the autotuner may time
CALLS_PER_KERNEL = 303_595 / 72_080
MEMSETS_PER_KERNEL, COPIES_PER_KERNEL = 22_210 / 72_080, 1_767 / 72_080
BODY_MEMSETS, BODY_FILLERS = 72, 180  # per steady step at the real size: memsets, calls with no GPU work
GRAPH_SHARE, NODES_PER_GRAPH = 1_023 / 1_276, 9.8
COMPILE_THREADS, RUNTIME_THREADS = 16, 5
TSL, TRAIN = 1, 2  # NVTX domain ids
US = 1_000.0
REGISTERED = ("Thunk:", "XlaModule:", "step")  # names nsys stores in StringIds (NVTX registered strings)

# One XLA backend compile of a small module (a cuDNN autotuning candidate), nested as in the real
# capture: depth, name ({m} module, {p} program id, {k} a counter), own length in us (a range with
# children holds them one after the other).
COMPILE_BLOCK = """\
1 XlaCompileBackend:#module={m},program_id={p}#
2 XlaCompileCudnnFusion:#module={m},program_id={p}# 10
2 XlaPassPipeline:#name=pre-scheduling-passes,module={m},program_id={p}#
3 XlaPass:#name=fusion-wrapper,module={m},program_id={p}# 6
3 XlaPass:#name=dynamic-slice-copy-fusion-async-wrapper,module={m},program_id={p}# 3
3 XlaPass:#name=gpu-copy-async-wrapper,module={m},program_id={p}# 2
2 XlaMemoryScheduler:#module={m},program_id={p}# 120
2 XlaPassPipeline:#name=latency-hiding-scheduler,module={m},program_id={p}#
3 XlaPass:#name=legalize-scheduling-annotations,module={m},program_id={p}# 5
3 XlaPass:#name=latency-hiding-scheduler,module={m},program_id={p}# 3
3 XlaPass:#name=scheduling-instruction-annotator,module={m},program_id={p}# 3
2 XlaPassPipeline:#name=scheduled-gpu-module,module={m},program_id={p}# 25
2 XlaPassPipeline:#name=post-scheduler-xla-transforms,module={m},program_id={p}#
3 XlaPass:#name=apply-xla-transforms-{k},module={m},program_id={p}# 2
2 XlaPassPipeline:#name=post-scheduling-passes,module={m},program_id={p}#
3 XlaPass:#name=async-to-sync-converter,module={m},program_id={p}#
4 XlaPassPipeline:#name=async-to-sync-converter,module={m},program_id={p}#
5 XlaPass:#name=gpu-convert-async-collectives-to-sync,module={m},program_id={p}# 2
3 XlaPass:#name=remat-pipeline,module={m},program_id={p}#
4 XlaPassPipeline:#name=remat-pipeline,module={m},program_id={p}#
5 XlaPass:#name=rematerialization,module={m},program_id={p}# 60
5 XlaPass:#name=stream-attribute-annotator,module={m},program_id={p}# 4
5 XlaPass:#name=cse_barrier_expander,module={m},program_id={p}# 1
3 XlaPass:#name=fusion-wrapper,module={m},program_id={p}#
4 XlaPassPipeline:#name=fusion-wrapper,module={m},program_id={p}#
5 XlaPass:#name=fusion-wrapper,module={m},program_id={p}# 2
3 XlaPass:#name=fusion-dispatch-pipeline,module={m},program_id={p}#
4 XlaPassPipeline:#name=fusion-dispatch-pipeline,module={m},program_id={p}#
5 XlaPass:#name=dce,module={m},program_id={p}# 2
5 XlaPass:#name=fusion-block-level-rewriter,module={m},program_id={p}# 2
3 XlaPass:#name=sanitize-constant-names,module={m},program_id={p}#
4 XlaPassPipeline:#name=sanitize-constant-names,module={m},program_id={p}#
5 XlaPass:#name=sanitize-constant-names,module={m},program_id={p}# 8
3 XlaPass:#name=pdl-launch-annotation,module={m},program_id={p}#
4 XlaPassPipeline:#name=pdl-launch-annotation,module={m},program_id={p}#
5 XlaPass:#name=pdl-launch-annotation,module={m},program_id={p}# 1
2 XlaBufferAssignment:#module={m},program_id={p}# 90
2 XlaEmitLlvmIr:#module={m},program_id={p}#
3 XlaOptimizeLlvmIr:#module={m}_consts# 450
3 XlaEmitGpuAsm:#module={m}_consts# 800
3 XlaCompileGpuAsm:#module={m}# 90000
2 XlaCreateGpuExecutable:#module={m}# 150
"""
# XLA's HLO pipelines of a whole jitted function (the warm-up's compiles, ~300 ranges each)
HLO_PIPELINES = ("spmd-partitioner", "simplification", "optimization", "collective-optimizations",
                 "conv-canonicalization", "layout-assignment", "post-layout-assignment", "fusion",
                 "horizontal-fusion", "post-fusion-optimization", "gpu-convert-to-sync", "command-buffer-scheduling",
                 "remat-pipeline", "hlo-rematerialization", "async-wrapping", "copy-insertion", "cudnn-fusion-compiler",
                 "dot-dimension-sorter", "gemm-rewriter", "cublas-pad-for-gemms", "triton-fusion-numerics-verifier",
                 "cse", "loop-optimizations", "while-loop-simplifier", "sharding-propagation",
                 "reduce-scatter-creator", "pre-spmd-partitioner")
WARM_FUNCTIONS = ("jit_stage", "jit__normal", "jit_multiply", "jit_broadcast_in_dim", "jit_init", "jit_train_step",
                  "jit_eval_step")
HLO_PASSES = ("algsimp", "dce", "cse", "tuple-simplifier", "constant_folding", "reshape-mover", "simplify-fp-conversions",
              "zero_sized_hlo_elimination", "dynamic-index-splitter", "call-inliner", "flatten-call-graph",
              "batchnorm_expander", "convolution-group-converter", "gpu-conv-rewriter", "cudnn-fused-convolution-rewriter",
              "transpose-folding", "layout-normalization", "broadcast-canonicalizer", "reduction-splitter",
              "tree-reduction-rewriter", "priority-fusion", "multi_output_fusion", "fusion-merger", "sort-simplifier")
AUTOTUNER_KERNELS = {  # the autotuner's own kernels: share of its launches, median length in us (real capture)
    "stream_executor::gpu::RedzoneAllocatorKernelImpl(unsigned char *, unsigned char, unsigned long, unsigned int *)":
        (0.58, 28),
    "stream_executor::gpu::<unnamed>::DelayKernel(volatile stream_executor::GpuSemaphoreState *, "
    "stream_executor::GpuSemaphoreState)": (0.058, 195),
    "void cudnn::engines_precompiled::convertTensor_kernel<float, float, float, (cudnnKernelDataType_t)2>"
    "(T3, const T1 *, T3, T2 *, unsigned long)": (0.057, 38),
    "void stream_executor::gpu::xla_fp_comparison<float>(T1 *, T1 *, float, unsigned long, int *)": (0.055, 29),
    "void stream_executor::gpu::xla_int_comparison<unsigned char>(T1 *, T1 *, float, unsigned long, int *)":
        (0.05, 0.7),
    "void cask_plugin__5x_cudnn::xmma__5x_cudnn::init_device_workspace_kernel<xmma__5x_cudnn::implicit_gemm::"
    "wgrad_indexed::Warp_specialized_params<xmma__5x_cudnn::Grid_constant_params>>(T1, bool)": (0.032, 3),
    "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x5_nt_align4>(T1::Params)": (0.035, 63),
}
FILLER_APIS = {  # CUDA calls that start no GPU work, as often as in the real capture
    "cuCtxSetCurrent": 97147, "cuStreamSynchronize": 17143, "cuMemcpyDtoHAsync_v2": 11429,
    "cudaGetFuncBySymbol_v11000": 9468, "cuMemHostAlloc": 9292, "cuMemFreeHost": 9292, "cuEventRecord": 6370,
    "cuKernelGetName": 5054, "cuEventCreate": 4250, "cuEventDestroy_v2": 4248, "cuTensorMapEncodeTiled": 3988,
    "cuStreamIsCapturing": 3448, "cuMemcpyDtoDAsync_v2": 3335, "cuModuleLoadData": 2854, "cuModuleUnload": 2848,
    "cuGetProcAddress_v2": 2691, "cuEventSynchronize": 1927, "cuStreamWaitEvent": 1873, "cuMemcpyHtoDAsync_v2": 1485,
    "cuLaunchHostFunc": 1260, "cuGraphAddNode_v2": 1028}
LAUNCH_APIS = {  # kernel launches that are not graph launches: in the compiles, in a steady step
    "compile": {"cuLaunchKernel": 25164, "cudaLaunchKernel_v7000": 4749, "cudaLaunchKernelExC_v11060": 3393,
                "cuLaunchKernelEx": 742},
    "step": {"cudaLaunchKernelExC_v11060": 183, "cuLaunchKernel": 34, "cuLaunchKernelEx": 29, "cudaLaunchKernel_v7000": 7}}


class _Events:
    """A capture's events in lists: NVTX ranges, CUDA calls, and GPU work (a kernel name, "memset"
    or "copy"; its call, length, stream, graph node, bytes, and start once scheduled)."""

    def __init__(self) -> None:
        self.ranges: dict[str, list] = {key: [] for key in ("start", "end", "thread", "name", "domain")}
        self.calls: dict[str, list] = {key: [] for key in ("start", "end", "thread", "api")}
        self.gpu: dict[str, list] = {key: [] for key in ("call", "what", "ns", "stream", "node", "bytes", "start")}

    def range(self, thread: int, start: float, end: float, name: str, domain: int = TSL) -> None:
        for key, value in zip(self.ranges, (start, end, thread, name, domain)):
            self.ranges[key].append(value)

    def call(self, thread: int, start: float, api: str, ns: float = 3 * US) -> int:
        for key, value in zip(self.calls, (start, start + ns, thread, api)):
            self.calls[key].append(value)
        return len(self.calls["start"]) - 1

    def work(self, call: int, what: str, ns: float, start: float | None = None, stream: int = 14,
             node: int | None = None, size: int = 0) -> None:
        for key, value in zip(self.gpu, (call, what, ns, stream, node, size, start)):
            self.gpu[key].append(value)

    def schedule(self) -> float:
        """Start the unscheduled GPU work 5 us after its call returns, or when its stream is free
        (one thing at a time per stream, in the order of the calls); the end of the GPU work."""
        starts = np.array([np.nan if s is None else s for s in self.gpu["start"]], dtype=float)
        ends = np.array(self.calls["end"], dtype=float)
        calls, ns = np.array(self.gpu["call"]), np.array(self.gpu["ns"], dtype=float)
        streams = np.array(self.gpu["stream"])
        for stream in np.unique(streams):
            todo = np.flatnonzero(np.isnan(starts) & (streams == stream))
            todo = todo[np.argsort(ends[calls[todo]], kind="stable")]
            ready = ends[calls[todo]] + 5 * US
            before = np.r_[0, np.cumsum(ns[todo])[:-1]]  # s_i = max(ready_i, s_(i-1) + ns_(i-1))
            starts[todo] = before + np.maximum.accumulate(ready - before)
        self.gpu["start"] = starts.tolist()
        return float(np.nanmax(starts + ns)) if len(starts) else 0.0


def _template(text: str) -> tuple[list[int], list[str], np.ndarray, np.ndarray]:
    """A nested template's depths, name formats and [start, end) in ns from its first range's start:
    a range with children holds them one after the other, 1 us apart; without, its own length."""
    lines = [line.split(" ") for line in text.strip().splitlines()]
    depth = [int(line[0]) for line in lines]
    own = [float(line[2]) * US if len(line) > 2 else 0.0 for line in lines]
    children: list[list[int]] = [[] for _ in lines]
    parents: list[int] = []
    for i, d in enumerate(depth):
        del parents[d - 1:]
        if parents:
            children[parents[-1]].append(i)
        parents.append(i)
    length = own[:]
    for i in reversed(range(len(lines))):
        if children[i]:
            length[i] = max(own[i], sum(length[j] + US for j in children[i]) + US)
    start = [0.0] * len(lines)
    for i in range(len(lines)):
        at = start[i] + US
        for j in children[i]:
            start[j], at = at, at + length[j] + US
    starts = np.array(start)
    return depth, [line[1] for line in lines], starts, starts + np.array(length)


def _warm_template() -> str:
    """A whole jitted function's compile: XlaCompile > HLO pipelines of passes (a pass now and then
    running a pipeline of its own), then the backend compile (COMPILE_BLOCK, one level deeper)."""
    lines = ["1 XlaCompile:#module={m}#"]
    for i, pipeline in enumerate(HLO_PIPELINES):
        lines.append(f"2 XlaPassPipeline:#name={pipeline},module={{m}},program_id={{p}}#")
        for j in range(8):
            name = HLO_PASSES[(i * 7 + j) % len(HLO_PASSES)] + ("" if (i + j) % 4 == 0 else f"-{i}")
            if j != 3:
                lines.append(f"3 XlaPass:#name={name},module={{m}},program_id={{p}}# {3 + (i + j) % 9}")
                continue
            lines.append(f"3 XlaPass:#name={name}-fixed-point,module={{m}},program_id={{p}}#")
            lines.append(f"4 XlaPassPipeline:#name={name}-fixed-point,module={{m}},program_id={{p}}#")
            lines += [f"5 XlaPass:#name={HLO_PASSES[(i + k) % len(HLO_PASSES)]},module={{m}},program_id={{p}}# 2"
                      for k in range(3 if i % 3 else 2)]
            if i % 3 == 0:
                lines.append("5 XlaPass:#name=hlo-verifier,module={m},program_id={p}#")
                lines.append("6 XlaPass:#name=hlo-verifier-pass,module={m},program_id={p}# 1")
    lines += [f"{int(line.split(' ')[0]) + 1} {line.split(' ', 1)[1]}" for line in COMPILE_BLOCK.strip().splitlines()]
    return "\n".join(lines)


def _candidates(count: int) -> list[str]:
    """cuDNN engine kernels, as the autotuner times them and the steps run the chosen ones."""
    kinds = ("fprop", "dgrad", "wgrad_indexed")
    tiles = ("64x64x32", "128x64x32", "64x128x32", "128x128x32", "256x128x32", "128x256x32", "64x256x32")
    return [f"sm90_xmma_{kinds[i % 3]}_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize"
            f"{tiles[i // 3 % len(tiles)]}_warpgroupsize{1 + i // 42 % 2}x1x1_g1_execute_segment_k_"
            f"{('off', 'on')[i // 21 % 2]}_kernel__5x_cudnn{'' if i < 84 else f'_v{i // 84}'}" for i in range(count)]


def write_xla_export(path: Path, kernels: int = JAX["kernels"], ranges: int = JAX["ranges"],
                     names: int = JAX["names"], steps: int = JAX["steps"], run: int = 0) -> dict:
    """Write an XLA-shaped export (described above) at `path`, replacing it: about `kernels`
    kernels, `ranges` NVTX ranges with about `names` distinct names, `steps` training steps (the
    first compiling and autotuning). `run` numbers runs of the same program. Returns its counts."""
    steps = max(int(steps), 2)
    # a step's share: the steady steps together hold the real capture's share of the kernels and ranges
    scale = kernels / JAX["kernels"] * (JAX["steps"] - 1) / (steps - 1)
    fixed, noise = np.random.default_rng(12345), np.random.default_rng(1000 + run)  # shared by all runs / this run's
    events = _Events()
    main = 1144  # the template export's process id, and its main thread's
    compilers = [main, *range(main + 65, main + 65 + COMPILE_THREADS)]
    body_kernels = max(2, round(BODY_KERNELS * scale))
    body_ranges = max(4, round(BODY_RANGES * ranges / JAX["ranges"] * (JAX["steps"] - 1) / (steps - 1)))
    warm_kernels, warm_ranges = round(WARM_KERNELS * kernels / JAX["kernels"]), round(WARM_RANGES * ranges / JAX["ranges"])
    memsets, copies = round(MEMSETS_PER_KERNEL * kernels), round(COPIES_PER_KERNEL * kernels)
    compile_ranges = max(0, ranges - steps * body_ranges - warm_ranges)
    compile_kernels = max(0, kernels - steps * body_kernels - warm_kernels)
    compile_memsets = max(0, memsets - steps * round(BODY_MEMSETS * scale))
    block, warm_block = _template(COMPILE_BLOCK), _template(_warm_template())
    modules = [f"{kind}.{i}" for i in range(60) for kind in ("cudnn-conv", "cudnn-conv-bw-input", "cudnn-conv-bw-filter")]

    # Ranges: the warm-up's compiles (95% of its ranges) and runs (XlaModule > Thunk); the
    # autotuning's compiles (89%) and runs (XlaModule > 2 thunks). Names: each warm-up compile is
    # a fresh program (the same ids in every run); of the autotuning compiles, enough get a fresh
    # program id (this run's) to reach `names` distinct names, the others compile one again.
    warm_blocks = max(1, round(0.95 * warm_ranges / len(warm_block[0])))
    warm_runs = max(1, round((warm_ranges - warm_blocks * len(warm_block[0])) / 2))
    compile_blocks = max(1, round(0.886 * compile_ranges / len(block[0])))
    compile_runs = max(1, round((compile_ranges - compile_blocks * len(block[0])) / 3))
    warm_names = warm_blocks * (len(set(warm_block[1])) - 3) + warm_runs
    fresh_names = len(set(block[1])) - 4  # the GPU-asm and executable names are the module's alone
    fresh = int(np.clip((names - body_ranges - warm_names - 4 * len(modules)) / fresh_names, 1, compile_blocks))

    start = 1_777_000_000.0  # ns, as the real capture's first range
    warm_end = _compiles(events, noise, [main], warm_blocks, warm_runs, warm_kernels, round(0.03 * compile_memsets),
                         round(0.2 * copies), warm_block, start, None, modules)
    first_step = warm_end + 200 * US
    compile_end = _compiles(events, noise, compilers, compile_blocks, compile_runs, compile_kernels,
                            compile_memsets - round(0.03 * compile_memsets), copies - round(0.2 * copies), block,
                            first_step + 100 * US, fresh, modules)
    fillers = round(CALLS_PER_KERNEL * kernels) - len(events.calls["start"]) - steps * _body_calls(body_kernels, scale)
    if fillers > 0:  # before the steps, on all 22 threads
        apis, weights = zip(*FILLER_APIS.items())
        chosen = noise.choice(len(apis), fillers, p=np.array(weights) / sum(weights))
        threads = noise.choice(compilers + list(range(main + 90, main + 90 + RUNTIME_THREADS)), fillers)
        for api, at, thread in zip(chosen, noise.uniform(start, compile_end, fillers), threads):
            events.call(int(thread), float(at), apis[api], 1.5 * US)
    at = max(compile_end, events.schedule()) + 100 * US
    body = _body(fixed, body_kernels, body_ranges, round(BODY_MEMSETS * scale), round(BODY_FILLERS * scale))
    step_start = first_step
    for _ in range(steps):
        end = _place_body(events, body, at, main, noise)
        events.range(main, step_start, end + 30 * US, "step", TRAIN)
        step_start = at = end + 60 * US
    return _write_events(path, events, main, start)


def _compiles(events: _Events, noise: np.random.Generator, threads: list[int], blocks: int, runs: int, kernels: int,
              memsets: int, copies: int, template, start: float, fresh: int | None, modules: list[str]) -> float:
    """`blocks` compiles of `template` and `runs` runs of compiled modules (each launching its share
    of `kernels`, `memsets` and `copies`), spread over `threads`, each thread running its share one
    after the other from `start`. fresh=None: the warm-up (whole functions, fixed program ids);
    else the autotuning (small modules, `fresh` of them with this run's program ids). Where it ends."""
    _, formats, offsets, ends = template
    cursor = {thread: start + 50 * US * i for i, thread in enumerate(threads)}
    made: list[tuple[str, int]] = []
    kernel_share = np.array_split(np.arange(kernels), runs)
    memset_share, copy_share = np.array_split(np.arange(memsets), runs), np.array_split(np.arange(copies), runs)
    weights = np.array([share for share, _ in AUTOTUNER_KERNELS.values()])
    picks = np.searchsorted(np.cumsum(weights), noise.random(kernels))  # past the autotuner's kernels: a candidate
    candidates = _candidates(CANDIDATES)
    chosen = np.minimum(noise.zipf(1.3, kernels), len(candidates)) - 1
    names = [list(AUTOTUNER_KERNELS)[p] if p < len(AUTOTUNER_KERNELS) else candidates[c] for p, c in zip(picks, chosen)]
    launch_apis, launch_weights = zip(*LAUNCH_APIS["compile"].items())
    apis = noise.choice(launch_apis, kernels, p=np.array(launch_weights) / sum(launch_weights))
    done = 0
    for b in range(blocks):
        thread = threads[b % len(threads)]
        if fresh is None or b < fresh or not made:
            made.append((WARM_FUNCTIONS[b % len(WARM_FUNCTIONS)], 1000 + 7 * b) if fresh is None
                        else (modules[b % len(modules)], int(noise.integers(10_000, 1_300_000))))
            module, program = made[-1]
        else:
            module, program = made[int(noise.integers(len(made)))]
        stretch = noise.uniform(0.7, 1.3)
        for fmt, s, e in zip(formats, offsets, ends):
            events.range(thread, cursor[thread] + s * stretch, cursor[thread] + e * stretch,
                         fmt.format(m=module, p=program, k=b))
        cursor[thread] += ends[0] * stretch + 20 * US
        while done < runs and (done * blocks) // runs <= b:  # the runs, spread over the compiles
            module = (f"{WARM_FUNCTIONS[done % len(WARM_FUNCTIONS)]},program_id={6000 + 7 * (done % 70)}" if fresh is None
                      else modules[done % len(modules)])
            thunks = 1 if fresh is None else 2
            cursor[thread] = _run(events, noise, thread, cursor[thread], module, thunks, [
                (names[k], apis[k]) for k in kernel_share[done]], len(memset_share[done]), len(copy_share[done]))
            done += 1
    return max(cursor.values())


def _run(events: _Events, noise: np.random.Generator, thread: int, at: float, module: str, thunks: int,
         launches: list[tuple[str, str]], memsets: int, copies: int) -> float:
    """A compiled module run by the autotuner (or the warm-up): XlaModule > thunks, the thunks
    setting memory, launching kernels and copying results back. Where it ends."""
    cursor = at + 2 * US
    shares = np.array_split(np.arange(len(launches)), thunks)
    for i in range(thunks):
        begin, cursor = cursor, cursor + 2 * US
        for _ in range(memsets // thunks + (i < memsets % thunks)):
            events.work(events.call(thread, cursor, "cuMemsetD32Async"), "memset", noise.uniform(1, 3) * US, size=4 << 20)
            cursor += 5 * US
        for k in shares[i]:
            name, api = launches[k]
            _, median_us = AUTOTUNER_KERNELS.get(name, (0, 20 + 400 * (zlib.crc32(name.encode()) % 97 / 97) ** 3))
            draw = noise.random()
            events.work(events.call(thread, cursor, str(api)), name, median_us * US * noise.lognormal(0, 0.1),
                        stream=32 if draw < 0.001 else 33 if draw < 0.0012 else 14)
            cursor += 4 * US
        for _ in range(copies // thunks + (i < copies % thunks)):
            events.work(events.call(thread, cursor, "cuMemcpyDtoHAsync_v2"), "copy", 1.2 * US, size=4)
            cursor += 5 * US
        cursor += 2 * US
        events.range(thread, begin, cursor, f"Thunk:#hlo_op={module.split(',')[0]}#")
    events.range(thread, at, cursor + 2 * US, f"XlaModule:#hlo_module={module}#")
    return cursor + 4 * US


def _body_calls(kernels: int, scale: float) -> int:
    """CUDA calls of one steady step (see _body)."""
    graph_kernels = round(GRAPH_SHARE * kernels)
    graphs = max(1, round(graph_kernels / NODES_PER_GRAPH))
    return (kernels - graph_kernels) + graph_kernels + graphs + round(BODY_MEMSETS * scale) + round(BODY_FILLERS * scale) + 1


def _body(rng: np.random.Generator, kernels: int, ranges: int, memsets: int, fillers: int) -> dict:
    """One steady step from its start (the same in every run): XlaModule > thunks on the main
    thread, their calls, and the GPU work timed on a stream free at the start (the step before
    ended in a synchronization). Command buffers: a thunk per graph node (each updating its node)
    inside the buffer's thunk, then one cuGraphLaunch of the nodes' kernels."""
    graph_kernels = round(GRAPH_SHARE * kernels)
    graphs = max(1, round(graph_kernels / NODES_PER_GRAPH))
    thunks = max(2, ranges - 2)
    children = min(graph_kernels, max(0, thunks - graphs - 1))  # thunks of graph nodes
    direct = max(1, thunks - graphs - children)  # thunks launching kernels one by one (or none)
    fusions = ("input_reduce_fusion", "loop_add_subtract_fusion", "loop_multiply_fusion", "loop_broadcast_fusion",
               "loop_maximum_fusion", "loop_select_fusion", "wrapped_transpose", "loop_convert_fusion")
    pool = max(4, min(265, kernels // 4))
    convolutions = _candidates(CANDIDATES)
    kernel_names = [f"{fusions[i % len(fusions)]}_{i}" if i % 5 else convolutions[i * 7 % CANDIDATES]
                    for i in range(pool)]
    lengths = {name: rng.uniform(20, 120) if name.startswith("sm90") else rng.uniform(1, 8) for name in kernel_names}
    launched = [kernel_names[i] for i in (pool * rng.random(kernels) ** 2).astype(int)]  # a few names launched most
    per_ns = BODY_GPU_NS / BODY_KERNELS * kernels / sum(lengths[name] for name in launched)
    paths = ("jvp()", "transpose(jvp())", "jvp()/conv_general_dilated", "transpose(jvp())/conv_general_dilated",
             "jvp()/reduce_sum", "sgd/mul")
    launch_apis, launch_weights = zip(*LAUNCH_APIS["step"].items())
    apis = rng.choice(launch_apis, kernels, p=np.array(launch_weights) / sum(launch_weights))
    body: dict = {"ranges": [], "calls": [], "gpu": []}
    clock = {"host": 1_060 * US, "gpu": 0.0, "kernel": 0, "op": 0}

    def call(api: str, ns: float = 3 * US) -> int:
        body["calls"].append((clock["host"], str(api), ns))
        clock["host"] += ns + US
        return len(body["calls"]) - 1

    def launch(index: int, node: int | None = None) -> None:
        name = launched[clock["kernel"]]
        begin = max(body["calls"][index][0] + body["calls"][index][2] + 5 * US, clock["gpu"])
        body["gpu"].append((index, name, begin, lengths[name] * per_ns, node))
        clock["gpu"] = begin + lengths[name] * per_ns
        clock["kernel"] += 1

    def thunk(begin: float, name: str | None = None) -> None:
        if name is None:
            clock["op"] += 1
            op = clock["op"]
            name = (f"Thunk:#name=jit(train_step)/{paths[op % len(paths)]},hlo_op={fusions[op % len(fusions)]}.{op},"
                    f"unique_hlo_op_id={2302102471000 + op}#")
        body["ranges"].append((begin, clock["host"], name))

    module_start = clock["host"] - 10 * US
    direct_kernels = np.array_split(np.arange(kernels - graph_kernels), direct)
    direct_fillers = np.array_split(np.arange(fillers), direct)
    nodes, node_thunks = np.array_split(np.arange(graph_kernels), graphs), np.array_split(np.arange(children), graphs)
    order = np.argsort(np.r_[np.arange(direct) / direct, (np.arange(graphs) + 0.5) / graphs], kind="stable")
    for item in order:
        begin = clock["host"]
        clock["host"] += 2 * US
        if item < direct:
            for f in direct_fillers[item]:
                call(("cuTensorMapEncodeTiled", "cuKernelGetFunction", "cuKernelGetName", "cuCtxSetCurrent")[f % 4], US)
            if item < memsets:
                index = call("cudaMemsetAsync_v3020")
                body["gpu"].append((index, "memset", max(clock["host"] + 2 * US, clock["gpu"]), 0.8 * US, None))
                clock["gpu"] = body["gpu"][-1][2] + 0.8 * US
            for k in direct_kernels[item]:
                launch(call(apis[k], 4 * US))
            clock["host"] += 2 * US
            thunk(begin)
        else:
            graph = item - direct
            for _ in node_thunks[graph]:
                node_begin = clock["host"]
                call("cuGraphExecKernelNodeSetParams_v2", 2 * US)
                thunk(node_begin)
            index = call("cuGraphLaunch", 8 * US)
            for node in nodes[graph]:
                launch(index, 17_179_869_184 + int(node))
            clock["host"] += 2 * US
            thunk(begin, f"Thunk:#hlo_op=command_buffer_{graph}#")
    body["ranges"].append((module_start, clock["host"] + 5 * US, "XlaModule:#hlo_module=jit_train_step,program_id=51822#"))
    clock["host"] += 10 * US
    call("cuStreamSynchronize", max(clock["gpu"] - clock["host"], 0) + 5 * US)
    body["end"] = clock["host"] + BODY_EPILOGUE_NS
    return body


def _place_body(events: _Events, body: dict, at: float, main: int, noise: np.random.Generator) -> float:
    """One steady step's body from `at`, its GPU work up to 3% shorter (so never out of its stream's
    order); where it ends."""
    for begin, end, name in body["ranges"]:
        events.range(main, at + begin, at + end, name)
    first = len(events.calls["start"])
    for begin, api, ns in body["calls"]:
        events.call(main, at + begin, api, ns)
    shorter = 1 - 0.03 * noise.random(len(body["gpu"]))
    for (index, what, begin, ns, node), factor in zip(body["gpu"], shorter):
        events.work(first + index, what, ns * factor, at + begin, node=node, size=4 << 20 if what == "memset" else 0)
    return at + body["end"]


def _write_events(path: Path, events: _Events, main: int, start: float) -> dict:
    """The template export's schema, strings, GPU and process tables at `path`, with `events` as
    its kernels, memsets, copies, CUDA calls and NVTX ranges."""
    shutil.copyfile(SOURCE, path)
    conn = sqlite3.connect(path)
    conn.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-200000;")
    templates = {table: dict(zip(_columns(conn, table), conn.execute(f"SELECT * FROM {table} LIMIT 1").fetchone()))
                 for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMSET")}
    conn.execute("ATTACH DATABASE ? AS real", (f"{COPIES_SOURCE.resolve().as_uri()}?mode=ro",))
    (schema,) = conn.execute("SELECT sql FROM real.sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_MEMCPY'").fetchone()
    conn.execute(schema)
    row = conn.execute("SELECT * FROM real.CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 LIMIT 1").fetchone()
    templates["CUPTI_ACTIVITY_KIND_MEMCPY"] = dict(zip(_columns(conn, "CUPTI_ACTIVITY_KIND_MEMCPY"), row))
    conn.commit()
    conn.execute("DETACH DATABASE real")
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS"):
        conn.execute(f"DELETE FROM {table}")
    strings = dict(conn.execute("SELECT value, id FROM StringIds"))
    next_id = max(strings.values()) + 1

    def string_id(text: str) -> int:
        nonlocal next_id
        if text not in strings:
            strings[text], next_id = next_id, next_id + 1
            conn.execute("INSERT INTO StringIds VALUES (?, ?)", (strings[text], text))
        return strings[text]

    pid = templates["CUPTI_ACTIVITY_KIND_KERNEL"]["globalPid"]
    tid = {thread: pid + thread for thread in set(events.calls["thread"]) | set(events.ranges["thread"])}
    order = np.argsort(np.array(events.calls["start"]), kind="stable")
    correlation = np.empty(len(order), dtype=np.int64)
    correlation[order] = np.arange(len(order)) + 1_000
    _insert(conn, "CUPTI_ACTIVITY_KIND_RUNTIME", templates["CUPTI_ACTIVITY_KIND_RUNTIME"], {
        "start": [int(events.calls["start"][i]) for i in order], "end": [int(events.calls["end"][i]) for i in order],
        "globalTid": [tid[events.calls["thread"][i]] for i in order], "correlationId": correlation[order].tolist(),
        "nameId": [string_id(events.calls["api"][i]) for i in order], "returnValue": [0] * len(order),
        "callchainId": [None] * len(order)})
    gpu = events.gpu
    starts = np.array(gpu["start"], dtype=float)
    ends = starts + np.maximum(np.array(gpu["ns"], dtype=float), 480)
    kinds = np.array([what if what in ("memset", "copy") else "kernel" for what in gpu["what"]])
    common = {"globalPid": pid}
    for kind, table in (("kernel", "CUPTI_ACTIVITY_KIND_KERNEL"), ("memset", "CUPTI_ACTIVITY_KIND_MEMSET"),
                        ("copy", "CUPTI_ACTIVITY_KIND_MEMCPY")):
        rows = np.flatnonzero(kinds == kind)
        rows = rows[np.argsort(starts[rows], kind="stable")]
        values = {"start": starts[rows].astype(np.int64).tolist(), "end": ends[rows].astype(np.int64).tolist(),
                  "streamId": [gpu["stream"][i] for i in rows],
                  "correlationId": correlation[np.array(gpu["call"], dtype=np.int64)[rows]].tolist(),
                  **{key: [value] * len(rows) for key, value in common.items()}}
        if kind == "kernel":
            ids = [string_id(gpu["what"][i]) for i in rows]
            configs = [_launch_config(gpu["what"][i]) for i in rows]
            values |= {"demangledName": ids, "shortName": [string_id(_short(gpu["what"][i])) for i in rows],
                       "mangledName": ids, "graphNodeId": [gpu["node"][i] for i in rows],
                       "gridId": list(range(1, len(rows) + 1)),
                       **{key: [config[n] for config in configs] for n, key in enumerate(
                           ("gridX", "blockX", "registersPerThread", "staticSharedMemory", "dynamicSharedMemory"))}}
        else:
            values |= {"bytes": [gpu["bytes"][i] for i in rows]}
        if kind == "copy":
            values |= {"copyKind": [2] * len(rows), "srcKind": [2] * len(rows), "dstKind": [1] * len(rows)}
        _insert(conn, table, templates[table], values)
    ranges = events.ranges
    registered = [name.startswith(REGISTERED) for name in ranges["name"]]
    count = len(ranges["name"])
    nvtx = {"start": [int(start)] * 2 + [int(s) for s in ranges["start"]],
            "end": [None, None] + [int(e) for e in ranges["end"]],
            "eventType": [75, 75] + [59] * count, "text": ["TSL", "train"] + [
                None if r else name for name, r in zip(ranges["name"], registered)],
            "globalTid": [tid[main]] * 2 + [tid[t] for t in ranges["thread"]],
            "textId": [None, None] + [string_id(name) if r else None for name, r in zip(ranges["name"], registered)],
            "domainId": [TSL, TRAIN] + ranges["domain"]}
    _insert(conn, "NVTX_EVENTS", {}, nvtx)
    conn.commit()
    counts = {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in (
        "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_MEMCPY", "NVTX_EVENTS")}
    conn.close()
    return counts


def _insert(conn: sqlite3.Connection, table: str, template: dict, values: dict[str, list]) -> None:
    """Rows of `values` (columns of equal length) into `table`, other columns as in `template` (or NULL)."""
    columns = _columns(conn, table)
    rows = len(next(iter(values.values())))
    data = [values[column] if column in values else [template.get(column)] * rows for column in columns]
    conn.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(columns))})", zip(*data))


def _launch_config(name: str) -> tuple[int, int, int, int, int]:
    """A kernel name's grid, block, registers and shared memory (the same for every launch)."""
    h = zlib.crc32(name.encode())
    return 1 << (h % 11), 32 * (1 + h // 11 % 16), 16 + h // 176 % 112, 0, 1024 * (h // 20000 % 3) * 16


def _short(name: str) -> str:
    """nsys's short name: the function's own name, without namespaces, template arguments or parameters."""
    base = re.split(r"[<(]", name.removeprefix("void ").replace("<unnamed>", "unnamed"))[0]
    return base.rsplit("::", 1)[-1]


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Write an XLA-shaped synthetic nsys export (write_xla_export).")
    parser.add_argument("--xla", type=Path, required=True, metavar="OUT.sqlite")
    for key, value in JAX.items():
        parser.add_argument(f"--{key}", type=int, default=value)
    parser.add_argument("--run", type=int, default=0, help="another run of the same program: 1, 2, ...")
    args = parser.parse_args()
    print(write_xla_export(args.xla, args.kernels, args.ranges, args.names, args.steps, args.run))


if __name__ == "__main__":
    main()
