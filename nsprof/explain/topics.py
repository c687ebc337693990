"""The topics of `nsprof explain`: teaching text, kept as data apart from the code that computes.

Each topic names what the explanation computes and shows beside its text: the ladder stages and
optimization steps it is about, the measured quantities (keys of
nsprof.explain.evidence.QUANTITIES), worked examples for the access models, caveats, and the
sources its rules rest on. The text is Markdown; numbers belong in the computed parts.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from nsprof.errors import UsageError
from nsprof.explain.topic import Topic
from nsprof.explain.topics_tensor_cores import TENSOR_CORE_TOPICS

if TYPE_CHECKING:
    from nsprof.explain.explain_types import TopicSummary
    from nsprof.explain.page import Explanation


_MEASURE_N_WAY = ("Nsight Compute's bank-conflict counters (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld`/`_st`) "
                  "count only wavefronts above the instruction's minimum: a conflict-free 128-bit load shows 0 conflicts "
                  "while taking 4 wavefronts. nsprof therefore reads the degree from wavefronts per instruction "
                  "(`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld` / `smsp__sass_inst_executed_op_shared_ld`, the "
                  "'n-way' column of `nsprof analyze`), which equals the n-way conflict only for 32-bit accesses.")
_AGGREGATE = ("Each counter adds up every shared load (or store) the kernel executes: a kernel's measured wavefronts "
              "per instruction is the instruction-weighted mean over all its shared accesses. The prediction is made "
              "for the same mix (every access the stage declares in the registry, with its count), not for one access.")
_SASS = ("Declared accesses follow the SASS, not the source: the compiler turns v2's `As[ty][k]` and v3/v4's "
         "contiguous reads into 128-bit loads (`LDS.128`), and the measured instruction counts confirm it.")
_STORE_EXCESS = ("Measured store wavefronts exceed the prediction by a few percent even where every store is "
                 "conflict-free (v2..v4), and the excess changes from run to run: compare the columns. The model "
                 "does not explain it; `l1tex__data_bank_conflicts_type_arbitration` (conflicts from arbitration between "
                 "L1 data clients) is a counter to collect when investigating it.")
_WARP0 = ("The model evaluates warp 0 of a block; in the ladder's kernels the other warps repeat its pattern at "
          "shifted addresses, with the same conflict degree.")
_PAIRS_64 = ("The 64-bit rules, and same-address pairing for 64-bit loads, follow NVIDIA's description; the H200 "
             "fixtures verify 32- and 128-bit accesses only.")

TOPICS: dict[str, Topic] = {t.name: t for t in (
    Topic(
        "gpu-vs-cpu",
        "Why the GPU wins, and by what factor: the ratio of the two machines' roofs, the one the computation's FLOPs "
        "per byte selects.",
        """\
The tutorials start on the CPU, with a loop, and report the GPU's speed-up over it. Two ceilings
say what that speed-up can be: the **compute roof** (FLOP/s with every core's vector units busy,
which the CPU's BLAS and the GPU's FMA benchmark reach) and the **memory roof** (bytes per second
from DRAM). A GPU has many times more of both, but not the same multiple of each.

Which ratio applies is set by **arithmetic intensity**, FLOPs per byte moved, against each
machine's **ridge point**, its compute roof over its bandwidth. SGEMV uses each element of A in one
multiply-add, 2 FLOPs per 4 bytes: below either ridge, both machines wait on memory, and a GPU
kernel at its roof beats a CPU program at its own by the bandwidth ratio. A large SGEMM can reuse
each element many times: it is compute-bound on both, and the ratio is the FP32 one. The measured
speed-up over the CPU's BLAS is that ratio times how close each side came to its own roof.

The reuse has to be built. The naive loop loads two floats for every multiply-add, 2 FLOPs per 8
bytes, below both ridges. **Tiling** raises it: a block (or a core) that computes a T x T tile of C
loads a T x T tile of A and one of B into fast memory (shared memory, registers, the caches), 2T²
floats, and does T³ multiply-adds with them: 2T³ FLOPs per 8T² bytes, **T/4 FLOP per byte**. A
kernel turns compute-bound where T/4 reaches the ridge, T ≥ 4 x ridge: a higher ridge, as the
GPU's is, needs larger tiles.

