"""The shared-memory bank model and the global sector model: hand-worked cases, the stages'
declared accesses, and the H200 measurements in tests/data/h200."""

from collections import Counter
from pathlib import Path

import pytest

from nsprof.access import MemoryAccess, lane_elements, parse_shape, user_access
from nsprof.errors import UsageError
from nsprof.explain.bank_model import analyze_shared, conflict_free_row_length
from nsprof.explain.coalescing import analyze_global
from nsprof.explain.evidence import Source, l1_bytes_comparison, measurements, shared_memory_comparison
from nsprof.explain.prediction import predict_mix
from nsprof.ladder.registry import get_stage, stages_for
from nsprof.profile_analysis import opened

H200_RAW = Path(__file__).parent / "data" / "h200" / "ncu-sgemm-ladder-1024-raw.csv"


def shared(shape: str, pattern: str, width: int = 4, op: str = "load"):
    return analyze_shared(user_access("shared", parse_shape(shape), pattern, width, op))


def smem(row: str, col: str, shape=(8, 128), width: int = 4, op: str = "load"):
    return analyze_shared(MemoryAccess("test", "shared", op, "x", shape, row, col, width))


# -- hand-worked cases ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    "shape, pattern, width, op, n_way, wavefronts, minimum",
    [
        ("32x32", "column", 4, "load", 32, 32, 1),  # [r][0] is word 32r: bank 0 for every row
        ("32x33", "column", 4, "load", 1, 1, 1),  # word 33r: bank r
        ("32x32", "row", 4, "load", 1, 1, 1),
        ("32x32", "broadcast", 4, "load", 1, 1, 1),  # one word, multicast to all lanes
        ("32x32", "row", 16, "load", 1, 4, 4),  # float4: a quarter-warp per wavefront
        ("32x32", "column", 16, "load", 8, 32, 4),  # 8 lanes of a quarter on banks 0-3, 8 distinct words
        ("32x32", "broadcast", 16, "load", 1, 2, 2),  # same-address pairs: half-warps
        ("32x32", "broadcast", 16, "store", 1, 4, 4),  # stores are never paired
        ("32x32", "row", 8, "load", 1, 2, 2),  # 64-bit: a half-warp (128 bytes) per wavefront
        ("32x32", "column", 8, "load", 16, 32, 2),  # rows of 256 bytes: 16 lanes of a half on banks 0-1
        ("32x32", "lane / 16, (lane % 16) * 2", 8, "load", 2, 4, 2),  # 16-byte stride: banks repeat after 8 lanes
        ("32x32", "broadcast", 8, "load", 1, 1, 1),  # paired 64-bit load: the whole warp at once
    ],
)
def test_hand_worked_cases(shape, pattern, width, op, n_way, wavefronts, minimum):
    a = shared(shape, pattern, width, op)
    assert (a.n_way, a.wavefronts, a.min_wavefronts) == (n_way, wavefronts, minimum)
    assert a.excess_wavefronts == wavefronts - minimum


def test_column_of_a_32x32_tile_puts_every_lane_in_bank_0():
    a = shared("32x32", "column", 4)
    assert {lane.banks for lane in a.lanes} == {(0,)}
    assert [lane.wavefronts[0] for lane in a.lanes] == list(range(1, 33))


def test_identical_quarter_warps_are_not_merged():
    """NVIDIA forum thread 77228: byte offset (tid % 4) * 16 takes 4 requests, not 2."""
    a = smem("0", "(tid % 4) * 4", shape=(1, 16), width=16)
    assert (a.paired, a.wavefronts) == (False, 4)


def test_pairs_of_lanes_two_apart_also_pair():
    a = smem("0", "(lane / 4) * 8 + (lane % 2) * 4", shape=(1, 128), width=16)
    assert a.paired and a.wavefronts == 2 and len(a.phases) == 2


def test_conflict_free_row_length():
    assert conflict_free_row_length([user_access("shared", (32, 32), "column")]) == 33
    v5_as = [a for a in get_stage("sgemm", "v5").accesses if a.space == "shared" and a.array == "As"]
    assert conflict_free_row_length(v5_as) == 132  # v6's padding: the float4 reads stay aligned
    v3_bs = [a for a in get_stage("sgemm", "v3").accesses if a.space == "shared" and a.array == "Bs"]
    assert conflict_free_row_length(v3_bs) is None  # the conflict is within a row


@pytest.mark.parametrize(
    "pattern, width, sectors, lines, efficiency",
    [("row", 4, 4, 1, 1.0), ("column", 4, 32, 32, 0.125), ("row", 16, 16, 4, 1.0), ("broadcast", 4, 1, 1, 0.125)],
)
def test_sector_model(pattern, width, sectors, lines, efficiency):
    a = analyze_global(user_access("global", (1024, 1024), pattern, width))
    assert (len(a.sectors), len(a.lines), a.efficiency) == (sectors, lines, efficiency)


