// h6 wgmma + TMA: Hopper's own GEMM path. TMA fills 128-byte-swizzled shared memory, warpgroup
// MMAs (wgmma.mma_async m64nNk16, f16 in, f32 accumulators) read it there, and the warps are
// specialised: one producer warpgroup, two consumer warpgroups.
//
// Launch configurations (tiles, threads, shared memory): nsprof/ops/hgemm.py.
//
// What changed since h5 (mma.sync m16n8k16 on ldmatrix fragments, a 4-stage cp.async ring,
// 128x256 blocks of 8 warps): there every warp copies its A and B fragments from shared
// memory into registers (ldmatrix, 8 per 32 MMAs) and every thread issues cp.async copies
// and their address math, all competing with the MMAs for issue slots. Here
//  * the tensor memory accelerator (TMA) copies whole tiles: one thread issues one
//    cp.async.bulk.tensor per box, the hardware does the addressing, writes the tile in the
//    128-byte swizzled layout, and counts the bytes on an mbarrier (complete_tx);
//  * wgmma reads both operands straight from shared memory through 64-bit matrix
//    descriptors: one instruction computes a 64 x BN x 16 product for a whole warpgroup
//    (m64n256k16 = 64 mma.sync m16n8k16 equivalents), asynchronously, so no register
//    fragments of A or B exist and the issuing warps are free while the tensor cores work;
//  * warp specialisation: warpgroup 0 only waits for free stages and issues TMA (after
//    setmaxnreg.dec hands most of its registers back), warpgroups 1 and 2 only wait for full
//    stages and issue wgmma (setmaxnreg.inc gives them 232 registers: 128 accumulators for
//    a 64x256 slice plus addressing). Stages are handed over with full/empty mbarriers, so no
//    block-wide __syncthreads is in the main loop;
//  * persistent tiles: the 128x256 / 128x128 entries run one block per SM, each walking
//    tiles in groups of 16 row-tiles (L2 reuse of B across a wave); while the consumers
//    convert and store one tile, the producer already loads the next one;
//  * hgemm_h6_cl2_256x256: the same kernel in clusters of two blocks (two vertically
//    adjacent 128x256 tiles that share B); each block fetches half of B's tile and TMA
//    multicasts it to both, so L2->SM traffic per tile drops from 48 to 32 KB per k step.
//    Where A's and B's rows are whole 128-byte lines it gains nothing: its form with TMA stores of C,
//    hgemm_h6_cl2_tma_256x256, ran 0.994-0.996 of the declared 128x256 TMA-store kernel at 4096^3 on an
//    H100, 0.991-1.000 at 8192^3 (benchmarks/records/2026-11-26-h100-flow-handover/h100-flow-handover.md).
//    Where they are not (K or N not a multiple of 64), every box row straddles two lines and the L2 falls
//    behind: hgemm_h6_cl2_tma_256x256 and hgemm_h6_cl2_tma_256x192 (128x192 tiles; one block fetches one
//    of B's three boxes, the other two) are declared for those products (see "Tiles per problem").
//  * ping-pong entries (hgemm_h6_pp_*): in the entries above both consumer warpgroups finish
//    a tile together and store C while the tensor cores idle (about 9% of the time at
//    4096^3, judging by how much faster the same kernels run at K = 8192). Here each consumer
//    warpgroup owns whole tiles (128x128 as two m64n128 fragments, or 64x256), the two take
//    the block's tiles in turn, and two named barriers hand the MMA turn over as soon as one
//    has issued its last k tile: one warpgroup's epilogue overlaps the other's MMAs. A
//    warpgroup tile reads more operand bytes per FLOP than 128x256, so the cl2 forms
//    multicast B to a vertically adjacent pair of blocks (per block and k step: 16 KB of A
//    + 8 KB of B for 128x128 tiles, 8 + 16 KB for 64x256, against 48 KB for 128x256).
//    The ping-pong 128x128 tile is the declared 128x128 tile (issue 60): with the staged epilogue
//    (H6_PP_EPI=1, hgemm_h6_pp_128x128) it ran 99.8% of the library at 2048^3 against 97.2-98.8% for the
//    cooperative hgemm_h6_128x128, now a candidate; with fragment stores it had lost everywhere. It now
//    stores C by TMA (hgemm_h6_pp_tma_128x128, below); the staged form is a candidate.
//  * epilogues under the next tile's MMAs (H6_OVERLAP_EPI, the persistent cooperative tiles): a
//    consumer warpgroup converts its accumulators to halves (PendingSlab: 64 registers for 64x256),
//    which frees them, and stores the slab in rounds, one after each of the next tile's first k
//    tiles is issued, while those MMAs run: +0.3 to +0.5 points of the library at 4096^3, 6144^3,
//    8192^3 and the 2048- and 8192-row model shapes (TMA stores; two cards, paired).
//  * the next tile looked up early (the persistent entries but the stream-K ones): between a tile's last MMAs
//    (wgmma.wait_group 0) and the next tile's first, the tensor cores wait while the consumers convert the
//    accumulators and find the next tile. The lookup (two integer divisions of the tile order) now runs under
//    the first k tile's MMAs, and the accumulators are no longer zeroed with 128 selects per tile (only a split's
//    empty K slice needs that). Paired with the library on one H200, off / on, twice each: 2048 x 14336 x 4096
//    100.5 / 100.9%, 2048 x 128256 x 4096 98.4 / 99.1%, 8192 x 4096 x 4096 100.6 / 100.9%, 4096^3 97.7 / 97.8%,
//    2048 x 4096 x 4096 98.5 / 98.7% (benchmarks/records/2026-11-30-h200-hgemm-look-ahead).
//  * a programmatic dependent launch (await_previous_grid, below): the launcher starts every entry with
//    cuLaunchKernelEx's programmatic-stream-serialization attribute, so a grid is launched as the blocks of the
//    kernel before it exit, and its blocks set up their barriers while that kernel's writes are flushed. Back to
//    back, on an H200: 6.1-6.3 us a launch at 1024^3 against 7.45-7.75 launched plainly, 11% faster at 1 x 4096
//    x 4096, 2-5% at 2048^3 (benchmarks/records/2026-11-30-h200-hgemm-dependent-launch). Timed each between
//    its own CUDA events, as nsprof bench times, no change: an event between two kernels keeps them apart.
//  * the tensor maps asked for as a block starts (prefetch_maps_early, H6_EARLY_PREFETCH): before the barriers
//    are set up and the wait for the grid before, not right before the first loads. Paired with the late prefetch
//    on cold inputs: 1024^3 +1.1 to +2.5 points, the 16-row tiles at 1 and 16 x 4096 x 4096 +0.4 to +1.3, within
//    the noise elsewhere; the record's 1024^3 went from 97.2-97.9% to 99.3-99.6% of the library
//    (benchmarks/records/2026-12-01-h200-hgemm-early-maps).
//  * the ping-pong body's last tile stages C in the ring (H6_RING_STAGING): the block's last tile has the ring to
//    itself, so each of its boxes of C gets its own 8 KB and no TMA store waits for the one before to read its
//    box. The block's last epilogue 1442 cycles against 1804; 2048^3 +0.9 points, the other ping-pong shapes 0.0
//    to +0.7. The 16-row tiles issue their ring's first pass before the block's barrier (H6_EARLY_ISSUE = 2):
//    +0.2 to +1.8 points at the decode shapes, where it costs 4-9 points in the other tiles
//    (benchmarks/records/2026-12-01-h200-hgemm-block-start).
//  * a cluster's blocks meet once (H6_CLUSTER_SPLIT, every clustered entry): they met on a cluster barrier at the start
//    and again at the end, 712-736 cycles each. Now each thread arrives (relaxed) once the ring's barriers are set up
//    and waits after its setmaxnreg, and at the end the producer waits for every stage it loaded to be freed by the
//    consumers of both blocks. The start's barrier 135-137 cycles; paired: the declared clusters +0.1 to +1.0 points
//    (3000 x 5000 x 2000 102.0 / 100.0 -> 102.2 / 101.0%), the ping-pong tile in clusters at 2048^3 96.4 -> 98.9%,
//    the 128 x 64 pairs at 1024^3 91 -> 100% (benchmarks/records/2026-12-01-h200-hgemm-cluster-split).
//  * a block's last tile from the registers (H6_LAST_DIRECT, the entries whose C goes out through a staging tile):
//    each quad of lanes transposes its 4 x 4 blocks of column pairs by two rounds of shuffles and stores 16 bytes a
//    lane (store_slab_quads), with no round trip through shared memory. A block's end takes as long either way (C's
//    last stores wait on the memory system: about 45 cycles per KB a block stores, every block at once), but its
//    stores start sooner: ahead in 18 of 21 pairs at seven shapes, 1024^3 +0.7, 1024 x 1024 x 2048 +1.6 points.
//    The non-persistent entries' only tile goes out so, and 128x64's ring takes the staging tile's 16 KB as a
//    ninth stage: 1024^3 100.0-100.7% -> 101.5-102.0%. Where C goes out by TMA the same stores gained nothing
//    (-1.6 to +0.8 points), and TMA stays (benchmarks/records/2026-12-01-h200-hgemm-last-direct).
// Tuning knobs (-D, defaults = the entries as declared): H6_EPI / H6_PP_EPI = 1 stores C
// through a 2 KB shared tile per warp (stmatrix, then 16-byte stores covering whole 128-byte
// rows: 8x fewer L2 write requests than the 4-byte fragment stores; +16 KB of shared memory);
// H6_EPI=1 is the default of the entries that do not store C by TMA (596 -> 640-750 TFLOP/s
// at 4096^3 on the H200, against the fragment stores); H6_STAGES_128, H6_STAGES_192,
// H6_STAGES_128x64, H6_STAGES_64x256, H6_STAGES_64x128, H6_STAGES_16x256, H6_STAGES_16x128,
// H6_PP_STAGES, H6_PP64_STAGES: ring depths (6 for 128x128: 578 -> 626 at 4096^3);
// H6_OVERLAP_EPI = 0 stores a tile's C before the next tile's MMAs; H6_B_EVICT_FIRST = 0 loads B with the
// normal L2 policy everywhere;
// H6_GROUP_ROWS, H6_PP_GROUP_ROWS: the tile order (cooperative, ping-pong entries); H6_TMA_BOXES,
// H6_TMA_STAGES: the TMA-store entries' staging boxes and ring; H6_TRACE = 1: each consumer warpgroup records its tiles' clocks (h6_trace, read by
// benchmarks/gpu/experiments/h6_timeline.py); H6_EARLY_TRIGGER = 1: each block lets the next grid in once it has
// waited for the one before (griddepcontrol.launch_dependents); H6_EARLY_PREFETCH = 0: the producer asks for the
// tensor maps right before its first loads; H6_EARLY_ISSUE, H6_RING_STAGING: a block's start and end (their
// definitions say what each measured). The cl2 entries but the two TMA-store ones and the
// ping-pong ones but hgemm_h6_pp_tma_128x128 and hgemm_h6_pp_64x64 are tuning candidates the launcher does not declare: each
// lost to the cooperative 128x256 kernel with the staged epilogue (benchmarks/records/2026-11-22-h200-hgemm/h200-hgemm.md, "Tuning sweeps"; the cl2
// TMA-store entry again by 0.3-0.9 points on the H200 in
// benchmarks/records/2026-11-29-h200-hgemm-rows-overlap/h200-hgemm-rows-overlap.md).
// Declared 128x256 entries (measured on an H100: benchmarks/records/2026-11-26-h100-h6-stream-k/h100-h6-stream-k.md):
// hgemm_h6_sk_tma_128x256 where the last wave is at most 0.6 full (stream-K tail), else
// hgemm_h6_tma_128x256. Both store C by TMA (EPI 2: stmatrix into swizzled staging boxes, one
// cp.async.bulk.tensor store per box, the warpgroup going on to the next tile's MMAs): 0.5-0.7%
// faster than the staged epilogue at 4096^3 (to 1.002-1.005 of torch.mm at one clock), up to 0.4%
// at 5120^3 and 8192^3, even at 3072^3; with 4 staging boxes the ring drops to 3 stages and it
// loses 1.5-2.7%. hgemm_h6_128x256 and hgemm_h6_sk_128x256, the same with the staged epilogue,
// stay as candidates.
// Tiles per problem (issue 60; nsprof/ladder/ops/hgemm.py declares them, launch_plan.choose_plan picks;
// measured on the H200, paired: benchmarks/records/2026-11-29-h200-hgemm-sizes/h200-hgemm-sizes.md):
//  * hgemm_h6_tma_128x192: taken where its waves keep a twentieth more of the 132 slots busy than the other
//    tiles' (3072^3: 384 tiles, 97%, against 288 of 128x256, 73%): 84.5% -> 99.8% of the library there;
//    alike where the fill is within 4 points. C goes out by TMA in three rounds of one staging box per warpgroup
//    (three 64-column boxes do not pair): at 3072^3, three pairs on each of two cards, 99.7-99.9% and
//    99.1-99.8% against 99.4-99.5% and 99.2-99.4% for the staged form (hgemm_h6_128x192, now a candidate)
//    (benchmarks/records/2026-11-30-h200-hgemm-look-ahead/h200-hgemm-look-ahead.md).
//  * hgemm_h6_cl2_tma_256x256 / 256x192: the 128x256 and 128x192 tiles in clusters of two that multicast B,
//    taken instead of them where A's or B's rows are not whole 128-byte lines. A tile's clocks (H6_TRACE) at
//    3000 x 5000 x 2000: 1253 cycles a k step for 128x256 (1024 if the tensor cores never waited), 22 thousand
//    of a tile's 40 thousand spent waiting for full stages; in clusters 1122 and 7.5 thousand, and 837 for
//    128x192 in clusters (768 ideal). Paired with the library on the H200: 3000 x 5000 x 2000 86-89% -> 97-99%,
//    2000 x 7000 x 3000 80% -> 93%, 5000^3 76% -> 88-89%, 6000 x 6000 x 1000 88% -> 101%, 4000^3 95.4% ->
//    95.0% (benchmarks/records/2026-11-30-h200-hgemm-multicast/h200-hgemm-multicast.md). Where the launcher takes
//    them, and where it does not (a wave just short of the SMs, one operand straddling alone), nsprof/ladder/ops/
//    launch_plan.py says (benchmarks/records/2026-12-01-h200-hgemm-cluster-split).
//  * hgemm_h6_cl2_sk_tma_256x256 / 256x192: the same clusters with h6_body's stream-K tail. At 5000^3 the clusters'
//    400 units take 7 rounds of 66, the last with 4: six rounds' work in seven. The units of a last round at most
//    0.6 full are shared out by k steps over the clusters' runs (H6Share<CLUSTER>: both blocks of a cluster walk
//    one run, so B's multicast stays in step; each adds its own tile's sums in the workspace). Where K is at least
//    4000 (launch_plan._with_shared_tail): 5000^3 88.5% -> 93.5%, 5000 x 2000 x 8192 82% -> 90.5%; with shallower K
//    a round does not outweigh the sums, and it lost; there 128 x 192's clusters take the plan instead where their
//    units keep 4 points more of the slots busy (launch_plan._better_filled_clusters: 2000 x 7000 x 3000 89% -> 93%)
//    (benchmarks/records/2026-12-01-h200-hgemm-cluster-tail).
//  * hgemm_h6_pp_cl2_tma_256x128 / hgemm_h6_pp_cl2a_tma_128x256: the ping-pong tile in clusters of two, stacked
//    sharing B, or side by side sharing A (h6_pp_body's PAIR_N: each block loads half of A's rows and multicasts
//    them). Where a box row straddles two lines the TMA unit asks the L2 for it in three pieces (ncu at 1400^3: 1.66
//    sectors a request against 4.0 at 1408^3); sharing the operand whose rows straddle halves its requests. The
//    stacked pairs run where B's rows straddle (1400^3 79% -> 85%, 512 x 3000 x 2000 83% -> 100%), the side-by-side
//    ones where only A's do, inside sectors (4000 x 512 x 3000 84-89% -> 100%); launch_plan._clustered_form
//    (benchmarks/records/2026-12-01-h200-hgemm-straddled-rows).
//  * hgemm_h6_64x256 / 64x128 (BM = 64 in h6_body) for products of at most 64 rows: both consumer
//    warpgroups take all 64 rows and half the columns each, so a tile multiplies half the rows of zeros of a
//    128-row one; K split over gridDim.z to fill one wave (SHARE: the slices add their float32 sums in a
//    workspace, only rows below M, the last to count stores C; no reduce kernel). 26-75% -> 94.5-124%. Where
//    64x256's slices would be shallow for the rows they sum, 64x128 makes as many blocks with half the slices
//    (launch_plan._fewer_slices): 64 x 4096 x 4096 74% -> 87%, 64 x 14336 x 4096 94-96% -> 101-106% (two cards).
//  * hgemm_h6_16x256 / 16x128 (BM = 64, A_ROWS = 16 in h6_body) for products of at most 16 rows: TMA loads
//    only A's first 16 rows (2 KB a stage), the MMAs read the other 48 from the B boxes that follow (rows of C
//    that are never stored or summed): 1 x 128256 x 4096 91% -> 99% of torch.mm; 16x128 runs unsplit where its
//    blocks fill half a wave to one (N = 14336: 94-98% -> 99-100.5%). Neither ring is as deep as fits, which
//    these tiles, streaming B from DRAM, read faster: 16x256's is 5 deep (6 read 0.8-1.5 points lower at the four
//    products it runs, 1 and 16 x 128256 x 4096, 1 and 16 x 4096 x 14336; 4 alike there but 10 points lower unsplit
//    at N = 14336: benchmarks/records/2026-12-01-h200-hgemm-block-ends, section 5), 16x128's 6 (of 11: +0.7 to
//    +4.1 points at 1 and 16 x 4096 x 4096 and x 14336 x 4096, +2.8 to +5.1 at 3 x 5000 x 3000, two cards; held
//    out, +11 at 8 x 11008 x 4096 and within 1.5 at six others; 5 alike but behind 6 at 3 x 5000 x 3000, 4 7-10
//    points lower than 11 at N = 14336 and 5000: benchmarks/records/2026-12-01-h200-hgemm-decode-rings).
//  * hgemm_h6_split_128x128: the same split for 65-128 rows where the persistent tiles do not fill the SMs.
//  * hgemm_h6_pp_64x64 (h6_pp_body, WM = BN = 64, a 13-deep ring): the library's tile at 128 x 4096 x 4096. It
//    replaces 128 x 128's K split where the slices are at most 2048 deep, M is whole 64-row tiles and its own
//    tiles fit a wave or keep 90% of the SMs busy: the split's slices each add 64 KB of float32 sums in a
//    workspace, a fixed cost that shallow slices do not hide. On one H200, against the split (TFLOP/s):
//    128 x 4096 x 2048 157 -> 214, 128 x 4096 x 4096 255 -> 306 (89-90% -> 105-106% of the library),
//    128 x 4096 x 8192 301 -> 348, 128 x 3072 x 3072 161 -> 186; behind with deep slices (128 x 4096 x 14336
//    386 -> 336) and at 96 and 72 rows (nsprof/ladder/ops/launch_plan.py: _unsplit_form;
//    benchmarks/records/2026-11-30-h200-hgemm-pp64).
//  * B evicted first (H6_B_EVICT_FIRST, every h6_body entry): where C is one row of tiles each element of B
//    is loaded once, and where B is also larger than any Hopper L2 it cannot stay there for the next launch:
//    the producer loads it with an L2::evict_first policy, and A and the split's sums keep their lines. At the
//    decode shapes whose B is 112 MiB: 32-34 -> 28-30 us on most cards (up to 21%), 0.3-2% on others; where B
//    fits (16 x 4096 x 4096) or every row of tiles reads it (2048 x 4096 x 4096), evicting it first cost 4-13%
//    (benchmarks/records/2026-11-30-h200-hgemm-evict-first/h200-hgemm-evict-first.md).
//  * hgemm_h6_sk_64x256 / sk_64x128 / sk_128x128 (stream-K over every tile) and hgemm_h6_split_128x256 lost
//    to the splits: candidates only.
//  * fewer instructions a k tile (the ping-pong body): the warpgroup index is broadcast from lane 0, so the
//    compiler keeps the MMA descriptors in uniform registers. Under ncu at locked clocks h6 and the library's
//    kernels take the same cycles (within 0.7%) at 2048^3, 4096^3, 2048 x 4096 x 4096 and 8192 x 4096 x 4096,
//    but h6 issued instructions in 21-33% of the cycles against the library's 12%: at the power limit the
//    same watts clock it lower. 2048^3 then ran +0.5, +1.0 and +1.9 points of the library (three pairs, two
//    cards); in h6_body the same broadcast (75 -> 47 instructions from a k tile's wait to its last MMA) gained
//    nothing measurable at 128x256 and read 1-2 points lower at the few-row tiles, so h6_body keeps threadIdx.
//    With it, hgemm_h6_pp_128x128 ran 0.1-1.3 points ahead of hgemm_h6_tma_128x256 at 4096^3, 6144^3 and the
//    2048-row shapes (N of 4096 and 14336), and the ping-pong tile (now its TMA-store form, below) takes over
//    those whole, unsplit plans where B has at most 2^26 elements (nsprof/ladder/ops/launch_plan.py: _taken_over;
//    at 2048 x 128256 x 4096 it ran 7-9 points behind) (benchmarks/records/2026-11-30-h200-hgemm-energy). Since
//    2026-12-02 it also takes over plans with B past 2^26 elements (2048 x 128256 x 4096 +1.0 to +1.7 points) and
//    plans that share a stream-K tail where its own rounds are 98% full (8192 x 14336 x 4096 +2.4 to +3.3)
//    (benchmarks/records/2026-12-02-h200-hgemm-library-finalists).
//  * the ring's descriptors and barriers stepped, not rebuilt (both bodies): each k tile rebuilt stage s's MMA
//    descriptors and barrier addresses from the shared window's base (the compiler rematerialised them);
//    carried from one k tile to the next: 88 -> 64 instructions a k tile of hgemm_h6_pp_128x128, 72 -> 32 from
//    the full barrier's wait to the last MMA of hgemm_h6_cl2_tma_256x192. Under ncu at locked clocks h6 still
//    issued 1.26x (ping-pong, stepped, 2048^3 and 2048 x 14336 x 4096) and 3.1x (256 x 192 in clusters, before
//    h6_body was stepped, 3000 x 5000 x 2000) the library's instructions in the same cycles, and asked the L2 for 1.75-1.9x and 1.3x its sectors.
//    Paired with the library, off / on, both orders: 2048 x 14336 x 4096 97.6 / 98.3% and 97.8 / 98.3%; at 15
//    more shapes on two H200s within 0.5 points or within the spread of the two orders (3000 x 5000 x 2000
//    94.9 / 100.0% and 99.8 / 98.7%) (benchmarks/records/2026-11-30-h200-hgemm-pp64).
//  * C stored by TMA in the ping-pong body (hgemm_h6_pp_tma_128x128): each warpgroup's fragments go out through two
//    staging boxes (stmatrix, then one cp.async.bulk.tensor a box) instead of each warp's 2 KB tile and 16-byte
//    stores. Paired with the library on one H200, against the staged form: 8192 x 4096 x 4096 +0.9 to +1.4 points,
//    2048 x 14336 x 4096 +0.5 to +1.1, 4096^3 +0.6, 2048 x 4096 x 4096 and 2048 x 4096 x 14336 +0.2 to +0.3, but
//    2048^3 (two tiles a block, the last one's epilogue under no MMAs) 0.3-0.8 lower (benchmarks/records/
//    2026-11-30-h200-hgemm-pp64), so it first ran only the 128 x 256 plans the ping-pong tile takes over. That
//    2048^3 reading held the host's time (benchmarks/records/2026-11-30-h200-hgemm-group-rows): with the host
//    held ahead it ran 0.1-0.3, 0.5-0.7 and 1.1 points ahead there (three calls, two cards), and it now runs
//    the 128 x 128 plans too (benchmarks/records/2026-11-30-h200-hgemm-ring-depth). With 64 x 64 tiles (one
//    staging box) it lost 5-10%.
//  * the ping-pong entries walk groups of 1024 rows of C (H6_PP_GROUP_ROWS; the cooperative ones 2048): paired
//    with the library, hgemm_h6_pp_tma_128x128 with 1024 against 2048 was ahead in 13 of 18 pairs at seven shapes,
//    behind in 2, +0.26 points on average. Alone at the power limit the ping-pong tile takes the library's cycles
//    or fewer at a 2.6-4.1% lower clock; it moves 32 KB from the L2 a k tile for 128 x 128 x 64 MACs, and 8 KB
//    more cost 5% at 2048^3 and 19% at 2048 x 14336 x 4096. Multicasting B to a pair (hgemm_h6_pp_cl2_256x128)
//    gave no time back, and per k step the cooperative 128x256 keeps the library's pace where the ping-pong tile
//    falls 1-2% behind (benchmarks/records/2026-11-30-h200-hgemm-group-rows).
//  * a 9-deep ring for 128x64 (H6_STAGES_128x64; 1024^3: 128 blocks, 16 k tiles each, 6 of them in flight
//    at first): on inputs the L2 holds, 6, 7 and 8 stages read 99.6-100.0% of torch.mm at 1024^3 against
//    98.5-98.9% for 5 (benchmarks/records/2026-11-30-h200-hgemm-ring-depth); on cold inputs, as nsprof bench
//    now times, every first load waits on DRAM and 8 stages read 98.6% against 94.1% for 6 and 81.7% for 4
//    (benchmarks/records/2026-11-30-h200-hgemm-cold-inputs). 8 x 24 KB and the staging tile filled the 227 KB;
//    with C from the registers (H6_LAST_DIRECT, below) the staging tile's 16 KB hold a ninth stage.
//    Tried there and slower: the producer prefetching the k tiles past the ring into the L2 at a tile's
//    start (cp.async.bulk.prefetch.tensor): 1024^3 80.5% against 97.4-97.8%, 128 x 4096 x 14336 67-92%.
//  * tried, slower (benchmarks/records/2026-11-30-h200-hgemm-ring-depth): the tensor maps passed by value as
//    `const __grid_constant__` parameters, the CUDA guide's way, instead of their device addresses (the record's
//    maps-by-value.diff): 1024^3 -2.0, 2048^3 -0.6, hgemm_h6_pp_tma_128x128 at 2048^3 -2.6, hgemm_h6_tma_128x256
//    -1.6 points, alike at 4096^3 and the 2048-row shapes, +1.0 to +1.5 at 16 x 4096 x 4096 (one card, one call);
//    C stored by TMA from 128x64 (one staging box a warpgroup:
//    -0.4 to -0.7 at 1024^3 and 512 x 2048 x 1024); 16 x 384 tiles (m64n192, 4 stages: the library's width at
//    1 x 128256 x 4096) level there (99.3-99.5 against 99.5-99.6%), +1 point at 16 x 128256 x 4096; 128x64's
//    C from the fragments (H6_EPI=0): 88% against 99% at 1024^3; 128x64 in persistent clusters of two that
//    multicast B: 88% against 100.4-100.8% at 1024^3.
//  * tried, slower (benchmarks/records/2026-11-30-h200-hgemm-pairs-maps): the library's 1x2 clusters, pairs of tiles
//    side by side that share A (PAIR_N, hgemm_h6_cl2a_*: each block fetches 64 of A's rows and multicasts them).
//    1024^3 88.4% against 97.5%, 2048^3 95.2-95.4% against 98.8%. On cold inputs a pair reaches its first MMAs
//    355 cycles sooner, then takes 26 cycles more a k step (355 against 329): each stage waits for both blocks.
//    Tensor maps by value (hgemm_h6_byval_*, const __grid_constant__; Tile.maps_by_value): -0.6 to +1.5 points
//    at ten shapes on cold inputs, one card (at 1024^3 the kernel's start to its first MMAs 3139 cycles against
//    3218); candidates.
//  * tried, slower (benchmarks/records/2026-12-01-h200-hgemm-early-maps): the declared ping-pong tile in 2 x 1
//    clusters that multicast B (hgemm_h6_pp_cl2_tma_256x128, the library's fastest shape at 2048^3): 96.0%
//    against 98.8% there, behind at five of six shapes. By ncu's count h6's clusters ask the L2 for 7-13% more
//    than its unclustered tiles, where the library's ask for 7-19% less. (Where B's rows straddle lines it is
//    declared: above.)
//  * tried, slower (benchmarks/records/2026-12-01-h200-hgemm-block-start): a block's start hurried two ways. Thread 0
//    issuing the ring's first pass before the block's barrier (H6_EARLY_ISSUE) sends the loads ~700 cycles sooner,
//    but the first stage lands no sooner: 1024^3 95.7% of h6 as declared. Asking the L2 for the first 4 k tiles by
//    address as the block starts (the record's l2-prefetch.diff; by bulk prefetch or by line): the first stage
//    waits 892 cycles against 1912, but the block's start takes longer: 82-92% of the library at 1024^3 and
//    2048^3 against 98-99%, 94-97% at the decode shapes against 99-103%. The cold start is bound by the memory
//    system, not by when the loads are asked for. Also no faster (the record's start-variants.diff): the maps asked
//    for as the body's first step (99.4-100.2% of h6 as declared), the ring's barriers set up by a lane of warp 0
//    each, each with its fences (95-98.5%).
//  * tried, slower (benchmarks/records/2026-12-01-h200-hgemm-one-round-wider, section 1): both warpgroups of a ping-pong
//    block on its last tile, 64 rows each, the other joining once its own last stores are issued, so that the
//    block's end stores half as much: 0.1-3.0 points slower at 12 of 13 shapes (2048^3 99.2-99.3 -> 97.7-98.1%).
//  * tried, slower (benchmarks/records/2026-12-01-h200-hgemm-coop-units, the record's coop-units.diff): the library's
//    cooperative 256 x 128 unit at 2048^3 and 4096^3, both warpgroups on one unit (B read once for two 128 x 128
//    tiles), alone and in pairs sharing A. Its k tiles take 1022-1034 cycles, the MMAs' 1024 (the ping-pong tile's
//    521-529 against 512), but a block's unit ends with 64 KB of C stored at once (3290-3454 cycles to the block's end
//    against 1451): 2048^3 96.5-96.8% against 99.1-99.4%; each unit's C under the next unit's k tiles slowed them to
//    1062 cycles. Also no faster there: a tile's C asked into the L2 as it starts (its last stores took as long).
//  * tried, no change (benchmarks/records/2026-12-01-h200-hgemm-block-ends, its diffs): the ping-pong tile's wgmma.fence
//    before a tile's first k tile only (ptxas injects a warpgroup.arrive in the k loop anyway, C7519); the block's
//    last tile multiplied fragment by fragment, its first fragment's C stored under the second's last MMAs (the
//    block's end 674 + 768 -> 339 + 719 cycles, the pairs unchanged: 2048^3 99.25 -> 99.33% over four rounds); and,
//    slower, every tile's C from the registers with the staging tile's 16 KB a seventh stage (2048^3 97.1-97.8%).
//  * tried, no change (benchmarks/records/2026-11-30-h200-hgemm-energy): try_wait with a suspend-time hint (NANOSLEEP.SYNCS until the barrier
//    flips, not a spin: within 0.5 points at seven of nine shapes, 1.7-2.3 lower at two few-row ones), and the
//    tile order grouping 256 to 8192 rows (no group size ahead at more than two of seven shape-and-tile pairs).
// Measured on the H200 over four runs: 588-683 TFLOP/s at 4096^3 (88-104% of cuBLAS), 598-649
// at 8192^3 (92-101%); at 512x2048x1024 the 128x64 tile runs 197 TFLOP/s, 139% of cuBLAS.
// Layouts: A (row-major M x K) is K-major for wgmma: its TMA box is {64 K = 128 bytes, 128
// rows}, the canonical K-major 128B-swizzle layout (8-row x 128-byte swizzle atoms, SBO =
// 1024 bytes, k16 steps advance the start address by 32 bytes). B (row-major K x N) is
// N-major ("transposed" for wgmma, imm-trans-b = 1): it is loaded as BN/64 boxes of {64 N =
// 128 bytes, 64 K rows}, 8 KB each, and described as the MN-major 128B-swizzle layout:
// LBO = 8192 bytes (next 64-column box), SBO = 1024 bytes (next 8 rows of K); a k16 step
// advances the start by 16 rows = 2048 bytes. B is consumed as given, never transposed.
// Why it should be faster: the tensor cores are fed at wgmma rate (the only way to the H200's
// ~990 dense f16 TFLOP/s; mma.sync tops out far lower), operand traffic bypasses the
// register file, and the latency of loads hides behind 3 (128x256) to 4 stages in flight.
// Metrics to watch: sm__pipe_tensor_op_gmma_cycles_active (wgmma pipe busy, should approach
// the elapsed cycles; the hmma pipe drops to zero), sm__ops_path_tensor_op_hgmma_src_fp16
// counts all the FLOPs (sm__ops_path_tensor_op_hmma_* none), smsp__inst_executed drops by >10x
// (no ldmatrix, no cp.async, no per-thread address math), shared-memory bank conflicts come
// from the staged epilogue alone, and lts__t_bytes (L2 -> SM traffic: a third lower for the
// cl2 entry).
// Ragged sizes (changed): no padding copies when K and N are multiples of 8 (rows of
// A and B 16-byte aligned, as a tensor map needs). The tensor maps carry the true sizes, so TMA
// fills the parts of a box past M, N or K with zeros (the last k tile is partly zeros, which add
// nothing); the tile counts round up, and the epilogues store only rows < M and columns < N (with
// N % 8 == 0 a 16-byte chunk or a column pair is wholly inside or outside). A K slice of split-K
// past the last k tile has no tiles: its consumers add zeros and count. Before, the launcher
// zero-padded A, B and C to whole tiles on every launch (48% of cuBLAS at 1000x1200x808). When
// K % 8 != 0 or N % 8 != 0 the launcher copies the operand whose rows are not 16 bytes apart (and C, for N) into
// rows of whole 128-byte lines (nsprof.ladder.ops.launch_plan.run_shape).
// Precision: products of f16 inputs are accumulated in f32 by the tensor cores; C is
// rounded to f16 once (the seed tutorial accumulated in f16, whose error grows with K).
// Shared memory: 1 KB of alignment slack + STAGES x (16 KB of A + BN x 128 bytes of B) + the
// barriers: 4 x 48 KB (128x256), 5 x 32 KB (128x128), 9 x 24 KB (128x64); ping-pong: 6 x 32 KB
// (128x128 warpgroup tiles), 5 x 40 KB (64x256: 8 KB of A). H6_EPI / H6_PP_EPI = 1 add 16 KB, but not in the
// non-persistent entries, whose only tile goes out from the registers (H6_LAST_DIRECT).
// smem = 1024 + STAGES x stage bytes + 16384 x staged EPI + 256 (at most 232448).
// Split-K (the non-persistent entries, when gridDim.z > 1): slice z walks K tiles
// [z*K/gridDim.z, (z+1)*K/gridDim.z) and adds its float32 sums into the tile's sums in the
// workspace (SHARE, as the stream-K pieces do); the last slice to count stores C. Before, the
// slices wrote partials that a reduce kernel summed: at 16 x 14336 x 4096 that ran 51.6 TFLOP/s
// against 54.7 (two calls on the H200). At 512x2048x1024 the 128x64 entry's 128 blocks already
// nearly fill the 132 SMs, and a split would run a second wave (one 121 KB block per SM).
// hgemm_h6_debug_tma: a slow one-warpgroup check of the TMA half alone (swizzled tiles read
// back with scalar loads and FMAs, no wgmma): if it verifies and the others do not, the
// fault is in the wgmma descriptors or the fragment layout, not in the copies.

