"""The op contract (nsprof.ladder.op_model): a fourth ladder, declared here in the test module alone and
registered with registry.register_op, is listed by `nsprof stages`, gets its baselines looked up,
and gets bench records and a bench table whose caption states its own byte formula, with no file
of nsprof naming it. No GPU: nothing is launched."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

from nsprof.analyze import Ceiling
from nsprof.cli import app
from nsprof.errors import UsageError
from nsprof.ladder.op_model import Op, Stage, fixed_precision
from nsprof.ladder.registry import (
    all_ops,
    baseline_of,
    baseline_stage,
    baseline_stages,
    get_op,
    is_baseline_stage,
    op_problems,
    register_op,
    select_stages,
)
from nsprof.ladder.stage_kinds import LIBRARY, NVRTC, TRITON
from nsprof.ladder_analysis.work import watched
from nsprof.ladder_runs.bench import _add_pct_cublas, _record, add_pct_dram
from nsprof.render.bench_table import results_table
from nsprof.sizes import parse_sizes

PACKAGE = Path(__file__).resolve().parents[1] / "nsprof"
FP32 = fixed_precision("fp32", "float32 adds, any order", 1e-6)


@dataclass(frozen=True)
class RowBlock:
    """The toy ladder's own launch configuration: `rows` rows per block, nothing like a GEMM tile."""

    rows: int
    threads: int
    entry: str
    arch: str | None = None

    @property
    def shape(self) -> str:
        return f"{self.rows} rows"

    @property
    def entries(self) -> tuple[str, ...]:
        return (self.entry,)


class RowSumWorkload:
    """Would make problems and launchers on a GPU; this test never calls it."""

    def problem(self, xp, size, seed=0):
        raise AssertionError("no GPU work in this test")

    def launcher(self, stage, problem, tools, tile_shape=None, split_k=None, defines=()):
        raise AssertionError("no GPU work in this test")

    def library_call(self, stage, problem):
        raise AssertionError("no GPU work in this test")


def _stage(name, title, kernel_file, kind, tiles) -> Stage:
    return Stage("rowsum", name, title, kernel_file, kind, tiles, "bounds-check", FP32,
                 changes=f"{title} (a test's stage)", why="none", metric="dram__throughput")


def _op(**changes) -> Op:
    fields = dict(
        name="rowsum", title="ROWSUM", description="y_r = sum of row r of A, float32, A is RxC", dtype="float32",
        element_bytes=4, dims="RxC", stage_prefix="r", precisions={"fp32": FP32},
        stages=(_stage("r1", "one thread per row", "kernels/rowsum/r1.cu", NVRTC, (RowBlock(128, 128, "rowsum_r1"),)),
                _stage("r2", "CUB", None, LIBRARY, ())),
        flops=lambda size: size[0] * size[1], min_bytes=lambda size: 4 * (size[0] * size[1] + size[0]),
        min_bytes_rule="4(RC + R)", workload=RowSumWorkload(), baselines={"fp32": "r2"}, headline="bytes",
        library="CUB")
    return Op(**{**fields, **changes})


@pytest.fixture
def rowsum():
    op = register_op(_op())
    yield op
    del all_ops()[op.name]


def test_no_file_of_nsprof_names_the_fourth_ladder():
    """What the other tests see comes from this module's declarations alone."""
    assert not [p for p in PACKAGE.rglob("*.py") if "rowsum" in p.read_text()]