# -- describing accesses --------------------------------------------------------------------------

def test_lane_expressions_read_like_cuda():
    access = MemoryAccess("t", "shared", "store", "As", (8, 128), "(tid % 2) * 4", "tid / 2")
    assert lane_elements(access)[:4] == [(0, 0), (4, 0), (0, 1), (4, 1)]


@pytest.mark.parametrize("pattern", ["diagonal", "__import__('os').getpid(), 0", "lane.real, 0", "lane ** 2, 0", "1,2,3",
                                     "lane / 0, 0", "1 << 100000000, 0"])
def test_unknown_or_unsafe_access_patterns_are_usage_errors(pattern):
    with pytest.raises(UsageError):
        user_access("shared", (32, 32), pattern)


@pytest.mark.parametrize("text", ["32", "32x", "0x4", "axb", "32x32x32"])
def test_bad_shapes(text):
    with pytest.raises(UsageError, match="bad shape"):
        parse_shape(text)


def test_out_of_bounds_and_misaligned_accesses_are_usage_errors():
    with pytest.raises(UsageError, match="outside the 16x32 array"):
        user_access("shared", (16, 32), "column")
    with pytest.raises(UsageError, match="not a multiple of 16"):  # float4 reads down rows of 130 floats
        analyze_shared(MemoryAccess("t", "shared", "load", "x", (32, 130), "lane", "0", 16))


# -- the registry's declarations ------------------------------------------------------------------

LADDER = stages_for("sgemm")


@pytest.mark.parametrize("stage", [s for s in LADDER if 2 <= s.number <= 8], ids=lambda s: s.stage)
def test_stages_v2_to_v8_declare_their_shared_loads_and_stores(stage):
    # v8's tiles arrive by cp.async (LDGSTS), which writes shared memory without a store instruction
    assert predict_mix(stage, "load") and (predict_mix(stage, "store") is None) == (stage.stage == "v8")


def lane_starts(access: MemoryAccess) -> list[int]:
    """Each lane's first byte, from the declaration's CUDA index expressions evaluated by Python
    itself (C's integer `/` is `//` on these non-negative indices), not by nsprof.access."""
    rows, cols = access.shape
    starts = []
    for lane in range(32):
        names = {"lane": lane, "warp": 0, "tid": lane}
        row, col = (eval(expression.replace("/", "//"), {"__builtins__": {}}, names)  # the registry's own strings
                    for expression in (access.row, access.col))
        assert 0 <= row < rows and 0 <= col < cols
        starts.append((row * cols + col) * access.element_bytes)
    return starts