#include <cuda_fp16.h>

#define H6_BK 64            // 64 halves = 128 bytes: one 128-byte swizzle atom wide
#define H6_PRODUCER_REGS 40
#define H6_CONSUMER_REGS 232  // 128 * 40 + 256 * 232 = 64512 <= 65536 registers per SM

// Tuning knobs (a tuning run overrides them with -D; the defaults are the entries as
// declared above). Each changes the shared memory an entry needs: see "Shared memory".
#ifndef H6_EPI              // 0: C stored straight from the accumulators (4-byte stores);
#define H6_EPI 1            // 1: through a 2 KB shared tile per warp (stmatrix, 16-byte stores)
#endif
#ifndef H6_STAGES_128       // ring depth of the cooperative 128x128 entry
#define H6_STAGES_128 6
#endif
#ifndef H6_STAGES_128x64    // ring depth of the 128x64 entry (9 x 24 KB, no staging tile: H6_LAST_DIRECT)
#define H6_STAGES_128x64 9
#endif
#ifndef H6_STAGES_192       // ring depth of the 128x192 entry (5 x 40 KB)
#define H6_STAGES_192 5
#endif
#ifndef H6_STAGES_64x256     // ring depths of the 64-row entries (5 x 40 KB, 8 x 24 KB)
#define H6_STAGES_64x256 5
#endif
#ifndef H6_STAGES_64x128
#define H6_STAGES_64x128 8
#endif
#ifndef H6_STAGES_16x256     // ring depths of the 16-row entries (5 x 34 KB, 6 x 18 KB)
#define H6_STAGES_16x256 5
#endif
#ifndef H6_STAGES_16x128
#define H6_STAGES_16x128 6
#endif
#ifndef H6_PP_STAGES        // ring depth of the ping-pong entries with 128x128 warpgroup tiles
#define H6_PP_STAGES 6
#endif
#ifndef H6_PP64_STAGES      // ring depth of the ping-pong entry with 64x256 warpgroup tiles
#define H6_PP64_STAGES 5
#endif
#ifndef H6_PP_EPI           // the epilogue of the ping-pong entries (as H6_EPI)
#define H6_PP_EPI 1
#endif
#ifndef H6_GROUP_ROWS       // tile order: rows of C walked down before moving right
#define H6_GROUP_ROWS 2048
#endif
#ifndef H6_PP_GROUP_ROWS    // the same for the ping-pong entries (header, "Tiles per problem")
#define H6_PP_GROUP_ROWS 1024
#endif
#define H6_EPI_BYTES 16384  // staging for H6_EPI=1: 8 consumer warps x 16 rows x 128 bytes
#ifndef H6_RING_STAGING     // the ping-pong body's last tile stages C in the ring (the header)
#define H6_RING_STAGING 1
#endif
#ifndef H6_TMA_BOXES        // EPI 2 (TMA stores): 64x64 boxes of C staged per consumer warpgroup
#define H6_TMA_BOXES 2      // at once (8 KB each); 4 holds a warpgroup's whole 64x256 slab
#endif
#ifndef H6_TMA_STAGES       // ring depth of the TMA-store entry (4 x 48 KB + 2 x 16 KB of boxes fit)
#define H6_TMA_STAGES 4
#endif
#ifndef H6_B_EVICT_FIRST    // 1: B's TMA loads evict first where B is read once and outgrows the L2
#define H6_B_EVICT_FIRST 1  // (h6_body: C one row of tiles, B over H6_L2_BYTES); 0: normal
#endif
#define H6_L2_BYTES (64ll << 20)  // more than any sm_90 GPU's L2 (H100 50 MB, H200 60 MiB)
#ifndef H6_OVERLAP_EPI      // EPI 1 and 2: a tile's rounds of stores go out after the next tile's first
#define H6_OVERLAP_EPI 1    // k tiles are issued (1), or before them, the tensor cores waiting (0)
#endif
#ifndef H6_LAST_DIRECT      // 1: where C goes out through a staging tile (EPI 1), a block's last tile stores it
#define H6_LAST_DIRECT 1    // from the registers instead (store_slab_quads; the header says what it measured)
#endif
#ifndef H6_TRACE            // 1: thread 0 of each consumer warpgroup records its tiles' clocks in h6_trace
#define H6_TRACE 0          // (h6_body; read by benchmarks/gpu/experiments/h6_timeline.py)
#endif