The serial loop sits far below even the CPU's own roof: one core of many, one scalar multiply-add
at a time, and (in SGEMM) B walked down its columns, re-read for every row of C. Most of a speed-up
over it is the CPU left idle; the speed-up over the CPU's BLAS is the GPU's own.""",
        stages=("v0", "v0b", "v0blas", "v1", "v11"),
        other_ladders={"sgemv": (("s0", "s0b", "s0blas", "s1", "s6"), ())},
        caveats=(
            "The CPU's roofs are measured on the host that ran the CPU stages (`nsprof ceilings --cpu`, saved beside "
            "them as ceilings-cpu.json): its FP32 roof is what its BLAS reaches on a large product, its bandwidth a "
            "large streaming copy, not the vendor's peaks. A CPU stage can pass them on a smaller problem whose "
            "operands stay in the caches.",
            "The CPU stages are timed on the host's wall clock around each call; the GPU stages by their kernels' "
            "time under nsys (else ncu's durations). Copies between host and GPU are in neither: a whole computation "
            "that must move its operands across the bus is slower (see the pipeline topic).",
            "A tile's FLOPs per byte count the traffic into the tile's memory from the level below (global memory "
            "through L2 on the GPU). Tiles that other blocks read again hit in L2, so DRAM sees fewer bytes.",
            "The fastest GPU stage may compute in TF32 on the tensor cores, another roof and other rounding: the "
            "comparison with the ratio of the roofs takes the fastest stage of the CPU's own precision (FP32).",
        ),
        references=(
            "The seed tutorials' CPU version: the m, n, k triple loop on one core (kernels/sgemm/v0_cpu_serial.c), "
            "and their speed-up over it",
            "CUDA C++ Programming Guide: shared memory, the matrix multiplication with and without it (each element "
            "read from global memory once per tile instead of once per product)",
            "Williams, Waterman and Patterson, 'Roofline: an insightful visual performance model for multicore "
            "architectures', Communications of the ACM, 2009: ridge points",
        ),
    ),
    Topic(
        "bank-conflicts",
        "Shared memory serves one 4-byte word per bank per wavefront; lanes needing different words of one bank wait in turn.",
        """\
Shared memory is split into **32 banks, 4 bytes wide**: the word at byte address *a* lives in bank
(a / 4) mod 32. One pass of the shared-memory pipe, a **wavefront**, delivers at most one word from
each bank (128 bytes), to every lane that asked for that word. A warp instruction therefore takes as
many wavefronts as the most *distinct* words any one bank must deliver: its **n-way** bank conflict.
Lanes that ask for the *same* word never conflict: a load broadcasts the word, a store keeps one write.

Wider accesses are split into **phases** first: 64-bit accesses are served a half-warp (16 lanes,
128 bytes) at a time, 128-bit accesses a quarter-warp (8 lanes) at a time. Only lanes of one phase
can conflict, and each phase takes at least one wavefront, so even a conflict-free access takes 2
(64-bit) or 4 (128-bit) wavefronts. A **load** whose lanes come in same-address pairs (every lane n
with lane n^1, or every lane n with lane n^2) is packed twice as densely: its phases are twice as
large, and a 128-bit load takes at least 2 wavefronts.

Fixes: pad rows so that consecutive rows start in different banks (a 32x32 float tile declared
`[32][33]`: a column then covers all 32 banks), change which lane takes which index, or XOR-swizzle
the column with the row.""",
        space="shared",
        stages=("v2", "v3", "v4", "v5", "v6", "v7", "v8"),
        steps=(("v3", "v4"), ("v5", "v6")),
        examples=(("32x32", "column", 4), ("32x33", "column", 4), ("32x32", "row", 4), ("32x32", "broadcast", 4),
                  ("32x32", "row", 8), ("32x32", "row", 16), ("32x32", "broadcast", 16), ("32x32", "column", 16)),
        caveats=(_MEASURE_N_WAY, _AGGREGATE, _SASS, _STORE_EXCESS, _WARP0, _PAIRS_64),
        references=(
            "NVIDIA developer forum, 'Unexpected shared memory bank conflict' (thread 77228): same-address lane "
            "pairs halve the wavefronts of wide loads; the return path moves 128 bytes per cycle",
            "NVIDIA developer forum, 'Clarification: bank_conflicts metric vs wavefronts for shared memory LDS.128' "
            "(thread 359822): conflicts are wavefronts above the minimum of 4",
            "Nsight Compute Kernel Profiling Guide: requests, wavefronts and the L1TEX shared-memory metrics",
        ),
    ),
    Topic(
        "coalescing",
        "A warp's global access costs the 32-byte sectors it touches; adjacent lanes on adjacent addresses touch the fewest.",
        """\
