"""Programs people actually profile, at their real size (tests/data/real-programs: a JAX ResNet-50
training loop run twice, Triton's autotuned matmul timed by do_bench; real H200 exports): name
families, harness work kept out of what to fix, the steady state, and tables that stay a screenful."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing

import pytest
from typer.testing import CliRunner

from nsprof.analyze.families import family_of, rules_applied
from nsprof.analyze.harness import harness_kernels
from nsprof.analyze.hot_kernels import COVERAGE_PCT
from nsprof.analyze.program_harness import steady_state
from nsprof.api import choose_hot_kernels
from nsprof.cli import app
from nsprof.parse.nsys_sqlite import load_nsys
from nsprof.render.diff_tables import CHANGE_ROWS
from nsprof.render.range_tables import RANGE_ROWS


def run(*args: str, columns: int = 100):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns)})


def test_families_drop_ids_and_numbers_but_keep_what_differs():
    assert family_of("XlaModule:#hlo_module=jit_update,program_id=65645#") == "XlaModule:#hlo_module=jit_update#"
    assert family_of("Thunk:#hlo_op=copy.1,unique_hlo_op_id=4294967297#") == "Thunk:#hlo_op=copy.N#"
    assert family_of("Thunk:#hlo_op=cudnn-conv.114#") == family_of("Thunk:#hlo_op=cudnn-conv.7#")
    assert family_of("Thunk:#hlo_op=cudnn-conv.114#") != family_of("XlaModule:#hlo_module=cudnn-conv.114#")
    assert family_of("input_reduce_fusion_47") == "input_reduce_fusion_N"
    assert family_of("triton_poi_fused_add_view_3") != family_of("triton_poi_fused_gelu_view_2")
    assert family_of("aten::addmm, seq = 12, op_id = 40") == "aten::addmm"
    for name in ("nsprof:sgemm/v10/1024x1024x1024", "nsprof:sgemm/v1/1024x1024x1024", "bench:matmul 4096",
                 "sgemm_v8_128x128_unchecked", "void gemv2T_kernel_val<int, int, float, 128, 16, 4>(float *)"):
        assert family_of(name) == name  # the ladder's names and sizes stay apart
    assert rules_applied(["nsprof:sgemm/v1/64x64x64"]) == []


def test_a_jax_capture_prints_at_a_terminal_with_a_screenful_of_range_families(real_program):
    directory = real_program("jax-a")
    doc = json.loads(run("analyze", str(directory), "--json").stdout)
    names = {member for family in doc["range_families"] for member in family["members"]}
    assert len(doc["ranges"]) == len(names) > 80_000 and len(doc["range_families"]) < 3_000
    thunks = next(f for f in doc["range_families"] if f["range"] == "TSL:Thunk:#hlo_op=cudnn-conv.N#")
    assert thunks["names"] == len(thunks["members"]) > 1
    assert all(re.fullmatch(r"TSL:Thunk:#hlo_op=cudnn-conv\.\d+#", member) for member in thunks["members"])
    for columns in (80, 120):
        result = run("analyze", str(directory), columns=columns)
        assert result.exit_code == 0, result.output
        assert max(map(len, result.stdout.splitlines())) <= columns
        text = " ".join(result.stdout.split())
        more = len(doc["range_families"]) - RANGE_ROWS
        assert f"{more:,} more in --json (range_families)" in text and "XLA's #...# arguments without their ids" in text


def test_xla_autotuner_and_start_up_are_harness_and_the_ranking_is_the_steady_state(real_program):
    directory = real_program("jax-a")
    export = load_nsys(directory / "nsys.sqlite")
    state = steady_state(export)
    assert state is not None and state.range == "train:step" and state.instances == 3
    harness = harness_kernels([export], state)
    assert harness["stream_executor::gpu::RedzoneAllocatorKernelImpl(unsigned char *, unsigned char, unsigned long, "
                   "unsigned int *)"] == "xla-autotuner"
    # cuDNN's slow candidates, tried while XLA autotuned in the first step, never ran again
    direct = [name for name in harness if "grouped_direct_kernel" in name]
    assert direct and all(harness[name] == "before-steady-state" for name in direct)
    doc = json.loads(run("analyze", str(directory), "--json").stdout)
    assert {rule["rule"] for rule in doc["harness"]["rules"]} == {"xla-autotuner", "before-steady-state"}
    assert doc["harness"]["pct"] > 50 and doc["harness"]["steady_state"]["range"] == "train:step"
    hot = {row["kernel"] for row in doc["hot_kernels"]}
    assert hot and not hot & set(doc["harness"]["kernels"])
    steady_launches = export.kernels["start_ns"] >= state.start_ns
    late = set(export.kernels.loc[steady_launches, "kernel"].astype(str))
    assert hot <= late  # every ranked kernel ran in the steady state


def test_the_guided_choice_covers_the_steady_state(real_program):
    jax = choose_hot_kernels(real_program("jax-a") / "nsys.sqlite", 100)
    assert jax.covered_pct >= COVERAGE_PCT and "train:step" in jax.rule
    assert not any("Redzone" in k["kernel"] or "grouped_direct" in k["kernel"] for k in jax.kernels)
    triton = choose_hot_kernels(real_program("triton") / "nsys.sqlite", 100)
    assert triton.covered_pct >= COVERAGE_PCT
    assert not any("FillFunctor" in k["kernel"] for k in triton.kernels)  # do_bench's L2 flush
    assert {k["kernel"] for k in triton.kernels} >= {"matmul_kernel"}


# do_bench's L2 flush by plain SQL: the launches and GPU time of the kernels whose demangled name
# holds FillFunctor<int> (the torch fill of its flush buffer), beside all kernels' time (the capture
# traces no CUDA graph, so kernel time is all of it).
FLUSH_SQL = """
SELECT sum(s.value LIKE '%FillFunctor<int>%'), sum(CASE WHEN s.value LIKE '%FillFunctor<int>%' THEN k."end" - k.start END),
       sum(k."end" - k.start)
FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
"""


def test_do_bench_l2_flush_is_harness_work(real_program):
    directory = real_program("triton")
    export = load_nsys(directory / "nsys.sqlite")
    harness = harness_kernels([export], steady_state(export))
    flushes = [name for name, rule in harness.items() if rule == "l2-flush"]
    assert len(flushes) == 1 and "FillFunctor<int>" in flushes[0]
    doc = json.loads(run("analyze", str(directory), "--json").stdout)
    flush = doc["harness"]["rules"][0]
    with closing(sqlite3.connect(f"file:{directory / 'nsys.sqlite'}?mode=ro", uri=True)) as conn:
        assert not conn.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE '%GRAPH%'").fetchone()[0]
        launches, flush_ns, kernel_ns = conn.execute(FLUSH_SQL).fetchone()
    assert flush["rule"] == "l2-flush" and (flush["launches"], flush["total_ns"]) == (launches, flush_ns)
    assert flush["pct"] == pytest.approx(100 * flush_ns / kernel_ns)  # 44.8% of kernel time in this capture
    assert not any("FillFunctor" in row["kernel"] for row in doc["hot_kernels"])
    text = " ".join(run("analyze", str(directory)).stdout.split())
    assert "left out as harness work" in text and "a benchmark's cache flush" in text


def test_two_runs_of_a_jax_program_pair_every_range_family(real_program):
    a, b = real_program("jax-a"), real_program("jax-b")
    result = run("diff", str(a), str(b), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    statuses = {row["status"] for row in doc["ranges"]}
    assert len(doc["ranges"]) > 2_000 and not statuses & {"added", "removed"}
    assert not {row["status"] for row in doc["kernels"]} & {"added", "removed"}
    text = run("diff", str(a), str(b)).stdout
    more = f"{len(doc['ranges']) - CHANGE_ROWS:,} more ranges in --json"
    assert len(text.splitlines()) < 200 and more in " ".join(text.split())


def test_triton_autotune_trials_are_harness_and_the_kept_configurations_are_ranked(real_program):
    """@triton.autotune tried 8 configurations at each of 3 sizes; the kept ones are those it
    returned to (2048, 4096) or tried last (1024: its trial and its use are one run)."""
    directory = real_program("triton")
    export = load_nsys(directory / "nsys.sqlite")
    kernels = export.kernels[export.kernels["kernel"].astype(str) == "matmul_kernel"]
    configurations = {(f"({g}, 1, 1)", f"({b}, 1, 1)") for g, b in zip(kernels["grid_x"], kernels["block_x"])}
    kept = {("(64, 1, 1)", "(256, 1, 1)"), ("(128, 1, 1)", "(256, 1, 1)"), ("(512, 1, 1)", "(256, 1, 1)")}
    trials = {key[1:] for key, rule in harness_kernels([export], None).items() if rule == "autotune-trials"}
    assert trials == configurations - kept and len(trials) == 13
    doc = json.loads(run("analyze", str(directory), "--json").stdout)
    ranked = {(row["grid"], row["block"]) for row in doc["hot_kernels"] if row["kernel"] == "matmul_kernel"}
    assert ranked == kept
    rule = next(rule for rule in doc["harness"]["rules"] if rule["rule"] == "autotune-trials")
    assert rule["kernels"] == [] and len(rule["configurations"]) == 13 and "matmul_kernel" not in doc["harness"]["kernels"]
    text = " ".join(run("analyze", str(directory)).stdout.split())
    assert "an autotuner's trials" in text and "13 configurations of kept kernels" in text


def test_numbered_kernels_are_one_family_row_with_their_members(real_program):
    directory = real_program("jax-a")
    doc = json.loads(run("analyze", str(directory), "--json").stdout)
    families, names = doc["kernel_families"], doc["kernel_summary"]
    assert sum(row["names"] for row in families) == len(names) > len(families)
    assert sum(row["count"] for row in families) == sum(row["count"] for row in names)
    fusions = next(row for row in families if row["kernel"] == "input_reduce_fusion_N")
    members = {row["kernel"]: row for row in names if row["kernel"] in fusions["members"]}
    assert len(members) == fusions["names"] > 10 and all(re.fullmatch(r"input_reduce_fusion_\d+", m) for m in members)
    assert fusions["total_ns"] == sum(row["total_ns"] for row in members.values())
    text = " ".join(run("analyze", str(directory), columns=80).stdout.split())
    assert f"{len(names):,} kernel names in {len(families):,} families" in text and "numbered by their compiler" in text


def test_without_ncu_the_hot_table_has_no_ncu_columns(real_program):
    text = run("analyze", str(real_program("jax-a")), columns=80).stdout
    title = next(i for i, line in enumerate(text.splitlines()) if line.startswith("Where the time goes"))
    header = " ".join(text.splitlines()[title:title + 6])
    assert "(nsys only)" in header and "launches" in header and "top rule" not in header and "saving" not in header
    assert "ranked by total time (no ncu data" in " ".join(text.split())


def test_triton_kernels_are_told_apart_by_what_triton_compiled(real_program):
    """Each launch configuration of `matmul_kernel` matches exactly one kernel of the capture's Triton
    cache by block (warps x 32) and dynamic shared memory: configurations with the same grid and block
    (64 x 128 threads, one with 80 KB of shared memory, one with 64 KB: 3 and 4 stages of different
    tiles) are two rows, each with its warps and stages, and the source names the @triton.jit function."""
    directory = real_program("triton")
    doc = json.loads(run("analyze", str(directory), "--json").stdout)
    rows = doc["triton_kernels"]
    assert rows and all(row["compiled"] == 1 for row in rows)
    assert {row["source"] for row in rows} == {"triton_matmul_bench.py:31"}  # `def matmul_kernel(` in the program
    assert all(row["num_warps"] * 32 == int(row["block"].strip("()").split(",")[0]) for row in rows)
    alike = [row for row in rows if (row["grid"], row["block"]) == ("(64, 1, 1)", "(128, 1, 1)")]
    assert sorted(row["shared_bytes"] for row in alike) == [65536, 81920]
    export = load_nsys(directory / "nsys.sqlite")
    matmul = export.kernels[export.kernels["kernel"].astype(str) == "matmul_kernel"]
    assert sum(row["launches"] for row in rows) == len(matmul)
    text = " ".join(run("analyze", str(directory), columns=80).stdout.split())
    assert "Triton kernels (nsys + Triton's cache)" in text and "matched by name, block" in text
