"""nsprof diff across runs: the statistics on simulated runs of known variance, and the
real runs of tests/data/runs (H200, benchmarks/gpu/runs_h200.sh): an unchanged program split in two
groups, the same program with its spin kernel made 5% slower, the SGEMM ladder's v5 and v6, two
`bench --runs` records; and the noise floors of one-run diffs."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from noise_rule import floors_by_rule
from typer.testing import CliRunner

from nsprof import api
from nsprof.cli import app
from nsprof.diff import run_frames
from nsprof.diff.mix import as_runs, mix_moved
from nsprof.diff.noise import NOISE_RECORD, SHORT_NS, default_noise, measure_noise
from nsprof.diff.statistics import compare_runs
from nsprof.errors import ParseError
from nsprof.ladder_runs.bench_runs import merged

ROOT = Path(__file__).resolve().parents[1]
RUNS = Path(__file__).parent / "data" / "runs"
BASE, SLOWER, TORCH, LADDER = (RUNS / name for name in ("ab-base", "ab-slower", "torch", "ladder"))
SPIN_CHANGE_PCT = 5.0  # ab_spin.py --slower 5: 420,000 cycles where the baseline spins 400,000


# --- the statistics, on runs simulated with a known variance between runs -----------------------------

def simulated(rng, groups: int, runs: int, launches: int, shift: float, between: float, within: float) -> pd.DataFrame:
    """(key, run, value_ns): `groups` independent kernels, each run moved by a log-normal run effect
    (`between`) and each launch by `within`, all times multiplied by exp(`shift`)."""
    key = np.repeat(np.arange(groups), runs * launches)
    run = np.tile(np.repeat(np.arange(runs), launches), groups)
    effect = rng.normal(0, between, size=(groups, runs))
    values = 1e5 * np.exp(shift + effect[key, run] + rng.normal(0, within, size=key.size))
    return pd.DataFrame({"key": key.astype(str).astype(object), "run": run, "value_ns": values})


@pytest.mark.parametrize("runs_a, runs_b", [(3, 3), (5, 5), (8, 8), (1, 5)])
def test_no_change_pairs_are_called_at_most_at_the_nominal_rate(runs_a, runs_b):
    """4,000 no-change pairs, 2% between runs (twice the 1% within a run): the interval excludes 0
    for at most 5% of them (the nominal level), plus the simulation's own error."""
    rng = np.random.default_rng(31)
    stats = compare_runs(simulated(rng, 4000, runs_a, 50, 0.0, 0.02, 0.01), simulated(rng, 4000, runs_b, 50, 0.0, 0.02, 0.01))
    false = ((stats["ci_low_pct"] > 0) | (stats["ci_high_pct"] < 0)).mean()
    assert stats["testable"].all() and false <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 4000)


def test_a_five_percent_change_is_found_with_the_stated_power_and_covered():
    """5 runs a side, 2% between runs: a 5% change is found 90% of the time (measured: 0.90), and
    the interval holds the true 5% at the nominal rate."""
    rng = np.random.default_rng(5)
    stats = compare_runs(simulated(rng, 4000, 5, 50, 0.0, 0.02, 0.01),
                         simulated(rng, 4000, 5, 50, np.log(1.05), 0.02, 0.01))
    power = (stats["ci_low_pct"] > 0).mean()
    covered = ((stats["ci_low_pct"] <= 5) & (stats["ci_high_pct"] >= 5)).mean()
    assert 0.87 <= power <= 0.93 and covered >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / 4000)


def test_the_within_run_interval_alone_would_call_most_no_change_pairs():
    """What runs are for: the same no-change pairs judged by one run a side's launches alone (the
    one-run bootstrap) call far more than 5%, as one-run diffs of real torch.compile and JAX pairs did."""
    from nsprof.diff.statistics import compare_samples

    rng = np.random.default_rng(7)
    a, b = simulated(rng, 500, 1, 50, 0.0, 0.02, 0.01), simulated(rng, 500, 1, 50, 0.0, 0.02, 0.01)
    stats = compare_samples(a, b)
    assert ((stats["ci_low_pct"] > 0) | (stats["ci_high_pct"] < 0)).mean() > 0.5


# --- real runs --------------------------------------------------------------------------------------

