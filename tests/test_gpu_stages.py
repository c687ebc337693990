"""GPU: every stage of every op computes C = A @ B within its tolerance, at tile-aligned, ragged,
tiny and tall/flat sizes, on fresh random inputs with a NaN-poisoned output. Skipped without a
GPU; a stage this GPU cannot run (h6 needs sm_90a) is skipped with the reason."""

import json

import pytest

from nsprof.ladder.registry import all_stages, get_op

pytestmark = pytest.mark.gpu

SIZES = {
    "sgemm": [(256, 256, 256), (1000, 1200, 800), (4095, 4097, 4093), (1, 1, 1), (17, 33, 9), (33, 65, 17),
              (129, 7, 300), (128, 4096, 1024), (4096, 128, 1024), (1024, 1024, 1024)],
    # the TF32 stages also at these shapes: ragged with K % 4 == 0 (TMA's zero fill, no padding) and
    # not (padded), tall and flat
    "tf32": [(1000, 1200, 808), (4096, 4096, 4096)],
    "hgemm": [(256, 256, 256), (1000, 1200, 808), (4095, 4097, 4093), (1, 1, 1), (17, 33, 9), (128, 4096, 1024),
              (4096, 128, 1024), (1024, 1024, 1024)],
    "sgemv": [(1000, 1001), (4097, 3), (3, 4097), (1, 1), (2**20, 256), (256, 2**20), (4096, 4096), (4099, 16387)],
}
CASES = [(stage, size) for stage in all_stages() if stage.kind.name != "cpu"  # CPU stages: tests/test_cpu_stages.py
         for size in SIZES[stage.op] + (SIZES["tf32"] if stage.precision.name == "tf32" else [])]


@pytest.fixture(scope="module")
def tools():
    from nsprof.launch.tools import launch_tools

    return launch_tools()


@pytest.mark.parametrize("stage, size", CASES, ids=[f"{st.key}-{'x'.join(map(str, si))}" for st, si in CASES])
def test_stage_matches_float64_reference(stage, size, tools):
    from nsprof.ladder_runs.bench import unavailable_reason
    from nsprof.ladder_runs.stage_launch import stage_launcher
    from nsprof.launch.measure import verify

    if reason := unavailable_reason(stage, tools):
        pytest.skip(reason)
    op = get_op(stage.op)
    problem = op.workload.problem(tools.xp, size, seed=stage.number * 7919 + sum(size))
    launcher = stage_launcher(stage, problem, tools)
    problem.refresh()  # inputs no tuning saw (a Triton stage picks its configuration on the first ones)
    err = verify(launcher, problem)
    assert err <= stage.tolerance(size), f"{stage.stage} {size}: relative error {err:.3g}"


def test_poisoned_output_catches_a_kernel_that_writes_nothing(tools):
    from nsprof.ladder.ops.matmul import Launcher, MatmulProblem
    from nsprof.launch.measure import verify

    problem = MatmulProblem(tools.xp, (64, 64, 64), "float32")
    err = verify(Launcher(run=lambda: None, plan=None, padded_shape=None), problem)
    assert err != err  # NaN: never passes a tolerance check