def test_stages_lists_it_from_its_declarations(rowsum):
    result = CliRunner().invoke(app, ["stages", "--op", "rowsum"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "rowsum ladder: y_r = sum of row r of A, float32, A is RxC" in text
    assert "(CUB call, tuned)" in text and "kernels/rowsum/r1.cu" in text
    assert "fp32 (float32 adds, any order) 1e-06" in text
    listed = json.loads(CliRunner().invoke(app, ["stages", "--op", "rowsum", "--json"]).stdout)
    assert [s["stage"] for s in listed] == ["r1", "r2"]
    assert listed[0]["tiles"] == [{"rows": 128, "threads": 128, "entry": "rowsum_r1", "arch": None}]


def test_its_baseline_and_stage_names_are_its_own(rowsum):
    assert baseline_stage("rowsum", "fp32").stage == "r2"
    assert baseline_of("rowsum", "r1").stage == "r2" and baseline_of("rowsum", "r9") is None
    assert is_baseline_stage("rowsum", "r2") and not is_baseline_stage("rowsum", "r1")
    assert [s.stage for s in baseline_stages("rowsum")] == ["r2"]
    assert [s.stage for s in select_stages("rowsum", ["1", "R2"])] == ["r1", "r2"]  # its prefix, "r"
    with pytest.raises(UsageError, match="'r1' is a stage of rowsum, not of sgemm"):
        select_stages("sgemm", ["r1"])
    assert parse_sizes(["1000x4096"], get_op("rowsum").dims) == [(1000, 4096)]


def test_bench_records_and_table_caption_come_from_its_declarations(rowsum):
    size, ms = (1000, 4096), {"r1": 0.02, "r2": 0.01}
    records = []
    for name in ("r2", "r1"):
        rec = _record(select_stages("rowsum", [name])[0], size)
        rec.update(status="ok", median_ms=ms[name], spread_pct=1.0, rel_error=1e-7, tile="128 rows",
                   tbytes_per_s=4 * (1000 * 4096 + 1000) / (ms[name] * 1e-3) / 1e12)
        records.append(rec)
    assert (records[1]["r"], records[1]["c"], records[1]["baseline"]) == (1000, 4096, "r2")  # keys from dims "RxC"
    _add_pct_cublas(records)
    h200 = Ceiling("H200 SXM", 67.0, 494.7, 989.4, 4.8)
    add_pct_dram(records, h200)
    assert records[1]["pct_cublas"] == pytest.approx(50)  # 0.01 ms of its library baseline over 0.02
    # 16,388,000 bytes in 20 us is 819.4 GB/s, 17.07% of 4.8 TB/s
    assert records[1]["pct_dram"] == pytest.approx(100 * 16_388_000 / 20e-6 / 4.8e12)
    env = {"device": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132, "cupy": "13", "runtime_cuda": "12.8"}
    console = Console(width=160, record=True, color_system=None)
    console.print(results_table(records, env, h200, 160))
    text = " ".join(console.export_text().split())
    assert "GB/s: 4(RC + R) bytes over the median time; % DRAM: of 4,800 GB/s (datasheet)" in text
    assert "% CUB" in text and "% cuBLAS" not in text and "819" in text and " 17 " in text


def test_a_broken_declaration_is_refused_with_every_reason():
    modelled_elsewhere = replace(_stage("r3", "c", "kernels/rowsum/r3.cu", NVRTC, (RowBlock(128, 128, "rowsum_r3"),)),
                                modelled_tile="64x64")
    block = RowBlock(128, 128, "rowsum_r4")
    broken = _op(baselines={"fp32": "r1x"}, stages=(_stage("r1", "a", None, NVRTC, (object(),)),
                                                    _stage("r1", "b", None, LIBRARY, ()), modelled_elsewhere,
                                                    _stage("r4", "d", "kernels/rowsum/r4.cu", LIBRARY, (block,)),
                                                    _stage("r5", "e", "kernels/rowsum/r5.py", "cub", ()),
                                                    _stage("r6", "f", "kernels/rowsum/r6.py", TRITON, (block,))),
                 workload=object())
    with pytest.raises(UsageError) as refused:
        register_op(broken)
    message = str(refused.value)
    for reason in ("stage r1 is listed twice", "is not a LaunchConfig", "the fp32 baseline r1x is not a fp32 stage",
                   "its workload has no problem() and launcher()",
                   "stage r3 models its accesses on a 64x64 tile it does not have",
                   "stage r1 is a nvrtc stage without a .cu kernel file",
                   "stage r4 is a library call with a kernel file", "stage r4 is a library call with tiles",
                   "stage r5 is of kind 'cub', not one of nsprof.ladder.stage_kinds (nvrtc, library, triton, cpu)",
                   "stage r6: RowBlock(rows=128, threads=128, entry='rowsum_r4', arch=None) is not a TritonConfig"):
        assert reason in message
    assert "rowsum" not in all_ops()
    with pytest.raises(UsageError, match="the name 'sgemm' is taken"):
        register_op(_op(name="sgemm"))


def test_the_built_in_ladders_keep_the_contract():
    assert {name: op_problems(op) for name, op in all_ops().items()} == {"sgemm": [], "hgemm": [], "sgemv": []}


def test_a_registered_ladder_gets_its_watched_counters_in_diff(rowsum):
    """The watched columns are read from the registry when asked, not when nsprof was imported."""
    from nsprof.diff.why import stage_counters

    stages = pd.DataFrame({"op": ["rowsum"], "stage": ["r1"], "key": ["nsprof:rowsum/r1/1000x4096"],
                           "dram_bytes": [4e6], "launches": [2], "main_kernel_launches": [2]})
    assert "dram_bytes" in stage_counters(stages).columns
    assert watched()["rowsum/r1"] == rowsum.stages[0].watch
