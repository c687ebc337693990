import re
from pathlib import Path

import pytest

from nsprof.errors import UsageError
from nsprof.ladder.ops.tiles import Tile
from nsprof.ladder.registry import (
    REPO_ROOT,
    all_ops,
    all_stages,
    baseline_of,
    baseline_stage,
    get_op,
    get_stage,
    is_baseline_stage,
    select_stages,
    stage_order,
    stages_for,
)
from nsprof.ladder.stage_kinds import CPU, LIBRARY, NVRTC, TRITON
from nsprof.triton_config import TritonConfig

LADDER = stages_for("sgemm")
NVRTC_STAGES = [s for s in all_stages() if s.kind is NVRTC]


LADDER_NAMES = ["v0", "v0b", "v0blas", *(f"v{i}" for i in range(1, 10)), "v9t", "v10", "v11", "v12", "v12t"]


def test_ladder_is_the_cpu_rung_then_v1_to_v12t_with_the_tf32_baseline_beside_v9():
    assert [s.stage for s in LADDER] == LADDER_NAMES


@pytest.mark.parametrize("stage", NVRTC_STAGES, ids=lambda s: s.key)
def test_kernel_file_exists_and_declares_each_entry_point(stage):
    path = stage.kernel_path()
    assert path.is_file()
    assert Path(stage.kernel_file).parts[:2] == ("kernels", stage.op)
    source = path.read_text()
    for entry in (e for tile in stage.tiles for e in tile.entries):
        declaration = rf'extern "C" __global__ void(?:\s+\w+(?:\([^)]*\))?)*\s+{entry}\('  # bounds, cluster dims
        assert re.search(declaration, source), entry


def test_v8_tiles_declare_the_k_depth_the_kernel_compiles_by_default():
    """The launcher's whole-tile test and explain's K-tile counts use the registry's bk."""
    from nsprof.ladder.registry import get_stage

    stage = get_stage("sgemm", "v8")
    default = re.search(r"#define V8_BK (\d+)", stage.kernel_path().read_text())
    assert {tile.bk for tile in stage.tiles} == {int(default[1])}


@pytest.mark.parametrize("stage", NVRTC_STAGES, ids=lambda s: s.key)
def test_kernel_file_opens_with_what_changed_and_the_metric(stage):
    header = "\n".join(line for line in stage.kernel_path().read_text().splitlines() if line.startswith("//"))
    assert header.startswith(f"// {stage.stage} ")
    assert "changed" in header.lower() or stage.number == 1
    assert "metric to watch" in header.lower() or "metrics to watch" in header.lower()
    assert "ragged sizes" in header.lower()


@pytest.mark.parametrize("stage", all_stages(), ids=lambda s: s.key)
def test_every_stage_declares_its_contract(stage):
    assert stage.title and stage.changes and stage.why and stage.metric
    assert stage.watch or stage.kind is CPU  # the CPU stages have no GPU counters to watch
    assert get_op(stage.op).precisions[stage.precision.name] is stage.precision
    assert stage.ragged in {"bounds-check", "pad", "tma-fill", "async-fill", "library"}
    assert stage.kind.problems(stage) == []
    if stage.kind is LIBRARY:
        assert stage.kernel_file is None and stage.tiles == () and stage.ragged == "library"
    elif stage.kind is CPU:
        assert stage.tiles == () and (stage.kernel_file is None) == (stage.ragged == "library")
    else:
        assert stage.tiles, "a kernel stage needs at least one launch configuration"
    for tile in (tile for tile in stage.tiles if isinstance(tile, Tile)):
        assert tile.dynamic_smem_bytes <= 227 * 1024  # the H100/H200 per-block limit
        assert tile.threads[0] * tile.threads[1] <= 1024
    for config in (config for config in stage.tiles if isinstance(config, TritonConfig)):
        assert config.num_warps in (1, 2, 4, 8, 16) and all(value > 0 for _, value in config.blocks)


def test_tolerances_match_the_precision_contract():
    size = (1024, 1024, 1024)
    assert {s.stage: s.tolerance(size) for s in LADDER if s.precision.name == "tf32"} == {
        "v9t": 5e-3, "v10": 5e-3, "v11": 5e-3, "v12t": 5e-3}
    assert all(s.tolerance(size) == 1e-5 for s in LADDER if s.precision.name == "fp32")