// The launcher starts h6 as a programmatic dependent launch (nsprof/launch/dependent_launch.py): it is launched
// once the blocks of the grid before it have all exited, before that grid's writes are flushed, so each block sets
// up its barriers, then waits for that grid to finish before it reads A and B or writes C. Without the launch
// attribute the wait is a no-op. H6_EARLY_TRIGGER = 1 lets the next grid in once every block has waited here
// (griddepcontrol.launch_dependents; its blocks then sit on the SMs this grid leaves idle): back to back that cost
// 2-4% at N = 14336 and 128 x 4096 x 4096 and gained nothing elsewhere, so by default no block calls it
// (benchmarks/records/2026-11-30-h200-hgemm-dependent-launch).
#ifndef H6_EARLY_TRIGGER
#define H6_EARLY_TRIGGER 0
#endif
__device__ __forceinline__ void await_previous_grid() {
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    if (H6_EARLY_TRIGGER) asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

// Dynamic shared memory (the launcher passes smem bytes: the tiles plus 1 KB of slack for
// aligning them to 1024 bytes, which the 128-byte swizzle pattern is defined against).
extern __shared__ unsigned char h6_smem[];

// ---------------------------------------------------------------------------------------
// PTX wrappers: shared-memory addresses, mbarriers, TMA, wgmma, cluster.
// ---------------------------------------------------------------------------------------
// nvcc -arch=sm_90a also runs a plain compute_90 PTX pass, where wgmma and setmaxnreg do not
// exist: there (no __CUDA_ARCH_FEAT_SM90_ALL) the entries compile to a trap. NVRTC's
// -arch=sm_90a and nvcc's -gencode=arch=compute_90a,code=sm_90a build the real kernels.
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define H6_SM90A_ONLY(call) __trap()
#else
#define H6_SM90A_ONLY(call) call
#endif

#include "../common/hopper_async.cuh"

// The tensor maps asked for as a block starts (H6_EARLY_PREFETCH, default 1): thread 0 prefetches them before the
// barriers are set up and before the wait for the grid before it, instead of right before the first loads, which
// then waited for the map's fetch (from DRAM on cold inputs: a map per set of buffers). The maps are written by
// the host before any launch that reads them, never by a kernel, so the wait need not cover them (what it gained:
// the header's list of changes).
#ifndef H6_EARLY_PREFETCH
#define H6_EARLY_PREFETCH 1
#endif
// H6_EARLY_ISSUE: thread 0 waits for the grid before and issues the ring's first pass as soon as it has set up the
// barriers, before the block's barrier and the producer's setmaxnreg; 1: in every unclustered body, 2 (declared):
// in the few-row tiles' (A_ROWS < BM), 0: none. Their loads go out ~700 cycles sooner. The tiles that stream B for
// few rows gain: 16x256 split 8 +0.2 to +1.8 points against the library at 1 and 16 x 4096 x 4096 and 1 x 4096 x
// 14336; elsewhere the first stage lands no sooner and the block's start is longer: 1024^3 95.7%, 128 x 4096 x
// 4096 91.8% of h6 without (benchmarks/records/2026-12-01-h200-hgemm-block-start).
#ifndef H6_EARLY_ISSUE
#define H6_EARLY_ISSUE 2
#endif
// (not in clusters: their multicasts land in a peer block that may not have set up its barriers yet)
template <int CLUSTER, bool FEW_ROWS>
constexpr bool issues_early = CLUSTER == 1 && (H6_EARLY_ISSUE == 1 || (H6_EARLY_ISSUE == 2 && FEW_ROWS));
// (tmC: C's map, for the entries that store C by TMA; else null)
__device__ __forceinline__ void prefetch_maps_early(const void* tmA, const void* tmB, const void* tmC) {
    if (H6_EARLY_PREFETCH && threadIdx.x == 0) {
        prefetch_tmap(tmA);
        prefetch_tmap(tmB);
        if (tmC) prefetch_tmap(tmC);
    }
}

// Arrive on the barrier at the same offset in another block of the cluster. Default
// (.release.cta) semantics: the arrival only says "our MMAs finished reading the stage", it
// publishes no data; .release.cluster would cost a GPU-wide MEMBAR per k tile.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned cta) {
    asm volatile(
        "{\n .reg .b32 remote;\n"
        " mapa.shared::cluster.u32 remote, %0, %1;\n"
        " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n"
        ::"r"(bar), "r"(cta) : "memory");
}

// The same box as tma_load_2d written to the same offset (and counted on the same barrier
// offset) in every block of the cluster named by mask.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const void* tmap, int c0, int c1,
                                                      unsigned bar, unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;\n"
        ::"r"(dst), "l"(tmap), "r"(c0), "r"(c1), "r"(bar), "h"(mask) : "memory");
}

