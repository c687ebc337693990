"""The topics of `nsprof explain` about the matrix instructions' stages (nsprof.explain.topics holds
the rest and the lookup): the tensor cores and how they are fed, how a product's tiles fill the GPU
in waves, what a timed launch finds in the L2, and what Triton's compiler writes for the same tile."""

from __future__ import annotations

from nsprof.explain.topic import Topic

TENSOR_CORE_TOPICS: tuple[Topic, ...] = (
    Topic(
        "tensor-cores",
        "Matrix instructions do a whole tile of multiply-adds each; the work is feeding them: "
        "fragments, ldmatrix, swizzle, wgmma.",
        """\
A tensor-core instruction multiplies whole tiles: WMMA's m16n16k16 (h1-h4) is 4,096 multiply-adds
per warp, issued as two `HMMA.16816`; PTX `mma.sync.m16n8k16` (h5) is 2,048 per warp instruction;
Hopper's `wgmma.m64n256k16` (h6) is 262,144 per instruction of a 4-warp warpgroup, and runs
asynchronously while the warps go on. fp16 inputs, float32 accumulators: each element of C is
rounded to fp16 once, at the end (the seed tutorial accumulated in fp16, whose error grows with K).

The math is cheap; feeding it is the work. Operands of `mma.sync` must sit in registers in a fixed
fragment layout: h1 loads fragments straight from global memory with narrow loads, h2 onwards with
`ldmatrix`, which moves four 8x8 tiles of 16-bit values per instruction (at least 4 wavefronts,
one per tile, when conflict-free). Its 8 lanes of a phase read 8 rows of 16 bytes: unpadded rows
whose pitch is a multiple of 128 bytes put all 8 in the same banks (h3: 4- and 8-way conflicts).
h4 pads each row by 16 bytes; h5 permutes the 16-byte chunks of each row with an XOR of the row
(swizzle): conflict-free with no wasted bytes. h6 has no ldmatrix at all: TMA writes tiles in the
hardware's 128-byte swizzle and `wgmma` reads them from shared memory by descriptor.

`wgmma` is asynchronous: a warpgroup issues it, commits the group and goes on; `wgmma.wait_group`
later says which groups are done, and only then may their shared-memory stage be refilled. So the
kernels split the warps: a producer warpgroup issues TMA copies into a ring of stages, consumer
warpgroups issue `wgmma` on full stages, and mbarriers hand each stage back and forth. The layout is
the contract between the two: a matrix descriptor names a start address and the 1,024-byte stride
between 8-row x 128-byte swizzle atoms, and each k step moves the start by 32 bytes inside the
swizzled rows. An operand whose K runs along those 128-byte rows is K-major. For fp16 either
operand may instead be MN-major (h6 reads the row-major B that way, `imm-trans-b`); for TF32
(SGEMM's v11, `--op sgemm`) there is no transpose immediate: a shared-memory operand must be
K-major. v11's small tiles transpose B into an N x K matrix first and pay for it in their time; its
large tile instead computes C^T = B^T A^T, with A's rows as the shared-memory operand and B's tile
read into registers as the other one, which `wgmma` may take from registers in any layout the lanes
can load.

TMA reads a tile as box rows of 128 bytes. Where a matrix's rows are a whole number of 128-byte lines
long (fp16: K or N a multiple of 64), each box row is one line; otherwise every box row straddles two,
the L2 serves more sectors for the same bytes, and the loads fall behind the MMAs: at 3000 x 5000 x
2000 a k step of h6's 128x256 tile took 1,253 cycles against the 1,024 of tensor cores that never
wait. There h6 runs its tiles in clusters of two blocks that share B by TMA multicast (each loads
some of B's boxes into both), a third less L2 traffic per block: 85% of the library became 101%.

Past that, a kernel that keeps the tensor cores as busy as the library's can still trail it: under
ncu at locked clocks h6 and cuBLAS's kernel take the same cycles at 4096^3 and three other shapes,
but h6 issued an instruction in 21-33% of its cycles against the library's 12% and asked the L2 for
7-25% more sectors. At the card's power limit the same watts then buy a lower clock. Work between the MMAs
counts, if less than the counts suggest: a warpgroup index the compiler can prove the same in every lane
(broadcast from lane 0) keeps the MMA descriptors in uniform registers, and h6's ping-pong tile gained
0.5-1.9 points; carrying the ring's descriptors from one k tile to the next instead of rebuilding them
(a quarter to a half of the k loop's instructions) gained at most 0.7. How C leaves counts too: stored
by TMA, one store a 64 x 64 box, the ping-pong tile ran up to 1.4 points ahead of 16-byte stores by
every thread, except where a block has two tiles and the last one's stores run under no MMAs.""",
        op="hgemm",
        stages=("h1", "h2", "h3", "h4", "h5", "h6", "h7"),
        steps=(("h2", "h3"), ("h3", "h4"), ("h4", "h5"), ("h5", "h6")),
        other_ladders={"sgemm": (("v9", "v9t", "v10", "v11"), (("v10", "v11"),))},
        quantities=("tensor_flops", "tensor_hgmma_flops", "tensor_hgmma_tf32_flops", "smem_ldsm_instructions",
                    "smem_ld_conflicts", "tflops_per_s", "pct_of_compute_peak"),
        caveats=("SGEMM's v10 uses the same path in TF32 (`mma.sync.m16n8k8`, inputs rounded to a 10-bit mantissa): "
                 "`nsprof explain roofline` shows it against the FP32 stages.",
                 "A TF32 `wgmma` does half the multiply-adds of an fp16 one per cycle (k8 against k16 per "
                 "instruction), so v11's ceiling is about half of h6's.",),
        references=("PTX ISA: warp-level matrix instructions (mma, ldmatrix) and asynchronous warpgroup "
                    "matrix instructions (wgmma, matrix descriptors, swizzling modes)",),
    ),
    Topic(
        "wave-quantization",
        "A grid runs in waves of one block per slot: a last wave that fills few SMs leaves the rest idle, "
        "which is why 3072^3 is harder than 4096^3.",
        """\
A matrix product is cut into tiles of C, one block each, and the GPU runs as many blocks at once as
it has **slots**: SMs times the blocks one SM fits (one, for h6's 128x256 tile, which takes most of
an SM's shared memory and registers). The grid runs in **waves**: 288 tiles on 132 slots are two
full waves and a third of 24 blocks, during which 108 SMs have nothing to do. Every block takes
about as long as any other, so the product takes three rounds for 2.18 rounds of work: **wave
quantization**. It is worst where the tiles are few: a size a little past a whole number of waves,
or a problem with few rows (a decode step's 16 tokens make one row of tiles).

The cures change the cut, not the tile's code. **A smaller tile** makes more, shorter blocks and a
finer last wave, but reads more operand bytes per FLOP (a 128x128 tile loads as much A and B per
k step as a 128x256 one for half the products). **A tile sized to the problem**: 128x192 tiles cut
3072^3 into 384, 2.91 waves that keep 97% of the slots busy against 128x256's 73%; h6 takes them
where their waves keep a twentieth more of the slots busy. **Few rows**: 16 tokens fill an eighth of a
128-row tile, so h6 runs 64-row tiles there (half the tensor-core work of zero rows; at most 16 rows,
it loads only those rows of A and keeps more stages of B in flight) and splits K until one wave is as
full as it gets; at a few hundred rows it runs them where 128-row tiles would leave 15% of their rows
or more empty (300 x 3000 x 2000: 57% -> 77%). **Fewer rounds**: every round pays a block's start and
end again, so where a smaller tile's blocks would take two rounds, one round of a larger tile wins
even with SMs left idle: h6 runs 1000 x 1200 x 808 as 80 ping-pong 128x128 tiles, not 152 of 128x64 (65% -> 85% of the library; in
clusters of two that share B, since its rows straddle lines, 88%), and 1536^3 as 96 tiles of 128x192,
not 144 ping-pong tiles in two rounds (73% -> 84-86%).
**Split-K** cuts K as well, so that every tile
becomes several blocks whose partial sums are added at the end: more blocks, at the cost of the
adds and a workspace, a cost a shallow slice does not hide: at 128 x 4096 x 4096 h6's 32 tiles of
128x128 split in four ran a sixth slower than 128 tiles of 64x64 with K whole (the library's own cut
there), which run 112-114% of the library; h6 takes them where a split's slices would be at most
2048 deep. **Stream-K** keeps the whole tiles in the waves they fill and shares only the last, partial wave's tiles out:
every slot takes an even share of their k steps, and the blocks
that shared a tile add their sums (h6's stream-K tile does so where the last wave is at most 0.6
full). A **persistent** kernel launches one block per slot and walks the tiles itself, so the
schedule, not the hardware, decides who takes what; libraries pick the tile, the cluster and the
schedule per problem from many candidates.

The table below is the launch plan `nsprof bench` would run, counted in waves on the profile's
GPU: which sizes it cuts evenly, where the last wave is thin and what the plan does about it.""",
        space="waves",
        op="hgemm",
        stages=("h6",),
        other_ladders={"sgemm": (("v8", "v11"), ())},
        quantities=("tflops_per_s", "pct_of_compute_peak"),
        caveats=("The model counts blocks and assumes each takes the same time: it leaves out the shared tiles' "
                 "added sums, the L2's reuse (the tile order) and the clock, so it says where the time can go, not "
                 "how much a size loses.",
                 "Measured on an H200, paired with the fastest library: with 128x256 tiles h6 read 84.5% of it at "
                 "3072^3 (benchmarks/records/2026-11-29-h200-hgemm-sizes/h200-hgemm-sizes.md), with 128x192 99.8%; "
                 "97.0% at 4096^3 (3.88 waves) and 100.6% at 8192^3; 16 x 4096 x 4096 went from 38.1% (64 blocks of "
                 "128x64) to 127.8% (128 of 16x256, K split in 8; "
                 "benchmarks/records/2026-11-29-h200-hgemm-rows-overlap/h200-hgemm-rows-overlap.md, run 1); "
                 "1000 x 1200 x 808 from 65% (152 tiles of 128x64, two rounds) to 85% (80 ping-pong 128x128 "
                 "tiles, one round; benchmarks/records/2026-12-01-h200-hgemm-last-direct/h200-hgemm-last-direct.md, "
                 "section 6) and 88% (those tiles in 40 clusters of two that share B; "
                 "benchmarks/records/2026-12-01-h200-hgemm-straddled-rows/h200-hgemm-straddled-rows.md)."),
        references=("NVIDIA CUTLASS: the persistent tile scheduler and stream-K (Osama et al., 'Stream-K: "
                    "Work-centric Parallel Decomposition for Dense Matrix-Matrix Multiplication on the GPU', 2023)",
                    "CUDA C++ Best Practices Guide: occupancy and the number of blocks per SM"),
    ),
    Topic(
        "cold-inputs",
        "Timed over and over on one set of buffers, a kernel reads the L2, not DRAM: why nsprof bench rotates "
        "copies of its inputs, and what one set hid.",
        """\
A benchmark launches the same kernel hundreds of times. On one set of buffers, every launch after
the first finds in the L2 what the last one left there: the whole problem where it fits (a 1024^3
HGEMM touches 6 MiB, an H200's L2 holds 60), and where it nearly fits, the part the previous launch
read last. A program rarely runs that way: a model reads each layer's weights once a step, long after
the L2 last held them. Paired timing makes it subtler: when two kernels alternate on one set, each
starts on its partner's leftovers, and the one whose order of reads suits the other's gains. At
1 x 4096 x 14336 on an H200 (a decode step's projection) h6 read 113% of the library on one set and
100% on rotated sets, while each kernel timed alone took the same time both ways.

So `nsprof bench` gives each timed launch cold inputs. While a size runs, every launch it times
(the library's tuning, the stage, `torch.mm`, the pairs) first moves the problem to the next of
several sets of its buffers (its own and copies at other addresses), as many as keep three L2s of
other traffic between two uses of one set; from 4 L2s up, one set (what a launch finds left over is
a small share of what it moves). Each GPU record says how many sets its launches used
(`input_sets`), the table's caption how its inputs met the L2, and `--warm-inputs` times on one set.
Triton's `do_bench` gets cold inputs another way, clearing the L2 before every run; rotating copies
keeps the GPU doing only the products between timed launches, as a program's steady state does.

What is cold is not only the data. A TMA kernel that reads its tensor maps from global memory (a map
per buffer) finds the map cold too, and its first load waits for the map before it waits for the
data. h6 asks for its maps as a block starts, before it sets up its barriers: on an H200 that gained
1-2.5 points of the library at 1024^3 on cold inputs.

The table is what the rule gives at this ladder's sizes on the profile's GPU.""",
        space="inputs",
        op="hgemm",
        stages=("h6", "h7"),
        other_ladders={"sgemm": (("v8", "v9"), ()), "sgemv": (("s6", "s7"), ())},
        caveats=("A padded copy, which a launch writes from the inputs right before its kernel reads it, is warm; "
                 "a buffer a launcher makes once from them (SGEMV's transposed A) gets one per set.",
                 "Problems under about 3 MiB (on a 60 MiB L2) stay partly warm: 64 sets at most.",
                 "Measured on an H200, paired with the fastest library (benchmarks/records/"
                 "2026-11-30-h200-hgemm-cold-inputs): on one set h6 read 7-16 points more at the decode shapes "
                 "and 8 more at 1024^3; from 4 L2s up the two ways agreed within their spread. The tensor maps asked "
                 "for early: benchmarks/records/2026-12-01-h200-hgemm-early-maps."),
        references=("NVIDIA Hopper tuning guide: the L2 cache",
                    "triton.testing.do_bench: the L2 cleared before each timed run"),
    ),
    Topic(
        "triton",
        "A Triton kernel states the tile and the dot; the compiler writes the pipeline: how close it "
        "comes to the hand-written stage and cuBLAS, and why.",
        """A Triton kernel is written per block of the output: load a tile, `tl.dot` it, store it. Everything
the CUDA ladder does by hand below that line, Triton's compiler does: the shared-memory layout and
its swizzle, the vector width of each load, the software pipeline of `num_stages` buffers filled by
`cp.async` (or TMA, when the kernel reads through tensor descriptors), the fragment layouts, and on
Hopper the choice of `wgmma` for `tl.dot`. What is left to the author is the tile (BLOCK_M x BLOCK_N x
BLOCK_K), the warps and stages, the order of the tiles (GROUP_M rows at a time, for L2 reuse), and
the precision: `tl.dot` on float32 is TF32 unless told `input_precision="ieee"`.

So a Triton stage is tuned, not written: nsprof compiles each declared configuration, verifies it
and times it before the stage is timed, and keeps the fastest. The measured gap to the hand-written
stage beside it is what the compiler did not do: h6 (wgmma fed by TMA, warp-specialized producer and
consumers, persistent) against h8; v11 against v12t, where TF32 `wgmma` needs its shared-memory
operands K-major and v12t transposes B first (fed the row-major B, Triton shuffled every tile through
registers and ran at a quarter of cuBLAS; v11's large tile reads B into registers as the MMA's other
operand instead); s6 against s8, where s8 lacks s6's split over K and falls
to half of cuBLAS when rows are few. At small sizes a Triton launch is host-bound: its Python launch
path takes tens of microseconds, longer than the kernel.""",
        op="hgemm",
        stages=("h6", "h7", "h8"),
        steps=(("h6", "h8"),),
        other_ladders={"sgemm": (("v8", "v9", "v12", "v9t", "v11", "v12t"), (("v8", "v12"), ("v11", "v12t"))),
                       "sgemv": (("s6", "s7", "s8"), (("s6", "s8"),))},
        quantities=("tflops_per_s", "pct_of_compute_peak", "tensor_flops", "tensor_hgmma_flops", "tensor_hgmma_tf32_flops",
                    "registers", "smem_ld_conflicts", "dram_pct_of_peak"),
        caveats=("The stage's tuning picks by 20 launches after 5 warm-up; on a noisy GPU two configurations within "
                 "a few percent can swap between runs (benchmarks/records/2026-11-26-h200-triton/h200-triton.md shows "
                 "v12t's do).",
                 "A Triton stage's kernel name is its @triton.jit function's: the SGEMM and HGEMM stages share "
                 "`matmul_kernel`, told apart in a capture by their stage's NVTX range and launch configuration."),
        references=("Triton tutorials 03 (matrix multiplication) and 09 (persistent matmul with TMA descriptors)",
                    "PTX ISA: wgmma operand layouts (K-major and MN-major, TF32's K-major-only rule)"),
    ),
)