def test_sgemm_formulas():
    op = get_op("sgemm")
    assert op.flops((2, 3, 4)) == 2 * 2 * 3 * 4
    assert op.min_bytes((2, 3, 4)) == 4 * (2 * 4 + 4 * 3 + 2 * 3)


@pytest.mark.parametrize(
    "names, expected",
    [
        (None, LADDER_NAMES),
        (["all"], LADDER_NAMES),
        (["6"], ["v6"]),
        (["9t"], ["v9t"]),
        (["v11,V9T,v10,9"], ["v9", "v9t", "v10", "v11"]),
        (["V6"], ["v6"]),
        (["v6,v1"], ["v1", "v6"]),
        (["v9", "v1", "v9"], ["v1", "v9"]),
    ],
)
def test_select_stages(names, expected):
    assert [s.stage for s in select_stages("sgemm", names)] == expected


@pytest.mark.parametrize("names", [["v13"], ["v00"], ["abc"], ["v6,,x"], ["9x"]])
def test_select_stages_rejects_unknown_names_with_the_valid_choices(names):
    with pytest.raises(UsageError, match=r"unknown stage .*[Cc]hoose from v0, v0b, v0blas, v1, v2, .*v9t, v10, v11, v12, v12t"):
        select_stages("sgemm", names)


def test_unknown_op_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown op 'dgemm'"):
        stages_for("dgemm")


def test_repo_root_holds_the_kernels():
    assert (REPO_ROOT / "kernels" / "sgemm").is_dir()


@pytest.mark.parametrize("name", ["all", "v1,v2", "", "v13"])
def test_get_stage_needs_exactly_one_stage(name):
    from nsprof.ladder.registry import get_stage

    with pytest.raises(UsageError):
        get_stage("sgemm", name)


@pytest.mark.parametrize("op", all_ops().values(), ids=lambda op: op.name)
def test_every_op_declares_a_library_baseline_per_precision_and_orders_its_stages(op):
    used = {s.precision.name for s in op.stages}
    assert set(op.baselines) == used
    for precision, name in op.baselines.items():
        base = baseline_stage(op.name, precision)
        assert (base.stage, base.kind, base.precision.name) == (name, LIBRARY, precision)
    assert all(baseline_of(op.name, s.stage).precision is s.precision for s in op.stages)
    assert [s.kind is LIBRARY for s in op.stages].count(True) == len(op.baselines)
    assert all(is_baseline_stage(op.name, s.stage) == (s.kind is LIBRARY) for s in op.stages)
    orders = [s.order for s in op.stages]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)
    assert all(s.stage.startswith(op.stage_prefix) and s.op == op.name for s in op.stages)


def test_sgemm_compares_each_precision_with_its_own_cublas():
    assert baseline_of("sgemm", "v8").stage == "v9" and baseline_of("sgemm", "v9").stage == "v9"
    assert baseline_of("sgemm", "v10").stage == "v9t" and baseline_of("sgemm", "v11").stage == "v9t"
    assert baseline_of("sgemm", "v99") is None and baseline_of("dgemm", "v1") is None


@pytest.mark.parametrize("name, key", [("v9", (9, "")), ("v9t", (9, "t")), ("v10", (10, "")), ("h7", (7, "")),
                                       ("custom", (0, "custom"))])
def test_stage_order_reads_numbers_as_numbers_and_a_suffix_after_them(name, key):
    assert stage_order(name) == key