A warp's global load or store is **one request** to L1. L1 and L2 move data in **32-byte sectors**,
four to a **128-byte line**, and a request costs every sector it touches, fetched whole even when the
lanes use 4 of its 32 bytes. What matters is how many distinct sectors (and lines) the 32 addresses
fall in, not how many bytes the lanes asked for: the fewest when consecutive lanes take consecutive
addresses.

Fixes: let `threadIdx.x` run along the contiguous (last) index of a row-major array; stage transposes
through shared memory so that both the global read and the global write walk rows; use 16-byte
vector accesses (`float4`) where addresses are 16-byte aligned: as many sectors for the same bytes,
a quarter of the instructions.""",
        space="global",
        stages=("v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"),
        steps=(("v3", "v4"),),
        other_ladders={"sgemv": (("s1", "s2", "s5"), (("s1", "s2"), ("s2", "s5")))},
        quantities=("global_ld_sectors_per_request", "global_st_sectors_per_request", "l1_mbytes"),
        examples=(("1024x1024", "row", 4), ("1024x1024", "column", 4), ("1024x1024", "row", 16),
                  ("1024x1024", "broadcast", 4)),
        caveats=(
            "Sectors are counted for an array that starts on a 128-byte boundary (`cudaMalloc` returns 256-byte "
            "aligned memory); an offset pointer can add a sector or a line per row.",
            "`l1tex__t_bytes` (bytes requested from L1) counts whole sectors for every global request of the kernel; "
            "it is what the declared accesses predict. Sectors per request (`l1tex__t_sectors_pipe_lsu_mem_global_op_ld` "
            "/ `l1tex__t_requests_pipe_lsu_mem_global_op_ld`) are not in nsprof's default metric set: add them with "
            "`nsprof profile --metrics default,<names>`.",
            "Sectors requested measure traffic into L1, not DRAM: re-reads that hit in L1 or L2 (most of v1's) never "
            "reach DRAM.",
            _WARP0,
        ),
        references=("Nsight Compute Kernel Profiling Guide: sectors, requests and the L1TEX global-memory metrics",
                    "CUDA C++ Best Practices Guide: coalesced access to global memory"),
    ),
    Topic(
        "shared-memory-tiling",
        "Stage a tile of each operand in shared memory once, then reuse every loaded element many times.",
        """\
In v1 every multiply-add requests its two operands from global memory, and only the caches
provide reuse. A block that computes a T x T tile of C needs T rows of A and T columns of B: it can
copy them in T x T tiles into **shared memory**, synchronise, and let each thread read its operands
from there. Each element fetched from global memory is then used T times, so global (L1/L2) traffic
falls by about T.

What tiling does not fix: with one output per thread, each multiply-add still needs two shared-memory
loads, so the shared-memory pipe and the two barriers per tile now limit the kernel (see
register-tiling).""",
        stages=("v1", "v2"),
        steps=(("v1", "v2"),),
        quantities=("l1_mbytes", "l2_mbytes", "smem_ld_instructions", "tflops_per_s"),
        caveats=(
            "`l1tex__t_bytes` counts whole 32-byte sectors per request: v1's A read (one address per warp) already "
            "costs one sector, not 32 floats, so L1 bytes fall by less than the tile's 32.",
        ),
    ),
    Topic(
        "register-tiling",
        "Each thread computes a block of outputs from operands held in registers, so each shared load feeds many FMAs.",
        """\
With one output per thread, every multiply-add needs one value of A and one of B from shared
memory: two loads per FMA. If a thread owns a TM x TN block of C, then per step of k it loads TM
values of A and TN of B into registers and performs TM x TN multiply-adds with them: TM x TN / (TM + TN)
FMAs per loaded value, and the shared-memory pipe stops being what limits the math.

The cost is registers: TM x TN accumulators plus the operands per thread. More registers per thread
mean fewer resident warps (see occupancy); the independent FMAs of one thread hide latency instead.""",
        stages=("v2", "v3"),
        steps=(("v2", "v3"),),
        quantities=("smem_ld_instructions", "flops_per_smem_ld", "registers", "pct_of_compute_peak", "tflops_per_s"),
    ),
    Topic(
        "vectorized-loads",
        "One 16-byte load or store (float4) moves what four 4-byte ones did, for a quarter of the instructions.",
        """\
`LDG.128`, `LDS.128` and `STG.128` move 16 bytes per lane. The bytes moved stay the same; the
instructions issued, and the issue slots and memory requests they take, fall by four.