__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// H6_CLUSTER_SPLIT (default 1; 0: a cluster barrier at the start and at the end): a cluster's blocks meet once.
// At the start each thread arrives on the cluster's barrier once the ring's barriers are set up, and waits on it
// after its setmaxnreg, so the barrier's round trip to the peer runs under the register handover. At the end, in
// place of a second cluster barrier, the producer waits until the consumers of every block have freed each stage it
// loaded (CUTLASS's "producer tail"): no peer can then still arrive on this block's barriers, and a block leaves as
// soon as its own work is done.
#ifndef H6_CLUSTER_SPLIT
#define H6_CLUSTER_SPLIT 1
#endif
template <int CLUSTER>
constexpr bool splits_cluster_sync = CLUSTER > 1 && H6_CLUSTER_SPLIT;
// Relaxed: what the peer must see, the barriers' inits, fence.mbarrier_init.release.cluster has published (the
// PTX ISA's pairing); a release arrive costs ~600 cycles (its fence), the time a block's start had taken in clusters.
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory"); }
template <int CLUSTER>
__device__ __forceinline__ void cluster_wait_if_split() {
    if constexpr (splits_cluster_sync<CLUSTER>) asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// The producer's tail (H6_CLUSTER_SPLIT): the wait a next load of each stage would make, stage by stage from (s, phase).
template <int STAGES, int CLUSTER>
__device__ __forceinline__ void producer_tail(unsigned empty_bar, int s, unsigned phase) {
    if constexpr (splits_cluster_sync<CLUSTER>) {
        for (int i = 0; i < STAGES; ++i) {
            mbar_wait(empty_bar + 8 * s, phase ^ 1);
            if (++s == STAGES) { s = 0; phase ^= 1; }
        }
    }
}

// wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format"): start address >> 4 in bits
// 0-13, leading-dimension byte offset >> 4 in 16-29, stride-dimension byte offset >> 4 in
// 32-45, base offset 0 (every swizzle atom we point at starts 1024-byte aligned, or is the
// standard 32-byte k step inside one), swizzle mode in 62-63 (1 = 128-byte swizzle).
__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((lbo >> 4) & 0x3FFF) << 16) |
           ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

// D(64 x N, f32) += A(64 x 16, K-major, from desc a) * B(16 x N, N-major, from desc b):
// imm-trans-a = 0 (A is K-major), imm-trans-b = 1 (B is N-major: row-major K x N).
HOPPER_WGMMA("16", "f32.f16.f16", ", 0, 1")

// ---------------------------------------------------------------------------------------
// Tile order. A "unit" is CLUSTER vertically adjacent tiles of TILE_M x BN (one per block of
// a cluster). Persistent blocks walk units u = first, first + step, ...; consecutive units
// go down a group of H6_GROUP_ROWS rows of C (16 tile rows of 128) before moving right, so
// one wave of 132 blocks touches about 16 row-tiles of A and 8 column-tiles of B instead of
// 1 x 132 (better L2 reuse).
// ---------------------------------------------------------------------------------------
template <int UNIT_ROWS, int GROUP_ROWS = H6_GROUP_ROWS>
__device__ __forceinline__ void unit_coords(int u, int units_m, int tiles_n, int& um, int& tn) {
    grouped_coords<GROUP_ROWS, UNIT_ROWS>(u, units_m, tiles_n, um, tn);
}

// ---------------------------------------------------------------------------------------
// Epilogues: one warp stores its 16-row slab of a 64 x BN accumulator fragment (rows row0
// .. row0+15 of C, columns n0 .. n0+BN-1). wgmma's f32 D fragment (m64nNk16): warp w of
// the warpgroup holds rows 16w..16w+15; for each 8-column group j, lane l holds d[4j],
// d[4j+1] at row 16w + l/4, columns 8j + 2(l%4) + {0,1}, and d[4j+2], d[4j+3] 8 rows below.
// ---------------------------------------------------------------------------------------
__device__ __forceinline__ unsigned pack_half2(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);  // .x (lower 16 bits) = lo: the lower column
    return *reinterpret_cast<unsigned*>(&h);
}

// Direct: two 4-byte stores per 8-column group; a warp's store covers 8 rows x 16 bytes.
template <int BN>
__device__ __forceinline__ void store_slab_direct(const float (&d)[BN / 2], __half* C, int M, int N, int row0,
                                                  int n0, int lane) {
    const int r0 = row0 + lane / 4, col0 = n0 + 2 * (lane % 4);
    __half* c0 = C + (size_t)r0 * N + col0;
    __half* c1 = c0 + (size_t)8 * N;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        if (col0 + 8 * j >= N) break;  // N % 8 == 0: the pair is wholly inside or outside
        if (r0 < M) *reinterpret_cast<__half2*>(c0 + 8 * j) = __floats2half2_rn(d[4 * j], d[4 * j + 1]);
        if (r0 + 8 < M) *reinterpret_cast<__half2*>(c1 + 8 * j) = __floats2half2_rn(d[4 * j + 2], d[4 * j + 3]);
    }
}

// Quads (H6_LAST_DIRECT): 16-byte stores straight from the registers, no shared memory and nothing to wait for
// before the block exits. A quad of lanes holds one row's 8-column groups, each lane a column pair of each;
// a 4 x 4 transpose in two shuffle rounds (xor 2 swaps the off-diagonal 2 x 2 blocks, xor 1 transposes each)
// gives lane q all four pairs of group j0 + q: 16 contiguous bytes. A warp's store covers 8 rows x 64 bytes.
__device__ __forceinline__ void transpose_quad(unsigned& a0, unsigned& a1, unsigned& a2, unsigned& a3, int q) {
    const bool top = q < 2, even = (q & 1) == 0;
    unsigned x0 = top ? a2 : a0, x1 = top ? a3 : a1;
    x0 = __shfl_xor_sync(0xffffffffu, x0, 2);
    x1 = __shfl_xor_sync(0xffffffffu, x1, 2);
    if (top) { a2 = x0; a3 = x1; } else { a0 = x0; a1 = x1; }
    x0 = even ? a1 : a0; x1 = even ? a3 : a2;
    x0 = __shfl_xor_sync(0xffffffffu, x0, 1);
    x1 = __shfl_xor_sync(0xffffffffu, x1, 1);
    if (even) { a1 = x0; a3 = x1; } else { a0 = x0; a2 = x1; }
}

template <int BN>
__device__ __forceinline__ void store_slab_quads(const float (&d)[BN / 2], __half* C, int M, int N, int row0,
                                                 int n0, int lane) {
    static_assert(BN % 32 == 0, "whole 4 x 4 blocks of 8-column groups");
    const int q = lane % 4;
#pragma unroll
    for (int half = 0; half < 2; ++half) {  // rows lane/4 and lane/4 + 8 of the warp's 16
        const int r = row0 + lane / 4 + 8 * half;
#pragma unroll
        for (int j0 = 0; j0 < BN / 8; j0 += 4) {
            unsigned a0 = pack_half2(d[4 * j0 + 2 * half], d[4 * j0 + 2 * half + 1]);
            unsigned a1 = pack_half2(d[4 * j0 + 4 + 2 * half], d[4 * j0 + 5 + 2 * half]);
            unsigned a2 = pack_half2(d[4 * j0 + 8 + 2 * half], d[4 * j0 + 9 + 2 * half]);
            unsigned a3 = pack_half2(d[4 * j0 + 12 + 2 * half], d[4 * j0 + 13 + 2 * half]);
            transpose_quad(a0, a1, a2, a3, q);
            const int col = n0 + 8 * (j0 + q);  // N % 8 == 0: the 8 columns are wholly inside or outside
            if (r < M && col < N)
                asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n"
                             ::"l"(C + (size_t)r * N + col), "r"(a0), "r"(a1), "r"(a2), "r"(a3) : "memory");
        }
    }
}

// A slab's halves, packed two to a register as stmatrix takes them: h[i] = (d[2i], d[2i+1]).
template <int BN>
__device__ __forceinline__ void pack_slab(const float (&d)[BN / 2], unsigned (&h)[BN / 4]) {
#pragma unroll
    for (int i = 0; i < BN / 4; ++i) h[i] = pack_half2(d[2 * i], d[2 * i + 1]);
}

// The warp's 16 rows x 64 columns chunk*64.. of its packed D fragment into a shared tile of
// 128-byte rows in the 128-byte swizzle (16-byte chunk c of row r at chunk c ^ (r % 8)): four
// stmatrix.x4. row_start: the address of this lane's row, row (lane / 8 % 2) * 8 + lane % 8 of the
// 16, which must sit at a row r with r % 8 == lane % 8. stmatrix takes exactly the D fragment's
// layout (lane l holds row l/4, columns 2(l%4) + {0,1} of each 8x8 matrix); matrix i of an x4 is
// the top (i even) or bottom (i odd) 8 rows of 8-column group 2q + i/2 of the 64 columns.
template <int BN>
__device__ __forceinline__ void stmatrix_64_columns(const unsigned (&h)[BN / 4], int chunk, unsigned row_start,
                                                    int lane) {
    const int mi = lane / 8, rr = lane % 8;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const int j = 8 * chunk + 2 * q;
        const unsigned addr = row_start + ((unsigned)((2 * q + (mi >> 1)) ^ rr) << 4);
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                     ::"r"(addr), "r"(h[2 * j]), "r"(h[2 * j + 1]), "r"(h[2 * j + 2]), "r"(h[2 * j + 3]) : "memory");
    }
}

// Staged (EPI 1), one 64-column chunk: stmatrix_64_columns writes the warp's 16 x 64 halves into a
// 2 KB shared tile of 16 rows x 128 bytes, then each lane reads back 16-byte chunks and stores
// them: a warp's store covers 4 whole 128-byte rows (8 times fewer L2 write requests than the
// direct form). With the swizzle, stmatrix's 8 rows of one matrix and the readback's 8 lanes
// of one row hit 8 different bank groups (no conflicts).
template <int BN>
__device__ __forceinline__ void store_chunk_staged(const unsigned (&h)[BN / 4], int chunk, __half* C, int M, int N,
                                                   int row0, int n0, int lane, unsigned scratch) {
    const unsigned st_row = scratch + ((lane / 8 % 2) * 8 + lane % 8) * 128;  // this lane's row
    const int rd_c = lane % 8;  // readback: pass it reads row 4it + lane/8, chunk lane%8
    stmatrix_64_columns<BN>(h, chunk, st_row, lane);
    __syncwarp();
#pragma unroll
    for (int it = 0; it < 4; ++it) {
        const int r = 4 * it + lane / 8;
        unsigned v0, v1, v2, v3;
        asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3)
                     : "r"(scratch + r * 128 + ((unsigned)(rd_c ^ (r & 7)) << 4))
                     : "memory");
        const int col = n0 + 64 * chunk + 8 * rd_c;  // N % 8 == 0: the chunk is wholly inside or outside
        __half* dst = C + (size_t)(row0 + r) * N + col;
        if (row0 + r < M && col < N)
            asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n"
                         ::"l"(dst), "r"(v0), "r"(v1), "r"(v2), "r"(v3) : "memory");
    }
    __syncwarp();  // every lane's reads are done before the next chunk overwrites the tile
}

// A consumer warpgroup's own barrier (ids FIRST and FIRST + 1, 128 threads; immediate ids, see named_bar_sync):
// 2 and 3 in h6_body, 3 and 4 in the ping-pong body, whose turns take 1 and 2.
template <int FIRST = 2>
__device__ __forceinline__ void warpgroup_sync(int c) {
    if (c == 0) asm volatile("bar.sync %0, 128;\n" ::"n"(FIRST) : "memory");
    else asm volatile("bar.sync %0, 128;\n" ::"n"(FIRST + 1) : "memory");
}

// TMA stores (EPI 2), one round: the warpgroup's 64 x BN slab of C (rows row0.., columns n0..) goes
// out as 64 x 64 boxes through H6_TMA_BOXES staging boxes at buf (8 KB each, 1024-aligned, in the
// 128-byte swizzle the map of C names), a round of H6_TMA_BOXES boxes at a time. Each warp writes its
// 16 rows of a box with four stmatrix.x4, thread 0 of the warpgroup stores the boxes with one
// cp.async.bulk.tensor each and the warpgroup goes on: the TMA unit writes C to global memory while the
// MMAs run. Only a box's reuse waits (for the reads of the stores before it). Rows past M and columns
// past N are not written. `fresh` staging boxes (never stored from) skip that wait.
// The staging boxes of a slab BN wide: H6_TMA_BOXES where its 64-column boxes go out in whole rounds of
// that many, else one (a 64 x 192 slab: three rounds of one box).
template <int BN>
__host__ __device__ constexpr int tma_boxes() { return (BN / 64) % H6_TMA_BOXES == 0 ? H6_TMA_BOXES : 1; }

template <int BN, int BAR = 2>
__device__ __forceinline__ void store_round_tma(const unsigned (&h)[BN / 4], int round, const void* tmC, int row0,
                                                int n0, int warp, int lane, int tid, int c, unsigned buf,
                                                bool fresh = false) {
    constexpr int BOXES = tma_boxes<BN>();
    const unsigned row_addr = (16 * warp + (lane / 8 % 2) * 8 + lane % 8) * 128;  // this lane's row
    if (!fresh) {
        if (tid == 0) bulk_wait_read();  // the staging boxes' last stores have read them
        warpgroup_sync<BAR>(c);
    }
#pragma unroll
    for (int b = 0; b < BOXES; ++b)  // 64-column box round * BOXES + b of the slab
        stmatrix_64_columns<BN>(h, round * BOXES + b, buf + b * 8192 + row_addr, lane);
    fence_async_shared();  // our stmatrix writes, seen by the TMA unit
    warpgroup_sync<BAR>(c);
    if (tid == 0) {
#pragma unroll
        for (int b = 0; b < BOXES; ++b)
            tma_store_2d(tmC, n0 + 64 * (round * BOXES + b), row0, buf + b * 8192);
        bulk_commit();
    }
}

// Where a consumer warp's stores go: C (EPI 1: the matrix; EPI 2: the address of its tensor map),
// its size, and the warp's staging (EPI 1: its 2 KB tile; EPI 2: its warpgroup's boxes).
struct SlabOut {
    __half* C;
    int M, N, warp, lane, tid, c;
    unsigned buf;
};

// A consumer warpgroup's 64 x BN slab of C, converted to halves, while its stores go out in rounds
// (EPI 1: a 64-column chunk of each warp's 16 rows; EPI 2: H6_TMA_BOXES boxes of the warpgroup), from
// round `next` on (ROUNDS: none left). Held in halves, the slab leaves the accumulators free: the
// rounds go out while the next tile's first k tiles are multiplied (H6_OVERLAP_EPI).
template <int BN, int EPI>
struct PendingSlab {
    static constexpr int ROUNDS = EPI == 2 ? BN / 64 / tma_boxes<BN>() : BN / 64;
    unsigned h[BN / 4];
    int row0 = 0, n0 = 0, next = ROUNDS;  // row0: the warpgroup's first row (EPI 2), the warp's (EPI 1)

    __device__ __forceinline__ void hold(const float (&d)[BN / 2], int first_row, int first_col) {
        pack_slab<BN>(d, h);
        row0 = first_row;
        n0 = first_col;
        next = 0;
    }
    // The next round, if any (each round its own instance, so that every index into h is a constant).
    template <int R = 0>
    __device__ __forceinline__ void store_one(const SlabOut& o) {
        if constexpr (R < ROUNDS) {
            if (next != R) return store_one<R + 1>(o);
            if constexpr (EPI == 2) store_round_tma<BN>(h, R, o.C, row0, n0, o.warp, o.lane, o.tid, o.c, o.buf);
            else store_chunk_staged<BN>(h, R, o.C, o.M, o.N, row0, n0, o.lane, o.buf);
            ++next;
        }
    }
    __device__ __forceinline__ void store_rest(const SlabOut& o) {
#pragma unroll
        for (int r = 0; r < ROUNDS; ++r) store_one(o);
    }
};