def test_v11_tiles_read_both_operands_k_major_through_128_byte_swizzled_tma_boxes():
    v11 = get_stage("sgemm", "v11")
    assert v11.stage == "v11" and v11.ragged == "tma-fill" and v11.precision.name == "tf32"
    for tile in v11.tiles:
        (a_rows, a_cols), (b_rows, b_cols) = tile.tma_boxes
        assert tile.arch == "sm_90a" and tile.swizzle == 128 and tile.b_k_major != tile.b_in_registers
        assert a_cols * 4 == b_cols * 4 == tile.swizzle  # rows of one 128-byte swizzle atom: of K, or of B's N
        assert a_rows == tile.bm <= 256  # a TMA box has at most 256 rows
        if tile.b_in_registers:  # B as given: boxes of bk rows of K x 32 floats of N, bn / 32 of them a stage
            assert b_rows == tile.bk and tile.bn % b_cols == 0 and not tile.b_k_major
            stage_bytes = (a_rows * a_cols + tile.bk * tile.bn) * 4
        else:  # Bt: bn rows of K
            assert b_rows == tile.bn
            stage_bytes = (a_rows + b_rows) * 128
        assert tile.dynamic_smem_bytes >= 1024 + 2 * stage_bytes  # alignment slack and at least 2 stages
    # the tile that large products run is the one that reads B as given (no transpose timed with it)
    assert v11.tiles[0].b_in_registers and v11.tiles[0].persistent


def test_hgemm_tolerance_follows_fp16_rounding_and_grows_with_k():
    hgemm = get_op("hgemm")
    h1 = hgemm.stages[0]
    assert 2.0**-11 < h1.tolerance((64, 64, 16)) < h1.tolerance((64, 64, 8192)) < 6e-4
    # the seed's half-precision accumulation (about 1.2e-3 at K = 1024 on the H200) would fail it
    assert h1.tolerance((1024, 1024, 1024)) < 1.2e-3
    assert hgemm.flops((2, 3, 4)) == 48 and hgemm.min_bytes((2, 3, 4)) == 2 * (8 + 12 + 6)


def test_hgemm_ladder_ids():
    assert [s.stage for s in stages_for("hgemm")][:5] == ["h1", "h2", "h3", "h4", "h5"]
    assert [s.stage for s in select_stages("hgemm", ["5,h1"])] == ["h1", "h5"]


def test_the_help_texts_op_names_are_the_registrys():
    from nsprof.ladder.op_names import OP_NAMES
    from nsprof.ladder.registry import all_ops

    assert list(OP_NAMES) == list(all_ops())


TRITON_STAGES = [s for s in all_stages() if s.kind is TRITON]


def test_the_triton_stages_are_sgemm_fp32_and_tf32_hgemm_and_sgemv():
    assert {(s.op, s.stage, s.precision.name) for s in TRITON_STAGES} == {
        ("sgemm", "v12", "fp32"), ("sgemm", "v12t", "tf32"), ("hgemm", "h8", "fp16"), ("sgemv", "s8", "fp32")}


@pytest.mark.parametrize("stage", TRITON_STAGES, ids=lambda s: s.key)
def test_a_triton_stage_file_defines_its_kernel_and_launcher(stage):
    """Read without importing Triton: the @triton.jit function each configuration names, taking
    every constexpr the configurations set, and the launcher(problem, config, precision) contract."""
    import ast

    tree = ast.parse(stage.kernel_path().read_text())
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert [arg.arg for arg in functions["launcher"].args.args] == ["problem", "config", "precision"]
    for config in stage.tiles:
        kernel = functions[config.entry]
        assert any(ast.unparse(decorator) == "triton.jit" for decorator in kernel.decorator_list)
        assert set(config.meta) <= {arg.arg for arg in kernel.args.args}
    assert len({config.shape for config in stage.tiles}) == len(stage.tiles)


def test_without_triton_its_stages_are_not_available_and_say_how_to_install(monkeypatch):
    import importlib.util

    from nsprof.ladder_runs.bench import unavailable_reason

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None if name == "triton" else real(name, *args))
    reason = unavailable_reason(get_stage("hgemm", "h8"), tools=None)
    assert reason == 'not installed: triton (pip install -e ".[cuda13,triton]")'
    assert get_stage("hgemm", "h6").kind.unavailable() is None


def test_every_stage_kind_has_a_launcher():
    from nsprof.ladder.stage_kinds import STAGE_KINDS
    from nsprof.ladder_runs.stage_launch import LAUNCHERS

    assert set(LAUNCHERS) == set(STAGE_KINDS) and {s.kind.name for s in all_stages()} == set(STAGE_KINDS)