Requirements: the address must be a multiple of 16 bytes (a `float4` starts at a multiple of 4
floats, and padded rows must stay multiples of 4 floats long), and the four values a thread needs
must be contiguous: why v5 stores the A tile transposed. Shared memory serves 128-bit accesses a
quarter-warp at a time, so a conflict-free `LDS.128` still takes 4 wavefronts (2 when lanes pair up):
wide loads save instructions, not shared-memory bandwidth.""",
        stages=("v4", "v5"),
        steps=(("v4", "v5"),),
        quantities=("smem_ld_instructions", "smem_ld_wavefronts", "smem_st_instructions", "registers", "tflops_per_s"),
        caveats=("v5 also changes the thread-to-output map and stores A transposed; its time change is not the "
                 "vector width alone.",),
    ),
    Topic(
        "double-buffering",
        "Load the next tile while computing on the current one, so global-memory latency overlaps the math.",
        """\
In v7 each K tile begins with global loads that the whole block waits for, then a barrier, then
the math, then another barrier. With **two shared buffers**, the next tile is fetched into one while
the current tile is computed from the other: the loads' latency (hundreds of cycles) passes behind
hundreds of FMAs, and one barrier per tile remains.

Two ways to fetch: through registers (each thread loads the next tile into registers before its
FMAs and stores them to shared memory after), or with **cp.async** (sm_80 on), which copies global
to shared memory in the background and is waited for only at the next tile. v8 uses cp.async: no
register holds a tile in flight and no shared store is issued. A 16-byte cp.async moves 4
consecutive floats as they lie, so v8 first transposes A (a short kernel timed with the stage) to
have its tile arrive in the k-major layout the FMAs read.

Costs: twice the shared memory, and (through registers) the registers that hold the tile in flight.""",
        stages=("v7", "v8"),
        steps=(("v7", "v8"),),
        quantities=("blocks", "waves", "stall_long_scoreboard", "stall_barrier", "occupancy_achieved_pct", "tflops_per_s"),
        caveats=("Compare launches of equal grids: at 1024^3 v8 also splits K four ways (256 blocks for 132 SMs "
                 "against v7's 64), so its time change there is not double buffering alone.",),
    ),
    Topic(
        "occupancy",
        "How many warps an SM holds at once: the tightest of its register, shared-memory, warp and block limits.",
        """\
An SM keeps as many blocks resident as its tightest limit allows. On compute capability 9.0 (H100,
H200): 65,536 registers per SM, allocated per warp in units of 256 and split over 4 schedulers;
64 warps; 32 blocks; up to 228 KB of shared memory. **Theoretical occupancy** is resident warps
over 64; **achieved occupancy** is what the SM averaged while running.

Occupancy is a means, not a goal: resident warps give the scheduler others to issue from while one
waits. A kernel whose threads carry much independent work (register tiling) can run well at 12.5%.
A grid smaller than the GPU (64 blocks on 132 SMs) leaves SMs idle whatever the occupancy.

