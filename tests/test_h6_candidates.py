"""The h6 probe's candidate entries (benchmarks/gpu/experiments/h6_plans.py) are kernels h6's source defines, none
of them declared already: a probe names a candidate by its entry, and one the source lost would only fail on
the GPU machine."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from h6_probe import h6_candidates, probe

from nsprof.ladder.ops.tiles import as_tiles
from nsprof.ladder.registry import get_stage

ROOT = Path(__file__).resolve().parents[1]


def test_every_candidate_is_an_entry_of_the_kernel_and_none_is_declared():
    source = (ROOT / "kernels" / "hgemm" / "h6_wgmma_tma.cu").read_text()
    entries = set(re.findall(r'extern "C" __global__ void(?: __cluster_dims__\([^)]*\))? __launch_bounds__\([^)]*\)\s*'
                             r"(\w+)\(", source))
    declared = {tile.entry for tile in as_tiles(get_stage("hgemm", "h6").tiles)}
    found = [tile.entry for tile in h6_candidates()]
    assert declared <= entries and "hgemm_h6_16x128" in declared
    assert set(found) <= entries - declared, sorted(set(found) - (entries - declared))
    assert len(found) == len(set(found)) and "hgemm_h6_128x128" in found  # the cooperative form of the declared pp tile


def test_each_candidate_is_launched_as_its_kernel_takes_its_maps_and_clusters():
    """A kernel that takes its tensor maps as __grid_constant__ parameters must get their bytes (maps_by_value), one
    that takes addresses the addresses; a kernel built for clusters of two is a tile of two blocks (cluster)."""
    source = (ROOT / "kernels" / "hgemm" / "h6_wgmma_tma.cu").read_text()
    kernels = {name: (dims, params) for dims, name, params in re.findall(
        r'extern "C" __global__ void(?: __cluster_dims__\((\d+)[^)]*\))? __launch_bounds__\([^)]*\)\s*(\w+)\(([^)]*)\)',
        source)}
    tiles = [*as_tiles(get_stage("hgemm", "h6").tiles), *h6_candidates()]
    for tile in tiles:
        dims, params = kernels[tile.entry]
        assert tile.maps_by_value == ("__grid_constant__" in params), tile.entry
        assert tile.cluster == int(dims or 1), tile.entry
    assert sum(t.maps_by_value for t in tiles) == 3 and sum(t.cluster == 2 for t in tiles) >= 5


def test_every_h6_body_waits_for_the_grid_before_it_ahead_of_its_first_load():
    """h6's tiles are launched as programmatic dependent launches: a body that loaded A or B, or stored C, before
    griddepcontrol.wait could read what the kernel before it had not finished writing (only on the GPU, by chance).
    Only the tensor maps, which the host writes, are asked for before the wait (prefetch_maps_early)."""
    source = (ROOT / "kernels" / "hgemm" / "h6_wgmma_tma.cu").read_text()
    entry_bodies = set(re.findall(r"H6_SM90A_ONLY\(\((\w+)<", source))
    assert entry_bodies == {"h6_body", "h6_pp_body"}
    helper = re.search(r"void await_previous_grid\(\) \{(.*?)\n\}", source, re.S)
    assert helper and "griddepcontrol.wait;" in helper.group(1)
    # every body starts with start_block, which waits after asking for the maps and before it returns
    start = re.search(r"void start_block\((.*?)\n\}", source, re.S)
    assert start and start.group(1).index("prefetch_maps_early(") < start.group(1).index("await_previous_grid();")
    assert not any(op in start.group(1) for op in ("tma_load", "prefetch_tmap", "store_"))
    # H6_EARLY_ISSUE: thread 0 issues the ring's first pass in start_block, after a wait of its own
    early_pass = start.group(1).index("first_pass();")
    assert "await_previous_grid();" in start.group(1)[start.group(1).index("if constexpr (EARLY)"):early_pass]
    for body in entry_bodies:
        begin = source.index(f"void {body}(")
        text = source[begin:source.index("\n}\n", begin)]
        # the producer's loop is a lambda, run where it is called: in start_block after thread 0's wait
        # (H6_EARLY_ISSUE), or after start_block
        loop = text.index("const auto produce = [&]")
        text = text[:loop] + text[text.index("\n    };\n", loop):]
        firsts = [text.find(op) for op in ("tma_load", "prefetch_tmap", "store_", "produce(")]
        assert "produce(" in text and text.index("start_block<") < min(f for f in firsts if f >= 0), body
    early = re.search(r"void prefetch_maps_early\((.*?)\n\}", source, re.S)
    assert early and set(re.findall(r"(\w+)\(", early.group(1))) == {"prefetch_tmap"}


def test_persistent_candidates_that_stage_c_have_shared_memory_for_it():
    """A persistent h6_body entry that stores C through the threads (H6_EPI 1) stages every tile but a block's last in
    H6_EPI_BYTES (16 KB) of shared memory past its ring; a candidate launched with only the ring's bytes writes past
    its allocation (the few-row tiles' stream-K forms did: benchmarks/records/2026-12-01-h200-hgemm-coop-units,
    section 6)."""
    source = (ROOT / "kernels" / "hgemm" / "h6_wgmma_tma.cu").read_text()
    epi_bytes = re.search(r"#define H6_EPI_BYTES (\d+)", source)
    assert epi_bytes
    staging = int(epi_bytes.group(1))  # the 8 consumer warps' 2 KB tiles
    staged = 0
    for tile in h6_candidates():
        found = probe().body_arguments(tile.entry)  # h6_body<BN, STAGES, PERSISTENT, CLUSTER, EPI, ...>
        if not found or found[0] != "h6_body" or found[1][2] != "true" or found[1][4] != "H6_EPI":
            continue
        ring = probe().ring_bytes(tile.entry, ())  # with the 1 KB of alignment slack
        assert tile.dynamic_smem_bytes >= ring + staging, (tile.entry, tile.dynamic_smem_bytes)
        staged += 1
    # the stream-K forms of 64 x 256, 64 x 128 and 128 x 128, 128 x 128's cooperative form and 128 x 192 staged
    assert staged >= 5


def test_every_h6_tile_declares_the_shared_memory_of_its_ring():
    """The probe's reading of a ring (h6_plans.ring_bytes: the entry's template arguments and its depth's #define)
    against what each declared and candidate tile is launched with: a tile that declares less than its ring writes
    past its shared memory. A knob that deepens 16 x 256's ring to 6 stages needs more than the tile declares, so
    the probe refuses that plan without SMEM instead of launching it (it faulted once:
    benchmarks/records/2026-12-01-h200-hgemm-block-ends, call 9)."""
    ring_bytes = probe().ring_bytes
    read = 0
    for tile in [*as_tiles(get_stage("hgemm", "h6").tiles), *h6_candidates()]:
        needed = ring_bytes(tile.entry, ())
        if needed is None:  # an entry of another body (the TMA test entry)
            continue
        assert tile.dynamic_smem_bytes >= needed, (tile.entry, tile.dynamic_smem_bytes, needed)
        read += 1
    assert read >= 30
    few_rows = next(t for t in as_tiles(get_stage("hgemm", "h6").tiles) if t.entry == "hgemm_h6_16x256")
    launch = SimpleNamespace(entry=few_rows.entry, plan=SimpleNamespace(tile=few_rows))
    probe().refuse_short_ring(launch, ("H6_STAGES_16x256=4",))
    with pytest.raises(ValueError, match=r"hgemm_h6_16x256's ring needs 209920 bytes .* add \+SMEM=BYTES"):
        probe().refuse_short_ring(launch, ("H6_STAGES_16x256=6",))