template <int BN, int EPI>
__device__ __forceinline__ void store_slab(const float (&d)[BN / 2], __half* C, int M, int N, int row0, int n0,
                                           int lane, unsigned scratch) {
    if constexpr (EPI == 1) {
        PendingSlab<BN, 1> slab;
        slab.hold(d, row0, n0);
        slab.store_rest(SlabOut{C, M, N, 0, lane, 0, 0, scratch});
    } else {
        store_slab_direct<BN>(d, C, M, N, row0, n0, lane);
    }
}

// ---------------------------------------------------------------------------------------
// Stream-K tail (hgemm_h6_sk_128x256). The segments a block computes, in order: (unit, k tiles
// [kb, ke)). First whole units u = first, first + step, ... < whole, each over k tiles
// [kb0, ke0) (all of them, or a split-K slice); then, when the last wave would leave SMs idle,
// the block's even share of the k steps of the units past `whole`: those steps, numbered
// unit * k_tiles + kt, are cut into gridDim.x runs, run b = [start(b), start(b + 1)).
// A piece of a unit that its run does not cover whole adds its float32 sums into the unit's
// sums in the workspace (vector reductions, red.global.add.v4.f32, done in L2), then counts
// itself on the unit's counter; the last to count loads the sums (all pieces' by then), zeroes
// them and stores C. Nobody waits on another block, so nothing depends on every block being
// resident. Measured worse (H100, paired; benchmarks/records/2026-11-26-h100-h6-stream-k/h100-h6-stream-k.md): the block that
// starts a unit waiting for the others' sums parked in slots (a wait on a block that may not
// be resident when other work shares the GPU), and parked slots read one after another by the
// last piece: 16 slots a unit at 5120^3, slower than not sharing at all.
// ---------------------------------------------------------------------------------------
struct H6Walk {
    int u, step, whole, kb0, ke0;  // whole units
    int it, hi, k_tiles;           // then the shared steps [it, hi)
    __device__ __forceinline__ bool next(int& unit, int& kb, int& ke) {
        if (u < whole) {
            unit = u; kb = kb0; ke = ke0; u += step;
            return true;
        }
        if (it >= hi) return false;
        unit = it / k_tiles;
        kb = it - unit * k_tiles;
        ke = min(k_tiles, kb + (hi - it));
        it += ke - kb;
        return true;
    }
};

// The shared units' runs: where block b's starts, and how many runs share a unit.
// A run is a block's, or a cluster's: the blocks of a cluster walk the same units, each its own tile of them.
template <int CLUSTER>
struct H6Share {
    int whole, shared_units, k_tiles;
    __device__ __forceinline__ static unsigned runs() { return gridDim.x / CLUSTER; }
    // The first shared step of run b (b = runs(): the end of the last run).
    __device__ __forceinline__ int start(int b) const {
        return whole * k_tiles + (int)((long long)b * shared_units * k_tiles / runs());
    }
    // How many runs hold a piece of the unit whose k steps are [first, end): block me's (which
    // does) and its neighbours' (runs may be empty when there are fewer steps than blocks).
    __device__ __forceinline__ int pieces(int me, int first, int end) const {
        int n = 1;
        for (int b = me - 1; b >= 0 && start(b + 1) > first; --b) n += start(b) < start(b + 1);
        for (int b = me + 1; b < (int)runs() && start(b) < end; ++b) n += start(b) < start(b + 1);
        return n;
    }
};

// The two consumer warpgroups only (barrier 1, 256 threads; the producer never joins).
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, 256;\n" ::: "memory"); }

// A consumer warpgroup's tile clocks (H6_TRACE = 1; without it every call is empty). Per block (up to 160),
// consumer warpgroup and tile (its first 64), in h6_trace: the clock before the tile's first MMAs are issued,
// the clock when its last MMAs are done, and the cycles it waited for full stages and for its MMAs
// (wgmma.wait_group 1). Per block, in h6_trace_blocks (consumer 0's thread 0): the clock at the kernel's
// start, before its first MMAs, when its last are done and at its end (its last stores read), the global
// timer (ns) at the start and the end (consumer 1's end in slot 19), and thread 0's clocks on the way to the first
// loads (trace_producer).
#define H6_TRACE_TILES 64
#if H6_TRACE
__device__ unsigned long long h6_trace[160 * 2 * H6_TRACE_TILES * 4];
__device__ unsigned long long h6_trace_blocks[160 * 20];
__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}
// A block's row in the traces: its linear index (a grid of tiles, or of persistent blocks, counts blocks in x).
__device__ __forceinline__ unsigned traced_block() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
#endif
// Thread 0's clock (the producer's thread) into its block's row: slot 11 as it starts, 8 when the barriers are set
// up, 9 past the block's barrier, 10 past the wait for the grid before, 6 as the producer starts, 7 when its first
// stage's loads are issued.
__device__ __forceinline__ void trace_producer(int slot) {
#if H6_TRACE
    if (threadIdx.x == 0 && traced_block() < 160) h6_trace_blocks[traced_block() * 20 + slot] = clock64();
#endif
}
struct TileClock {
#if H6_TRACE
    unsigned long long start = clock64(), start_ns = global_ns();  // constructed at the kernel's start
    unsigned long long begin = 0, full = 0, mma = 0, mark = 0, first = 0, last = 0;
    int tile = 0;
    __device__ __forceinline__ void new_tile() { begin = full = mma = 0; }
    __device__ __forceinline__ void mark_now() { mark = clock64(); }
    __device__ __forceinline__ void stage_full(bool first) {
        const unsigned long long now = clock64();
        full += now - mark;
        if (first) begin = now;
    }
    __device__ __forceinline__ void mmas_waited() { mma += clock64() - mark; }
    __device__ __forceinline__ void tile_done(int c, int tid) {
        if (tid == 0 && tile < H6_TRACE_TILES && traced_block() < 160) {
            unsigned long long* r = h6_trace + ((traced_block() * 2 + c) * H6_TRACE_TILES + tile) * 4;
            r[0] = begin; r[1] = clock64(); r[2] = full; r[3] = mma;
        }
        if (tile == 0) first = begin;
        last = clock64();
        ++tile;
    }
    // A consumer's thread 0 on its way through its last epilogue: consumer 0's in slots 12-14, consumer 1's in
    // 16-18 (the bodies say which step); consumer 1's last MMAs done in slot 15.
    __device__ __forceinline__ void epilogue_step(int slot, int c, int tid) {
        if (tid == 0 && traced_block() < 160) {
            unsigned long long* r = h6_trace_blocks + traced_block() * 20;
            if (c == 1 && slot == 12) r[15] = last;
            r[slot + 4 * c] = clock64();
        }
    }
    __device__ __forceinline__ void block_done(int c, int tid) {
        if (tid == 0 && traced_block() < 160) {
            unsigned long long* r = h6_trace_blocks + traced_block() * 20;
            if (c == 0) {
                r[0] = start; r[1] = first; r[2] = last; r[3] = clock64(); r[4] = start_ns; r[5] = global_ns();
            } else {
                r[19] = global_ns();  // consumer 1's end: the ping-pong block's
            }
        }
    }
#else
    __device__ __forceinline__ void new_tile() {}
    __device__ __forceinline__ void mark_now() {}
    __device__ __forceinline__ void stage_full(bool) {}
    __device__ __forceinline__ void mmas_waited() {}
    __device__ __forceinline__ void tile_done(int, int) {}
    __device__ __forceinline__ void epilogue_step(int, int, int) {}
    __device__ __forceinline__ void block_done(int, int) {}
#endif
};

// Consumer thread t (0..T-1: 256, or fewer where a tile's rows end early) adds its BN/2 accumulators
// into a unit's float32 sums as float4s t, t + T, ... (vector reductions, done in L2; every piece's
// thread t holds the same fragment).
template <int BN, int T = 256>
__device__ __forceinline__ void add_into_sums(const float (&d)[BN / 2], float* sums, int t) {
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
        asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n"
                     ::"l"(sums + 4 * (j * T + t)), "f"(d[4 * j]), "f"(d[4 * j + 1]), "f"(d[4 * j + 2]), "f"(d[4 * j + 3])
                     : "memory");
}

// The last piece replaces its accumulators with the unit's sums (from L2: this SM may hold an old
// copy in L1), then zeroes them for the next launch. Loading straight into the accumulators
// needs no registers beside them; adding loaded values to them spilled, and the spill slowed
// the main loop by 0.5%.
template <int BN, int T = 256>
__device__ __forceinline__ void take_sums(float (&d)[BN / 2], float* sums, int t) {
    float4* p = reinterpret_cast<float4*>(sums) + t;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        const float4 v = __ldcg(p + j * T);
        d[4 * j] = v.x; d[4 * j + 1] = v.y; d[4 * j + 2] = v.z; d[4 * j + 3] = v.w;
    }
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) __stcg(p + j * T, make_float4(0.f, 0.f, 0.f, 0.f));
}

// After consumers_sync (every consumer thread's reductions issued): publish them and count
// this piece; returns the count before it (acquire: the earlier pieces' sums are visible).
__device__ __forceinline__ int count_piece(int* counter) {
    __threadfence();
    int before;
    asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;\n" : "=r"(before) : "l"(counter) : "memory");
    return before;
}

// ---------------------------------------------------------------------------------------
// The kernel body. Block = 3 warpgroups: 0 = producer, 1 and 2 = consumers (rows 0-63 and
// 64-127 of the block's 128-row tile, all BN columns each).
// Shared memory (1024-byte aligned): STAGES x [A 128x64 (16 KB) | B as BN/64 boxes of 64x64
// (8 KB each)], then the full[STAGES] and empty[STAGES] mbarriers.
// ---------------------------------------------------------------------------------------
// A block's start, in every body: the tensor maps asked for; thread 0 sets up the ring's barriers (full[s]: the
// producer's arrive.expect_tx; empty[s]: `empty_arrivals`); the block (or the cluster) waits until they are set
// up, then for the grid before it (the launch overlaps that grid: await_previous_grid).
template <int STAGES, int CLUSTER, bool EARLY, class FirstPass>
__device__ __forceinline__ void start_block(unsigned full_bar, unsigned empty_bar, unsigned empty_arrivals,
                                            const void* tmA, const void* tmB, const void* tmC,
                                            const FirstPass& first_pass) {
    trace_producer(11);
    prefetch_maps_early(tmA, tmB, tmC);
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_bar + 8 * s, 1);
            mbar_init(empty_bar + 8 * s, empty_arrivals);
        }
        // The inits are generic-proxy writes; TMA's complete_tx (async proxy) and the other
        // block of the cluster must see them initialised.
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        trace_producer(8);
        if constexpr (EARLY) {  // issues_early
            await_previous_grid();
            first_pass();
        }
    }
    if constexpr (splits_cluster_sync<CLUSTER>) cluster_arrive();  // the wait: cluster_wait_if_split
    else if constexpr (CLUSTER > 1) cluster_sync();
    else __syncthreads();
    trace_producer(9);
    await_previous_grid();
    trace_producer(10);
}

template <int BN, int STAGES, bool PERSISTENT, int CLUSTER, int EPI, bool SHARE = false, int BM = 128,
          int A_ROWS = BM, bool PAIR_N = false>
