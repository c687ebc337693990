"""`nsprof explain` through Typer's CliRunner: every topic in every format, the models answering
for described accesses, measured evidence, and one-line usage errors."""

import json
import re
from pathlib import Path

import pytest
from ncu_builder import write_csv
from typer.testing import CliRunner

from nsprof.cli import app
from nsprof.explain.topics import TOPICS
from nsprof.verbs.explain_sources import LADDER_EXAMPLES as EXAMPLE_PROFILES

runner = CliRunner()
H200_RAW = Path(__file__).parent / "data" / "h200" / "ncu-sgemm-ladder-1024-raw.csv"
EXAMPLE = Path(__file__).resolve().parents[1] / "profiles" / "examples" / "h200-sgemm-1024"
EXAMPLE_PROFILE = EXAMPLE_PROFILES["sgemm"]


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def explain_json(*args) -> dict:
    result = invoke("explain", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def assert_one_line_usage_error(result, *fragments):
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    assert "Traceback" not in result.output


def test_help_lists_the_options():
    result = invoke("explain", "--help")
    assert result.exit_code == 0
    for option in ("--list", "--stage", "--shape", "--access", "--width", "--from", "--json", "--markdown"):
        assert option in result.stdout


def test_list_names_every_topic_with_its_summary():
    result = invoke("explain", "--list")
    assert result.exit_code == 0
    for topic in TOPICS.values():
        assert topic.name in result.stdout
    assert explain_json("--list")["topics"] == [{"topic": t.name, "summary": t.summary} for t in TOPICS.values()]
    assert len(TOPICS) >= 9 and {"bank-conflicts", "coalescing", "tensor-cores"} <= set(TOPICS)


@pytest.mark.parametrize("topic", list(TOPICS))
def test_every_topic_renders_in_all_three_formats(topic, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no ./profiles: the committed example is read
    terminal = invoke("explain", topic)
    assert terminal.exit_code == 0, terminal.output
    # a topic that measures nothing of its own names the profile it read, under no empty "Measured"
    measures_nothing = topic in ("float-sums", "cold-inputs")
    section = "Profile read" if measures_nothing else "Measured"
    assert topic in terminal.stdout and section in terminal.stdout
    assert not measures_nothing or "\nMeasured\n" not in terminal.stdout
    markdown = invoke("explain", topic, "--markdown")
    assert markdown.exit_code == 0
    assert markdown.stdout.startswith(f"# {topic}\n") and f"## {section}" in markdown.stdout
    doc = explain_json(topic)
    assert doc["topic"] == topic and doc["summary"] == TOPICS[topic].summary
    if topic == "pipeline":  # an nsys capture of the whole flow, not the ladder's ncu measurements
        from nsprof.verbs.explain_sources import PIPELINE_EXAMPLE as EXAMPLE
        assert doc["evidence"]["source"] == str(EXAMPLE)
    elif topic == "gpu-idle":  # a program's nsys capture: its host side
        from nsprof.verbs.explain_sources import PROGRAM_EXAMPLE as PROGRAM
        assert doc["evidence"]["source"] == str(PROGRAM)
    elif topic == "gpu-vs-cpu":  # a capture with CPU stages beside the GPU's
        from nsprof.verbs.explain_sources import CPU_EXAMPLES as EXAMPLES
        assert doc["evidence"]["source"] == str(EXAMPLES["sgemm"])
    else:
        assert doc["evidence"]["source"] == str(EXAMPLE_PROFILES[TOPICS[topic].op])


def test_tensor_cores_walks_the_hgemm_ladder_with_its_measurements():
    """Padding (h4) and swizzle (h5) remove h3's ldmatrix bank conflicts; h6 and cuBLAS do their FLOPs with
    wgmma; every stage's tensor FLOPs are exactly 2MNK (the committed H200 capture)."""
    doc = explain_json("tensor-cores")
    assert [row["step"] for row in doc["ladder"]] == ["h2 -> h3", "h3 -> h4", "h4 -> h5", "h5 -> h6"]
    rows = {row["stage"]: row for row in doc["evidence"]["quantities"]}
    assert all(rows[s]["tensor_flops"] == 2 * 1024**3 for s in ("h1", "h2", "h3", "h4", "h5", "h6", "h7"))
    assert rows["h3"]["smem_ld_conflicts"] > 100 * rows["h4"]["smem_ld_conflicts"] > 0
    assert rows["h5"]["smem_ld_conflicts"] < rows["h4"]["smem_ld_conflicts"]
    assert rows["h6"]["smem_ld_conflicts"] < rows["h3"]["smem_ld_conflicts"] / 100  # its staged epilogue only
    # fragments: straight from global memory (h1), ldmatrix (h2-h5), read by wgmma from shared memory (h6)
    assert rows["h1"]["smem_ldsm_instructions"] == rows["h6"]["smem_ldsm_instructions"] == 0
    assert all(rows[s]["smem_ldsm_instructions"] > 0 for s in ("h2", "h3", "h4", "h5"))
    assert rows["h6"]["tensor_hgmma_flops"] == rows["h7"]["tensor_hgmma_flops"] == 2 * 1024**3
    assert rows["h5"]["tensor_hgmma_flops"] == 0
    assert any("2^-11 + 4 sqrt(K) 2^-24" in fact for fact in doc["facts"])


def test_without_from_the_example_profile_is_used_and_named(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    result = invoke("explain", "bank-conflicts")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert str(EXAMPLE_PROFILE) in text and "committed example profile" in text


def test_the_newest_profile_under_profiles_is_preferred(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "profiles" / "sgemm-all-1024-20270101-000000"
    mine.mkdir(parents=True)
    (mine / "ncu-raw.csv").write_bytes(H200_RAW.read_bytes())
    evidence = explain_json("bank-conflicts", "--stage", "v3")["evidence"]
    assert evidence["source"] == str(Path("profiles") / mine.name)
    assert evidence["reason"].startswith("the newest capture of another program under profiles/")  # no manifest: no ladder


@pytest.mark.parametrize("shape, n_way", [("32x32", 32), ("32x33", 1)])
def test_a_described_column_read(shape, n_way):
    doc = explain_json("bank-conflicts", "--shape", shape, "--access", "column")
    assert doc["n_way"] == n_way
    assert doc["wavefronts"] == n_way and doc["min_wavefronts"] == 1
    assert doc["conflict_free_row_length"] == (33 if n_way > 1 else None)


def test_described_access_draws_the_lane_to_bank_grid():
    result = invoke("explain", "bank-conflicts", "--shape", "32x32", "--access", "column")
    assert result.exit_code == 0
    assert "32-way" in result.stdout and "Rows padded to 33 elements" in result.stdout
    grid = [line for line in result.stdout.splitlines() if re.match(r"lane +\d", line)]
    # piped output is 100 columns: the grid comes in two halves of 16 banks, every lane in each
    assert len(grid) == 64 and grid[31].split()[2] == "32"  # lane 31 is served by bank 0 in wavefront 32


def test_described_wide_accesses_and_stores():
    assert explain_json("bank-conflicts", "--shape", "32x32", "--access", "row", "--width", "16")["wavefronts"] == 4
    assert explain_json("bank-conflicts", "--access", "broadcast", "--width", "16")["wavefronts"] == 2
    assert explain_json("bank-conflicts", "--access", "broadcast", "--width", "16", "--store")["wavefronts"] == 4
    # lane l at word 8 * (l / 2) + 4 * (l % 2) = 4l: every 8th lane on the same bank
    assert explain_json("bank-conflicts", "--access", "lane/2,(lane%2)*4", "--shape", "16x8")["n_way"] == 4


def test_described_global_accesses():
    column = explain_json("coalescing", "--shape", "1024x1024", "--access", "column")
    assert (column["sectors"], column["lines"], column["efficiency"]) == (32, 32, 0.125)
    row = invoke("explain", "coalescing", "--access", "row", "--width", "16")
    assert row.exit_code == 0 and "16 sector(s) of 32 bytes in 4 line(s)" in row.stdout


@pytest.mark.parametrize("stage, store_n_way", [("v5", 2), ("v6", 1)])
def test_stage_accesses_and_measurements(stage, store_n_way, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    doc = explain_json("bank-conflicts", "--stage", stage)
    transposing = next(a for a in doc["accesses"] if a["access"]["array"] == "As" and a["access"]["op"] == "store")
    assert transposing["n_way"] == store_n_way
    rows = {(r["stage"], r["op"]): r for r in doc["evidence"]["shared_memory"]}
    assert set(rows) == {(s, op) for s in ("v5", "v6") for op in ("load", "store")}
    assert rows["v5", "store"]["predicted_wavefronts_per_instruction"] == 2.4
    assert rows["v6", "store"]["predicted_wavefronts_per_instruction"] == 1.6
    change = next(c for c in doc["evidence"]["conflict_changes"] if c["op"] == "store")
    assert change["predicted_change"] == -262_144 and change["measured_change"] < -250_000
    assert doc["evidence"]["steps"][0]["before"] == "v5" and doc["evidence"]["steps"][0]["nsys_change_pct"] < 0


def test_stage_view_draws_the_conflicted_store_and_suggests_the_padding(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    result = invoke("explain", "bank-conflicts", "--stage", "v5")
    assert result.exit_code == 0
    assert "lane -> bank" in result.stdout and "padded from 128 to 132" in result.stdout


def test_raw_csv_from_another_program_ranks_kernels_by_conflicts(tmp_path):
    metrics = ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
               "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
               "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
               "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum"]
    kernels = [("transpose_padded", [0, 0, 1024, 1024, 1024, 1024]),
               ("transpose_naive", [31_744, 0, 32_768, 1024, 1024, 1024]),
               ("reduce", [0, 2_048, 4096, 6144, 4096, 4096])]
    rows = [["ID", "Kernel Name", *metrics], ["", "", *[""] * len(metrics)],
            *[[str(i), name, *(f"{v:,}" for v in values)] for i, (name, values) in enumerate(kernels)]]
    path = tmp_path / "other.csv"
    path.write_text("==PROF== Connected to process 1\n" + write_csv(rows))
    doc = explain_json("bank-conflicts", "--from", path)
    ranked = doc["evidence"]["kernels"]
    assert [k["kernel"] for k in ranked] == ["transpose_naive", "reduce", "transpose_padded"]
    assert ranked[0]["ld_wavefronts_per_instruction"] == 32.0
    result = invoke("explain", "bank-conflicts", "--from", path)
    assert "ranked by measured shared-memory bank conflicts" in " ".join(result.stdout.split())


def test_a_profile_of_other_stages_says_so(tmp_path):
    header, units, *launches = H200_RAW.read_text().splitlines()
    path = tmp_path / "v1-only.csv"
    path.write_text("\n".join([header, units, *(line for line in launches if "/v1/" in line)]) + "\n")
    result = invoke("explain", "bank-conflicts", "--from", path)
    assert result.exit_code == 0
    assert "This profile measured v1, none of v2, v3" in " ".join(result.stdout.split())


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["nonsense"], ["unknown topic 'nonsense'", "bank-conflicts", "tensor-cores"]),
        ([], ["no topic given", "bank-conflicts"]),
        (["bank-conflicts", "--shape", "32by33"], ["bad shape '32by33'", "ROWSxCOLS"]),
        (["bank-conflicts", "--access", "diagonal"], ["unknown access 'diagonal'", "row, column, broadcast"]),
        (["bank-conflicts", "--width", "3"], ["bad width 3", "4, 8, 16"]),
        (["bank-conflicts", "--shape", "16x32", "--access", "column"], ["outside the 16x32 array"]),
        (["bank-conflicts", "--stage", "v13"], ["unknown stage 'v13'", "v1, v2"]),
        (["bank-conflicts", "--stage", "v5", "--shape", "32x32"], ["--stage and --shape/--access"]),
        (["occupancy", "--shape", "32x32"], ["has no access model", "bank-conflicts", "coalescing"]),
        (["bank-conflicts", "--json", "--markdown"], ["--json and --markdown"]),
    ],
)
def test_bad_input_is_a_one_line_usage_error(args, fragments):
    assert_one_line_usage_error(invoke("explain", *args), *fragments)


def test_a_missing_profile_is_a_one_line_error(tmp_path):
    result = invoke("explain", "bank-conflicts", "--from", tmp_path / "nope.csv")
    assert result.exit_code == 2  # a path that is not there: a bad argument
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "no such file or directory" in result.stderr


def test_from_a_directory_of_profiles_reads_its_latest(tmp_path):
    import shutil

    shutil.copytree(EXAMPLE, tmp_path / "h200-sgemm-1024")
    result = runner.invoke(app, ["explain", "bank-conflicts", "--stage", "v6", "--from", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert f"the newest profile under {tmp_path}" in " ".join(result.stdout.split())


@pytest.mark.parametrize("op, message", [("dgemm", "unknown op 'dgemm'"), ("sgemv", "not about the sgemv ladder")])
def test_explain_op_errors_are_one_line(op, message):
    result = invoke("explain", "tensor-cores", "--op", op)
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_tensor_cores_on_the_sgemm_ladder_states_v11s_wgmma_and_its_k_major_layouts():
    """The facts come from v11's declared tiles: the instruction's N is the tile's width and its K is one
    32-byte step of TF32 (8); B is read transposed (K-major), unlike h6's N-major B; the ring fits the memory."""
    doc = explain_json("tensor-cores", "--op", "sgemm")
    assert [row["step"] for row in doc["ladder"]] == ["v10 -> v11"]
    v11 = [fact for fact in doc["facts"] if fact.startswith("v11 ")]
    assert [fact.split(":")[0] for fact in v11] == ["v11 256x128", "v11 128x256", "v11 128x128", "v11 128x64",
                                                    "v11 at 1024x1024x1024"]
    # measured on the committed capture: the TF32 tensor counter of today's preset sees wgmma (2MNK per launch)
    assert f"{2 * 1024**3:,} tensor FLOPs per launch measured" in v11[4]
    assert all("wgmma m64n256k8 (131,072 multiply-adds" in fact for fact in v11[:2]) and 64 * 256 * 8 == 131_072
    # the 256x128 tile: A's 256 rows are the MMA's N, B from registers, no transpose
    assert "read into registers as the MMA's first operand (C^T = B^T A^T: no transpose" in v11[0]
    assert all("Bt (B transposed to N x K first)" in fact and "K-major like A" in fact for fact in v11[1:4])
    assert all("48 KB per stage, 4 stages" in fact for fact in v11[:2])  # 256 x 128 + 32 x 512 bytes; (128 + 256) x 128
    h6 = [fact for fact in explain_json("tensor-cores")["facts"] if fact.startswith("h6 128x256")]
    assert h6 and "wgmma m64n256k16" in h6[0] and "N-major, imm-trans-b" in h6[0]


REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("topic, capture, reason", [
    ("pipeline", "profiles/examples/h200-pipeline-1024", "the committed capture of `nsprof pipeline`"),
    ("occupancy", "profiles/examples/h200-sgemm-1024", "that profiled the most of this topic's stages"),
    ("bank-conflicts", "profiles/examples/h200-sgemm-1024", "that profiled the most of this topic's stages"),
])
def test_each_topic_reads_the_capture_that_holds_its_data(topic, capture, reason, monkeypatch):
    """Run from the repository, where profiles/ holds every example: the pipeline topic reads the one
    capture of `nsprof pipeline` (the newest nsys capture, a TF32 ladder's, copies nothing to speak
    of), and occupancy and bank conflicts the SGEMM example that profiled all their stages (the
    TF32 one profiled v10 alone)."""
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(app, ["explain", topic], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert capture in result.stdout and reason in result.stdout


def test_occupancy_keeps_the_occupancies_at_80_columns(monkeypatch):
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(app, ["explain", "occupancy"], env={"COLUMNS": "80"})
    table = result.stdout[result.stdout.index("Measured per launch"):]
    header = " ".join(line for line in table.splitlines()[1:5])
    assert "theoretical" in header and "achieved" in header


@pytest.mark.parametrize("op, counter, shown", [
    ("sgemm", "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum", "tensor_hgmma_tf32_flops"),
    ("hgemm", "sm__ops_path_tensor_op_hgmma_src_fp16.sum", "tensor_hgmma_flops"),
    ("sgemv", None, None),
])
def test_triton_asks_for_the_wgmma_counter_of_the_ladders_own_precision(op, counter, shown):
    """The committed Triton captures lack wgmma's own FLOP counter: the note asks for the one of the
    tensor stages' input type (TF32 for SGEMM, FP16 for HGEMM); SGEMV runs no tensor stage, so no
    tensor column is shown and no tensor counter asked for."""
    evidence = explain_json("triton", "--op", op)["evidence"]
    columns = set(evidence["quantities"][0])
    tensor_columns = {"tensor_flops", "tensor_hgmma_flops", "tensor_hgmma_tf32_flops"}
    if counter is None:
        assert not columns & tensor_columns and not any("tensor" in m for m in evidence["missing_metrics"])
    else:
        assert columns & tensor_columns == {"tensor_flops", shown}
        assert [m for m in evidence["missing_metrics"] if "hgmma" in m] == [counter]
