"""% cuBLAS against the fastest library, on the real H100 record
(benchmarks/records/2026-11-26-h100-fastest-library/h100-fastest-library.json): each stage's
percentage is of the faster of its baseline's own median and PyTorch's, and says which."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nsprof.ladder_runs.bench import _add_pct_cublas
from nsprof.render.bench_table import results_table

RECORD = (Path(__file__).resolve().parents[1] / "benchmarks" / "records" / "2026-11-26-h100-fastest-library"
          / "h100-fastest-library.json")
RUNS = json.loads(RECORD.read_text())["runs"]


@pytest.mark.parametrize("run", RUNS, ids=[run["file"] for run in RUNS])
def test_every_percentage_is_of_the_faster_library(run):
    """The oracle: each record's baseline row read from the file, min(median_ms, torch_ms)."""
    by_key = {(r["stage"], r["size"]): r for r in run["results"]}
    for record in (r for r in run["results"] if r["status"] == "ok"):
        base = by_key[(record["baseline"], record["size"])]
        fastest = min(base["median_ms"], base["torch_ms"])
        assert record["pct_cublas"] == pytest.approx(100 * fastest / record["median_ms"])
        assert record["pct_cublas_of"] == ("cuBLAS" if base["median_ms"] <= base["torch_ms"] else base["torch_call"])
    recomputed = [dict(r, pct_cublas=None, pct_cublas_of=None) for r in run["results"]]
    _add_pct_cublas(recomputed)
    assert [(r["pct_cublas"], r["pct_cublas_of"]) for r in recomputed] == \
        [(r["pct_cublas"], r["pct_cublas_of"]) for r in run["results"]]


def test_the_record_holds_both_verdicts_and_every_library_stage_tried_cublaslt():
    verdicts = {r["pct_cublas_of"] for run in RUNS for r in run["results"] if r["status"] == "ok"}
    assert {"cuBLAS", "torch.mm"} <= verdicts
    library = [r for run in RUNS for r in run["results"] if r["stage"] in ("v9", "v9t", "h7", "s7")]
    assert library and all(sum(t["config"].startswith("cuBLASLt ") and t["status"] == "ok"
                               for t in r["details"]["autotune"]["trials"]) >= 5 for r in library)


def test_the_bench_table_says_what_was_kept_and_where_pytorch_was_faster():
    from rich.console import Console

    run = next(run for run in RUNS if run["results"][0]["op"] == "hgemm")
    console = Console(width=100, record=True)
    console.print(results_table(run["results"], run["env"], width=100))
    lines = console.export_text().splitlines()
    text = " ".join(" ".join(lines).split())
    assert "torch ms" in text and "h7 4096x4096x4096: kept cuBLASLt 3 of 9 tried" in text
    assert "% cuBLAS is of torch.mm where it was faster: h7 4096x4096x4096, h7 8192x8192x8192" in text
    assert max(len(line.rstrip()) for line in lines) <= 100


class Timed:
    """A launch whose paired median is known: what paired_medians measures, without a GPU."""

    def __init__(self, ms: float):
        self.ms = ms

    def __call__(self):
        return None


@pytest.mark.parametrize("torch_ms, library", [(0.8, "torch.mm"), (1.2, "cuBLAS")])
def test_paired_percentages_are_of_the_faster_library_from_the_same_pairs(monkeypatch, torch_ms, library):
    """pair_with_library: the library stage against torch.mm decides the faster, and every other
    GPU stage's % is that one's paired median over the stage's own, from the pairs, not the medians
    timed apart (which the records also hold, and which disagree here on purpose)."""
    from nsprof.ladder_runs import bench
    from nsprof.launch import measure

    calls = []

    def fake_paired(ours, theirs, pairs=None):
        calls.append((ours.ms, theirs.ms))
        return ours.ms, theirs.ms

    monkeypatch.setattr(measure, "paired_medians", fake_paired)
    size = "4096x4096x4096"
    records = [dict(op="sgemm", stage="v9", baseline="v9", size=size, status="ok", median_ms=5.0, torch_call="torch.mm"),
               dict(op="sgemm", stage="v8", baseline="v9", size=size, status="ok", median_ms=9.0),
               dict(op="sgemm", stage="v1", baseline="v9", size=size, status="failed", median_ms=None)]
    launches = {"v9": Timed(1.0), (bench.TORCH, "v9"): Timed(torch_ms), "v8": Timed(2.0)}
    bench.pair_with_library(records, launches)
    v9, v8, v1 = records
    fastest = min(1.0, torch_ms)
    assert calls == [(1.0, torch_ms), (2.0, fastest)]
    assert v8["pct_cublas"] == pytest.approx(100 * fastest / 2.0) and v8["pct_cublas_of"] == library
    assert v9["pct_cublas"] == pytest.approx(100 * fastest / 1.0) and v9["pct_cublas_of"] == library
    assert v8["pct_cublas_method"] == v9["pct_cublas_method"] == bench.PAIRED and "pct_cublas" not in v1
    bench._add_pct_cublas(records)  # the medians leave paired records as they are
    assert v8["pct_cublas"] == pytest.approx(100 * fastest / 2.0) and v8["pct_cublas_method"] == bench.PAIRED