__device__ __forceinline__ void h6_body(int M, int N, int K, const void* tmA, const void* tmB, __half* C,
                                        float* partials, int whole_units = 0) {
    // BM = 128: consumer c owns rows 64c..64c+63 and all BN columns; BM = 64 (few-row products):
    // both own all 64 rows, consumer c columns c*BN/2.. (WN wide), so a tile reads half the A.
    // A_ROWS < BM (products of at most A_ROWS rows): TMA loads only A's first A_ROWS rows; the MMAs
    // read the other rows of the 64-row operand from whatever follows in the stage (B), which only
    // makes rows of C past A_ROWS, and those are never stored or summed.
    constexpr int WN = BM == 128 ? BN : BN / 2;        // a consumer's fragment width
    constexpr int A_BYTES = A_ROWS * H6_BK * 2;        // 16 KB (8 KB for BM = 64, 2 KB for 16 rows)
    // the warps of a consumer whose rows can exist, and the consumer threads that sum a tile (SHARE)
    constexpr int ROW_WARPS = A_ROWS < BM ? A_ROWS / 16 : 4;
    constexpr int SUM_THREADS = 2 * 32 * ROW_WARPS;
    static_assert(A_ROWS == BM || (BM == 64 && A_ROWS % 16 == 0 && A_ROWS < 64 && CLUSTER == 1),
                  "fewer rows of A than the tile: 64-row tiles without clusters");
    if (A_ROWS < BM && M > A_ROWS) __trap();  // the launcher gives these entries products of at most A_ROWS rows
    constexpr int B_BOX_BYTES = H6_BK * 64 * 2;        // one 64 (K) x 64 (N) box, 8 KB
    constexpr int B_BOXES = BN / 64;
    constexpr int STAGE_BYTES = A_BYTES + B_BOXES * B_BOX_BYTES;
    // PAIR_N: a cluster of two side by side (a unit of BM x 2 BN) shares A: each block fetches half of A's rows
    // and multicasts them to both, and fetches its own B. Else the cluster's tiles are stacked and share B.
    constexpr int B_SHARERS = PAIR_N ? 1 : CLUSTER;
    // The B boxes this block fetches (and multicasts): [rank * B_BOXES / B_SHARERS, (rank + 1) * B_BOXES / B_SHARERS),
    // at most MY_B_BOXES (a 192-wide tile's three boxes: one and two).
    constexpr int MY_B_BOXES = (B_BOXES + B_SHARERS - 1) / B_SHARERS;
    constexpr int UNIT_ROWS = PAIR_N ? BM : BM * CLUSTER, UNIT_COLS = PAIR_N ? BN * CLUSTER : BN;
    static_assert(!PAIR_N || (CLUSTER == 2 && BM == 128 && A_ROWS == BM), "side-by-side pairs of 128-row tiles");
    static_assert(PERSISTENT || CLUSTER == 1 || PAIR_N, "stacked clusters only in the persistent form");
    static_assert(STAGES >= 2, "a stage is released one k tile late (wgmma.wait_group 1)");
    // (a split's slices of a side-by-side pair: each block adds its own tile's sums)
    static_assert(!SHARE || CLUSTER == 1 || PAIR_N != PERSISTENT, "shared tiles: stacked clusters walk units as one");
    static_assert(BM == 128 || (BM == 64 && CLUSTER == 1 && EPI != 2), "64-row tiles: no clusters, no TMA stores");
    static_assert(PERSISTENT || SHARE, "a K split's slices add their sums in the workspace");

    constexpr bool EARLY = issues_early<CLUSTER, (A_ROWS < BM)>;  // thread 0 issues the ring's first pass in start_block
    TileClock tile_clock;  // H6_TRACE: from the kernel's start
    const unsigned base = (smem_u32(h6_smem) + 1023u) & ~1023u;  // 128B swizzle atoms: 1024 B
    const unsigned scratch = base + STAGES * STAGE_BYTES;        // EPI 1: 2 KB per consumer warp
    // EPI 1: 2 KB per consumer warp (none where every tile is a block's last and goes out from the registers:
    // H6_LAST_DIRECT); EPI 2: tma_boxes<WN>() boxes of 8 KB per consumer warpgroup
    constexpr bool ALL_DIRECT = H6_LAST_DIRECT && EPI == 1 && !PERSISTENT;
    constexpr int STAGING = EPI == 1 ? (ALL_DIRECT ? 0 : H6_EPI_BYTES) : EPI == 2 ? 2 * tma_boxes<WN>() * 8192 : 0;
    const unsigned full_bar = scratch + STAGING;  // full[s]: + 8 s
    const unsigned empty_bar = full_bar + 8 * STAGES;            // empty[s] at empty_bar + 8 s

    const int warpgroup = threadIdx.x / 128;
    const int tid = threadIdx.x % 128;
    const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0u;

    // The same unit sequence for producer and consumers (the pipeline's stage/phase counters
    // run on across units).
    const int tiles_n = (N + UNIT_COLS - 1) / UNIT_COLS;
    const int units_m = (M + UNIT_ROWS - 1) / UNIT_ROWS;
    const int num_units = PERSISTENT ? units_m * tiles_n : 1;
    const int first_unit = PERSISTENT ? (int)(blockIdx.x / CLUSTER) : 0;
    const int unit_step = PERSISTENT ? (int)(gridDim.x / CLUSTER) : 1;
    const int slices = PERSISTENT ? 1 : (int)gridDim.z;
    const int slice = PERSISTENT ? 0 : (int)blockIdx.z;
    const int all_k_tiles = (K + H6_BK - 1) / H6_BK;  // the last one zero-filled past K
    const int per_slice = (all_k_tiles + slices - 1) / slices;
    const int k_tile0 = slice * per_slice;
    const int k_tiles = max(0, min(per_slice, all_k_tiles - k_tile0));
    // Whole units first; with SHARE (persistent), those past whole_units are shared out by k steps.
    const int whole = SHARE && PERSISTENT ? whole_units : num_units;
    const int shared_units = num_units - whole;
    const unsigned run = blockIdx.x / CLUSTER;  // the stream-K run this block walks (a cluster's blocks alike)
    const H6Share<CLUSTER> share{whole, shared_units, all_k_tiles};
    // The first row and column of C of this block's tile of unit u.
    const auto tile_origin = [&](int u, int& m0, int& n0) {
        int um, tn;
        if (PERSISTENT) unit_coords<UNIT_ROWS>(u, units_m, tiles_n, um, tn);
        else { um = blockIdx.y; tn = blockIdx.x; }  // (PAIR_N: the grid's x counts blocks, rank included)
        if constexpr (PAIR_N) {
            m0 = um * BM;
            n0 = PERSISTENT ? (tn * CLUSTER + (int)rank) * BN : tn * BN;
        } else {
            m0 = (um * CLUSTER + (int)rank) * BM;
            n0 = tn * BN;
        }
    };
    const auto walk = [&]() {
        H6Walk w{first_unit, unit_step, whole, k_tile0, k_tile0 + k_tiles, 0, 0, all_k_tiles};
        if (SHARE && shared_units > 0) {
            w.it = share.start(run);
            w.hi = share.start(run + 1);
        }
        return w;
    };

    // The producer's loop (thread 0): the walk's k steps from the `from`-th to the one before `until`, each loaded
    // into the ring's next stage once its readers have freed it (steps before `from` only move the ring on).
    // H6_EARLY_ISSUE: the ring's first pass, which waits for no reader, is issued before the block's barrier.
    const auto produce = [&](int from, int until) {
        // B read once (C one row of tiles) and too large to stay in the L2 between launches: its
        // lines go first, and the L2 keeps A and the workspace's sums (the header: "B evicted first").
        const bool b_streams = H6_B_EVICT_FIRST && units_m == 1 && (long long)K * N * sizeof(__half) > H6_L2_BYTES;
        const unsigned long long b_policy = l2_policy(b_streams);
        int s = 0;
        unsigned phase = 0;
        int step = 0;  // the walk's k steps so far
        H6Walk w = walk();
        int u, kb, ke;
        while (w.next(u, kb, ke)) {
            int m0, n0;
            tile_origin(u, m0, n0);
            for (int kt = kb; kt < ke; ++kt, ++step) {
                if (EARLY && step == until) return;
                if (EARLY && step < from) {  // issued before the block's barrier
                    if (++s == STAGES) { s = 0; phase ^= 1; }
                    continue;
                }
                // Free once every consumer warp (of every block of the cluster, since our
                // B boxes land in all of them) has finished reading it. The first pass
                // waits on the phase "before" the first: it returns at once.
                mbar_wait(empty_bar + 8 * s, phase ^ 1);
                const unsigned fb = full_bar + 8 * s;
                const unsigned sa = base + s * STAGE_BYTES;
                const int k0 = kt * H6_BK;
                // Counts all bytes landing in this block: A, our B boxes and the peers'.
                mbar_arrive_expect_tx(fb, STAGE_BYTES);
                if constexpr (PAIR_N)  // our half of A's rows (A's box is BM / 2 rows), into both blocks
                    tma_load_2d_multicast(sa + rank * (A_BYTES / 2), tmA, k0, m0 + (int)rank * (BM / 2), fb, 3);
                else
                    tma_load_2d(sa, tmA, k0, m0, fb);
                const int b_rank = B_SHARERS > 1 ? (int)rank : 0;  // among the blocks that share B
                const int first_box = b_rank * B_BOXES / B_SHARERS, end_box = (b_rank + 1) * B_BOXES / B_SHARERS;
#pragma unroll
                for (int j = 0; j < MY_B_BOXES; ++j) {
                    const int box = first_box + j;
                    if (box >= end_box) break;
                    const unsigned dst = sa + A_BYTES + box * B_BOX_BYTES;
                    if constexpr (B_SHARERS > 1)
                        tma_load_2d_multicast(dst, tmB, n0 + 64 * box, k0, fb, (unsigned short)((1u << CLUSTER) - 1));
                    else if (b_streams)
                        tma_load_2d_hint(dst, tmB, n0 + 64 * box, k0, fb, b_policy);
                    else
                        tma_load_2d(dst, tmB, n0 + 64 * box, k0, fb);
                }
                if (H6_TRACE && step == 0) trace_producer(7);
                if (++s == STAGES) { s = 0; phase ^= 1; }
            }
        }
        producer_tail<STAGES, CLUSTER>(empty_bar, s, phase);
    };

    // the ring's empty barriers: one arrive per consumer warp, per block
    start_block<STAGES, CLUSTER, EARLY>(full_bar, empty_bar, 8 * CLUSTER, tmA, tmB, EPI == 2 ? (const void*)C : nullptr,
                                 [&] { produce(0, STAGES); });

    if (warpgroup == 0) {
        // ---------------- producer ----------------
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(H6_PRODUCER_REGS));
        cluster_wait_if_split<CLUSTER>();
        if (tid == 0) {
            trace_producer(6);
            if (!H6_EARLY_PREFETCH) {
                prefetch_tmap(tmA);
                prefetch_tmap(tmB);
            }
            produce(EARLY ? STAGES : 0, 1 << 30);
        }
        __syncwarp();
    } else {
        // ---------------- consumers ----------------
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(H6_CONSUMER_REGS));
        cluster_wait_if_split<CLUSTER>();
        const int c = warpgroup - 1;
        const int c_row = BM == 128 ? 64 * c : 0, c_col = BM == 128 ? 0 : WN * c;  // this consumer's slab
        const int warp = tid / 32, lane = tid % 32;
        // Descriptor templates at stage 0; a stage / k step adds (byte offset >> 4) to the
        // address field (no carry out of it: shared addresses are < 256 KB).
        const unsigned long long desc_a0 = make_desc(base + c_row * 128, 16, 1024);
        const unsigned long long desc_b0 = make_desc(base + A_BYTES + c_col / 64 * B_BOX_BYTES, B_BOX_BYTES, 1024);
        float acc[WN / 2];
        PendingSlab<WN, EPI> pending;  // EPI 1, 2: the last tile's halves, while their stores go out
        const SlabOut out{C, M, N, warp, lane, tid, c,
                          EPI == 2 ? scratch + c * (tma_boxes<WN>() * 8192) : scratch + (c * 4 + warp) * 2048};
        int s = 0;
        unsigned phase = 0;
        // Stage s's descriptors and full barrier, stepped with the ring (the header: "the ring's descriptors and
        // barriers stepped, not rebuilt"; no carry leaves a descriptor's address field: shared addresses < 256 KB).
        unsigned long long da_s = desc_a0, db_s = desc_b0;
        unsigned fb_s = full_bar;
        H6Walk w = walk();
        // The walk runs one unit ahead: the next unit and its tile's origin (two integer divisions, ~80
        // dependent instructions) are found under this tile's first MMAs, not between its last MMAs and the
        // next tile's first, where the tensor cores wait (the header: "the next tile looked up early").
        int u, kb, ke, m0 = 0, n0 = 0;
        bool more = w.next(u, kb, ke);
        if (more) tile_origin(u, m0, n0);
        while (more) {
            int next_u = 0, next_kb = 0, next_ke = 0, next_m0 = 0, next_n0 = 0;
            bool next_more = false;
            const auto look_ahead = [&]() {
                next_more = w.next(next_u, next_kb, next_ke);
                if (next_more) tile_origin(next_u, next_m0, next_n0);
            };
            unsigned prev_eb = 0;  // the empty barrier of the stage read last
            if constexpr (SHARE) {
                if (ke == kb) {  // a K slice past the last k tile adds zeros
#pragma unroll
                    for (int j = 0; j < WN / 2; ++j) acc[j] = 0.f;
                }
            }
            tile_clock.new_tile();
            for (int kt = kb; kt < ke; ++kt) {
                tile_clock.mark_now();
                mbar_wait(fb_s, phase);
                tile_clock.stage_full(kt == kb);
                fence_acc(acc);
                wgmma_fence();  // orders our earlier register accesses before the async MMAs
#pragma unroll
                for (int kk = 0; kk < H6_BK / 16; ++kk) {
                    // A: k16 step = 32 bytes inside the 128-byte swizzled row. B: k16 step =
                    // 16 rows of 128 bytes = 2048 bytes (two whole 8-row swizzle atoms).
                    const unsigned long long da = da_s + kk * (32u / 16), db = db_s + kk * (2048u / 16);
                    wgmma_bn<WN>(acc, da, db, kt != kb || kk != 0);
                }
                wgmma_commit();
                fence_acc(acc);
                // (The stream-K and split entries look ahead after their epilogue: 5 more live registers spill there.)
                if constexpr (!SHARE) {
                    if (kt == kb) look_ahead();
                }
                // While this k tile's MMAs run, a round of the last tile's stores (the first k tiles of a tile).
                if constexpr (EPI != 0 && H6_OVERLAP_EPI) pending.store_one(out);
                // Keep this k tile's MMAs in flight; the previous tile's are then done and
                // its stage can go back to the producer.
                tile_clock.mark_now();
                wgmma_wait<1>();
                tile_clock.mmas_waited();
                if (kt > kb && lane == 0) {
                    mbar_arrive(prev_eb);
#pragma unroll
                    for (int r = 1; r < CLUSTER; ++r) mbar_arrive_cluster(prev_eb, (rank + r) % CLUSTER);
                }
                prev_eb = fb_s + (empty_bar - full_bar);
                if (++s == STAGES) {
                    s = 0; phase ^= 1;
                    da_s = desc_a0; db_s = desc_b0; fb_s = full_bar;
                } else {
                    da_s += STAGE_BYTES / 16; db_s += STAGE_BYTES / 16; fb_s += 8;
                }
            }
            wgmma_wait<0>();
            fence_acc(acc);
            tile_clock.tile_done(c, tid);
            if (lane == 0 && ke > kb) {
                mbar_arrive(prev_eb);
#pragma unroll
                for (int r = 1; r < CLUSTER; ++r) mbar_arrive_cluster(prev_eb, (rank + r) % CLUSTER);
            }
            if constexpr (EPI != 0) pending.store_rest(out);  // fewer k tiles than rounds

            bool stores = true;  // this block stores the tile (with SHARE: its last piece)
            if constexpr (SHARE) {
                if (kb > 0 || ke < all_k_tiles) {  // a piece of a shared unit (or a K slice of a tile)
                    const int t = tid + 32 * ROW_WARPS * c;  // consumer thread 0..SUM_THREADS-1 (if its rows exist)
                    const int first = u * all_k_tiles;
                    // shared tiles x A_ROWS x BN float sums (a shared unit's tiles: one a block of the cluster), then a
                    // counter per shared tile; split-K: every tile is shared by its gridDim.z slices
                    const int index = PERSISTENT ? (u - whole) * CLUSTER + (int)rank : (int)(blockIdx.y * gridDim.x + blockIdx.x);
                    const int count = PERSISTENT ? shared_units * CLUSTER : (int)(gridDim.x * gridDim.y);
                    float* sums = partials + (size_t)index * A_ROWS * BN;
                    int* counter = reinterpret_cast<int*>(partials + (size_t)count * A_ROWS * BN) + index;
                    const unsigned verdict = empty_bar + 8 * STAGES;  // thread 0 tells the others
                    // a thread whose fragment rows all lie past M adds and takes nothing (few-row products)
                    const bool rows_in = warp < ROW_WARPS && m0 + c_row + warp * 16 + lane / 4 < M;
                    if (rows_in) add_into_sums<WN, SUM_THREADS>(acc, sums, t);
                    consumers_sync();
                    if (t == 0) {
                        const int pieces = PERSISTENT ? share.pieces((int)run, first, first + all_k_tiles) : slices;
                        const int last = count_piece(counter) == pieces - 1;
                        if (last) *counter = 0;  // every piece has counted: ready for the next launch
                        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(verdict), "r"(last) : "memory");
                    }
                    consumers_sync();
                    unsigned last;
                    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(last) : "r"(verdict) : "memory");
                    stores = last;  // else a later piece stores the unit
                    if (last && rows_in) take_sums<WN, SUM_THREADS>(acc, sums, t);
                }
            }
            // Epilogue (fragment layout: see store_slab_direct).
            // EPI 2: C is the address of C's tensor map (nsprof.ladder.ops.matmul), the warpgroup stores its slab;
            // EPI 1: each warp its 16 rows, if they can exist.
            // H6_LAST_DIRECT: the block's last tile (a non-persistent block's only one) from the registers
            const bool direct = H6_LAST_DIRECT && EPI == 1 && (!PERSISTENT || (!SHARE && !next_more));
            if (stores) {
                if (direct) {
                    if (warp < ROW_WARPS) store_slab_quads<WN>(acc, C, M, N, m0 + c_row + warp * 16, n0 + c_col, lane);
                } else if constexpr (EPI == 2) pending.hold(acc, m0 + c_row, n0 + c_col);
                else if (EPI == 1 && warp < ROW_WARPS) pending.hold(acc, m0 + c_row + warp * 16, n0 + c_col);
                else if (warp < ROW_WARPS) store_slab_direct<WN>(acc, C, M, N, m0 + c_row + warp * 16, n0 + c_col, lane);
                tile_clock.epilogue_step(12, c, tid);
                if constexpr (EPI != 0 && !(PERSISTENT && H6_OVERLAP_EPI)) pending.store_rest(out);
                tile_clock.epilogue_step(13, c, tid);
            }
            if constexpr (SHARE) look_ahead();  // the others looked ahead under the first k tile's MMAs
            tile_clock.epilogue_step(14, c, tid);
            more = next_more;
            u = next_u; kb = next_kb; ke = next_ke; m0 = next_m0; n0 = next_n0;
        }
        if constexpr (EPI != 0) pending.store_rest(out);  // the block's last tile
        if constexpr (EPI == 2) {
            if (tid == 0) bulk_wait();  // the last stores read shared memory the block gives up on exit
        }
        tile_clock.block_done(c, tid);
    }
    // No block of a cluster may exit while its peer can still arrive on its barriers (H6_CLUSTER_SPLIT: the
    // producer's tail has waited for those arrivals).
    if constexpr (CLUSTER > 1 && !splits_cluster_sync<CLUSTER>) cluster_sync();
}