def test_bench_reports_timing_and_percent_of_cublas(tmp_path):
    from typer.testing import CliRunner

    from nsprof.cli import app

    result = CliRunner().invoke(app, ["bench", "--stage", "v6,v9", "--size", "512", "--repeat", "5", "--no-paired",
                                      "--json", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    by_stage = {r["stage"]: r for r in doc["results"]}
    assert by_stage["v9"]["pct_cublas"] == pytest.approx(100 * _library_ms(by_stage["v9"]) / by_stage["v9"]["median_ms"])
    assert by_stage["v6"]["status"] == "ok" and by_stage["v6"]["runs"] == 5
    assert by_stage["v6"]["median_ms"] > 0 and by_stage["v6"]["tflops"] > 0
    assert doc["env"]["device"] and doc["env"]["cupy"]
    saved = list(tmp_path.glob("bench-sgemm-*.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text())["results"] == doc["results"]


@pytest.mark.parametrize("tile", ["256x128", "128x128", "64x128", "64x64"])
@pytest.mark.parametrize("size, split, checked", [((512, 512, 512), 2, False), ((512, 512, 520), 2, True),
                                                  ((512, 512, 528), 2, None), ((520, 512, 512), 1, True),
                                                  ((512, 516, 512), 1, True)])
def test_v8_runs_unchecked_on_whole_tiles_and_checked_otherwise(tile, size, split, checked, tools):
    """Each v8 tile, forced: whole tiles take the entry without bounds checks, a short last k step or a
    ragged M or N the checked one, and both verify. K 528 split in 2 is 16.5 steps a slice: the grid
    tiles' slices end mid-step (checked), while 256x128's stream-K cuts between whole steps (a block's
    run crosses into the next tile), so it stays unchecked."""
    if checked is None:
        checked = tile != "256x128"
    from nsprof.ladder.registry import get_stage
    from nsprof.launch.measure import verify

    op, stage = get_op("sgemm"), get_stage("sgemm", "v8")
    problem = op.workload.problem(tools.xp, size, seed=sum(size) + split)
    launcher = op.workload.launcher(stage, problem, tools, tile_shape=tile, split_k=split)
    assert launcher.entry == f"sgemm_v8_{tile}" + ("" if checked else "_unchecked")
    err = verify(launcher, problem)
    assert err <= stage.tolerance(size), f"{launcher.entry} {size}/{split}: relative error {err:.3g}"


@pytest.mark.parametrize("tile", ["256x128"])
@pytest.mark.parametrize("size", [(512, 512, 512), (1000, 1200, 808), (300, 4100, 1000), (2048, 4096, 264)])
@pytest.mark.parametrize("tail", [1, 5, 10_000])
def test_v8_tiles_shared_out_by_stream_k_add_up_to_c(tile, size, tail, tools):
    """The last `tail` tiles (all, at 10,000) shared by one block per SM: runs of k steps that end
    mid-tile, cross into the next tiles (all shared at 2048x4096: about two tiles a block) or are empty
    (one tile of 32 k steps at 512^3 over 132 blocks), at whole and ragged sizes and a short last step."""
    from nsprof.ladder.registry import get_stage
    from nsprof.launch.measure import verify

    op, stage = get_op("sgemm"), get_stage("sgemm", "v8")
    problem = op.workload.problem(tools.xp, size, seed=sum(size) + tail)
    launcher = op.workload.launcher(stage, problem, tools, tile_shape=tile, split_k=1, tail=tail)
    plan = launcher.plan
    bm, bn = map(int, tile.split("x"))
    assert plan.shared_tiles == min(tail, -(-size[0] // bm) * -(-size[1] // bn))
    err = verify(launcher, problem)
    assert err <= stage.tolerance(size), f"{launcher.tile_label} {size}: relative error {err:.3g}"


@pytest.mark.parametrize("size", [(512, 512, 512), (1000, 1200, 808), (300, 4100, 1000), (2048, 4096, 264)])
@pytest.mark.parametrize("tail", [1, 5, 10_000])
def test_h6_tiles_shared_out_by_stream_k_add_parked_sums(size, tail, tools):
    """h6's stream-K tile with its last `tail` tiles shared by the 132 persistent blocks: contributors park
    float32 sums, the block that starts a tile waits for them and adds them before storing float16 C. Runs
    that cross tiles (every tile shared at 2048x4096, 5 k steps each), empty runs (512^3: 64 steps over
    the grid), ragged and padded sizes. A flag left raised would break the next launch: verify runs twice."""
    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.bench import unavailable_reason
    from nsprof.launch.measure import verify

    stage, op = get_stage("hgemm", "h6"), get_op("hgemm")
    if reason := unavailable_reason(stage, tools):
        pytest.skip(reason)
    problem = op.workload.problem(tools.xp, size, seed=sum(size) + tail)
    launcher = op.workload.launcher(stage, problem, tools, tile_shape="128x256", split_k=1, tail=tail)
    assert launcher.entry == "hgemm_h6_sk_tma_128x256"
    assert launcher.plan.shared_tiles == min(tail, -(-size[0] // 128) * -(-size[1] // 256))
    for _ in range(2):
        problem.refresh()
        err = verify(launcher, problem)
        assert err <= stage.tolerance(size), f"{launcher.tile_label} {size}: relative error {err:.3g}"


@pytest.mark.parametrize("bn", [256, 192])
@pytest.mark.parametrize("size", [(512, 512, 512), (1000, 1200, 808), (300, 4100, 1000), (2048, 4096, 264),
                                  (1000, 1200, 4040)])
@pytest.mark.parametrize("tail", [1, 5, 10_000])
def test_h6_clusters_share_their_last_units_by_stream_k(bn, size, tail, tools):
    """h6's clusters of two with a stream-K tail (hgemm_h6_cl2_sk_tma_256x{bn}): the grid's 66 clusters share the
    last `tail` units (two stacked tiles) by k steps, both blocks of a cluster walking the same runs, each adding its
    own tile's float32 sums; runs that cross units, empty runs (512^3), a unit's second tile wholly past M (300
    rows), ragged K. A counter left raised would break the next launch: verify runs twice."""
    import dataclasses

    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.bench import unavailable_reason
    from nsprof.launch.measure import verify

    stage, op = get_stage("hgemm", "h6"), get_op("hgemm")
    if reason := unavailable_reason(stage, tools):
        pytest.skip(reason)
    entry = f"hgemm_h6_cl2_sk_tma_256x{bn}"
    stage = dataclasses.replace(stage, tiles=tuple(t for t in stage.tiles if t.entry == entry))
    problem = op.workload.problem(tools.xp, size, seed=sum(size) + tail + bn)
    launcher = op.workload.launcher(stage, problem, tools, tile_shape=f"256x{bn}", split_k=1, tail=tail)
    assert launcher.entry == entry
    assert launcher.plan.shared_tiles == min(tail, -(-size[0] // 256) * -(-size[1] // bn))
    for _ in range(2):
        problem.refresh()
        err = verify(launcher, problem)
        assert err <= stage.tolerance(size), f"{launcher.tile_label} {size}: relative error {err:.3g}"


@pytest.mark.parametrize("size", [(1000, 1200, 808), (300, 520, 296), (4095, 4097, 4093), (3072, 3072, 3072),
                                  (4096, 4096, 1024)])
def test_h6_with_the_staged_epilogue_verifies(size, tools):
    """h6's 128x256 tiles with the epilogue they had before storing C by TMA (undeclared candidates now, the
    same kernel bodies): ragged, padded, with a stream-K tail (3072^3, 4095x4097) and without (4096x4096)."""
    import dataclasses

    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.bench import unavailable_reason
    from nsprof.launch.measure import verify

    stage, op = get_stage("hgemm", "h6"), get_op("hgemm")
    if reason := unavailable_reason(stage, tools):
        pytest.skip(reason)
    staged = {"hgemm_h6_sk_tma_128x256": "hgemm_h6_sk_128x256", "hgemm_h6_tma_128x256": "hgemm_h6_128x256"}
    tiles = tuple(dataclasses.replace(t, entry=staged[t.entry], tma_store=False, dynamic_smem_bytes=214272)
                  if t.entry in staged else t for t in stage.tiles)
    candidate = dataclasses.replace(stage, tiles=tiles)
    problem = op.workload.problem(tools.xp, size, seed=sum(size))
    launcher = op.workload.launcher(candidate, problem, tools, tile_shape="128x256")
    assert launcher.entry in staged.values()
    for _ in range(2):
        assert verify(launcher, problem) <= stage.tolerance(size)


@pytest.mark.parametrize("name, tile, split", [("h3", "128x128", 4), ("h4", "64x128", 4), ("h5", "64x128", 4)])
def test_hgemm_split_k_slices_add_up_to_c(name, tile, split, tools):
    from nsprof.ladder.registry import get_stage
    from nsprof.launch.measure import verify

    op, stage, size = get_op("hgemm"), get_stage("hgemm", name), (300, 500, 1100)
    problem = op.workload.problem(tools.xp, size, seed=split)
    launcher = op.workload.launcher(stage, problem, tools, tile_shape=tile, split_k=split)
    assert launcher.plan.split_k == split
    assert verify(launcher, problem) <= stage.tolerance(size)


def test_bench_of_the_hgemm_ladder_against_cublas(tmp_path):
    from typer.testing import CliRunner

    from nsprof.cli import app

    result = CliRunner().invoke(app, ["bench", "--op", "hgemm", "--stage", "h5", "--size", "512x2048x1024",
                                      "--repeat", "5", "--no-paired", "--json", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    by_stage = {r["stage"]: r for r in json.loads(result.stdout)["results"]}
    h7 = by_stage["h7"]
    assert h7["baseline_only"] and h7["pct_cublas"] == pytest.approx(100 * _library_ms(h7) / h7["median_ms"])
    assert by_stage["h5"]["status"] == "ok" and by_stage["h5"]["rel_error"] < by_stage["h5"]["tolerance"]
    assert (by_stage["h5"]["m"], by_stage["h5"]["n"], by_stage["h5"]["k"]) == (512, 2048, 1024)


def test_percent_of_cublas_is_paired_by_default(tmp_path):
    """Each GPU stage launched in turn with the faster library: the method says so, the library's own
    percentage is at most 100 (of the faster of itself and torch.mm), and a stage's is plausible."""
    from typer.testing import CliRunner

    from nsprof.cli import app

    result = CliRunner().invoke(app, ["bench", "--op", "hgemm", "--stage", "h5,h6", "--size", "2048", "--json",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    by_stage = {r["stage"]: r for r in json.loads(result.stdout)["results"]}
    assert {r["pct_cublas_method"] for r in by_stage.values()} == {"paired"}
    assert by_stage["h7"]["pct_cublas"] <= 100 and by_stage["h7"]["pct_cublas_of"] in ("cuBLAS", "torch.mm")
    assert 50 < by_stage["h6"]["pct_cublas"] < 150 and 10 < by_stage["h5"]["pct_cublas"] < by_stage["h6"]["pct_cublas"]
    table = CliRunner().invoke(app, ["bench", "--op", "hgemm", "--stage", "h6", "--size", "1024", "--no-save"],
                               env={"COLUMNS": "120"})
    assert "alternating with the faster library's (ABAB)" in " ".join(table.stdout.split())


def test_back_to_back_times_each_paired_stage_and_the_library_in_chains(tmp_path):
    """--back-to-back: every paired GPU record gets a launch's time in chains and the library's % of it (of the
    library the pairs chose), and the table shows the column and says what it is."""
    from typer.testing import CliRunner

    from nsprof.cli import app

    result = CliRunner().invoke(app, ["bench", "--op", "hgemm", "--stage", "h5,h6", "--size", "1024",
                                      "--back-to-back", "--save-as", str(tmp_path / "b2b.json")], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    records = {r["stage"]: r for r in json.loads((tmp_path / "b2b.json").read_text())["results"]}
    assert set(records) == {"h5", "h6", "h7"}
    for record in records.values():
        assert record["back_to_back_ms"] > 0 and record["pct_cublas_back_to_back"] > 0, record["stage"]
    assert records["h7"]["pct_cublas_back_to_back"] <= 100  # of the faster of itself and torch.mm
    assert records["h5"]["pct_cublas_back_to_back"] < records["h6"]["pct_cublas_back_to_back"]
    assert "back to back (--back-to-back)" in " ".join(result.stdout.split())


def test_cublas_tf32_rounds_and_fp32_cublas_is_restored_after_it(tools):
    """v9t computes in TF32 (an error far above FP32's, within TF32's tolerance); v9 right after it is FP32
    again (CuPy's compute type was put back)."""
    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.stage_launch import stage_launcher
    from nsprof.launch.measure import verify

    op, size = get_op("sgemm"), (1024, 1024, 1024)
    problem = op.workload.problem(tools.xp, size, seed=22)
    errors = {name: verify(stage_launcher(get_stage("sgemm", name), problem, tools), problem)
              for name in ("v9t", "v9")}
    assert 1e-5 < errors["v9t"] <= 5e-3, errors
    assert errors["v9"] <= 1e-5, errors


def test_v11_runs_ragged_sizes_without_padding_when_rows_are_16_byte_aligned(tools):
    """K % 4 == 0: TMA's zero fill and bounds-checked stores, no padded copies, the transpose timed with it
    (none for the 256x128 tile, which large products run: it reads B as given); K % 4 != 0: the launcher pads."""
    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.bench import unavailable_reason
    from nsprof.launch.measure import verify

    stage, op = get_stage("sgemm", "v11"), get_op("sgemm")
    if reason := unavailable_reason(stage, tools):
        pytest.skip(reason)
    for size, padded, steps in (((1000, 1200, 800), False, ["transpose B"]), ((1000, 1200, 808), False, ["transpose B"]),
                                ((17, 33, 9), True, []), ((4100, 4096, 1000), False, [])):
        problem = op.workload.problem(tools.xp, size, seed=sum(size))
        launcher = op.workload.launcher(stage, problem, tools)
        assert (launcher.padded_shape is not None) == padded, size
        assert list(launcher.steps) == steps, size
        assert verify(launcher, problem) <= stage.tolerance(size)


@pytest.mark.parametrize("tile", ["128x256", "128x128"])
@pytest.mark.parametrize("size, padded, entry_suffix", [((1000, 1200, 800), False, ""), ((1000, 1200, 804), False, ""),
                                                         ((1024, 1280, 768), False, "_unchecked"),
                                                         ((1000, 1202, 800), True, "_unchecked")])
def test_v10_runs_ragged_sizes_by_cp_async_zero_fill(tile, size, padded, entry_suffix, tools):
    """K % 4 == N % 4 == 0: no padded copies, the checked entry (the unchecked one on whole tiles); otherwise the
    launcher pads to whole tiles and runs the unchecked entry on them."""
    from nsprof.ladder.registry import get_stage
    from nsprof.launch.measure import verify

    stage, op = get_stage("sgemm", "v10"), get_op("sgemm")
    problem = op.workload.problem(tools.xp, size, seed=sum(size))
    launcher = op.workload.launcher(stage, problem, tools, tile_shape=tile)
    assert (launcher.padded_shape is not None) == padded, size
    assert launcher.entry == f"sgemm_v10_{tile}{entry_suffix}"
    assert verify(launcher, problem) <= stage.tolerance(size)


@pytest.mark.parametrize("tile, split", [("128x256", 1), ("128x192", 1), ("256x256", 1), ("256x192", 1), ("128x128", 1),
                                         ("128x64", 1), ("128x64", 2), ("128x64", 4), ("64x64", 1)])
@pytest.mark.parametrize("size, padded", [((1000, 1200, 808), False), ((300, 520, 1096), False),
                                          ((300, 520, 296), False), ((1000, 1200, 804), True)])
def test_h6_runs_ragged_sizes_by_tma_zero_fill(tile, split, size, padded, tools):
    """K % 8 == N % 8 == 0: TMA's zero fill and bounds-checked stores, no padded copies, also split over K (the
    persistent tiles take no split): K 1096 is 18 k tiles, the last partly zeros, and a split of 4 leaves the
    last slice 3; K 296 is 5 k tiles, so a split of 4 leaves the last slice none (it adds zeros); otherwise
    padded."""
    if split > 1 and tile != "128x64":
        pytest.skip("the persistent tiles take no split")
    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.bench import unavailable_reason
    from nsprof.launch.measure import verify

    stage, op = get_stage("hgemm", "h6"), get_op("hgemm")
    if reason := unavailable_reason(stage, tools):
        pytest.skip(reason)
    problem = op.workload.problem(tools.xp, size, seed=sum(size) + split)
    launcher = op.workload.launcher(stage, problem, tools, tile_shape=tile, split_k=split)
    assert (launcher.padded_shape is not None) == padded, size
    assert verify(launcher, problem) <= stage.tolerance(size)


@pytest.mark.parametrize("size", [(128, 4096, 4096), (128, 3072, 3072), (128, 4096, 4000), (128, 8192, 1096)])
def test_h6_ping_pong_64x64_runs_where_it_replaces_a_shallow_split(size, tools):
    """The launcher's own plan at 128 rows (no tile forced): the ping-pong 64 x 64 tile, K whole, verified; K of
    4000 and 1096 leave the last k tile partly zeros."""
    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.bench import unavailable_reason
    from nsprof.launch.measure import verify

    stage, op = get_stage("hgemm", "h6"), get_op("hgemm")
    if reason := unavailable_reason(stage, tools):
        pytest.skip(reason)
    problem = op.workload.problem(tools.xp, size, seed=sum(size))
    launcher = op.workload.launcher(stage, problem, tools)
    assert launcher.entry == "hgemm_h6_pp_64x64" and launcher.padded_shape is None
    assert verify(launcher, problem) <= stage.tolerance(size), f"{launcher.tile_label} {size}"


@pytest.mark.parametrize("size, padded", [((2048, 4096, 1024), False), ((1000, 1200, 808), False),
                                          ((300, 520, 1096), False), ((1000, 1200, 804), True)])
def test_h6_ping_pong_tile_storing_c_by_tma_verifies(size, padded, tools):
    """hgemm_h6_pp_tma_128x128, the tile that runs the 128x256 plans it takes over: the launcher's own plan at
    2048 x 4096 x 1024, then forced at ragged sizes (TMA clips the boxes past M and N) and a padded one."""
    import dataclasses

    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.bench import unavailable_reason
    from nsprof.launch.measure import verify

    stage, op = get_stage("hgemm", "h6"), get_op("hgemm")
    if reason := unavailable_reason(stage, tools):
        pytest.skip(reason)
    entry = "hgemm_h6_pp_tma_128x128"
    if size != (2048, 4096, 1024):
        stage = dataclasses.replace(stage, tiles=tuple(t for t in stage.tiles if t.entry == entry))
    problem = op.workload.problem(tools.xp, size, seed=sum(size))
    launcher = op.workload.launcher(stage, problem, tools)
    assert launcher.entry == entry and (launcher.padded_shape is not None) == padded
    assert verify(launcher, problem) <= stage.tolerance(size), f"{launcher.tile_label} {size}"


_CLUSTER_CASES = [((130, 1000, 808), False), ((300, 520, 1096), False), ((1000, 1200, 804), True)]


@pytest.mark.parametrize("entry, size, padded",
                         [("hgemm_h6_pp_cl2_tma_256x128", (1400, 1400, 1400), False),
                          ("hgemm_h6_pp_cl2_tma_256x128", (3000, 1000, 2000), False),
                          ("hgemm_h6_pp_cl2a_tma_128x256", (4000, 512, 3000), False),
                          ("hgemm_h6_pp_cl2a_tma_128x256", (3000, 512, 1000), False)]
                         + [(entry, *case) for entry in ("hgemm_h6_pp_cl2_tma_256x128", "hgemm_h6_pp_cl2a_tma_128x256")
                            for case in _CLUSTER_CASES])
def test_h6_ping_pong_tiles_in_clusters_verify(entry, size, padded, tools):
    """The ping-pong tile in clusters of two: stacked, sharing B by multicast (hgemm_h6_pp_cl2_tma_256x128), and
    side by side, sharing A (hgemm_h6_pp_cl2a_tma_128x256). The launcher's own plans where rows straddle lines (the
    stacked pairs in two rounds at 3000 x 1000 x 2000), then forced where a unit's second tile is mostly or wholly
    past M or N (130 rows, 1000 columns; 300 rows, 520 columns) and where rows are padded."""
    import dataclasses

    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.bench import unavailable_reason
    from nsprof.launch.measure import verify

    stage, op = get_stage("hgemm", "h6"), get_op("hgemm")
    if reason := unavailable_reason(stage, tools):
        pytest.skip(reason)
    if size[0] < 1000 or padded:
        stage = dataclasses.replace(stage, tiles=tuple(t for t in stage.tiles if t.entry == entry))
    problem = op.workload.problem(tools.xp, size, seed=sum(size))
    launcher = op.workload.launcher(stage, problem, tools)
    assert launcher.entry == entry and (launcher.padded_shape is not None) == padded
    assert verify(launcher, problem) <= stage.tolerance(size), f"{launcher.tile_label} {size}"


# one row, a ragged 17 and 100, a whole 64, K % 8 != 0 padded; the 16-row tiles: 1, 16, a ragged 7 and 9
_FEW_ROW_SIZES = [((1, 1200, 808), False), ((17, 4104, 1096), False), ((64, 520, 296), False),
                  ((33, 1000, 804), True), ((100, 4104, 1096), False)]
_SIXTEEN_ROW_SIZES = [((1, 1200, 808), False), ((16, 4104, 1096), False), ((7, 520, 296), False),
                      ((9, 1000, 804), True)]


@pytest.mark.parametrize("entry, size, padded",
                         [(entry, *case) for entry in ("hgemm_h6_64x256", "hgemm_h6_64x128", "hgemm_h6_split_128x128")
                          for case in _FEW_ROW_SIZES]
                         + [(entry, *case) for entry in ("hgemm_h6_16x256", "hgemm_h6_16x128") for case in _SIXTEEN_ROW_SIZES])
@pytest.mark.parametrize("split", [1, 4, 16])
def test_h6_tiles_for_few_rows_verify_split_over_k(entry, split, size, padded, tools):
    """The 64-row tiles (each consumer warpgroup half the columns), the 16-row ones (16 rows of A loaded, the
    MMAs' other rows read from B's boxes: rows of C never stored or summed) and the 128-row tile split over K,
    its slices adding their sums in a workspace, K split so that slices end mid-product (1096: 18 k tiles in
    16 slices of 2, the last ones empty)."""
    import dataclasses

    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.bench import unavailable_reason
    from nsprof.launch.measure import verify

    stage, op = get_stage("hgemm", "h6"), get_op("hgemm")
    if reason := unavailable_reason(stage, tools):
        pytest.skip(reason)
    alone = dataclasses.replace(stage, tiles=tuple(t for t in stage.tiles if t.entry == entry))
    problem = op.workload.problem(tools.xp, size, seed=sum(size) + split)
    launcher = op.workload.launcher(alone, problem, tools, tile_shape=alone.tiles[0].shape, split_k=split)
    assert launcher.entry == entry and (launcher.padded_shape is not None) == padded
    assert verify(launcher, problem) <= stage.tolerance(size), f"{launcher.tile_label} {size}"


@pytest.mark.parametrize("tile", ["256x128", "128x256", "128x128", "128x64"])
def test_every_v11_tile_verifies_at_a_ragged_size(tile, tools):
    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.bench import unavailable_reason
    from nsprof.launch.measure import verify

    stage, op, size = get_stage("sgemm", "v11"), get_op("sgemm"), (1000, 1200, 808)
    if reason := unavailable_reason(stage, tools):
        pytest.skip(reason)
    problem = op.workload.problem(tools.xp, size, seed=11)
    launcher = op.workload.launcher(stage, problem, tools, tile_shape=tile)
    assert launcher.plan.tile.shape == tile
    assert verify(launcher, problem) <= stage.tolerance(size)


def test_bench_compares_tf32_stages_with_cublas_tf32(tmp_path):
    from typer.testing import CliRunner

    from nsprof.cli import app

    result = CliRunner().invoke(app, ["bench", "--stage", "v8,v10", "--size", "512", "--repeat", "5", "--no-paired",
                                      "--json", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    by_stage = {r["stage"]: r for r in json.loads(result.stdout)["results"]}
    assert by_stage["v9"]["baseline_only"] and by_stage["v9t"]["baseline_only"]
    assert by_stage["v8"]["baseline"] == "v9" and by_stage["v10"]["baseline"] == "v9t"
    assert by_stage["v10"]["pct_cublas"] == pytest.approx(100 * _library_ms(by_stage["v9t"]) / by_stage["v10"]["median_ms"])


def _library_ms(record: dict) -> float:
    """The library's time % cuBLAS is of: the faster of the library stage's and PyTorch's."""
    return min(t for t in (record["median_ms"], record.get("torch_ms")) if t is not None)


def _kept_by_the_rule(timed: list[dict]) -> str:
    """The candidate nsprof.ladder_runs.tuning keeps: the finalists (the trials close to the fastest) were the
    ones timed in turn, and the fastest of that round is kept; a lone finalist, the fastest trial."""
    from nsprof.ladder_runs.tuning import finalists

    final = finalists(timed)
    assert {trial["config"] for trial in timed if "in_turn_ms" in trial} == (
        {trial["config"] for trial in final} if len(final) > 1 else set())
    return min(final, key=lambda trial: trial.get("in_turn_ms", trial["median_ms"]))["config"]


@pytest.mark.parametrize("name, size", [("sgemm/v9", "1000x1200x808"), ("sgemm/v9t", "4096"), ("hgemm/h7", "4096"),
                                        ("sgemv/s7", "8192x8192")])
def test_a_library_stage_keeps_its_fastest_verified_algorithm_and_times_torch_beside_it(name, size, tmp_path):
    """The library stage tries CuPy's call and every algorithm cuBLASLt proposes, keeps the fastest
    that verified (its `tile`; the close ones timed again in turn), and times PyTorch's same product on the same
    arrays; % cuBLAS is of the faster of the two and says which."""
    from typer.testing import CliRunner

    from nsprof.cli import app

    op, stage = name.split("/")
    result = CliRunner().invoke(app, ["bench", "--op", op, "--stage", stage, "--size", size, "--repeat", "5",
                                      "--no-paired", "--json", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    [record] = json.loads(result.stdout)["results"]
    assert record["status"] == "ok", record["message"]
    tuning = record["details"]["autotune"]
    timed = [trial for trial in tuning["trials"] if trial["status"] == "ok"]
    assert tuning["trials"][0]["config"] in ("cublasGemmEx", "cublasSgemv")
    assert sum(trial["config"].startswith("cuBLASLt ") for trial in timed) >= 2  # the heuristic proposed several
    assert record["tile"] == tuning["kept"] == _kept_by_the_rule(timed)
    assert all(trial["rel_error"] <= record["tolerance"] for trial in timed)
    assert record["torch_call"] == ("torch.mv" if op == "sgemv" else "torch.mm")
    assert record["torch_ms"] > 0, record["torch_message"]  # PyTorch is on the GPU machine
    assert record["pct_cublas"] == pytest.approx(100 * _library_ms(record) / record["median_ms"])
    assert record["pct_cublas_of"] == ("cuBLAS" if record["median_ms"] <= record["torch_ms"] else record["torch_call"])


@pytest.mark.parametrize("name, size", [("hgemm/h7", (1000, 1200, 808)), ("sgemv/s7", (1000, 1001))])
def test_torch_runs_on_the_arrays_each_later_stage_refreshed(name, size, tools):
    """In the bench the library stage makes PyTorch's launch; each later stage's refresh then draws new
    arrays, and the launch paired with that stage must compute their product (it once kept the first)."""
    pytest.importorskip("torch")
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.ladder_runs.torch_baseline import torch_launch

    stage = get_stage(*name.split("/"))
    workload = get_op(stage.op).workload
    problem = workload.problem(tools.xp, size)
    launch = torch_launch(workload.library_call(stage, problem), stage.precision.name)
    for _ in range(2):
        problem.refresh()
        problem.poison_output()
        launch()
        assert problem.relative_error() <= stage.tolerance(size)


@pytest.mark.parametrize("launch_of", ["h6", "torch.mm"])
def test_timed_launches_run_on_every_set_of_buffers_the_rotation_holds(launch_of, tools):
    """Cold inputs (nsprof.launch.rotation): timed launches, in chunks of fewer than the sets, write every
    set's product (h6's tensor maps and PyTorch's tensors follow the moving buffers), and the problem ends
    on its own buffers."""
    from nsprof.ladder.registry import get_op, get_stage
    from nsprof.ladder_runs.bench import unavailable_reason
    from nsprof.launch.measure import CHUNK, time_launches
    from nsprof.launch.rotation import rotating_inputs

    op, size = get_op("hgemm"), (256, 512, 256)
    problem = op.workload.problem(tools.xp, size)
    stage = get_stage("hgemm", "h6" if launch_of == "h6" else "h7")
    if launch_of == "h6":
        if reason := unavailable_reason(stage, tools):
            pytest.skip(reason)
        run = op.workload.launcher(stage, problem, tools).run
    else:
        pytest.importorskip("torch")
        from nsprof.ladder_runs.torch_baseline import torch_launch

        run = torch_launch(op.workload.library_call(stage, problem), "fp16")
    own = problem.C
    with rotating_inputs(problem) as rotation:
        assert rotation.sets > CHUNK
        for _, _, out in rotation.copies:
            out.fill(float("nan"))
        problem.poison_output()
        time_launches(run, repeat=rotation.sets, warmup=0)
        reference = problem.reference()
        for _, _, out in rotation.copies:
            error = float(tools.xp.linalg.norm(out.astype("float64") - reference) / tools.xp.linalg.norm(reference))
            assert error <= stage.tolerance(size)
    assert problem.C is own and problem.relative_error() <= stage.tolerance(size)


@pytest.mark.parametrize("stage_name", ["s2", "s3", "s4"])
def test_sgemvs_transposed_a_follows_the_sets_of_buffers(stage_name, tools):
    """s2-s4 read a transpose of A their launcher makes: each set of cold inputs gets its own, so a timed launch
    reads its own set's A (a copy negated here gives y = -A x), never the problem's set's transpose, warm in L2."""
    from nsprof.ladder.registry import get_stage
    from nsprof.launch.measure import time_launches
    from nsprof.launch.rotation import rotating_inputs

    op, size = get_op("sgemv"), (1000, 1001)
    problem = op.workload.problem(tools.xp, size)
    stage = get_stage("sgemv", stage_name)
    with rotating_inputs(problem) as rotation:
        assert rotation.sets > 2
        for a, _, y in rotation.copies:
            a *= -1
            y.fill(float("nan"))
        launcher = op.workload.launcher(stage, problem, tools)
        problem.poison_output()
        launcher.prepare()
        time_launches(launcher.run, repeat=rotation.sets, warmup=0)
        negated = -problem.reference()
        for _, _, y in rotation.copies:
            error = float(tools.xp.linalg.norm(y.astype("float64") - negated) / tools.xp.linalg.norm(negated))
            assert error <= stage.tolerance(size)
    assert problem.relative_error() <= stage.tolerance(size)


@pytest.mark.parametrize("name", ["sgemm/v12t", "hgemm/h8", "sgemv/s8"])
def test_a_triton_stage_is_tuned_before_timing_and_says_what_it_compiled(name, tmp_path):
    """bench records every trial, the kept configuration (the fastest verified one) as the tile, and
    what Triton compiled; on Hopper the tensor-core stages' SASS holds wgmma (HGMMA)."""
    from typer.testing import CliRunner

    from nsprof.cli import app

    op, stage = name.split("/")
    size = "2048" if op != "sgemv" else "8192x8192"
    result = CliRunner().invoke(app, ["bench", "--op", op, "--stage", stage, "--size", size, "--repeat", "5",
                                      "--no-paired", "--json", "--out", str(tmp_path)])
    if "not installed: triton" in result.output:
        pytest.skip("triton is not installed")
    assert result.exit_code == 0, result.output
    record = next(r for r in json.loads(result.stdout)["results"] if r["stage"] == stage)
    assert record["status"] == "ok", record["message"]
    tuning, compiled = record["details"]["autotune"], record["details"]["compiled"]
    timed = [trial for trial in tuning["trials"] if trial["status"] == "ok"]
    assert record["tile"] == tuning["kept"] == _kept_by_the_rule(timed)
    assert compiled["num_warps"] and compiled["registers"] and compiled["spills"] == 0
    if op != "sgemv" and json.loads(result.stdout)["env"]["compute_capability"] == "9.0":
        assert compiled["sass"]["wgmma"] > 0 and compiled["sass"]["ffma"] < compiled["sass"]["wgmma"] * 4


@pytest.mark.parametrize("size", [(1024, 1024, 1024), (2048, 2048, 2048), (16, 4096, 4096), (1000, 808, 808)])
def test_h6_launched_back_to_back_reads_what_the_launch_before_it_wrote(size, tools):
    """h6 starts as a programmatic dependent launch: its blocks may be placed before the kernel ahead of it ends.
    Here each round poisons C1 (a CuPy kernel), h6 writes C1 = A B, and h6 at once reads C1 as its A: C2 = C1 B,
    queued with no synchronisation between. A block that read C1 before the launch ahead had written it would
    find NaN; one that wrote C1 before the poison ended, NaN in C1."""
    from nsprof.ladder.registry import get_stage
    from nsprof.ladder_runs.bench import unavailable_reason

    stage, op = get_stage("hgemm", "h6"), get_op("hgemm")
    if reason := unavailable_reason(stage, tools):
        pytest.skip(reason)
    assert size[1] == size[2]  # C1 (m x n) is the second product's A (m x k)
    first = op.workload.problem(tools.xp, size, seed=1)
    second = op.workload.problem(tools.xp, size, seed=2)
    second.A = first.C
    launchers = [op.workload.launcher(stage, p, tools) for p in (first, second)]
    assert all(launcher.entry.startswith("hgemm_h6") for launcher in launchers)
    for _ in range(20):
        first.poison_output()
        second.poison_output()
        for launcher in launchers:
            launcher.run()
        second._reference = None  # of the C1 this round wrote
        tools.xp.cuda.Device().synchronize()
        assert first.relative_error() <= stage.tolerance(size)
        assert second.relative_error() <= stage.tolerance(size), launchers[1].tile_label
