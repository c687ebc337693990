"""nsprof.parse.ncu_csv, ncu_units and ncu_nvtx.

Most tests parse CSV text built by ncu_builder in the layout ncu writes (program output and
==PROF== lines first; raw page with a units row; details page with one row per metric) for the
same three kernels, printed with base units and with auto-scaled units. Real captures anywhere
under tests/data/ (every .csv there is ncu output) are picked up by the last tests: each file must
parse, and the files of one folder (raw, auto-units raw and details pages of one run) must agree
on every launch, NVTX stack and shared metric.
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ncu_builder import KERNELS, LAUNCH_COLUMNS, METRICS, NVTX, PAGES, PREAMBLE, raw_page, write_csv

from nsprof.errors import ParseError
from nsprof.parse.ncu_csv import load_ncu_csv, parse_ncu_csv
from nsprof.parse.ncu_nvtx import push_pop_ranges, qualified_range, start_end_ranges
from nsprof.parse.ncu_units import base_unit, parse_number
from nsprof.printable import printable

# --- units and numbers ----------------------------------------------------------------------------

@pytest.mark.parametrize("unit, expected", [
    ("nsecond", ("ns", 1)), ("usecond", ("ns", 1e3)), ("msecond", ("ns", 1e6)), ("second", ("ns", 1e9)),
    ("ns", ("ns", 1)), ("us", ("ns", 1e3)), ("byte", ("byte", 1)), ("Kbyte", ("byte", 1e3)), ("Mbyte", ("byte", 1e6)),
    ("Gbyte", ("byte", 1e9)), ("Tbyte", ("byte", 1e12)), ("byte/second", ("byte/second", 1)),
    ("Gbyte/second", ("byte/second", 1e9)), ("Tbyte/second", ("byte/second", 1e12)),
    ("Mbyte/usecond", ("byte/second", 1e12)), ("cycle/nsecond", ("cycle/second", 1e9)),
    ("inst/cycle", ("inst/cycle", 1)), ("Kinst", ("inst", 1e3)), ("Mcycle", ("cycle", 1e6)),
    ("Ghz", ("hz", 1e9)), ("MHz", ("hz", 1e6)), ("Kbyte/block", ("byte/block", 1e3)),
    ("register/thread", ("register/thread", 1)), ("%", ("%", 1)), ("", ("", 1)), ("SM", ("SM", 1)),
])
def test_base_units(unit, expected):
    base, factor = base_unit(unit)
    assert base == expected[0] and factor == pytest.approx(expected[1])


@pytest.mark.parametrize("text, expected", [
    ("16,336,583", 16336583.0), ("72.64", 72.64), ("1,234.5", 1234.5), ("0", 0.0), ("-3", -3.0)])
def test_numbers(text, expected):
    assert parse_number(text) == expected


@pytest.mark.parametrize("text", ["n/a", "", "  ", "N/A"])
def test_missing_numbers_are_nan(text):
    assert math.isnan(parse_number(text))


def test_text_is_not_a_number():
    assert parse_number("NVIDIA H200") is None


# --- NVTX column ----------------------------------------------------------------------------------

def test_push_pop_cell_from_the_reference_notes():
    cell = ('545  "<default domain>:ladder:none:none:RGB:0xff:REGISTERED:ladder"  '
            '"hold:conflict:none:none:RGB:0xff:REGISTERED:conflict" ')
    assert push_pop_ranges(cell) == ["ladder", "hold:conflict"]


@pytest.mark.parametrize("cell, expected", [
    ("", []), ("545", []), ("  ", []),
    ('7  "<default domain>:warmup:none:none:none:none:none:none"', ["warmup"]),
    ('7  "<default domain>:64x32x4x3 causal=False:none:none:none:none:none:none"', ["64x32x4x3 causal=False"]),
    ('7  "nsprof:sgemm/v6/4096x4096x4096:none:none:RGB:0x1:REGISTERED:sgemm/v6/4096x4096x4096"',
     ["nsprof:sgemm/v6/4096x4096x4096"]),
    ('7  "<default domain>:step:3:none:none:none:none:ASCII:step:3"', ["step:3"]),  # a name with ':'
    ('7  "<default domain>:a:b:none:none:none:none:none:none"', ["a:b"]),
    ('7  "<default domain>:short:none"', ["short"]),
])
def test_push_pop_cells(cell, expected):
    assert push_pop_ranges(cell) == expected


@pytest.mark.parametrize("cell, expected", [
    ("", []),
    ("0:<default domain>:epoch:none:none:none:none:none:none", ["epoch"]),
    ('"3:io:load:none:none:none:none:none:none" "4:<default domain>:train:none:none:none:none:none:none"',
     ["io:load", "train"]),
])
def test_start_end_cells(cell, expected):
    assert start_end_ranges(cell) == expected


def test_a_bare_name_is_in_the_default_domain():
    assert qualified_range("ladder") == "ladder"


# --- pages ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_pages_give_one_row_per_launch_in_base_units(page):
    report = parse_ncu_csv(PAGES[page], source=page)
    kernels = report.kernels
    assert report.page == page.split("-")[0]
    assert list(kernels["id"]) == [0, 1, 2]
    assert list(kernels["kernel"]) == [name for _, name, _, _ in KERNELS]
    assert list(kernels["nvtx"]) == NVTX
    for position, (metric, (base, _, _)) in enumerate(METRICS.items()):
        expected = [math.nan if values[position] is None else values[position] for *_, values in KERNELS]
        assert kernels[metric].tolist() == pytest.approx(expected, nan_ok=True, rel=1e-12), metric
        assert report.units[metric] == base_unit(base)[0]
    assert report.units["gpu__time_duration.sum"] == "ns"
    assert report.units["dram__bytes_read.sum.per_second"] == "byte/second"


def test_raw_page_keeps_launch_columns_and_text_metrics():
    text = raw_page(auto=False).replace('"sm__throughput.avg.pct_of_peak_sustained_elapsed"',
                                        '"device__attribute_display_name"')
    for number in ("61.50", "88.25", "1.50"):
        text = text.replace(f'"{number}"\n', '"NVIDIA H200"\n')
    kernels = parse_ncu_csv(text).kernels
    assert list(kernels["device__attribute_display_name"]) == ["NVIDIA H200"] * 3
    assert kernels.loc[0, "block_size"] == "(256, 1, 1)" and kernels.loc[0, "process_id"] == "545"


def test_a_header_without_kernels_is_an_error_not_an_empty_table():
    with pytest.raises(ParseError, match="a header and no kernel rows"):
        parse_ncu_csv(write_csv([[*LAUNCH_COLUMNS, "gpu__time_duration.sum"]]))


def test_a_header_like_line_in_program_output_is_skipped():
    text = "ID,result\n0,ok\n" + raw_page(auto=False)
    assert len(parse_ncu_csv(text).kernels) == 3


# --- bad input --------------------------------------------------------------------------------------

def assert_parse_error(text: str, fragment: str = "") -> None:
    with pytest.raises(ParseError) as caught:
        parse_ncu_csv(text, source="capture.csv")
    message = str(caught.value)
    assert message.startswith("capture.csv: ") and "\n" not in message and fragment in message


def test_not_ncu_csv():
    assert_parse_error("name,value\na,1\n", "not Nsight Compute CSV")
    assert_parse_error("", "not Nsight Compute CSV")
    assert_parse_error(PREAMBLE, "not Nsight Compute CSV")
    assert_parse_error(PREAMBLE + "==WARNING== No kernels were profiled.\n", "ncu profiled no kernel")


def test_truncated_csv():
    text = PAGES["raw"]
    assert_parse_error(text[: text.rindex(",") - 3], "truncated")


def test_non_numeric_id():
    assert_parse_error(PAGES["raw"].replace('"1","545"', '"x","545"'), "ID")


def test_load_names_the_file(tmp_path):
    path = tmp_path / "bench.csv"
    path.write_text("stage,ms\nv6,1.0\n")
    with pytest.raises(ParseError, match=str(path)):
        load_ncu_csv(path)
    with pytest.raises(ParseError, match="cannot read"):
        load_ncu_csv(tmp_path / "absent.csv")
    binary = tmp_path / "binary.csv"
    binary.write_bytes(bytes(range(256)) * 10)
    with pytest.raises(ParseError, match="not Nsight Compute CSV"):
        load_ncu_csv(binary)


def parses_or_raises_parse_error(text: str) -> None:
    try:
        report = parse_ncu_csv(text, source="fuzz.csv")
    except ParseError as err:
        assert str(err).startswith("fuzz.csv: ") and "\n" not in str(err)
    else:  # what was parsed is what the CSV holds: every launch ID of its data rows, by its kernel name
        expected = csv_launches(text)
        if expected is None:
            return
        parsed = dict(zip(report.kernels["id"].astype(int), report.kernels["kernel"].astype(str)))
        if report.page == "details":  # a row per metric, which a cut can shift: the launches, by ID
            assert set(parsed) == set(expected)
        else:  # a row per launch: each launch by its ID and its kernel's name
            assert parsed == expected


def csv_launches(text: str) -> dict[int, str] | None:
    """The oracle, read with Python's csv module (and nsprof.printable, tested in test_printable.py)
    alone: launch ID -> kernel name of the first data
    row of each launch (a row under the "ID ... Kernel Name" header whose ID is a number); None where
    the text before the header is no CSV the csv module reads as the parser does (the parser skips
    it line by line)."""
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error:
        return None
    header_at = next((i for i, row in enumerate(rows) if row[:1] == ["ID"] and "Kernel Name" in row), None)
    if header_at is None:  # a stray quote before the header joins lines the parser reads apart
        return None
    name_column = rows[header_at].index("Kernel Name")
    launches: dict[int, str] = {}
    for row in rows[header_at + 1:]:  # a details page has a row per metric: a launch is named by its first
        if len(row) > name_column and row[0].strip().isdigit():
            launches.setdefault(int(row[0]), printable(row[name_column]))  # names show control characters spelled
    return launches


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_arbitrary_text(text):
    parses_or_raises_parse_error(text)


@settings(max_examples=300, deadline=None)
@given(page=st.sampled_from(list(PAGES)), cut=st.integers(0, 5000), span=st.integers(0, 200),
       insert=st.text(alphabet=st.sampled_from([*list('",\n\r x0123456789n/a=PROF'), "\x00", "é"]), max_size=20))
def test_mangled_ncu_csv(page, cut, span, insert):
    text = PAGES[page]
    cut %= len(text)
    parses_or_raises_parse_error(text[:cut] + insert + text[cut + span:])
    parses_or_raises_parse_error(text[:cut])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.text(max_size=8), min_size=1, max_size=5), min_size=1, max_size=5))
def test_csv_without_an_ncu_header_is_rejected(rows):
    text = write_csv([["name", *rows[0]], *rows[1:]])
    with pytest.raises(ParseError):
        parse_ncu_csv(text)


# --- real captures (every ncu CSV page under tests/data) ------------------------------------------------

# every ncu CSV page under tests/data: the repository holds them packed (page.csv.xz; the nsys stats
# CSVs beside some are plain), and each is read where tests/conftest.py unpacks it (packed_data.py),
# so one left packed fails instead of dropping out
REAL = sorted(p.with_suffix("") for p in (Path(__file__).parent / "data").rglob("*.csv.xz"))
H200_RAW = Path(__file__).parent / "data" / "h200" / "ncu-sgemm-ladder-1024-raw.csv"


def test_h200_raw_page_as_printed():
    # Read off the file: 557  "nsprof:sgemm/v1/...:REGISTERED:sgemm/v1/1024x1024x1024", "ns" "353,216",
    # "inst" "1,073,741,824" (1024^3 FMAs), "byte" "8,394,496".
    report = load_ncu_csv(H200_RAW)
    first = report.kernels.iloc[0]
    assert (first["id"], first["kernel"], first["nvtx"]) == (0, "sgemm_v1", ["nsprof:sgemm/v1/1024x1024x1024"])
    assert first["gpu__time_duration.sum"] == 353216 and report.units["gpu__time_duration.sum"] == "ns"
    assert first["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] == 1024**3
    assert first["dram__bytes_read.sum"] == 8394496 and first["device__attribute_display_name"] == "NVIDIA H200"
    assert len(report.kernels) == 20 and report.page == "raw"


@pytest.mark.parametrize("path", REAL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_capture_parses(path):
    report = load_ncu_csv(path)
    kernels = report.kernels
    assert len(kernels) > 0 and kernels["id"].is_unique
    assert all(isinstance(name, str) and name for name in kernels["kernel"])
    assert all(isinstance(stack, list) for stack in kernels["nvtx"])
    if "gpu__time_duration.sum" in kernels:
        assert report.units["gpu__time_duration.sum"] == "ns"
        assert (kernels["gpu__time_duration.sum"] > 0).all()


def _run(path: Path) -> tuple[Path, str]:
    """The capture a page belongs to: its folder and its name without the page's suffix."""
    return path.parent, re.sub(r"-(details|raw|raw-auto)$", "", path.stem)


