"""The command line through Typer's CliRunner: help, tables, JSON and one-line errors."""

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nsprof import __version__
from nsprof.cli import app
from nsprof.ladder.registry import stages_for

runner = CliRunner()
COMMANDS = [c.name or c.callback.__name__ for c in app.registered_commands]
TABLE_COMMANDS = ["stages", "bench", "analyze", "noise", "explain", "ceilings", "doctor"]  # every table has a --json twin


def invoke(*args):
    return runner.invoke(app, list(args))


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"nsprof {__version__}"


def test_no_arguments_shows_help():
    result = invoke()
    assert "Usage" in result.output
    for command in COMMANDS:
        assert command in result.output


def test_every_command_is_listed():
    assert COMMANDS == ["stages", "bench", "profile", "pipeline", "analyze", "diff", "noise", "timeline", "roofline", "report",
                        "explain", "ceilings", "doctor"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    result = invoke(command, "--help")
    assert result.exit_code == 0
    assert "Usage" in result.stdout and "Traceback" not in result.output
    if command in TABLE_COMMANDS:
        assert "--json" in result.stdout


def test_stages_table_lists_the_whole_ladder():
    wide = runner.invoke(app, ["stages"], env={"COLUMNS": "160"})
    assert wide.exit_code == 0
    for stage in stages_for("sgemm"):
        assert stage.title in wide.stdout
    # file names without their folder, which the caption names once
    assert "v06_conflict_free_smem.cu" in wide.stdout and "Kernel files in kernels/common/, kernels/sgemm/." in wide.stdout
    piped = invoke("stages")  # 100 columns: titles go before a file name or the changes would break
    assert max(map(len, piped.stdout.splitlines())) <= 100 and "v06_conflict_free_smem.cu" in piped.stdout


def test_stages_json_has_the_documented_fields():
    result = invoke("stages", "--json")
    assert result.exit_code == 0
    records = json.loads(result.stdout)
    assert [r["stage"] for r in records] == ["v0", "v0b", "v0blas", *(f"v{i}" for i in range(1, 10)), "v9t", "v10", "v11", "v12",
                                            "v12t"]
    for r in records:
        assert {"op", "stage", "title", "kernel_file", "kind", "changes", "ragged", "precision", "tolerance"} <= r.keys()
    assert [r["kind"] for r in records].count("triton") == 2 and records[-1]["tiles"][0]["entry"] == "matmul_kernel"
    by_stage = {r["stage"]: r for r in records}
    assert by_stage["v9"]["kernel_file"] is None and by_stage["v0blas"]["kernel_file"] is None  # cuBLAS, NumPy's BLAS
    assert by_stage["v1"]["kernel_file"] == "kernels/sgemm/v01_naive.cu" and by_stage["v0"]["kind"] == "cpu"


@pytest.mark.parametrize("driver, said", [
    (True, ["error: CuPy is not installed", "pip install cupy-cuda13x"]),
    (False, ["error: this command needs an NVIDIA GPU, and this machine has no NVIDIA driver",
             "analyze the captures in profiles/examples"]),
], ids=["a driver without CuPy", "no GPU at all"])
def test_bench_without_cupy_fails_in_one_line(monkeypatch, tmp_path, driver, said):
    """Where the NVIDIA driver is loaded, CuPy is what is missing; where it is not, advising to
    install CuPy would send a user without a GPU the wrong way."""
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy now raises ImportError
    driver_file = tmp_path / "version"
    if driver:
        driver_file.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04\n")
    monkeypatch.setattr("nsprof.launch.gpu.DRIVER_FILE", str(driver_file))
    out = tmp_path / "out"
    result = invoke("bench", "--stage", "v6", "--out", str(out))
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(said[0]) and said[1] in lines[0]
    assert "Traceback" not in result.output
    assert not out.exists()  # nothing written


@pytest.mark.parametrize(
    "args, message",
    [
        (["bench", "--stage", "v13"], "error: unknown stage 'v13' for sgemm"),
        (["bench", "--size", "10x2"], "error: bad size '10x2'"),
        (["bench", "--op", "dgemm"], "error: unknown op 'dgemm'"),
        (["stages", "--op", "dgemm"], "error: unknown op 'dgemm'"),
    ],
)
def test_bad_input_is_a_one_line_usage_error(args, message, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # input is checked before the GPU
    result = invoke(*args)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith(message)


def test_bench_rejects_a_zero_repeat():
    result = invoke("bench", "--repeat", "0")
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_bench_checks_the_results_location_before_the_gpu(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("keep me")
    result = invoke("bench", "--stage", "v6", "--out", str(not_a_dir))
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {not_a_dir} is a file, not a directory. Pass a directory for the results"
    assert not_a_dir.read_text() == "keep me"


def test_bench_rejects_a_tile_no_selected_stage_offers(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    result = invoke("bench", "--stage", "v8", "--tile", "32x32")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: no selected stage offers a 32x32 tile. Choose one of 128x128, 256x128, 64x128, 64x64")


def test_an_os_error_is_one_line(tmp_path):
    (tmp_path / "file").write_text("")
    result = invoke("roofline", str(tmp_path / "file" / "out"), "--from",
                    str(Path(__file__).parent / "data" / "h200" / "ncu-sgemm-ladder-1024-raw.csv"))
    assert result.exit_code in (1, 2)
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("error: ")
    assert "Traceback" not in result.output


@pytest.mark.parametrize("width", [80, 100, 140])
@pytest.mark.parametrize("record", ["2026-11-24-h200-sgemm/h200-sgemm.json", "2026-11-22-h200-hgemm/h200-hgemm.json",
                                    "2026-11-22-h200-sgemv/h200-sgemv.json"])
def test_bench_table_fits_the_terminal_without_cutting_a_number(record, width):
    """The H200 records through the bench table at 80, 100 and 140 columns: titles, tiles, errors and
    spreads give way in that order, named in the caption (they are in --json and `nsprof stages`);
    every number, size and tile shown stays whole."""
    from rich.console import Console

    from nsprof.ceilings.resolve import resolve_ceiling
    from nsprof.ladder_runs.bench import add_pct_dram
    from nsprof.render.bench_table import results_table

    doc = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "records" / record).read_text())
    records = [dict(r) for r in doc["results"]]
    ceiling = resolve_ceiling(doc["env"]["device"]) if records[0]["op"] == "sgemv" else None
    add_pct_dram(records, ceiling)
    console = Console(width=width, record=True, color_system=None)
    console.print(results_table(records, doc["env"], ceiling, width))
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= width
    text = "\n".join(lines)
    left_out = " ".join(text.split()).partition("left out to fit the terminal: ")[2]
    for r in records:
        assert f"{r['median_ms']:.4f}" in text and r["size"] in text
        if "rel. error" not in left_out:
            assert f"{r['rel_error']:.1e}" in text
        if "tile" not in left_out:
            assert any(r["tile"] in line for line in lines), r["tile"]


@pytest.mark.parametrize("args, message", [
    (["bench", "--bogus"], "No such option: --bogus"),
    (["analyze"], "Missing argument 'PATH'."),
    (["pipeline", "--chunks", "0"], "Invalid value for '--chunks'"),
    (["explain", "--list", "extra"], "--list lists every topic; it takes no topic ('extra')"),
])
def test_usage_errors_are_one_line_with_exit_2(args, message):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.stderr
    assert "╭" not in result.output and "Traceback" not in result.output


def test_ctrl_c_is_one_line_with_exit_130(monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr("nsprof.api.analyze", interrupted)
    result = CliRunner().invoke(app, ["analyze", "anything"])
    assert result.exit_code == 130 and result.stderr.strip() == "error: interrupted"


def test_the_executable_runs_through_the_entry_module():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "nsprof", "bench", "--bogus"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_an_error_a_library_raises_after_ctrl_c_is_the_interrupt(monkeypatch, capsys):
    """Interrupted while it loaded, a library may fail later with its own error (matplotlib once
    raised ValueError): still one line and exit 130."""
    import os
    import signal

    from nsprof import entry

    def half_loaded():
        try:
            os.kill(os.getpid(), signal.SIGINT)  # the Ctrl-C, delivered to entry's handler
        except BaseException:
            raise ValueError("a module left half-initialized") from None
    monkeypatch.setattr("nsprof.cli.main", half_loaded)
    previous = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(SystemExit) as exited:
            entry.main()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert exited.value.code == 130 and capsys.readouterr().err == "error: interrupted\n"


def test_an_error_without_ctrl_c_is_not_hidden(monkeypatch):
    import signal

    from nsprof import entry

    def broken():
        raise ValueError("a real bug")
    monkeypatch.setattr("nsprof.cli.main", broken)
    previous = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(ValueError, match="a real bug"):
            entry.main()
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("args", [["--help"], ["explain", "--list"], ["analyze", "--help"]])
def test_help_loads_no_data_library(args):
    """`nsprof --help` stays fast: pandas, NumPy and matplotlib load only in the commands that use them."""
    import subprocess
    import sys

    probe = ("import sys; from nsprof.cli import app\n"
             "try:\n    app(" + repr(args) + ")\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in ('pandas', 'numpy', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout[-500:] + done.stderr[-500:]


def test_ctrl_c_while_the_arguments_are_parsed_is_one_line_too(monkeypatch):
    """Typer turns an interrupt during parsing into a silent exit 130; nsprof says it."""
    from typer.core import TyperGroup

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(TyperGroup, "make_context", interrupted)
    result = CliRunner().invoke(app, ["analyze", "anything"])
    assert result.exit_code == 130 and result.stderr.strip() == "error: interrupted"


def test_a_fix_that_opens_with_a_command_keeps_its_spelling():
    result = invoke("diff", "one.json")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("error: diff needs two captures, or one with --stages X,Y. nsprof diff A B, "
                                     "or nsprof diff A --stages v5,v6")
