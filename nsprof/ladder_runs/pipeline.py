"""The whole flow of a matrix product, C = A·B from host memory back to host memory, in variants
that each teach one thing (VARIANTS), every one verified against float64 on the C it brings back.

- pageable: pageable host buffers, synchronous cudaMemcpy both ways, the product on the default
  stream (what the tutorials do): the driver stages every pageable copy through a pinned buffer.
- pinned: pinned host buffers, asynchronous copies and the product on one stream.
- streams: pinned; B sent once, then A's row blocks and C's row blocks streamed, so that copies in
  both directions overlap the products of other blocks. One stream per role (host-to-device copies,
  products, device-to-host copies), linked by events: copies issued in one direction on several
  streams run side by side on separate copy engines and share the bus, so every block would arrive
  late; on one stream they arrive in order at the bus's full rate (measured on the H200: 4 blocks
  round-robin over 4 streams took 0.30 ms, 2 blocks 0.26 ms).
- graph: `streams` captured once as a CUDA graph and replayed: one launch instead of dozens.
- watched: a CUDA graph too, with A sent as one copy at the bus's full rate (no gap, event or slower
  small copy per block) onto rows that hold a sentinel; a small kernel on the product stream waits for
  each row block to land before its product (kernels/common/watch_rows.cu). A copy fills its buffer
  front to back, so the first blocks are multiplied while the rest is in flight (at 1024^3 on
  H100s, the fastest variant in all twelve calls, by 1-8% against `graph`;
  benchmarks/records/2026-11-26-h100-flow-handover/h100-flow-handover.md).
- cold (`cold_start`, in a fresh process): wall clock from before CUDA is touched to C in host
  memory: context creation, allocation, module load and the first pageable flow.

Warm variants are timed with CUDA events around the whole flow, after warm-up (time_launches);
each timed flow sits in an NVTX range nsprof@pipeline/<op>/<stage>/<variant>/<MxNxK>, which
`nsprof pipeline`'s nsys capture reads back for the breakdown (nsprof.analyze.pipeline).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from types import SimpleNamespace

import numpy as np

from nsprof.ladder.registry import Stage, get_op
from nsprof.ladder_runs.stage_launch import stage_launcher
from nsprof.launch.gpu import require_cupy
from nsprof.launch.measure import time_launches
from nsprof.ranges import pipeline_range
from nsprof.sizes import Size, size_label

PAGEABLE, PINNED, STREAMS, GRAPH, WATCHED, COLD = "pageable", "pinned", "streams", "graph", "watched", "cold"
VARIANTS = (PAGEABLE, PINNED, STREAMS, GRAPH, WATCHED)
STREAMED = (STREAMS, GRAPH, WATCHED)  # the variants of row blocks on three streams
WATCH_SOURCE = "kernels/common/watch_rows.cu"
WATCH_BLOCKS, FILL_BLOCKS = 64, 264  # blocks of 256 threads for watch_rows and fill_sentinel


def host_inputs(size: Size, dtype: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A (M x K) and B (K x N) in pageable host memory, as a program would hold them."""
    m, n, k = size
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k), dtype=np.float32).astype(dtype),
            rng.standard_normal((k, n), dtype=np.float32).astype(dtype))