def groups_of(tmp_path: Path, runs: dict[str, list[Path]]) -> list[Path]:
    """Directories of captures (a side's runs), linked from the committed exports."""
    made = []
    for name, files in runs.items():
        (tmp_path / name).mkdir()
        for number, file in enumerate(files, 1):
            (tmp_path / name / f"run{number}.sqlite").symlink_to(file.resolve())
        made.append(tmp_path / name)
    return made


def base_runs() -> list[Path]:
    return [BASE / "nsys.sqlite", *sorted((BASE / "runs").glob("nsys-*.sqlite"), key=lambda p: int(p.stem[5:]))]


def called(result) -> list[tuple[str, str]]:
    return [(row.get("kernel") or row.get("range") or row["stage"], row["status"])
            for row in result.kernels + result.ranges + result.stages if row["status"] in ("faster", "slower")]


def test_an_unchanged_program_split_into_two_groups_of_runs_calls_nothing(tmp_path):
    first, second = groups_of(tmp_path, {"first": base_runs()[:5], "second": base_runs()[5:]})
    result = api.diff(first, second)
    assert result.runs == {"a": 5, "b": 5} and result.noise is None and "between runs" in result.method
    assert called(result) == [] and not any(row["status"] == "unstable" for row in result.kernels)
    spin = next(row for row in result.kernels if row["kernel"] == "spin")
    assert (spin["a_count"], spin["b_count"]) == (5 * 43, 5 * 43)  # 40 steps and 3 warm-up launches a run


def test_the_five_percent_slower_spin_is_found_with_its_true_size_inside_the_interval():
    """ab-base (10 runs, a profile taken with --runs) against ab-slower (5): spin is slower, and the
    constructed +5% lies in its interval; the ranges that do not hold it, and the other kernels, stay."""
    result = api.diff(BASE, SLOWER)
    assert result.runs == {"a": 10, "b": 5}
    spin = next(row for row in result.kernels if row["kernel"] == "spin")
    assert spin["status"] == "slower" and spin["ci_low_pct"] <= SPIN_CHANGE_PCT <= spin["ci_high_pct"]
    assert spin["ci_high_pct"] - spin["ci_low_pct"] < 1.0
    assert called(result) == [("spin", "slower"), ("ab:compute", "slower")]
    # its events, timed in one process, saw the same change within a third of a point (plus their own overhead)
    events = json.loads((RUNS / "true-size.json").read_text())
    assert abs(events["change_pct"] - spin["change_pct"]) < 0.35


def test_v6_is_faster_than_v5_with_the_sign_right_in_every_run():
    result = api.diff(LADDER, stages=("v5", "v6"))
    (row,) = result.stages
    assert result.runs == {"a": 5, "b": 5}
    assert row["change_pct"] < 0 and row["ci_high_pct"] < 0 and row["significant"]
    assert row["metrics"]["bank_conflicts_per_launch"]["change_pct"] < -80  # why: v6's transposed stores


def test_two_bench_records_of_five_runs_each_call_nothing():
    a, b = (json.loads((RUNS / f"bench-{side}.json").read_text()) for side in "ab")
    assert a["runs"] == b["runs"] == 5 and all(len(r["run_medians_ms"]) == 5 for r in a["results"])
    result = api.diff(RUNS / "bench-a.json", RUNS / "bench-b.json")
    assert result.runs == {"a": 5, "b": 5} and "between runs" in result.method
    assert [row["status"] for row in result.stages] == ["same", "same"]


def _copy_altered(source: Path, target: Path, *statements: str) -> Path:
    shutil.copyfile(source, target)
    with sqlite3.connect(target) as conn:
        for statement in statements:
            conn.execute(statement)
    return target


SPIN_LAUNCHES = ("SELECT k.rowid FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON s.id = k.demangledName "
                 "WHERE s.value = 'spin'")
LOSE_THREE_SPINS = f"DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid IN ({SPIN_LAUNCHES} ORDER BY k.start DESC LIMIT 3)"
REGRID_FIRST_SPIN = f"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 66 WHERE rowid IN ({SPIN_LAUNCHES} ORDER BY k.start LIMIT 1)"