The same holds at the end of a large grid: tiles run in **waves** of one (or a few) blocks per SM, and
when the tiles are not a whole number of waves, the last wave leaves SMs idle. **Stream-K** shares that
wave's tiles out by k steps, so that every SM ends together: v8's blocks add their pieces of a tile into
C with atomics (float32 C); HGEMM's h6 writes float16 C, so its pieces add float32 sums in L2 and the
last piece to finish stores C. Sharing costs those sums, so it pays where the last wave is nearly
empty; `nsprof bench`'s tile column says `/tailN` where N tiles were shared.""",
        stages=("v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10"),
        # what the topic is about first: a narrow terminal drops columns from the right
        quantities=("occupancy_theoretical_pct", "occupancy_achieved_pct", "registers", "threads_per_block",
                    "blocks_per_sm_registers_model", "blocks_per_sm_registers_ncu", "blocks", "waves"),
        caveats=("The shared-memory limit depends on the carveout the driver chose for the launch; nsprof takes it "
                 "from Nsight Compute.",),
        references=("CUDA C++ Programming Guide: technical specifications per compute capability",),
    ),
    Topic(
        "gpu-idle",
        "Why the GPU waits: launch overhead, synchronizations, the host's own work, blocking copies and module "
        "loading, each measured in a program's capture with what fixing it can save.",
        """\
A GPU runs what the host has queued for it. When the queue empties, it waits, and no kernel
optimization wins that time back. An LLM decoding token by token launches hundreds of kernels of
a few microseconds each; the host needs 15-30 us of Python and CUDA calls to launch each one, so
the GPU finishes every kernel before the next arrives and sits idle most of the time
(**host-bound: launch overhead**). CUDA graphs launch a whole step at once.

A **synchronization** (`.item()`, `.cpu()`, `cudaStreamSynchronize`) makes the host wait until the
GPU has finished everything queued: afterwards nothing is queued, and the GPU waits while the host
does its next piece of work. What it costs is at most the time the host sat blocked while the GPU
still worked: without the wait, the host would have spent that time on what it did afterwards.

A copy from **pageable memory** blocks the host and moves at a fraction of the bus's rate; pinned
memory and asynchronous copies fix both. **Module loading** (CUDA loads each kernel's code at its
first launch) and allocation inside the loop stall the host too.

nsprof splits the GPU's idle time over the program's steady state by what held up the next piece
of work: its launch call came after the GPU went idle (the host's fault: after a wait, with module
loading, in a short gap between launches, or in a long stretch of the host's own code), or it was
queued already and waited on something else. A fix saves no more than the idle time it caused.

Even with the host ahead, two kernels queued back to back leave the GPU idle between them while the
second is launched and the first's writes are flushed: on an H200, 1.4 us between HGEMMs of 6.1 us
at 1024^3. A **programmatic dependent launch** (cudaLaunchKernelEx with programmatic stream
serialization; the kernel waits in griddepcontrol.wait before it touches memory) launches the second
as the first's blocks exit: nsprof's h6 went from 7.45-7.75 to 6.1-6.3 us a launch there. A CUDA event
between the two keeps them apart, so only a chain of launches shows it (`nsprof bench --back-to-back`).""",
        caveats=(
            "Under nsys every CUDA call costs more: tracing added about half to an eager decode's host time on an "
            "H200 (benchmarks/records/2026-11-28-h200-host-side/h200-host-side.md), so a captured program looks more "
            "host-bound than it runs.",
            "Savings overlap: once the launches are graphed, a synchronization may become the next wait.",
            "Between CUDA calls the host side sees what the host did only through CPU samples (nsys takes them "
            "unless told `-s none`): a sample every millisecond or two of a running thread, with a native call "
            "chain, so Python's own functions read as the interpreter, and time spent waiting shows in no sample.",
            "Without markers, the steady state is the loop found in the GPU work: the repeating sequence of "
            "kernels, graphs and copies; start-up and compilation before it are judged apart.",
        ),
        references=(
            "Nsight Systems: the CUDA API, synchronization and GPU-gap analyses (nsys analyze -r cuda_api_sync, "
            "gpu_gaps)",
            "Holistic Trace Analysis: idle time breakdown (host wait, kernel wait, other)",
            "PyTorch: CUDA graphs (torch.cuda.CUDAGraph) and torch.compile(mode='reduce-overhead')",
            "CUDA C++ Programming Guide: programmatic dependent launch and synchronization",
        ),
    ),
    Topic(
        "pipeline",
        "The whole flow, host to device and back: pageable copies are staged, streams and the copy engines overlap, "
        "the bus bounds it.",
        """\
A kernel is only part of a GPU computation: its inputs cross the bus (PCIe, about 55 GB/s each way
on the H200) and its result crosses back. For a 1024^3 SGEMM that is 12 MiB against a 0.06 ms
product, so the flow is bounded by the bus, not the GPU.

**Pageable memory** (a plain `malloc`, a NumPy array) can be moved by the operating system, so the
GPU cannot read it directly: the driver copies it into a pinned staging buffer and from there over
the bus, chunk by chunk, and `cudaMemcpy` returns only when it is done. **Pinned memory**
(`cudaMallocHost`, `cupyx.empty_pinned`) is copied by the GPU's copy engines directly, at the bus's
full rate, and asynchronously: the call returns at once and the copy runs in its stream.

The GPU has separate **copy engines** for each direction, so a host-to-device copy, a
device-to-host copy and kernels can all run at once, if they are in different **streams** and
nothing orders them. Split the work into blocks: while block i is multiplied, block i+1 arrives
and block i-1 leaves. Copies in the same direction share the bus, so they are best issued in order
on one stream. The flow is then bounded by the larger of the bytes in and the bytes out over the
bus's rate (the floor `nsprof pipeline` shows), plus the last block's product and copy, which
nothing can overlap. A **CUDA graph** replays the whole schedule with one launch, removing the
host's time to issue dozens of calls.

Every block also costs a hand-over: a smaller copy runs below the bus's rate, and an event between
streams takes a few microseconds. The **watched** variant sends A as one copy at the full rate onto
rows filled with a sentinel value, and a small kernel on the product stream waits until a block's
rows no longer hold it before that block's product runs: a copy fills its buffer front to back, so
the first blocks are multiplied while the rest is still in flight. What is left is set by B, which
every block of C needs whole before any of C can go back.""",
        caveats=("The floor uses the pinned bandwidths `nsprof ceilings` measured; without them it is not shown.",
                 "Under nsys the host issues calls more slowly: the breakdown's idle time includes some tracing overhead.",
                 "Copies in both directions at once do not each keep their full rate: the floor, which assumes they "
                 "do, is a bound no flow reaches (benchmarks/records/2026-11-22-h200-pipeline/h200-pipeline.md measures "
                 "by how much)."),
        references=("CUDA C++ Best Practices Guide: pinned memory, asynchronous transfers and overlapping transfers "
                    "with computation",),
    ),
    Topic(
        "roofline",
        "A kernel is bounded by peak FLOP/s or by bytes times bandwidth; arithmetic intensity says which.",
        """\
**Attainable FLOP/s = min(peak FLOP/s, intensity x peak bandwidth)**, where intensity is FLOPs per
DRAM byte. The ridge point, peak FLOP/s over peak bandwidth, separates memory-bound kernels (left of
it) from compute-bound ones (right). A kernel far below both roofs is limited by something else:
latency, instruction issue, shared memory.

SGEMM moves at least 4(MK + KN + MN) bytes for 2MNK FLOPs; at large sizes that is far right of the
ridge, so the ladder climbs toward the FP32 roof, and v10 moves to another roof (tensor cores).""",
        stages=("v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10"),
        quantities=("tflops_per_s", "intensity_flop_per_byte", "pct_of_compute_peak", "dram_pct_of_peak"),
        caveats=(
            "Peaks are datasheet numbers unless `nsprof ceilings` measured them (the facts say which); measured "
            "ceilings are lower (H200 copy: 4.25 of 4.8 TB/s).",
            "Operands that stay in the 60 MB L2 between launches make measured DRAM bytes smaller than the minimum, "
            "and intensity higher than the formula's.",
        ),
    ),
    Topic(
        "float-sums",
        "Float32 sums in another order give other results: check against float64 with a relative tolerance.",
        """\
Floating-point addition is not associative: every addition rounds to the nearest float32 (a
relative error of at most 2^-24), and which sums get rounded depends on the order. s1 adds a row's
K products one after another; s2 splits them over 16 warps and adds the 16 partial sums; s5 and s6
keep a partial sum per lane and add them in a butterfly of shuffles; cuBLAS uses its own order. All
compute the same y to within rounding, and none of them exactly: for random data the error of a
K-term sum grows like sqrt(K) x 2^-24 (like K x 2^-24 at worst), relative to the size of the sum.

So two correct kernels disagree in their last bits, more as K grows, and an absolute comparison such
as `|a - b| < 1e-6` says nothing: on large integer-valued data the seed tutorial's three versions
"disagreed" at K = 12,800, where float32 cannot even hold every partial sum exactly. nsprof compares
each stage with a float64 reference on fresh random data, by ||y - ref|| / ||ref||, against a
tolerance that grows with sqrt(K).""",
        op="sgemv",
        stages=("s1", "s2", "s5", "s6", "s7"),
        references=("Higham, Accuracy and Stability of Numerical Algorithms, ch. 4: summation",),
    ),
    *TENSOR_CORE_TOPICS,
)}


def get_topic(name: str) -> Topic:
    if name not in TOPICS:
        close = difflib.get_close_matches(name.lower(), list(TOPICS), n=1)
        guess = f"did you mean {close[0]}? Or choose" if close else "choose"
        raise UsageError(f"unknown topic '{name}'", f"{guess} one of: {', '.join(TOPICS)} (see nsprof explain --list)")
    return TOPICS[name]


def topic_list() -> Explanation:
    """The topics as an explanation (a table of names and summaries): needs none of the models."""
    from nsprof.explain.page import Explanation
    from nsprof.render.document import Table

    rows: list[TopicSummary] = [{"topic": t.name, "summary": t.summary} for t in TOPICS.values()]
    table = Table("Topics (nsprof explain TOPIC)", (("topic", "topic", ""), ("summary", "summary", "")), rows)
    return Explanation("nsprof explain", "Topics, each explained with this ladder's own numbers.",
                       [table], {"topics": rows})
