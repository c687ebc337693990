"""nsprof diff on real H200 captures: the statistics against scipy, matching, stages, bench
records, the CLI's exit codes and widths."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from nsprof import api
from nsprof.cli import app
from nsprof.diff.matching import match_kernels
from nsprof.diff.statistics import compare_samples
from nsprof.launch import HELD
from nsprof.parse import load_profile

SGEMM = "profiles/examples/h200-sgemm-1024"
SGEMM_AGAIN = "tests/data/h200/nsys-sgemm-ladder-1024.sqlite"
PAIRS = "tests/data/diff-pairs"
SGEMM_BEFORE = f"{PAIRS}/sgemm-ladder-1024-before-v8-cp-async.sqlite"  # the same code as SGEMM_AGAIN
EAGER, COMPILED = f"{PAIRS}/compile-block-eager.sqlite", "profiles/examples/h200-program-torch-compile/nsys.sqlite"
runner = CliRunner()


def _launches(path: str, kernel: str) -> np.ndarray:
    kernels = load_profile(path).timelines[0].kernels
    return kernels.loc[kernels["kernel"].astype(str) == kernel, "duration_ns"].to_numpy(float)


def test_interval_agrees_with_scipy_bootstrap_on_real_launches():
    scipy_stats = pytest.importorskip("scipy.stats")
    a, b = _launches(f"{SGEMM}/nsys.sqlite", "sgemm_v5"), _launches(SGEMM_AGAIN, "sgemm_v5")
    ours = compare_samples(pd.DataFrame({"key": "k", "value_ns": a}), pd.DataFrame({"key": "k", "value_ns": b})).loc["k"]
    theirs = scipy_stats.bootstrap((a, b), lambda x, y, axis: np.median(y, axis=axis) / np.median(x, axis=axis) - 1,
                                   method="percentile", n_resamples=20000, vectorized=True, random_state=1)
    assert ours["change_pct"] == pytest.approx(100 * (np.median(b) / np.median(a) - 1))
    # both are Monte Carlo estimates of the same percentiles: they agree to a fraction of the width
    width = ours["ci_high_pct"] - ours["ci_low_pct"]
    assert abs(ours["ci_low_pct"] - 100 * theirs.confidence_interval.low) < 0.15 * width + 0.05
    assert abs(ours["ci_high_pct"] - 100 * theirs.confidence_interval.high) < 0.15 * width + 0.05


def test_too_few_launches_have_no_interval():
    stats = compare_samples(pd.DataFrame({"key": ["k", "k"], "value_ns": [1.0, 2.0]}),
                            pd.DataFrame({"key": ["k"] * 5, "value_ns": [9.0] * 5})).loc["k"]
    assert not stats["testable"] and np.isnan(stats["ci_low_pct"])


def test_a_changed_template_argument_pairs_up_and_graphs_pair_as_graphs():
    a = pd.DataFrame({"name": ["gemm<128>(float*)", "CUDA graph 3", "only_a(int)", "ns::scale<float>(float*)"],
                      "start_ns": [1, 2, 3, 4]})
    b = pd.DataFrame({"name": ["gemm<64>(float*)", "CUDA graph 7", "only_b(int)", "ns::scale<half>(half*)"],
                      "start_ns": [1, 2, 3, 4]})
    matches = match_kernels(a, b).set_index(["side", "name"])
    assert matches.loc[("a", "gemm<128>(float*)"), "key"] == "gemm<64>(float*)"
    assert matches.loc[("a", "CUDA graph 3"), "key"] == "CUDA graph 7"
    # one kernel of a base name left on each side: the same kernel in another type
    assert matches.loc[("a", "ns::scale<float>(float*)"), ["key", "matched_by"]].tolist() == \
        ["ns::scale<half>(half*)", "base name"]
    assert matches.loc[("a", "only_a(int)"), "key"] == "only_a(int)" and matches.loc[("b", "only_b(int)"), "key"] == "only_b(int)"


def _sql_kernel_times(path: str, name_like: str = "%") -> np.ndarray:
    """Kernel durations straight from an export's tables, not through nsprof's parser."""
    with sqlite3.connect(path) as db:
        return np.array([row[0] for row in db.execute(
            "SELECT k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName "
            "WHERE s.value LIKE ?", (name_like,))], dtype=float)


def _sql_range_durations(path: str, text: str) -> np.ndarray:
    with sqlite3.connect(path) as db:
        return np.array([row[0] for row in db.execute(
            "SELECT e.end - e.start FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId "
            "WHERE COALESCE(e.text, s.value) = ? AND e.end IS NOT NULL", (text,))], dtype=float)


def test_a_program_run_twice_unchanged_calls_no_kernel_and_no_range_changed():
    """The training step run twice on 2026-11-29, on an H200 and a day the noise corpus never saw and
    kept out of it (benchmarks/records/2026-11-29-h200-noise-heldout): the floors were not learned
    from this pair (train-a/b, of 2026-11-24, are corpus runs)."""
    result = api.diff(f"{PAIRS}/train-heldout-a.sqlite", f"{PAIRS}/train-heldout-b.sqlite")
    assert len(result.kernels) == 20 and len(result.ranges) == 4
    assert all(row["status"] == "same" for row in result.kernels + result.ranges)
    # run to run, CPU time drifts far beyond its interval from one run: why own durations are never called
    step = next(row for row in result.ranges if row["range"] == "step")["duration"]
    assert step["significant"] and step["change_pct"] > 5 and step["status"] == "not called"
    assert result.slower_than(2.0) == []
    assert runner.invoke(app, ["diff", f"{PAIRS}/train-heldout-a.sqlite", f"{PAIRS}/train-heldout-b.sqlite",
                               "--fail-if-slower", "2"]).exit_code == 0


def test_eager_to_compiled_finds_the_fused_kernels_and_the_real_changes():
    result = api.diff(EAGER, COMPILED)
    rows = {row["kernel"]: row for row in result.kernels}
    status = {name: row["status"] for name, row in rows.items()}
    # torch.compile fused layer norm and GELU into Triton kernels: eager's are removed, Triton's added
    assert {status[name] for name in rows if "layer_norm_kernel<" in name or "GeluCUDAKernelImpl" in name} == {"removed"}
    assert {status[name] for name in rows if name.startswith("triton_")} == {"added"}
    # PyTorch's elementwise template with a fill and with an add share a base name: never paired
    fill, add = (next(name for name in rows if functor in name) for functor in ("FillFunctor", "CUDAFunctor_add"))
    assert (status[fill], status[add]) == ("added", "removed")
    # the attention kernel ran 20 times on each side: its change is the ratio of the medians SQL reads
    sdpa = next(row for name, row in rows.items() if name.startswith("cudnn_generated_fort_native_sdpa"))
    a, b = (_sql_kernel_times(path, "cudnn_generated_fort_native_sdpa%") for path in (EAGER, COMPILED))
    assert sdpa["change_pct"] == pytest.approx(100 * (np.median(b) / np.median(a) - 1))
    # +2.4%, its interval above 0, but one run a side: under nsprof's kernel floor (2.55%), not called
    assert sdpa["significant"] and sdpa["ci_low_pct"] > 0 and sdpa["change_pct"] < result.noise.of("kernels")
    assert sdpa["status"] == "same"
    totals = {row["quantity"]: row for row in result.totals}
    assert (totals["kernel_ns"]["a_ns"], totals["kernel_ns"]["b_ns"]) == (_sql_kernel_times(EAGER).sum(),
                                                                          _sql_kernel_times(COMPILED).sum())
    # the step's GPU time fell a little, and surely: its whole interval is below zero
    step = next(row for row in result.ranges if row["range"] == "block:step")
    assert step["change_pct"] < 0 and step["ci_high_pct"] < 0 and step["significant"]
    # ...while the step's own duration (CPU: CUDA graphs replace eager launches) more than halved
    own = [np.median(_sql_range_durations(path, "step")) for path in (EAGER, COMPILED)]
    assert step["duration"]["change_pct"] == pytest.approx(100 * (own[1] / own[0] - 1))
    assert step["duration"]["significant"] and step["duration"]["change_pct"] < -50
    # CPU time is shown, never called: the unchanged pair's step read +12% (the next test)
    assert step["duration"]["status"] == "not called"
    assert all(0 < row["share_pct"] <= 100 for row in result.contributors)
    failed = runner.invoke(app, ["diff", EAGER, COMPILED, "--fail-if-slower", "2"])
    assert failed.exit_code == 1 and "cudnn_generated_fort_native_sdpa" in failed.stderr
    assert runner.invoke(app, ["diff", EAGER, COMPILED, "--fail-if-slower", "5"]).exit_code == 0


def test_the_same_ladder_captured_twice_calls_nothing_faster_or_slower():
    result = api.diff(SGEMM_BEFORE, SGEMM_AGAIN)
    assert {row["status"] for row in result.kernels + result.stages} == {"same"}
    # the two captures ran 10 and 5 timed launches per stage (their manifests' repeat), plus 4 others
    v1 = next(row for row in result.kernels if row["kernel"] == "sgemm_v1")
    assert (v1["a_count"], v1["b_count"]) == (14, 7)
    assert any("different number of times" in line for line in result.warnings)
    assert result.slower_than(2.0) == []


def test_the_ladder_before_and_after_v8s_cp_async_leaves_only_v8_undecided():
    """v8 changed between the two captures (A transposed first, tiles by cp.async, an unchecked entry);
    v10 only took its unchecked entry's name; every other stage ran the same code. One run a side,
    v8's -2.9% (54 us) is significant but within its class's floor (an unchanged 10-100 us kernel moved
    15% between two days): undecided, and nothing is called."""
    result = api.diff(SGEMM_BEFORE, f"{SGEMM}/nsys.sqlite")
    by_stage = {row["label"]: row for row in result.stages}
    v8 = by_stage["v8"]
    assert v8["undecided"] and v8["change_pct"] < -2 and v8["ci_high_pct"] < 0 and v8["floor"] == "10-100 us"
    assert {name for name, row in by_stage.items() if row["undecided"]} == {"v8"}
    assert {row["status"] for row in by_stage.values()} == {"same"}
    status = {row["kernel"]: row["status"] for row in result.kernels}
    assert status["sgemm_v8_128x128"] == status["sgemm_v10_128x128"] == "removed"
    assert {status[k] for k in ("sgemm_v8_128x128_unchecked", "sgemm_v8_transpose_a", "sgemm_v10_128x128_unchecked")} \
        == {"added"}


def test_v5_to_v6_is_a_small_real_speedup_with_store_conflicts_cut():
    [row] = api.diff(SGEMM, stages=("v5", "v6")).stages
    analysis = api.analyze(SGEMM)
    times = analysis.stages.set_index("label")["time_per_launch_ns"]
    assert row["change_pct"] < 0 and row["ci_high_pct"] < 0 and row["significant"]
    assert row["change_pct"] == pytest.approx(100 * (times["v6"] / times["v5"] - 1), abs=0.5)  # medians vs means
    conflicts = row["metrics"]["bank_conflicts_per_launch"]
    assert conflicts["b"] < 0.1 * conflicts["a"]


def test_bench_records_compare_per_stage_and_size():
    record = "benchmarks/records/2026-11-24-h200-sgemm/h200-sgemm.json"
    result = api.diff(record, f"{SGEMM}/bench-nsys.json")
    assert len(result.stages) == 10 and all(row["size"] == "1024x1024x1024" for row in result.stages)
    assert any("only in A" in line for line in result.warnings)
    records = {r["stage"]: r for r in json.loads(Path(record).read_text())["results"]
               if r["size"] == "1024x1024x1024"}
    v6 = next(row for row in result.stages if row["label"] == "v6")
    assert v6["a_median_ns"] == pytest.approx(records["v6"]["median_ms"] * 1e6)


def test_cli_json_keys_and_fail_if_slower(tmp_path):
    ok = runner.invoke(app, ["diff", SGEMM, "--stages", "v6,v5", "--json"])
    document = json.loads(ok.stdout)
    assert set(document) >= {"kernels", "ranges", "stages", "totals"}
    assert document["stages"][0]["change_pct"] > 0
    failed = runner.invoke(app, ["diff", SGEMM, "--stages", "v6,v5", "--fail-if-slower", "0.5"])
    assert failed.exit_code == 1 and "slower by more than 0.5%" in failed.stderr
    passed = runner.invoke(app, ["diff", SGEMM, "--stages", "v6,v5", "--fail-if-slower", "5"])
    assert passed.exit_code == 0


def test_cli_tables_fit_80_columns_and_bad_input_is_one_line():
    result = runner.invoke(app, ["diff", "tests/data/user-programs/train.sqlite", "tests/data/user-programs/graph.sqlite"],
                           env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    fused = runner.invoke(app, ["diff", EAGER, COMPILED], env={"COLUMNS": "80"})
    lines = fused.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80 and not any(line.endswith(" ") for line in lines if "│" not in line)
    # every kernel row keeps a label of its own: the part of the name that tells it apart
    table = lines[lines.index("Kernels") + 4:]
    labels = [line.split("│")[1].strip() for line in table[:len(api.diff(EAGER, COMPILED).kernels)]]
    assert len(set(labels)) == len(labels) and any("GeluCUDAKernelImpl" in label for label in labels)
    missing = runner.invoke(app, ["diff", SGEMM, "nowhere.sqlite"])
    assert missing.exit_code == 2 and missing.stderr.count("\n") == 1 and "Traceback" not in missing.output


def test_captures_of_different_gpus_and_nsys_versions_compare_with_a_warning_naming_each():
    result = api.diff("tests/data/nsys-pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", "tests/data/user-programs/train.sqlite")
    assert "different GPUs: A ran on NVIDIA A100-SXM4-40GB, B on NVIDIA H200" in result.warnings
    assert any(line.startswith("different nsys versions: A 2022.2") for line in result.warnings)
    assert not any("different" in line for line in api.diff(f"{PAIRS}/train-a.sqlite", f"{PAIRS}/train-b.sqlite").warnings)


def test_a_narrow_terminal_says_the_medians_were_left_out():
    narrow = runner.invoke(app, ["diff", EAGER, COMPILED], env={"COLUMNS": "80"})
    wide = runner.invoke(app, ["diff", EAGER, COMPILED], env={"COLUMNS": "160"})
    assert "A median" not in narrow.stdout.split("Kernels")[1].splitlines()[2]
    assert "left out to fit the terminal: A median, B median" in " ".join(narrow.stdout.split())
    assert "left out to fit the terminal: A median" not in " ".join(wide.stdout.split())


def test_the_chart_and_the_report_table_name_each_kernel_alike():
    """A kernel the chart draws reads the same in the report's kernels table: both tell it apart
    among every kernel of the diff, at one width (the torch eager-to-compiled pair's long names)."""
    from nsprof.render.diff_chart import diff_chart
    from nsprof.render.diff_tables import diff_blocks, row_label
    from nsprof.render.document import REPORT_WIDTH, Table

    result = api.diff(EAGER, COMPILED)
    figure = diff_chart(result.kernels, "kernel", "t")
    drawn = [tick.get_text() for tick in figure.axes[0].get_yticklabels()]
    charted = [row for row in result.kernels if row["change_pct"] is not None][:len(drawn)][::-1]
    [table] = [block for block in diff_blocks(result, REPORT_WIDTH) if isinstance(block, Table) and block.title == "Kernels"]
    in_table = {full: row["kernel"] for full, row in zip((row_label(r) for r in result.kernels), table.rows)}
    shared = [(label, row_label(row)) for label, row in zip(drawn, charted) if row_label(row) in in_table]
    assert len(shared) >= 3 and any(len(full) > 40 for _, full in shared)  # names long enough to be cut
    assert all(label == in_table[full] for label, full in shared)


def test_each_launch_s_configuration_label_is_its_grid_and_block_on_a_real_capture(real_program):
    """The real JAX capture (37,628 launches in hundreds of configurations): each launch's label,
    made once per distinct configuration, is its own grid, block, registers and dynamic shared memory joined, as a row-by-row join
    makes it (which took 71 s of a 1M-launch diff)."""
    from nsprof.analyze.capture_facts import gpu_launches
    from nsprof.analyze.launch_configs import LAUNCH_RESOURCES, LAUNCH_SIZES

    export = load_profile(real_program("jax-a")).timelines[0]
    labels = gpu_launches([export])["config"].iloc[:len(export.kernels)]
    columns = [*LAUNCH_SIZES, *LAUNCH_RESOURCES]
    expected = export.kernels[columns].astype("Int64").astype(str).agg(",".join, axis=1)
    assert labels.nunique() > 50 and labels.tolist() == expected.tolist()


def test_bench_records_timed_with_and_without_the_host_held_ahead_compare_with_a_warning(tmp_path):
    """A results file from before the hold names no `timing`; one from after says the host was held ahead: the
    short kernels' times of the two are not alike, and the diff says so (and says nothing where both agree)."""
    a, b = (json.loads(Path(f"tests/data/runs/bench-{side}.json").read_text()) for side in "ab")
    assert "timing" not in a and "timing" not in b
    held = tmp_path / "bench-b.json"
    held.write_text(json.dumps({**b, "timing": HELD}))
    before = tmp_path / "bench-a.json"
    before.write_text(json.dumps(a))
    warnings = api.diff(before, held).warnings
    assert [w for w in warnings if w.startswith("timed differently")] == [
        f"timed differently: A without the host held ahead (a file from before the hold), B {HELD}; unheld, a kernel "
        "shorter than the host's time to queue a launch reads the host's time too (nsprof.launch.measure._timed)"]
    both = tmp_path / "bench-a-held.json"
    both.write_text(json.dumps({**a, "timing": HELD}))
    assert not any(w.startswith("timed differently") for w in api.diff(both, held).warnings)


def test_bench_records_on_cold_and_on_warm_inputs_compare_with_a_warning(tmp_path):
    """A results file from before 2026-11-30 names no `inputs` and timed every launch on one set of buffers; one
    after says its launches rotated among copies: the diff says the inputs differ, and nothing where both agree."""
    a, b = (json.loads(Path(f"tests/data/runs/bench-{side}.json").read_text()) for side in "ab")
    assert "inputs" not in a and "inputs" not in b
    cold = tmp_path / "bench-b.json"
    cold.write_text(json.dumps({**b, "inputs": "cold"}))
    before = tmp_path / "bench-a.json"
    before.write_text(json.dumps(a))
    warnings = [w for w in api.diff(before, cold).warnings if w.startswith("different inputs")]
    assert warnings == ["different inputs: A every launch on one set of buffers, B each launch on the next of several "
                        "copies of its buffers; on one set a product that fits in the L2 reads it from there (nsprof "
                        "explain cold-inputs)"]
    both = tmp_path / "bench-a-cold.json"
    both.write_text(json.dumps({**a, "inputs": "cold"}))
    assert not any(w.startswith("different inputs") for w in api.diff(both, cold).warnings)
    # written before the field, but its rows rotated among 2 to 7 sets of buffers: a cold file
    unnamed = "benchmarks/records/2026-11-30-h200-hgemm-cold-inputs/models-run1.json"
    assert not any(w.startswith("different inputs") for w in api.diff(unnamed, cold).warnings)