def test_a_kernel_of_one_configuration_launched_a_different_number_of_times_is_still_compared(tmp_path):
    """One of five runs lost three spin launches, all of one grid and block (as a harness that
    times for a budget, Triton's do_bench, repeats a launch as often as its estimate allows): the
    same work, so its medians compare and spin is judged as the others."""
    runs = base_runs()[:5]
    damaged = _copy_altered(runs[-1], tmp_path / "run5.sqlite", LOSE_THREE_SPINS)
    first, second = groups_of(tmp_path, {"a": [*runs[:4], damaged], "b": base_runs()[5:]})
    spin = next(row for row in api.diff(first, second).kernels if row["kernel"] == "spin")
    assert spin["status"] == "same" and spin["testable"] and spin["a_count"] == 5 * 43 - 3


# half of the spin launches (every other one) moved to another grid and made 20% longer: an autotuner's
# slower trial configuration beside the kept one
SLOW_HALF = (f"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 66, \"end\" = \"end\" + (\"end\" - start) / 5 "
             f"WHERE rowid IN (SELECT id FROM (SELECT k.rowid AS id, row_number() OVER (ORDER BY k.start) AS n "
             f"FROM {SPIN_LAUNCHES.split(' FROM ', 1)[1]}) WHERE n % 2 = 0)")
LOSE_THREE_FAST = (f"DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid IN "
                   f"({SPIN_LAUNCHES} AND k.gridX != 66 ORDER BY k.start DESC LIMIT 3)")


def two_grids(tmp_path: Path, runs: list[Path]) -> list[Path]:
    """Copies of `runs` with SLOW_HALF, the last of them with LOSE_THREE_FAST too."""
    altered = [_copy_altered(run, tmp_path / f"grids{number}.sqlite", SLOW_HALF) for number, run in enumerate(runs)]
    _copy_altered(altered[-1], tmp_path / "fewer.sqlite", LOSE_THREE_FAST)
    return [*altered[:-1], tmp_path / "fewer.sqlite"]


def test_a_kernel_of_two_configurations_in_other_proportions_is_unstable_across_runs(tmp_path):
    """Every run of side A launched spin on two grids, the slower one half the time, and one run
    lost three launches of the faster (as do_bench repeats each autotuning trial as often as its
    estimate allows): that run's median jumps to the slower grid, so spin is unstable, never
    called, however its medians compare."""
    first, second = groups_of(tmp_path, {"a": two_grids(tmp_path, base_runs()[:5]), "b": base_runs()[5:]})
    result = api.diff(first, second)
    spin = next(row for row in result.kernels if row["kernel"] == "spin")
    assert spin["status"] == "unstable" and spin["a_count"] == 5 * 43 - 3
    assert next(row for row in result.kernels if row["kernel"] == "scale")["status"] == "same"


def test_a_kernel_of_two_configurations_in_other_proportions_is_unstable_one_run_a_side(tmp_path):
    """One run a side, the same two grids in other proportions: B's median is the slower grid's
    (+20% on A's), not a change of speed: unstable, where it was once called slower."""
    a, b = two_grids(tmp_path, base_runs()[:2])
    spin = next(row for row in api.diff(a, b).kernels if row["kernel"] == "spin")
    assert spin["change_pct"] > 15 and spin["status"] == "unstable"
    summary, note = " ".join(CliRunner().invoke(app, ["diff", str(a), str(b)], env={"COLUMNS": "100"}).stdout.split()) \
        .split("Intervals:")
    assert "spin unstable: its medians compare other work" in summary
    assert "unstable: launched in other proportions of its configurations" in note