def relative_error(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Relative Frobenius error of C against A·B in float64 (NaN anywhere fails)."""
    reference = a.astype(np.float64) @ b.astype(np.float64)
    return float(np.linalg.norm(c.astype(np.float64) - reference) / np.linalg.norm(reference))


def library_gemm(cp, problem, precision: str = "fp32") -> SimpleNamespace:
    """C = A·B by cuBLAS's gemmEx on the current stream, called through ctypes so that a CUDA graph
    can hold it (CuPy's bindings refuse calls during a stream capture; nsprof.launch.capturable_cublas)."""
    from nsprof.launch.capturable_cublas import RowMajorGemm

    gemm = RowMajorGemm(problem.m, problem.n, problem.k, problem.A.data.ptr, problem.B.data.ptr, problem.C.data.ptr,
                        str(problem.A.dtype), precision=precision)
    return SimpleNamespace(run=lambda: gemm.run(cp.cuda.get_current_stream().ptr))


def row_blocks(m: int, chunks: int) -> list[tuple[int, int]]:
    """`chunks` row blocks of M, as equal as can be. (Shorter first and last blocks, to start the
    copy back sooner and shorten the tail, measured slower on the H200 with cuBLAS: 0.239 against
    0.228 ms at 1024^3, as cuBLAS picks a slower kernel for 341 rows;
    benchmarks/records/2026-11-22-h200-pipeline/h200-pipeline.md.)"""
    bounds = np.linspace(0, m, min(chunks, m) + 1).round().astype(int)
    return [(int(r0), int(r1)) for r0, r1 in itertools.pairwise(bounds) if r1 > r0]


class Pipeline:
    """The buffers and flows of one stage at one size. `flows[variant]()` runs the whole flow once
    (asynchronously, where it can); the result lands in `result[variant]`, a host array."""

    def __init__(self, stage: Stage, size: Size, tools, a: np.ndarray, b: np.ndarray, chunks: int):
        import cupyx

        cp = self.cp = require_cupy()
        self.stage, self.size, self.a, self.b = stage, size, a, b
        m, n, k = size
        dtype = a.dtype
        self.device = SimpleNamespace(m=m, n=n, k=k, A=cp.empty((m, k), dtype), B=cp.empty((k, n), dtype),
                                      C=cp.empty((m, n), dtype))
        self.pinned = {name: cupyx.empty_pinned(shape, dtype) for name, shape in (("A", a.shape), ("B", b.shape), ("C", (m, n)))}
        self.pinned["A"][...] = a
        self.pinned["B"][...] = b
        self.pageable_c = np.empty((m, n), dtype)
        launcher = (lambda problem: library_gemm(cp, problem, stage.precision.name)) if stage.kind.vendor_library else \
            (lambda problem: stage_launcher(stage, problem, tools))
        self.whole = launcher(self.device)
        self.blocks = row_blocks(m, chunks)
        self.block_launchers = [launcher(SimpleNamespace(m=r1 - r0, n=n, k=k, A=self.device.A[r0:r1], B=self.device.B,
                                                         C=self.device.C[r0:r1])) for r0, r1 in self.blocks]
        self.main = cp.cuda.Stream(non_blocking=True)
        self.to_device, self.compute, self.to_host = (cp.cuda.Stream(non_blocking=True) for _ in range(3))
        event = lambda: cp.cuda.Event(disable_timing=True)  # noqa: E731
        self.fork, self.arrived, self.computed = event(), [event() for _ in self.blocks], [event() for _ in self.blocks]
        self.joins = [event() for _ in range(3)]
        self.graphs: dict = {}  # CUDA graphs of `streamed` and `watched`, once capture(variant) has run
        self.result = {PAGEABLE: self.pageable_c, PINNED: self.pinned["C"], STREAMS: self.pinned["C"],
                       GRAPH: self.pinned["C"], WATCHED: self.pinned["C"]}
        self.flows = {PAGEABLE: self.pageable, PINNED: self.pinned_one_stream, STREAMS: self.streamed,
                      GRAPH: lambda: self.replay(GRAPH), WATCHED: lambda: self.replay(WATCHED)}
        self.bytes_in = a.nbytes + b.nbytes
        self.bytes_out = self.pageable_c.nbytes

    def stream_of(self, variant: str):
        """Where the flow starts and ends, so CUDA events around it time all of it."""
        return self.cp.cuda.Stream.null if variant == PAGEABLE else self.main

    def pageable(self) -> None:
        d = self.device
        d.A.data.copy_from_host(self.a.ctypes.data, self.a.nbytes)  # cudaMemcpy: returns when the copy is done
        d.B.data.copy_from_host(self.b.ctypes.data, self.b.nbytes)
        self.whole.run()  # on the default stream, which the synchronous copies also use
        d.C.data.copy_to_host(self.pageable_c.ctypes.data, self.pageable_c.nbytes)

    def copy(self, destination: int, source: int, nbytes: int, to_device: bool, stream) -> None:
        """cudaMemcpyAsync itself: CuPy's own copy methods refuse host copies inside a stream capture."""
        runtime = self.cp.cuda.runtime
        kind = runtime.memcpyHostToDevice if to_device else runtime.memcpyDeviceToHost
        runtime.memcpyAsync(destination, source, nbytes, kind, stream.ptr)

    def pinned_one_stream(self) -> None:
        d, p, s = self.device, self.pinned, self.main
        self.copy(d.A.data.ptr, p["A"].ctypes.data, p["A"].nbytes, True, s)
        self.copy(d.B.data.ptr, p["B"].ctypes.data, p["B"].nbytes, True, s)
        with s:
            self.whole.run()
        self.copy(p["C"].ctypes.data, d.C.data.ptr, p["C"].nbytes, False, s)

    def streamed(self, watched: bool = False) -> None:
        """Forked from main: B, then per block its A on the copy-in stream, its product on the
        compute stream once that A has arrived, its C on the copy-out stream once computed (issued
        block by block, so the first C is queued early); all three streams joined back to main.
        `watched`: A in one copy after B, and each product waits on watch_rows instead of an event;
        after the last product, A goes back to the sentinel (fill_sentinel) for the next flow."""
        d, p = self.device, self.pinned
        n, k, item = self.size[1], self.size[2], self.a.dtype.itemsize
        roles = (self.to_device, self.compute, self.to_host)
        self.fork.record(self.main)
        for stream in roles:
            stream.wait_event(self.fork)
        self.copy(d.B.data.ptr, p["B"].ctypes.data, p["B"].nbytes, True, self.to_device)
        if watched:
            self.copy(d.A.data.ptr, p["A"].ctypes.data, p["A"].nbytes, True, self.to_device)
        for (r0, r1), launcher, arrived, computed in zip(self.blocks, self.block_launchers, self.arrived, self.computed):
            if watched:
                self.watch_rows((WATCH_BLOCKS,), (256,), (d.A[r0:r1], np.int64((r1 - r0) * k * item // 4)),
                                stream=self.compute)
            else:
                self.copy(d.A[r0:r1].data.ptr, p["A"].ctypes.data + r0 * k * item, (r1 - r0) * k * item, True,
                          self.to_device)
                arrived.record(self.to_device)
                self.compute.wait_event(arrived)
            with self.compute:
                launcher.run()
            computed.record(self.compute)
            self.to_host.wait_event(computed)
            self.copy(p["C"].ctypes.data + r0 * n * item, d.C[r0:r1].data.ptr, (r1 - r0) * n * item, False, self.to_host)
        if watched:
            self.refill_a(self.compute)
        for stream, joined in zip(roles, self.joins):
            joined.record(stream)
            self.main.wait_event(joined)

    def refill_a(self, stream) -> None:
        """A back to the sentinel on `stream` (fill_sentinel), for the watched flow's next products to wait on."""
        a = self.device.A
        self.fill_sentinel((FILL_BLOCKS,), (256,), (a, np.int64(a.nbytes // 4)), stream=stream)

    def unwatchable(self) -> str | None:
        """Why the watched flow cannot run here, or None: watch_rows reads whole 16-byte words."""
        if self.size[2] * self.a.dtype.itemsize % 16:
            return (f"the watched flow reads A's rows in 16-byte words: K x {self.a.dtype.itemsize} bytes must be a "
                    f"multiple of 16 (K = {self.size[2]})")
        return None

    def capture(self, variant: str) -> None:
        """Capture `streamed` (GRAPH) or its watched form (WATCHED) as a CUDA graph, for replay(variant)."""
        watched = variant == WATCHED
        if watched:
            from nsprof.ladder.op_model import find_kernel
            from nsprof.launch.compile import load_kernel

            source = find_kernel(WATCH_SOURCE)
            self.watch_rows, self.fill_sentinel = load_kernel(source, "watch_rows"), load_kernel(source, "fill_sentinel")
            self.refill_a(self.main)  # A holds the sentinel before the first flow; each flow leaves it so
        self.main.begin_capture()
        try:
            self.streamed(watched)
        finally:
            self.graphs[variant] = self.main.end_capture()

    def replay(self, variant: str) -> None:
        if variant not in self.graphs:
            raise RuntimeError(f"the {variant} flow replays what capture({variant!r}) captured: capture it first")
        self.graphs[variant].launch(self.main)


def measure_pipeline(stage: Stage, size: Size, tools, *, chunks: int, repeat: int | None,
                     warmup: int | None, seed: int = 0, progress=lambda message: None) -> list[dict]:
    """One record per warm variant: verified on fresh inputs, then timed (see the module docstring)."""
    a, b = host_inputs(size, get_op(stage.op).dtype, seed)
    pipeline = Pipeline(stage, size, tools, a, b, chunks)
    tolerance = stage.tolerance(size)
    records = []
    for variant in VARIANTS:
        progress(f"{stage.stage} {variant}")
        record = {"op": stage.op, "stage": stage.stage, "size": size_label(size), "variant": variant,
                  "chunks": len(pipeline.blocks) if variant in STREAMED else 1,
                  "streams": 3 if variant in STREAMED else 1,
                  "bytes_in": pipeline.bytes_in, "bytes_out": pipeline.bytes_out, "tolerance": tolerance,
                  "status": "ok", "message": None, "rel_error": None, "median_ms": None}
        unavailable = pipeline.unwatchable() if variant == WATCHED else None
        if unavailable:
            record.update(status="not available", message=unavailable)
            records.append(record)
            continue
        if variant in (GRAPH, WATCHED):
            try:
                pipeline.capture(variant)
            except Exception as err:  # a stage whose launch cannot be captured (CuPy raises its own types)
                record.update(status="not available", message=f"stream capture failed: {err}")
                records.append(record)
                continue
        flow, stream, out = pipeline.flows[variant], pipeline.stream_of(variant), pipeline.result[variant]
        out[...] = np.nan  # poisoned: a flow that does not bring C back fails
        with stream:
            flow()
        stream.synchronize()
        error = record["rel_error"] = relative_error(out, a, b)
        if not error <= tolerance:
            record.update(status="failed", message=f"relative error {error:.3g} exceeds {tolerance:.3g}")
        else:
            with stream:
                timing = time_launches(flow, repeat, warmup, range_name=pipeline_range(stage.op, stage.stage, variant, size))
            record.update(timing.summary())
        records.append(record)
    return records


COLD_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from nsprof.ladder_runs.pipeline import cold_start
print(json.dumps(cold_start(t0, *json.loads(sys.argv[1]))))
"""


def cold_record(stage: Stage, size: Size, seed: int = 0, timeout_s: float = 600) -> dict:
    """The first flow in a fresh Python process, timed there on the wall clock (cold_start)."""
    argv = [sys.executable, "-c", COLD_CHILD, json.dumps([stage.op, stage.stage, list(size), seed])]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    record = {"op": stage.op, "stage": stage.stage, "size": size_label(size), "variant": COLD, "chunks": 1, "streams": 1}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {**record, "status": "failed", "message": f"the fresh process failed: {last}"}
    return {**record, **json.loads(done.stdout.strip().splitlines()[-1])}


def cold_start(t0: float, op: str, stage_name: str, size: list[int], seed: int) -> dict:
    """In a fresh process whose clock started at `t0`: CUDA context, buffers, the stage's module and
    the first pageable flow, each step on the wall clock (seconds); the host inputs are made first,
    outside the clock, as a program would already hold them."""
    from nsprof.ladder.registry import get_stage

    stage, dims = get_stage(op, stage_name), tuple(size)
    a, b = host_inputs(dims, get_op(op).dtype, seed)
    start = time.perf_counter()
    marks = {"python_import_s": start - t0}
    cp = require_cupy()
    cp.cuda.runtime.free(0)  # creates the context
    marks["context_s"] = time.perf_counter() - start
    from nsprof.launch.tools import launch_tools

    tools = launch_tools()
    step = time.perf_counter()
    m, n, k = dims
    device = SimpleNamespace(m=m, n=n, k=k, A=cp.empty((m, k), a.dtype), B=cp.empty((k, n), a.dtype), C=cp.empty((m, n), a.dtype))
    c = np.empty((m, n), a.dtype)
    marks["allocation_s"] = time.perf_counter() - step
    step = time.perf_counter()
    # a library stage is the call a fresh program makes (cuBLAS's gemmEx), never a tuning run
    launcher = library_gemm(cp, device, stage.precision.name) if stage.kind.vendor_library else \
        stage_launcher(stage, device, tools)
    marks["module_load_s"] = time.perf_counter() - step
    step = time.perf_counter()
    device.A.data.copy_from_host(a.ctypes.data, a.nbytes)
    device.B.data.copy_from_host(b.ctypes.data, b.nbytes)
    launcher.run()  # the first launch: cuBLAS creates its handle here
    device.C.data.copy_to_host(c.ctypes.data, c.nbytes)
    marks["first_flow_s"] = time.perf_counter() - step
    wall = time.perf_counter() - start
    error = relative_error(c, a, b)
    tolerance = stage.tolerance(dims)
    ok = error <= tolerance
    return {"status": "ok" if ok else "failed", "message": None if ok else f"relative error {error:.3g} exceeds {tolerance:.3g}",
            "rel_error": error, "tolerance": tolerance, "wall_ms": wall * 1e3,
            "bytes_in": a.nbytes + b.nbytes, "bytes_out": c.nbytes, **marks}