// ---------------------------------------------------------------------------------------
// Ping-pong body: the same producer, but each consumer warpgroup owns whole tiles of WM x BN
// (WM = 128: two m64nBN accumulator fragments, rows 0-63 and 64-127; WM = 64: one), the
// two taking the block's tiles in turn: warpgroup 1 the block's 1st, 3rd, ... tile, 2 the
// 2nd, 4th, .... The producer fills the ring in that same order, so each stage is read by
// one warpgroup (per block of the cluster): empty barriers count 4 warps x CLUSTER.
// Turn order (two named barriers, 256 threads each): a warpgroup starts a tile's MMAs only
// after the other one has issued the last k tile of the previous tile (bar.arrive right
// after that commit; bar.sync before the first full-wait). So its epilogue (convert, store)
// runs while the other warpgroup keeps the tensor cores busy, and the MMAs of the two never
// compete. The turn also keeps the mbarrier parity waits sound: when a warpgroup waits on
// full[s] for ring slot g, every slot before g has been waited on already, so the barrier is
// at most one phase away from the one it waits for (try_wait.parity cannot tell phases two
// apart). Each warpgroup steps its ring position over the other's tiles (k_tiles slots).
// ---------------------------------------------------------------------------------------
// Barrier ids 1 (warpgroup 1's turn) and 2 (warpgroup 2's); immediate ids, so ptxas
// reserves 3 hardware barriers rather than all 16.
__device__ __forceinline__ void named_bar_sync(int id) {
    if (id == 1) asm volatile("bar.sync 1, 256;\n" ::: "memory");
    else asm volatile("bar.sync 2, 256;\n" ::: "memory");
}
__device__ __forceinline__ void named_bar_arrive(int id) {
    if (id == 1) asm volatile("bar.arrive 1, 256;\n" ::: "memory");
    else asm volatile("bar.arrive 2, 256;\n" ::: "memory");
}

template <int WM, int BN, int STAGES, int CLUSTER, int EPI, bool PAIR_N = false>
__device__ __forceinline__ void h6_pp_body(int M, int N, int K, const void* tmA, const void* tmB, __half* C) {
    constexpr int F = WM / 64;                         // m64 accumulator fragments per warpgroup
    constexpr int A_BYTES = WM * H6_BK * 2;            // A's WM rows x 128 bytes (PAIR_N: two boxes of WM / 2 rows)
    constexpr int B_BOX_BYTES = H6_BK * 64 * 2;        // 8 KB
    constexpr int B_BOXES = BN / 64;
    constexpr int STAGE_BYTES = A_BYTES + B_BOXES * B_BOX_BYTES;
    // PAIR_N: a cluster's tiles side by side (a unit of WM x CLUSTER BN) share A, each block fetching half of its
    // rows and multicasting them to both, and fetch their own B; else stacked (CLUSTER WM x BN), sharing B.
    constexpr int MY_B_BOXES = PAIR_N ? B_BOXES : B_BOXES / CLUSTER;
    constexpr int UNIT_ROWS = PAIR_N ? WM : WM * CLUSTER, UNIT_COLS = PAIR_N ? BN * CLUSTER : BN;
    static_assert(WM == 64 || WM == 128, "one or two m64 fragments");
    static_assert(F * BN / 2 <= 128, "at most 128 accumulators per thread");
    static_assert(PAIR_N || B_BOXES % CLUSTER == 0, "B boxes must split evenly over the cluster");
    static_assert(!PAIR_N || (CLUSTER == 2 && WM == 128), "side-by-side pairs of 128-row tiles");
    static_assert(STAGES >= 2, "a stage is released one k tile late (wgmma.wait_group 1)");

    TileClock tile_clock;  // H6_TRACE: from the kernel's start (each warpgroup its own tiles; the block's row is
                           // warpgroup 1's: its first tile is the block's first, its end is not the block's)
    constexpr bool EARLY = issues_early<CLUSTER, false>;  // as in h6_body
    const unsigned base = (smem_u32(h6_smem) + 1023u) & ~1023u;
    const unsigned scratch = base + STAGES * STAGE_BYTES;
    // EPI 1: 2 KB per consumer warp; EPI 2: tma_boxes<BN>() staging boxes of 8 KB per consumer warpgroup
    const unsigned full_bar = scratch + (EPI == 1 ? H6_EPI_BYTES : EPI == 2 ? 2 * tma_boxes<BN>() * 8192 : 0);
    const unsigned empty_bar = full_bar + 8 * STAGES;

    // Broadcast from lane 0, so the compiler knows the warpgroup is the same in every lane and keeps what derives
    // from it (the MMA descriptors) in uniform registers: fewer instructions a k tile (the header says what it gained).
    const int warpgroup = __shfl_sync(0xffffffffu, (int)threadIdx.x / 128, 0);
    const int tid = threadIdx.x % 128;
    const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0u;

    const int tiles_n = (N + UNIT_COLS - 1) / UNIT_COLS;
    const int units_m = (M + UNIT_ROWS - 1) / UNIT_ROWS;
    const int num_units = units_m * tiles_n;
    const int first_unit = (int)(blockIdx.x / CLUSTER);
    const int unit_step = (int)(gridDim.x / CLUSTER);
    const int my_units = first_unit < num_units ? (num_units - first_unit + unit_step - 1) / unit_step : 0;
    const int k_tiles = (K + H6_BK - 1) / H6_BK;  // the last one zero-filled past K
    // The first row and column of C of this block's tile of the block's i-th unit.
    const auto tile_origin = [&](int i, int& m0, int& n0) {
        int um, tn;
        unit_coords<UNIT_ROWS, H6_PP_GROUP_ROWS>(first_unit + i * unit_step, units_m, tiles_n, um, tn);
        m0 = PAIR_N ? um * WM : (um * CLUSTER + (int)rank) * WM;
        n0 = PAIR_N ? (tn * CLUSTER + (int)rank) * BN : tn * BN;
    };

    // The producer's loop (thread 0), as h6_body's: k steps from the `from`-th to the one before `until`.
    const auto produce = [&](int from, int until) {
        int s = 0;
        unsigned phase = 0;
        int step = 0;  // k steps so far
        for (int i = 0; i < my_units; ++i) {
            int m0, n0;
            tile_origin(i, m0, n0);
            for (int kt = 0; kt < k_tiles; ++kt, ++step) {
                if (EARLY && step == until) return;
                if (EARLY && step < from) {  // issued before the block's barrier
                    if (++s == STAGES) { s = 0; phase ^= 1; }
                    continue;
                }
                mbar_wait(empty_bar + 8 * s, phase ^ 1);
                const unsigned fb = full_bar + 8 * s;
                const unsigned sa = base + s * STAGE_BYTES;
                const int k0 = kt * H6_BK;
                mbar_arrive_expect_tx(fb, STAGE_BYTES);
                if constexpr (PAIR_N)  // our half of A's rows, into both blocks
                    tma_load_2d_multicast(sa + rank * (A_BYTES / 2), tmA, k0, m0 + (int)rank * (WM / 2), fb, 3);
                else
                    tma_load_2d(sa, tmA, k0, m0, fb);
#pragma unroll
                for (int j = 0; j < MY_B_BOXES; ++j) {
                    const int box = PAIR_N ? j : (int)rank * MY_B_BOXES + j;
                    const unsigned dst = sa + A_BYTES + box * B_BOX_BYTES;
                    if constexpr (CLUSTER > 1 && !PAIR_N)
                        tma_load_2d_multicast(dst, tmB, n0 + 64 * box, k0, fb, (unsigned short)((1u << CLUSTER) - 1));
                    else
                        tma_load_2d(dst, tmB, n0 + 64 * box, k0, fb);
                }
                if (H6_TRACE && step == 0) trace_producer(7);
                if (++s == STAGES) { s = 0; phase ^= 1; }
            }
        }
        producer_tail<STAGES, CLUSTER>(empty_bar, s, phase);
    };

    // the ring's empty barriers: the 4 warps of the warpgroup reading a stage, per block
    start_block<STAGES, CLUSTER, EARLY>(full_bar, empty_bar, 4 * CLUSTER, tmA, tmB, EPI == 2 ? (const void*)C : nullptr,
                                 [&] { produce(0, STAGES); });

    if (warpgroup == 0) {
        // ---------------- producer (as in h6_body; tiles in the block's order) ----------------
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(H6_PRODUCER_REGS));
        cluster_wait_if_split<CLUSTER>();
        if (tid == 0) {
            trace_producer(6);
            if (!H6_EARLY_PREFETCH) {
                prefetch_tmap(tmA);
                prefetch_tmap(tmB);
            }
            produce(EARLY ? STAGES : 0, 1 << 30);
        }
        __syncwarp();
    } else {
        // ---------------- consumers: tiles in turn ----------------
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(H6_CONSUMER_REGS));
        cluster_wait_if_split<CLUSTER>();
        const int c = warpgroup - 1;
        const int warp = tid / 32, lane = tid % 32;
        const unsigned long long desc_a0 = make_desc(base, 16, 1024);   // fragment f: + f * 8 KB
        const unsigned long long desc_b0 = make_desc(base + A_BYTES, B_BOX_BYTES, 1024);
        float acc[F][BN / 2];
        for (int i = c; i < my_units; i += 2) {
            int m0, n0;
            tile_origin(i, m0, n0);
            const int g0 = i * k_tiles;  // this tile's first ring slot
            int s = g0 % STAGES;
            unsigned phase = (unsigned)(g0 / STAGES) & 1u;
            // Stage s's descriptors and barriers, stepped with the ring, so the k loop does not rebuild them from
            // the shared window's base (no carry leaves a descriptor's address field: shared addresses < 256 KB).
            unsigned long long da_s = desc_a0 + (unsigned)s * (STAGE_BYTES / 16);
            unsigned long long db_s = desc_b0 + (unsigned)s * (STAGE_BYTES / 16);
            unsigned fb_s = full_bar + 8 * s;
            if (i > 0) named_bar_sync(1 + c);  // our turn: the other warpgroup issued tile i-1
            unsigned prev_eb = 0;  // the empty barrier of the stage read last
            tile_clock.new_tile();
            for (int kt = 0; kt < k_tiles; ++kt) {
                tile_clock.mark_now();
                mbar_wait(fb_s, phase);
                tile_clock.stage_full(kt == 0);
#pragma unroll
                for (int f = 0; f < F; ++f) fence_acc(acc[f]);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < H6_BK / 16; ++kk) {
                    const unsigned long long db = db_s + kk * (2048u / 16);
#pragma unroll
                    for (int f = 0; f < F; ++f) {
                        const unsigned long long da = da_s + (f * 8192u + kk * 32u) / 16;
                        wgmma_bn<BN>(acc[f], da, db, (kt | kk) != 0);
                    }
                }
                wgmma_commit();
                if (kt == k_tiles - 1 && i + 1 < my_units) named_bar_arrive(2 - c);  // the other's turn
#pragma unroll
                for (int f = 0; f < F; ++f) fence_acc(acc[f]);
                tile_clock.mark_now();
                wgmma_wait<1>();
                tile_clock.mmas_waited();
                if (kt > 0 && lane == 0) {
                    mbar_arrive(prev_eb);
#pragma unroll
                    for (int r = 1; r < CLUSTER; ++r) mbar_arrive_cluster(prev_eb, (rank + r) % CLUSTER);
                }
                prev_eb = fb_s + (empty_bar - full_bar);
                if (++s == STAGES) {
                    s = 0; phase ^= 1;
                    da_s -= (STAGES - 1) * (STAGE_BYTES / 16); db_s -= (STAGES - 1) * (STAGE_BYTES / 16);
                    fb_s -= 8 * (STAGES - 1);
                } else {
                    da_s += STAGE_BYTES / 16; db_s += STAGE_BYTES / 16; fb_s += 8;
                }
            }
            wgmma_wait<0>();
#pragma unroll
            for (int f = 0; f < F; ++f) fence_acc(acc[f]);
            tile_clock.tile_done(c, tid);
            if (lane == 0) {
                mbar_arrive(prev_eb);
#pragma unroll
                for (int r = 1; r < CLUSTER; ++r) mbar_arrive_cluster(prev_eb, (rank + r) % CLUSTER);
            }
            // H6_RING_STAGING: the block's last tile stages C in the ring, which nothing reads or loads any more (the
            // other warpgroup's turn ended before ours began; every stage loaded was read), every box its own: no
            // round waits for the reads of the one before.
            const bool in_ring = H6_RING_STAGING && i == my_units - 1;
            static_assert(F * BN / 64 * 8192 <= STAGES * STAGE_BYTES, "C's boxes fit in the ring");
#pragma unroll
            for (int f = 0; f < F; ++f) {
                if (H6_LAST_DIRECT && EPI == 1 && i == my_units - 1) {  // as in h6_body
                    store_slab_quads<BN>(acc[f], C, M, N, m0 + f * 64 + warp * 16, n0, lane);
                } else if constexpr (EPI == 2) {  // C is the address of C's tensor map: the fragment goes out by TMA
                    unsigned h[BN / 4];
                    pack_slab<BN>(acc[f], h);
                    constexpr int ROUNDS = BN / 64 / tma_boxes<BN>();
#pragma unroll
                    for (int r = 0; r < ROUNDS; ++r)
                        store_round_tma<BN, 3>(h, r, C, m0 + f * 64, n0, warp, lane, tid, c,
                                               in_ring ? base + (f * ROUNDS + r) * tma_boxes<BN>() * 8192
                                                       : scratch + c * tma_boxes<BN>() * 8192, in_ring);
                } else {
                    store_slab<BN, EPI>(acc[f], C, M, N, m0 + f * 64 + warp * 16, n0, lane, scratch + (c * 4 + warp) * 2048);
                }
            }
            tile_clock.epilogue_step(12, c, tid);
        }
        if constexpr (EPI == 2) {
            if (tid == 0) bulk_wait();  // the last stores read shared memory the block gives up on exit
        }
        tile_clock.epilogue_step(13, c, tid);
        tile_clock.block_done(c, tid);
    }
    if constexpr (CLUSTER > 1 && !splits_cluster_sync<CLUSTER>) cluster_sync();  // as h6_body's end
}

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_128x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<256, 4, true, 1, H6_EPI>(M, N, K, tmA, tmB, C, partials)));
}