@pytest.mark.parametrize("torch_ms, library", [(0.8, "torch.mm"), (1.2, "cuBLAS")])
def test_back_to_back_figures_come_from_chains_of_the_pairs_the_percentages_chose(monkeypatch, torch_ms, library):
    """--back-to-back: each pair is timed again in chains (here slower than the pairs, and the library's
    chains faster than torch.mm's where the pairs say otherwise): the figures are the chains', of the library the
    pairs chose; the library stage's is of the faster of itself and torch.mm, as its pct_cublas."""
    from nsprof.ladder_runs import bench
    from nsprof.launch import back_to_back, measure

    monkeypatch.setattr(measure, "paired_medians", lambda ours, theirs, pairs=None: (ours.ms, theirs.ms))
    chains = []

    def fake_chained(ours, theirs, rounds=back_to_back.ROUNDS):
        chains.append((ours.ms, theirs.ms))
        return 0.9 * ours.ms if ours.ms == 1.0 else 1.5 * ours.ms, 1.5 * theirs.ms

    monkeypatch.setattr(back_to_back, "chained_medians", fake_chained)
    size = "4096x4096x4096"
    records = [dict(op="sgemm", stage="v9", baseline="v9", size=size, status="ok", median_ms=5.0, torch_call="torch.mm"),
               dict(op="sgemm", stage="v8", baseline="v9", size=size, status="ok", median_ms=9.0)]
    launches = {"v9": Timed(1.0), (bench.TORCH, "v9"): Timed(torch_ms), "v8": Timed(2.0)}
    bench.pair_with_library(records, launches, back_to_back=True)
    v9, v8 = records
    fastest = min(1.0, torch_ms)
    assert chains == [(1.0, torch_ms), (2.0, fastest)] and v8["pct_cublas_of"] == library
    assert v9["back_to_back_ms"] == pytest.approx(0.9)
    assert v9["pct_cublas_back_to_back"] == pytest.approx(100 * min(0.9, 1.5 * torch_ms) / 0.9)
    assert v8["back_to_back_ms"] == pytest.approx(3.0)
    assert v8["pct_cublas_back_to_back"] == pytest.approx(100 * 1.5 * fastest / 3.0)
    plain = [dict(r) for r in records]
    for r in plain:
        del r["back_to_back_ms"], r["pct_cublas_back_to_back"]
    bench.pair_with_library(plain, launches)
    assert len(chains) == 2 and not any("back_to_back_ms" in r for r in plain)


def test_the_back_to_back_column_fits_80_columns_on_a_real_bench():
    """`nsprof bench --back-to-back` on an H200 (the dependent-launch record): the column and its note, each row's
    % of the file, at 80 columns."""
    from rich.console import Console

    document = json.loads((RECORD.parents[1] / "2026-11-30-h200-hgemm-dependent-launch" / "bench-back-to-back.json")
                          .read_text())
    console = Console(width=80, record=True)
    console.print(results_table(document["results"], document["env"], width=80))
    lines = console.export_text().splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    assert "% cuBLAS back to back (--back-to-back): the same pair in chains" in " ".join(" ".join(lines).split())
    rows = [line for line in lines if "x" in line and "ok" in line]
    assert [row.split("│")[-2].strip() for row in rows] == [
        f"{r['pct_cublas_back_to_back']:.0f}" for r in document["results"]]


def test_a_paired_percentage_the_medians_contradict_is_marked_and_explained():
    """The H100 SGEMM record: v11 at 1024x1280x768 read 113% of cuBLAS TF32 in turn while its median
    timed alone (0.0257 ms) is slower than the library's; the row says so with a mark the caption
    explains, and rows whose two numbers agree carry none."""
    from rich.console import Console

    from nsprof.render.bench_table import paired_against_medians

    record = Path(__file__).resolve().parents[1] / "benchmarks" / "records" / "2026-11-26-h100-sgemm" / "h100-sgemm.json"
    run = json.loads(record.read_text())
    results = run["results"]
    by_key = {(r["stage"], r["size"]): r for r in results}
    marked = {(r["stage"], r["size"]) for r in paired_against_medians(results)}
    v11 = by_key[("v11", "1024x1280x768")]
    library = by_key[(v11["baseline"], "1024x1280x768")]
    library_ms = library["torch_ms"] if v11["pct_cublas_of"] == library["torch_call"] else library["median_ms"]
    assert round(v11["pct_cublas"]) > 100 and library_ms < v11["median_ms"] and ("v11", "1024x1280x768") in marked
    assert ("v8", "4096x4096x4096") not in marked  # 97% in turn and 97% apart
    console = Console(width=200, record=True)
    console.print(results_table(results, run["env"], width=200))
    text = " ".join(console.export_text().split())
    assert f"{round(v11['pct_cublas'])}*" in text and "*: timed alone, the medians order the stage and cuBLAS" in text
    assert "spread: the interquartile range of the timed launches over their median" in text