RUNS = sorted({_run(path) for path in REAL if sum(_run(p) == _run(path) for p in REAL) > 1})


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r[0].name}/{r[1]}")
def test_real_pages_of_one_run_agree(run):
    reports = [load_ncu_csv(path) for path in REAL if _run(path) == run]
    first = reports[0].kernels.set_index("id")
    for report in reports[1:]:
        other = report.kernels.set_index("id")
        assert list(other.index) == list(first.index), report.source
        assert list(other["nvtx"]) == list(first["nvtx"]), report.source
        shared = [m for m in report.units if m in reports[0].units and report.units[m] == reports[0].units[m]]
        for metric in shared:
            a, b = first[metric], other[metric]
            if a.dtype.kind == "f" and b.dtype.kind == "f":  # auto units print 3-4 significant digits
                assert b.tolist() == pytest.approx(a.tolist(), rel=1e-2, abs=1e-9, nan_ok=True), (report.source, metric)


# --- details pages of captures with rule results (real exports of programs nsprof did not write) ---

USER = Path(__file__).resolve().parent / "data" / "user-programs"


@pytest.mark.parametrize("name, launches", [("train-details.csv", 8), ("graph-full-details.csv", 2)])
def test_details_page_with_rule_columns_parses_every_launch(name, launches):
    """ncu's default sections (a PyTorch training step) and --set full (a CUDA-graph program) add five
    rule columns that the metric rows leave off: ragged rows, not a truncated file."""
    report = load_ncu_csv(USER / name)
    assert report.page == "details" and len(report.kernels) == launches
    assert report.kernels["Duration"].notna().all() and (report.kernels["Duration"] > 0).all()
    assert report.units["Duration"] == "ns"


def test_a_header_without_kernel_rows_is_an_error_not_an_empty_table(tmp_path):
    header = (USER / "train-details.csv").read_text().splitlines()
    header = next(line for line in header if line.startswith('"ID"'))
    path = tmp_path / "empty.csv"
    path.write_text(header + "\n")
    with pytest.raises(ParseError, match="a header and no kernel rows"):
        load_ncu_csv(path)


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_fuzz_oracle_compares_real_launches(page):
    """The oracle of parses_or_raises_parse_error is not empty on text that parses: it holds every
    launch of the page, which the parser read too."""
    report = parse_ncu_csv(PAGES[page], source="page.csv")
    expected = csv_launches(PAGES[page])
    assert expected and len(expected) == len(report.kernels) == 3
    assert dict(zip(report.kernels["id"].astype(int), report.kernels["kernel"].astype(str))) == expected