// The same with a stream-K tail: units past whole_units are shared out by k steps over the
// grid's shared_blocks (= gridDim.x) blocks; partials holds the float32 sums of each shared
// unit (128 x 256), then a counter per shared unit, all zeroed (nsprof.ladder.ops.matmul).
extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_sk_128x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials,
                    int whole_units, int shared_blocks) {
    H6_SM90A_ONLY((h6_body<256, 4, true, 1, H6_EPI, true>(M, N, K, tmA, tmB, C, partials, whole_units)));
}

// hgemm_h6_128x256 and its stream-K form with TMA stores of C (EPI 2): C is the address of C's
// tensor map (64 x 64 boxes, 128-byte swizzle); H6_TMA_STAGES-deep ring, H6_TMA_BOXES staging boxes
// per consumer warpgroup.
extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_tma_128x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<256, H6_TMA_STAGES, true, 1, 2>(M, N, K, tmA, tmB, C, partials)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_sk_tma_128x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials,
                        int whole_units, int shared_blocks) {
    H6_SM90A_ONLY((h6_body<256, H6_TMA_STAGES, true, 1, 2, true>(M, N, K, tmA, tmB, C, partials, whole_units)));
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
hgemm_h6_cl2_256x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<256, 4, true, 2, H6_EPI>(M, N, K, tmA, tmB, C, partials)));
}

// The cluster of two with C stored by TMA (a candidate: does B's multicast pay once the
// epilogue no longer stalls the MMAs?).
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
hgemm_h6_cl2_tma_256x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<256, H6_TMA_STAGES, true, 2, 2>(M, N, K, tmA, tmB, C, partials)));
}

// 128 x 192 tiles in clusters of two (a unit of 256 x 192; rank 0 fetches B's first box, rank 1 the other two).
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
hgemm_h6_cl2_tma_256x192(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<192, H6_STAGES_192, true, 2, 2>(M, N, K, tmA, tmB, C, partials)));
}

// The clusters of two with a stream-K tail (launch_plan._with_shared_tail): units past whole_units are shared out by
// k steps over the grid's clusters, both blocks of a cluster walking the same runs, each adding its own tile's sums.
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
hgemm_h6_cl2_sk_tma_256x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials,
                            int whole_units, int shared_blocks) {
    H6_SM90A_ONLY((h6_body<256, H6_TMA_STAGES, true, 2, 2, true>(M, N, K, tmA, tmB, C, partials, whole_units)));
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
hgemm_h6_cl2_sk_tma_256x192(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials,
                            int whole_units, int shared_blocks) {
    H6_SM90A_ONLY((h6_body<192, H6_STAGES_192, true, 2, 2, true>(M, N, K, tmA, tmB, C, partials, whole_units)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_128x128(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<128, H6_STAGES_128, true, 1, H6_EPI>(M, N, K, tmA, tmB, C, partials)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_128x64(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<64, H6_STAGES_128x64, false, 1, H6_EPI, true>(M, N, K, tmA, tmB, C, partials)));
}

// Side-by-side pairs that share A (candidates, issue 60: the library's 1x2 clusters at 1024^3 and 2048^3). A
// cluster of two blocks computes a unit of 128 x 2 BN; each block fetches 64 of A's 128 rows (A's box is 64 rows)
// and multicasts them to both, and its own B, so a block reads 8 KB of A a k step instead of 16.
// hgemm_h6_cl2a_128x128: the 128x64 tile in pairs (the grid's x counts blocks; K split as hgemm_h6_128x64);
// hgemm_h6_cl2a_tma_128x256 / 128x512: the persistent 128x128 and 128x256 cooperative tiles, C stored by TMA.
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
hgemm_h6_cl2a_128x128(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<64, H6_STAGES_128x64, false, 2, H6_EPI, true, 128, 128, true>(M, N, K, tmA, tmB, C, partials)));
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
hgemm_h6_cl2a_tma_128x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<128, H6_STAGES_128, true, 2, 2, false, 128, 128, true>(M, N, K, tmA, tmB, C, partials)));
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
hgemm_h6_cl2a_tma_128x512(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<256, H6_TMA_STAGES, true, 2, 2, false, 128, 128, true>(M, N, K, tmA, tmB, C, partials)));
}

// 128 x 192 tiles: where 128 x 256 leaves a last wave mostly empty, e.g. 3072^3, 288 tiles of 128 x 256 for
// 132 SMs (2.18 waves: 73% of the slots busy) against 384 of 128 x 192 (2.91 waves: 97%). This form stages C
// through shared memory and stores it with the threads (a candidate); hgemm_h6_tma_128x192, declared, stores
// it by TMA, a warpgroup's 64 x 192 slab in three rounds of one staging box (5 stages x 40 KB + 2 x 8 KB).
extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_128x192(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<192, H6_STAGES_192, true, 1, H6_EPI>(M, N, K, tmA, tmB, C, partials)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_tma_128x192(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<192, H6_STAGES_192, true, 1, 2>(M, N, K, tmA, tmB, C, partials)));
}

// Products of 65 to 128 rows whose persistent tiles do not fill the SMs (128 x 4096 x 4096: 32 tiles of
// 128 x 128): K split over gridDim.z, the slices adding their sums in a workspace, the last storing C.
// hgemm_h6_split_128x128 is declared (nsprof/ladder/ops/hgemm.py); the 128 x 256 form a candidate.
extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_split_128x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<256, 4, false, 1, H6_EPI, true>(M, N, K, tmA, tmB, C, partials)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_split_128x128(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<128, H6_STAGES_128, false, 1, H6_EPI, true>(M, N, K, tmA, tmB, C, partials)));
}

// Few-row products (M <= 64): 64-row tiles, each consumer warpgroup a 64 x bn/2 half, K split
// over gridDim.z. A 128-row tile would run twice the tensor-core work of the rows that exist
// (at 16 x 14336 x 4096 the MMAs of 128 rows take as long as streaming B once); these run half
// and keep up to H6_STAGES_64 stages of B in flight per SM.
extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_64x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<256, H6_STAGES_64x256, false, 1, H6_EPI, true, 64>(M, N, K, tmA, tmB, C, partials)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_64x128(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<128, H6_STAGES_64x128, false, 1, H6_EPI, true, 64>(M, N, K, tmA, tmB, C, partials)));
}

// Products of at most 16 rows (decode: 1 to 16 tokens): the 64-row tiles loading only A's first 16 rows
// (2 KB a stage instead of 8), so a stage is 34 KB for 16 x 256 (5 of them; 6 fit, and ran slower) and 18 KB for
// 16 x 128 (11, against 8 x 24 KB); the MMAs still run 64 rows (wgmma's m64).
extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_16x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<256, H6_STAGES_16x256, false, 1, H6_EPI, true, 64, 16>(M, N, K, tmA, tmB, C, partials)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_16x128(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<128, H6_STAGES_16x128, false, 1, H6_EPI, true, 64, 16>(M, N, K, tmA, tmB, C, partials)));
}

// Stream-K forms (persistent, one block per SM, the last tiles' k steps shared out evenly): candidates
// for products whose tiles do not fill the SMs (14336 columns: 56 tiles of 64 x 256, 112 of 128 x 128).
extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_sk_64x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials,
                   int whole_units, int shared_blocks) {
    H6_SM90A_ONLY((h6_body<256, H6_STAGES_64x256, true, 1, H6_EPI, true, 64>(M, N, K, tmA, tmB, C, partials, whole_units)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_sk_64x128(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials,
                   int whole_units, int shared_blocks) {
    H6_SM90A_ONLY((h6_body<128, H6_STAGES_64x128, true, 1, H6_EPI, true, 64>(M, N, K, tmA, tmB, C, partials, whole_units)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_sk_128x128(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials,
                    int whole_units, int shared_blocks) {
    H6_SM90A_ONLY((h6_body<128, H6_STAGES_128, true, 1, H6_EPI, true>(M, N, K, tmA, tmB, C, partials, whole_units)));
}

// Ping-pong entries (bm x bn = the unit: CLUSTER warpgroup tiles stacked vertically). hgemm_h6_pp_128x128 stages
// C through the warps' 2 KB tiles: a candidate since its TMA-store form below took its plans.
extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_pp_128x128(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_pp_body<128, 128, H6_PP_STAGES, 1, H6_PP_EPI>(M, N, K, tmA, tmB, C)));
}

// 64 x 64 warpgroup tiles in a 13-deep ring (13 x 16 KB + 16 KB of staging): what the library runs at
// 128 x 4096 x 4096 (nvjet 64x64_64x13: 128 tiles, K whole, one a block). Declared to replace 128 x 128's
// shallow K splits (header, "Tiles per problem").
#ifndef H6_PP64x64_STAGES
#define H6_PP64x64_STAGES 13
#endif
extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_pp_64x64(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_pp_body<64, 64, H6_PP64x64_STAGES, 1, H6_PP_EPI>(M, N, K, tmA, tmB, C)));
}

// Candidates (issue 60, on cold inputs): entries that take A's and B's tensor maps (and C's, where they store C by
// TMA) by value, as const __grid_constant__ parameters, instead of their device addresses (Tile.maps_by_value).
// A map in global memory is fetched before the first load it describes: where the launch's inputs are cold, that
// fetch waits on DRAM too, in series with the first loads. Parameters arrive with the launch.
struct alignas(64) TmaMap {
    unsigned char bytes[128];
};

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_byval_128x64(int M, int N, int K, const __grid_constant__ TmaMap tmA, const __grid_constant__ TmaMap tmB,
                      __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<64, H6_STAGES_128x64, false, 1, H6_EPI, true>(M, N, K, &tmA, &tmB, C, partials)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_byval_16x256(int M, int N, int K, const __grid_constant__ TmaMap tmA, const __grid_constant__ TmaMap tmB,
                      __half* C, float* partials) {
    H6_SM90A_ONLY((h6_body<256, H6_STAGES_16x256, false, 1, H6_EPI, true, 64, 16>(M, N, K, &tmA, &tmB, C, partials)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_byval_pp_tma_128x128(int M, int N, int K, const __grid_constant__ TmaMap tmA,
                              const __grid_constant__ TmaMap tmB, const __grid_constant__ TmaMap tmC, float* partials) {
    H6_SM90A_ONLY((h6_pp_body<128, 128, H6_PP_STAGES, 1, 2>(
        M, N, K, &tmA, &tmB, reinterpret_cast<__half*>(const_cast<TmaMap*>(&tmC)))));
}

// The ping-pong tiles with C stored by TMA (EPI 2: each fragment through its warpgroup's two staging boxes of 8 KB,
// in place of the warps' 2 KB tiles; 6 x 32 KB + 2 x 16 KB): hgemm_h6_pp_tma_128x128 is the declared 128 x 128 tile
// and runs the 128 x 256 plans the ping-pong tile takes over (header, "C stored by TMA in the ping-pong body");
// hgemm_h6_pp_tma_64x64, with one staging box, is a candidate (it lost to hgemm_h6_pp_64x64).
extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_pp_tma_128x128(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_pp_body<128, 128, H6_PP_STAGES, 1, 2>(M, N, K, tmA, tmB, C)));
}

extern "C" __global__ void __launch_bounds__(384, 1)
hgemm_h6_pp_tma_64x64(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_pp_body<64, 64, H6_PP64x64_STAGES, 1, 2>(M, N, K, tmA, tmB, C)));
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
hgemm_h6_pp_cl2_256x128(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_pp_body<128, 128, H6_PP_STAGES, 2, H6_PP_EPI>(M, N, K, tmA, tmB, C)));
}

// The declared ping-pong tile (C by TMA) in stacked pairs that multicast B: the library's fastest kernel at 2048^3
// on an H200 is a ping-pong 128 x 128 tile in 2 x 1 clusters (nvjet 128x128_64x6_2x1, cuBLASLt's candidate 2).
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
hgemm_h6_pp_cl2_tma_256x128(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_pp_body<128, 128, H6_PP_STAGES, 2, 2>(M, N, K, tmA, tmB, C)));
}

// The declared ping-pong tile in side-by-side pairs that multicast A (a unit of 128 x 256): declared where B's rows are
// whole lines and A's start inside sectors, which the stacked pairs' shared B does not help.
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
hgemm_h6_pp_cl2a_tma_128x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_pp_body<128, 128, H6_PP_STAGES, 2, 2, true>(M, N, K, tmA, tmB, C)));
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
hgemm_h6_pp_cl2_128x256(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    H6_SM90A_ONLY((h6_pp_body<64, 256, H6_PP64_STAGES, 2, H6_PP_EPI>(M, N, K, tmA, tmB, C)));
}

// ---------------------------------------------------------------------------------------
// Debug entry: TMA only. One warpgroup, a 64x64 tile, one stage: thread 0 loads A's 64x64
// box and B's 64x64 box, everyone waits on the barrier and reads the swizzled tiles back
// with ordinary loads (byte (r, c) of a 128-byte-row box sits at r*128 + ((c/16) ^ (r%8))*16
// + c%16), accumulating in f32 with FMAs. Slow; only for isolating faults.
// ---------------------------------------------------------------------------------------
__device__ __forceinline__ float swz_load(const unsigned char* tile, int r, int col) {
    const int byte = col * 2;
    return __half2float(*reinterpret_cast<const __half*>(tile + r * 128 + (((byte >> 4) ^ (r & 7)) << 4) + (byte & 15)));
}

extern "C" __global__ void __launch_bounds__(128)
hgemm_h6_debug_tma(int M, int N, int K, const void* tmA, const void* tmB, __half* C, float* partials) {
    const unsigned raw = smem_u32(h6_smem);
    const unsigned base = (raw + 1023u) & ~1023u;
    const unsigned char* tA = h6_smem + (base - raw);  // generic pointers to the same bytes
    const unsigned char* tB = tA + 8192;
    const unsigned bar = base + 16384;
    const int t = threadIdx.x;
    const int r = t / 2, c0 = (t % 2) * 32;  // this thread: row r, columns c0..c0+31
    const int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
    if (t == 0) {
        mbar_init(bar, 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();
    float acc[32];
#pragma unroll
    for (int j = 0; j < 32; ++j) acc[j] = 0.f;
    unsigned phase = 0;
    for (int k0 = 0; k0 < K; k0 += 64) {
        if (t == 0) {
            // Our generic-proxy reads of the previous tile (ordered by __syncthreads) must
            // come before TMA's async-proxy writes into the same bytes.
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            mbar_arrive_expect_tx(bar, 16384);
            tma_load_2d(base, tmA, k0, m0, bar);
            tma_load_2d(base + 8192, tmB, n0, k0, bar);
        }
        mbar_wait(bar, phase);
        phase ^= 1;
        for (int k = 0; k < 64; ++k) {
            const float a = swz_load(tA, r, k);
#pragma unroll
            for (int j = 0; j < 32; ++j) acc[j] = fmaf(a, swz_load(tB, k, c0 + j), acc[j]);
        }
        __syncthreads();
    }
    __half* out = C + (size_t)(m0 + r) * N + n0 + c0;
#pragma unroll
    for (int j = 0; j < 32; j += 2)
        *reinterpret_cast<__half2*>(out + j) = __floats2half2_rn(acc[j], acc[j + 1]);
}