def test_the_real_triton_benchmark_mixes_its_autotuning_trials_and_nothing_else():
    """The corpus's Triton program (benchmarks/records/2026-11-28-h200-noise-corpus): matmul_kernel,
    launched in 11 configurations by @triton.autotune and do_bench, read 12.5 us and 24.9 us in
    two unchanged runs; cuBLAS's nvjet kernels, one configuration each and launched 1143 to 1429
    times a run by do_bench, are not mixed, nor is any kernel of the training step."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import noise_corpus

    runs, frames = noise_corpus.load()
    for program, mixed in (("triton", ["matmul_kernel"]), ("train", [])):
        ids = runs.loc[runs["program"] == program, "run"].tolist()
        assert list(mix_moved(as_runs(frames[ids[0]]["kernels"], frames[ids[1]]["kernels"]))) == mixed
        assert list(mix_moved(as_runs(*(frames[run]["kernels"] for run in ids)))) == mixed


def test_a_kernel_launched_with_another_configuration_in_one_run_is_unstable(tmp_path):
    """One of five runs launched spin on another grid (an autotuner keeping another configuration):
    unstable, though it ran as often as in the others."""
    runs = base_runs()[:5]
    damaged = _copy_altered(runs[-1], tmp_path / "run5.sqlite", "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 66 WHERE "
                            "demangledName IN (SELECT id FROM StringIds WHERE value = 'spin')")
    first, second = groups_of(tmp_path, {"a": [*runs[:4], damaged], "b": base_runs()[5:]})
    result = api.diff(first, second)
    spin = next(row for row in result.kernels if row["kernel"] == "spin")
    assert spin["status"] == "unstable" and spin["a_count"] == spin["b_count"] == 5 * 43
    assert next(row for row in result.kernels if row["kernel"] == "scale")["status"] == "same"


# --- one run a side: the noise floor ---------------------------------------------------------------

HELD_OUT = Path(__file__).parent / "data" / "diff-pairs"


@pytest.mark.parametrize("a, b", [(BASE / "nsys.sqlite", BASE / "runs" / "nsys-2.sqlite"),
                                  (HELD_OUT / "compile-heldout-a.sqlite", HELD_OUT / "compile-heldout-b.sqlite"),
                                  (HELD_OUT / "train-heldout-a.sqlite", HELD_OUT / "train-heldout-b.sqlite")],
                         ids=["ab_spin", "torch.compile held out", "training step held out"])
def test_two_single_runs_of_an_unchanged_program_call_nothing(a, b):
    """ab_spin (nsprof's own test program, never in the noise corpus) and two programs of the corpus
    run again on 2026-11-29 on another H200 and kept out of it (the torch.compile runs of
    tests/data/runs/torch are corpus runs: the floors hold on them by construction)."""
    result = api.diff(a, b)
    assert result.runs == {"a": 1, "b": 1} and result.noise == default_noise()
    assert called(result) == []
    assert any("one run a side" in line for line in result.warnings)


def triton_configs(export: Path) -> dict[str, set[tuple]]:
    """Per Triton kernel of an nsys export, its launch configurations (sizes, registers, dynamic shared memory),
    by SQL."""
    query = ("SELECT s.value, k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, k.registersPerThread, "
             "k.dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL k "
             "JOIN StringIds s ON s.id = k.demangledName WHERE s.value LIKE 'triton%'")
    configs: dict[str, set[tuple]] = {}
    with sqlite3.connect(f"file:{export}?mode=ro", uri=True) as db:
        for name, *sizes in db.execute(query):
            configs.setdefault(name, set()).add(tuple(sizes))
    return configs


def test_torch_compile_s_autotuning_in_one_run_is_compiled_differently():
    """torch.compile's first run autotuned two pointwise Triton kernels (each launched in two
    configurations, by SQL), its second ran the one kept: those kernels are `compiled
    differently`, never called, and every other Triton kernel is compared as before."""
    a, b = TORCH / "nsys.sqlite", TORCH / "runs" / "nsys-2.sqlite"
    configs = {side: triton_configs(export) for side, export in (("a", a), ("b", b))}
    moved = {name for name in configs["a"].keys() & configs["b"].keys() if configs["a"][name] != configs["b"][name]}
    assert len(moved) == 2
    rows = {row["kernel"]: row for row in api.diff(a, b).kernels}
    assert {name for name, row in rows.items() if row["status"] == "compiled differently"} == moved
    assert all(rows[name]["compiled"].startswith("other launch configurations") and " regs)" in rows[name]["compiled"]
               for name in moved)


def test_two_stages_of_one_capture_ran_in_one_run_so_no_floor_applies():
    result = api.diff(Path(__file__).parents[1] / "profiles" / "examples" / "h200-hgemm-triton-1024", stages=("h6", "h8"))
    assert result.noise is None and result.runs == {"a": 1, "b": 1}
    assert not any("one run a side" in line for line in result.warnings)


def test_one_run_a_side_still_finds_the_five_percent_change():
    result = api.diff(BASE / "nsys.sqlite", SLOWER / "nsys.sqlite")
    assert ("spin", "slower") in called(result)


CORPUS = ROOT / "benchmarks" / "records" / "2026-11-28-h200-noise-corpus"


def corpus_floors_by_rule(program: str) -> dict[str, float]:
    """One corpus program's floors by the documented rule (nsprof.diff.noise's docstring, docs/diff.md),
    written out with pandas and scipy from the committed corpus (runs.csv, keys.csv.xz, launches.csv.xz,
    read as CSV): over every pair of its runs, each key and kind with 3 or more launches or instances on
    both sides is a change of medians (B's over A's, minus 1) in the class of its slower median; not
    called, so setting no floor: work under 10 us, pageable copies, copies under 100 us, waiting
    kernels (NCCL, XLA's DelayKernel), and where the two runs ran on different GPUs, work of 10-100 us
    and copies (noise_corpus.held_to_floors); a row is significant when scipy.stats.bootstrap's 95%
    percentile interval of the ratio of medians excludes 1; a class's floor is 1.5 times its largest
    significant |change| (0 where none was). Not written out: the rule that leaves untested a kernel
    whose mix of launch configurations moves its median (no floor of the programs checked here
    depends on it)."""
    def packed(name: str) -> pd.DataFrame:
        return pd.read_csv(CORPUS / name, compression="xz", keep_default_na=False)

    runs = pd.read_csv(CORPUS / "runs.csv")
    runs = runs[runs["program"] == program].set_index("run")
    launches = packed("launches.csv.xz")
    launches = launches[launches["run"].isin(runs.index)]
    names = packed("keys.csv.xz")["key"].to_numpy(object)
    samples = {run: {(kind, names[key]): group["value_ns"].to_numpy(float)
                     for (kind, key), group in part.groupby(["kind", "key"])} for run, part in launches.groupby("run")}
    changes: dict[str, list[tuple[float, np.ndarray, np.ndarray]]] = {"10-100 us": [], "over 100 us": []}
    for first, second in combinations(runs.index, 2):
        a, b, apart = samples[first], samples[second], runs.at[first, "gpu"] != runs.at[second, "gpu"]
        for kind, name in a.keys() & b.keys():
            x, y = a[kind, name], b[kind, name]
            slower = max(np.median(x), np.median(y))
            copies = kind in ("copies", "pageable copies")
            called = (min(len(x), len(y)) >= 3 and slower >= 10_000 and kind != "pageable copies"
                      and not (copies and (slower < 100_000 or apart)) and not (apart and slower < 100_000)
                      and not (kind == "kernels" and re.search("nccl|DelayKernel", name, re.IGNORECASE)))
            if called:
                change = 100 * (np.median(y) / np.median(x) - 1)
                changes["10-100 us" if slower < 100_000 else "over 100 us"].append((change, x, y))
    return floors_by_rule(changes)


def test_nsprofs_floors_are_the_corpus_s_by_the_documented_rule_and_measure_noise_measures_them():
    """One truth, by an oracle apart from measure_noise (corpus_floors_by_rule: pandas and scipy over the
    committed corpus): nsprof/diff/noise_floor.json holds, per category, the largest of the per-program
    floors in benchmarks/records/2026-11-28-h200-noise-corpus/noise_corpus.json, and its two floors are
    the rule's over the runs of the programs that set them: the torch.compile block's 10-100 us (3.83%,
    its runs on three GPUs) and the JAX training step's over 100 us (1.51%). The record's floors of
    those and of CuPy on four streams are the rule's too, and measure_noise, given the corpus's frames
    of a program whose runs are all of one GPU (as `nsprof noise` measures), finds the rule's floors."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import noise_corpus

    recorded = json.loads(NOISE_RECORD.read_text())["floor_pct"]
    corpus = json.loads((noise_corpus.RECORD / "noise_corpus.json").read_text())
    per_program = corpus["per_program_pct"]
    assert recorded == pytest.approx({name: max(value for key, value in per_program.items() if key.endswith(f" / {name}"))
                                      for name in recorded}, abs=0.01)
    by_rule = {program: corpus_floors_by_rule(program) for program in ("compile", "jax", "cupy-streams")}
    assert recorded == pytest.approx({"10-100 us": by_rule["compile"]["10-100 us"],
                                      "over 100 us": by_rule["jax"]["over 100 us"]}, rel=1e-9)
    runs, frames = noise_corpus.load()
    for program, floors in by_rule.items():
        assert min(floors.values()) > 0.5
        assert floors == pytest.approx({name.split(" / ")[1]: value for name, value in per_program.items()
                                        if name.startswith(f"{program} / ")}, abs=0.01)
        if runs.loc[runs["program"] == program, "gpu"].nunique() == 1:
            ids = runs.loc[runs["program"] == program, "run"].tolist()
            assert measure_noise([frames[run] for run in ids], program).pct == pytest.approx(floors, rel=1e-9)


def test_noise_from_the_users_runs_replaces_nsprofs(tmp_path):
    """--noise with a profile of runs: the floors measured on it, named in the note and the JSON."""
    result = CliRunner().invoke(app, ["diff", str(BASE / "nsys.sqlite"), str(SLOWER / "nsys.sqlite"), "--json",
                                      "--noise", str(TORCH)])
    assert result.exit_code == 0, result.output
    noise = json.loads(result.stdout)["noise"]
    assert noise["source"] == f"measured on {TORCH}" and noise["short_ns"] == SHORT_NS
    assert noise["floor_pct"] == pytest.approx(measure_noise(run_frames(api.diff_side(TORCH)), "torch").pct)


@pytest.mark.parametrize("write, cause", [
    (lambda path: path.write_text('{"floor": 3}'), "not a noise record"),
    (lambda path: path.write_text('{"floor_pct": {"kernels": -1, "copies": 1, "ranges": 1}}'),
     "a noise floor that is not a percentage"),
])
def test_a_noise_record_that_is_none_is_one_line(tmp_path, write, cause):
    record = tmp_path / "noise.json"
    write(record)
    result = CliRunner().invoke(app, ["diff", str(BASE / "nsys.sqlite"), str(SLOWER / "nsys.sqlite"), "--noise", str(record)])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1 and cause in result.stderr


def test_noise_needs_two_runs():
    with pytest.raises(ParseError, match="1 run, and a noise floor needs two or more"):
        api.noise_floor(BASE / "nsys.sqlite")


# --- bench --runs: records merged -------------------------------------------------------------------

def test_bench_runs_keep_every_runs_median_and_their_median():
    record = json.loads((Path(__file__).parents[1] / "profiles" / "examples" / "h200-sgemm-1024" / "bench-nsys.json")
                        .read_text())
    documents = []
    for scale in (1.0, 1.02, 0.99):
        copy = json.loads(json.dumps(record))
        for result in copy["results"]:
            result["median_ms"] = result["median_ms"] * scale if result["median_ms"] is not None else None
        documents.append(copy)
    documents[2]["results"][0]["status"] = "failed"
    out = merged(documents)
    assert out["runs"] == 3
    first, second = out["results"][0], out["results"][1]
    assert first["status"] == "failed" and first["median_ms"] is None
    expected = [record["results"][1]["median_ms"] * scale for scale in (1.0, 1.02, 0.99)]
    assert second["run_medians_ms"] == pytest.approx(expected) and second["median_ms"] == pytest.approx(expected[0])


def test_bench_runs_keep_every_runs_paired_percent_and_their_median():
    """Where every run measured % cuBLAS in pairs, the merged record keeps each run's and their median;
    where one run did not, the first run's stays (it is not a median of unlike measures)."""
    record = json.loads((Path(__file__).parents[1] / "profiles" / "examples" / "h200-sgemm-1024" / "bench-nsys.json")
                        .read_text())
    documents = []
    for run, percent in enumerate((97.0, 99.5, 98.0)):
        copy = json.loads(json.dumps(record))
        for result in copy["results"]:
            result.update(pct_cublas=percent + result["m"] / 1e4, pct_cublas_method="paired")
        if run == 2:
            copy["results"][1]["pct_cublas_method"] = "medians"
        documents.append(copy)
    out = merged(documents)
    first, second = out["results"][0], out["results"][1]
    shift = first["m"] / 1e4
    assert first["run_pct_cublas"] == pytest.approx([97.0 + shift, 99.5 + shift, 98.0 + shift])
    assert first["pct_cublas"] == pytest.approx(98.0 + shift)
    assert "run_pct_cublas" not in second and second["pct_cublas"] == pytest.approx(97.0 + second["m"] / 1e4)


def test_runs_of_two_machines_still_meet_the_floors_and_one_machines_runs_do_not():
    """The torch.compile block's five runs (one H200) against a later run on another H200 (no GPU
    UUID in common): runs measure no variation between machines, so the floors apply and the diff
    says so; ab_spin's runs, all on one H200, are judged by their own variation alone."""
    apart = api.diff(RUNS / "torch", ROOT / "profiles" / "examples" / "h200-program-torch-compile")
    assert apart.noise is not None and any("ran on different GPUs" in line for line in apart.warnings)
    assert not any(row["status"] in ("faster", "slower") for row in apart.kernels + apart.ranges)
    undecided = [row for row in apart.kernels if row["undecided"]]
    # beyond no floor (None: not called across GPUs, noise.MACHINE_PACED), or within its category's
    assert undecided and all(row["floor_pct"] is None or abs(row["change_pct"]) < row["floor_pct"] for row in undecided)
    together = api.diff(RUNS / "ab-base", RUNS / "ab-slower")
    assert together.noise is None and not any("different GPUs" in line for line in together.warnings)
    spin = next(row for row in together.kernels if row["kernel"].startswith("spin"))
    assert spin["status"] == "slower"


def test_a_profile_missing_some_of_its_runs_is_refused_naming_them(tmp_path):
    """The manifest says 5 runs; with one run's export gone (a partial copy, or packed test data not
    unpacked), diff and analyze refuse in one line naming it, instead of answering from fewer runs."""
    ladder = tmp_path / "ladder"
    shutil.copytree(RUNS / "ladder", ladder)
    for name in ("nsys-3.sqlite", "nsys-3.sqlite.xz"):  # the export and its packed copy (nsprof would read that)
        (ladder / "runs" / name).unlink(missing_ok=True)
    for argv in (["diff", str(ladder), "--stages", "v5,v6"], ["analyze", str(ladder)]):
        result = CliRunner().invoke(app, argv, env={"COLUMNS": "100"})
        assert result.exit_code != 0 and "Traceback" not in result.output
        line = " ".join(result.output.split())
        assert "runs/nsys-3.sqlite missing, of the 5 runs its manifest says were captured" in line


def test_three_runs_a_side_meet_the_floors_too_and_five_are_judged_by_their_runs(tmp_path):
    """ab_spin's unchanged runs, three against three: too few run medians to tell a change from runs
    that cluster, so the floors apply as well and the diff says so (and what to capture); five against
    five are judged by their own variation alone. The 5%-slower spin, 203 us a launch (over 100 us:
    a 1% floor), is still found at three runs a side."""
    from nsprof.diff import FEW_RUNS

    runs = base_runs()
    three_a, three_b, five_a, five_b = groups_of(tmp_path, {"three-a": runs[:3], "three-b": runs[3:6],
                                                            "five-a": runs[:5], "five-b": runs[5:]})
    few = api.diff(three_a, three_b)
    assert few.runs == {"a": 3, "b": 3} and few.noise is not None and called(few) == []
    assert any(line.startswith(f"fewer than {FEW_RUNS} runs on a side") and "--runs 5" in line for line in few.warnings)
    assert all(row["floor_pct"] >= 1.0 for row in few.kernels if row["status"] == "same" and row["floor"])
    enough = api.diff(five_a, five_b)
    assert enough.noise is None and not any("fewer than" in line for line in enough.warnings)
    slower = sorted(SLOWER.glob("**/*.sqlite"))[:3]
    (spin_slower,) = groups_of(tmp_path, {"three-slower": slower})
    spin = next(row for row in api.diff(three_a, spin_slower).kernels if row["kernel"] == "spin")
    assert spin["status"] == "slower" and spin["floor"] == "over 100 us"


def test_bench_runs_keep_the_median_of_the_runs_back_to_back_figures_where_every_run_has_them():
    record = json.loads((Path(__file__).parents[1] / "profiles" / "examples" / "h200-sgemm-1024" / "bench-nsys.json")
                        .read_text())
    documents = [json.loads(json.dumps(record)) for _ in range(3)]
    for document, percent in zip(documents, (101.0, 104.0, 99.0)):
        document["results"][1].update(back_to_back_ms=percent / 100, pct_cublas_back_to_back=percent)
    documents[0]["results"][2]["pct_cublas_back_to_back"] = 90.0
    out = merged(documents)
    assert out["results"][1]["pct_cublas_back_to_back"] == 101.0 and out["results"][1]["back_to_back_ms"] == 1.01
    assert out["results"][2]["status"] == "ok" and out["results"][2]["pct_cublas_back_to_back"] == 90.0  # no median