def wavefronts_by_counting(access: MemoryAccess) -> list[int]:
    """Per phase, the wavefronts by the rule as NVIDIA states it (bank_model's docstring): lanes are
    served 128 bytes at a time (32, 16 or 8 lanes for 4, 8, 16 bytes; twice as many for a load whose
    lanes come in same-address pairs), and a phase takes as many wavefronts as the most distinct
    4-byte words that fall in one of the 32 banks."""
    starts = lane_starts(access)
    paired = access.op == "load" and access.width > 4 and any(
        all(starts[n] == starts[n ^ step] for n in range(32)) for step in (1, 2))
    lanes = min(32, 128 // access.width * (2 if paired else 1))
    counts = []
    for first in range(0, 32, lanes):
        words = {byte // 4 for start in starts[first:first + lanes] for byte in range(start, start + access.width)}
        counts.append(max(Counter(word % 32 for word in words).values()))
    return counts


def sectors_by_counting(access: MemoryAccess) -> set[int]:
    """The 32-byte sectors holding any byte a lane asks for."""
    return {byte // 32 for start in lane_starts(access) for byte in range(start, start + access.width)}


@pytest.mark.parametrize("stage", [s for s in LADDER if s.accesses], ids=lambda s: s.stage)
def test_every_declared_access_costs_what_counting_its_addresses_gives(stage):
    """The models on each access a stage declares, against the lanes' addresses counted directly:
    shared accesses' wavefronts per phase and their minimum (one per phase), global accesses' sectors,
    lines and the bytes used of those moved."""
    for access in stage.accesses:
        if access.space == "shared":
            a = analyze_shared(access)
            expected = wavefronts_by_counting(access)
            assert list(a.phase_wavefronts) == expected, access.source
            assert (a.wavefronts, a.min_wavefronts, a.n_way) == (sum(expected), len(expected), max(expected))
        else:
            g = analyze_global(access)
            sectors = sectors_by_counting(access)
            used = len({byte for start in lane_starts(access) for byte in range(start, start + access.width)})
            assert set(g.sectors) == sectors and set(g.lines) == {sector // 4 for sector in sectors}, access.source
            assert g.efficiency == used / (32 * len(sectors))


def test_the_ladders_conflict_steps():
    v5_store, v6_store = (next(analyze_shared(a) for a in get_stage("sgemm", s).accesses
                               if a.space == "shared" and a.op == "store" and a.array == "As") for s in ("v5", "v6"))
    assert (v5_store.n_way, v6_store.n_way) == (2, 1)  # rows of 128 floats put kc = 0 and 4 in the same banks
    v3_bs, v4_bs = (next(analyze_shared(a) for a in get_stage("sgemm", s).accesses
                         if a.space == "shared" and a.op == "load" and a.array == "Bs") for s in ("v3", "v4"))
    assert (v3_bs.n_way, v3_bs.wavefronts, v4_bs.wavefronts) == (2, 8, 1)


# -- against the H200 measurements ----------------------------------------------------------------

@pytest.fixture(scope="module")
def h200():
    return measurements(Source(H200_RAW, "test fixture"), *opened(H200_RAW))


def test_predicted_instruction_counts_match_the_h200_exactly(h200):
    declared = [row for row in shared_memory_comparison(h200) if row["predicted_instructions"] is not None]
    assert {row["stage"] for row in declared} == {f"v{i}" for i in range(2, 9)}
    for row in declared:
        assert row["predicted_instructions"] == row["measured_instructions"], (row["stage"], row["op"])


@pytest.mark.parametrize("stage, n_way", [("v2", 1.2), ("v3", 5.0), ("v4", 1.2), ("v5", 3.0), ("v6", 3.0), ("v7", 3.0),
                                          ("v8", 3.0)])
def test_predicted_load_wavefronts_per_instruction_match_the_h200(h200, stage, n_way):
    row = next(r for r in shared_memory_comparison(h200, [stage]) if r["op"] == "load")
    assert row["predicted_wavefronts_per_instruction"] == pytest.approx(n_way)
    assert row["measured_wavefronts_per_instruction"] == pytest.approx(n_way, abs=1e-3)


def test_v3_load_conflicts_are_exactly_the_predicted_excess_wavefronts(h200):
    row = next(r for r in shared_memory_comparison(h200, ["v3"]) if r["op"] == "load")
    assert row["predicted_conflicts"] == row["measured_conflicts"] == 4_194_304


def test_v5_v6_store_conflicts_against_the_h200(h200):
    v5, v6 = (next(r for r in shared_memory_comparison(h200, [s]) if r["op"] == "store") for s in ("v5", "v6"))
    assert (v5["predicted_wavefronts_per_instruction"], v6["predicted_wavefronts_per_instruction"]) == (2.4, 1.6)
    assert v5["measured_wavefronts_per_instruction"] == pytest.approx(2.47, abs=0.01)
    assert v6["measured_wavefronts_per_instruction"] == pytest.approx(1.68, abs=0.01)
    # The padding removes what the model says it removes; the rest (~25k) is in both kernels.
    predicted = v5["predicted_conflicts"] - v6["predicted_conflicts"]
    measured = v5["measured_conflicts"] - v6["measured_conflicts"]
    assert predicted == 262_144 and measured == pytest.approx(predicted, rel=0.02)


def test_sector_model_predicts_l1_bytes_of_every_stage(h200):
    rows = l1_bytes_comparison(h200)
    assert [r["stage"] for r in rows] == [f"v{i}" for i in range(1, 9)]
    for row in rows:
        assert row["predicted_l1_bytes"] == row["measured_l1_bytes"], row["stage"]


def test_a_stage_with_a_step_is_measured_on_its_own_kernel():
    """In today's example v8 launches its transpose of A inside each timed range (ncu profiled both);
    the declared accesses describe the GEMM kernel, so its counters alone are compared: the paired
    128-bit loads' 3 wavefronts each, and the sector model's bytes (the transpose's are not in them)."""
    example = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-sgemm-1024"
    measured = measurements(Source(example, "test"), *opened(example))
    launches = measured.launches[measured.launches["stage"] == "v8"]
    assert set(launches["kernel"].astype(str)) == {"sgemm_v8_transpose_a", "sgemm_v8_128x128_unchecked"}
    gemm = launches[launches["kernel"].astype(str) == "sgemm_v8_128x128_unchecked"]
    row = next(r for r in shared_memory_comparison(measured, ["v8"]) if r["op"] == "load")
    assert row["launches"] == len(gemm) == 3
    assert row["measured_wavefronts_per_instruction"] == pytest.approx(3.0, abs=1e-3)
    [l1] = l1_bytes_comparison(measured, ["v8"])
    assert l1["measured_l1_bytes"] == pytest.approx(gemm["l1tex__t_bytes.sum"].astype(float).mean())
    assert l1["predicted_l1_bytes"] is not None
