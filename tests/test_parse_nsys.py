"""nsprof.parse.nsys_sqlite against real exports of three nsys versions (2022.2 and 2024.5 from
pipit's test data, 2025.3 from the H200) and against small hand-built ones. Expected counts come
from direct SQL on the same files, not from the parser."""

from __future__ import annotations

import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nsys_builder import global_pid, global_tid, write_export

from nsprof.analyze.nvtx_attribution import range_summary
from nsprof.errors import ParseError
from nsprof.parse.nsys_sqlite import COLUMNS, load_nsys

DATA = Path(__file__).parent / "data"
SAXPY = DATA / "nsys-pipit" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"  # nsys 2022.2
CLOVERLEAF = DATA / "nsys-pipit" / "perlmutter-cloverleaf-cuda.sqlite"  # nsys 2024.5, no NVTX_EVENTS
H200 = DATA / "h200" / "nsys-sgemm-ladder-1024.sqlite"  # nsys 2025.3, nsprof's own NVTX ranges
EXPORTS = [SAXPY, CLOVERLEAF, H200]  # unpacked beside their tracked .xz by tests/conftest.py (packed_data.py)


def sql(path: Path, query: str) -> list[tuple]:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return conn.execute(query).fetchall()


def sql_count(path: Path, query: str) -> int:
    return sql(path, query)[0][0]


def rows_in(path: Path, table: str, where: str = "") -> int:
    """Rows of a table by direct SQL; 0 when the export left the table out."""
    if not sql_count(path, f"SELECT count(*) FROM sqlite_master WHERE name = '{table}'"):
        return 0
    return sql_count(path, f"SELECT count(*) FROM {table} {where}")


# --- real exports -------------------------------------------------------------------------------

@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: p.stem)
def test_row_counts_match_direct_sql(path):
    export = load_nsys(path)
    assert len(export.kernels) == rows_in(path, "CUPTI_ACTIVITY_KIND_KERNEL")
    assert len(export.memcpys) == rows_in(path, "CUPTI_ACTIVITY_KIND_MEMCPY")
    assert len(export.memsets) == rows_in(path, "CUPTI_ACTIVITY_KIND_MEMSET")
    assert len(export.runtime) == rows_in(path, "CUPTI_ACTIVITY_KIND_RUNTIME")
    assert len(export.gpus) == rows_in(path, "TARGET_INFO_GPU")
    assert len(export.nvtx) == rows_in(path, "NVTX_EVENTS", "WHERE eventType IN (59, 60)")


# every committed real export: nsys 2022.2 to 2025.3, kernels, copies, memsets, graphs, several ranks
# every committed export nsprof reads (a capture that lost its GPU work is refused: tests/test_found_loops.py)
REAL_EXPORTS = [path for path in sorted(DATA.glob("*/*.sqlite")) if not path.stem.endswith("-lost")] + \
    sorted((DATA.parents[1] / "profiles" / "examples").glob("*/nsys.sqlite"))


@pytest.mark.parametrize("path", REAL_EXPORTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_column_subset_reads_the_same_values_as_the_whole_table(path):
    """load_nsys(columns=...) (what `nsprof analyze` reads) gives exactly the whole frames' columns:
    same values, dtypes and order, derived columns (duration_ns, pid) included."""
    subset = {"kernels": ("kernel", "duration_ns", "grid_x", "block_z", "correlation_id", "global_pid", "mangled_name"),
              "runtime": ("start_ns", "correlation_id", "global_tid", "pid"), "memcpys": ("bytes", "src_kind")}
    full, lean = load_nsys(path), load_nsys(path, subset)
    for table in ("kernels", "memcpys", "memsets", "runtime", "graphs"):
        whole = getattr(full, table)
        wanted = [column for column in COLUMNS[table] if column in subset.get(table, whole.columns)]
        pd.testing.assert_frame_equal(getattr(lean, table), whole[wanted])
    pd.testing.assert_frame_equal(lean.nvtx, full.nvtx)


def test_column_subset_names_only_known_tables_and_columns():
    with pytest.raises(ValueError, match="kernels has no column"):
        load_nsys(H200, {"kernels": ("no_such_column",)})
    with pytest.raises(ValueError, match="no event table"):
        load_nsys(SAXPY, {"nvtx": ("name",)})


@pytest.mark.parametrize("path", REAL_EXPORTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_kernel_sizes_are_int32_with_the_values_sql_holds(path):
    """Sizes and ids CUDA keeps within 32 bits are int32 columns, value for value as the table has them."""
    kernels = load_nsys(path).kernels
    for column, source in (("grid_x", "gridX"), ("block_x", "blockX"), ("device_id", "deviceId"),
                           ("dynamic_smem_bytes", "dynamicSharedMemory")):
        assert kernels[column].dtype == "int32"
        expected = [value for (value,) in sql(path, f"SELECT {source} FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid")] \
            if rows_in(path, "CUPTI_ACTIVITY_KIND_KERNEL") else []
        assert kernels[column].tolist() == expected


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: p.stem)
def test_frames_have_the_documented_columns(path):
    export = load_nsys(path)
    for name, columns in COLUMNS.items():
        assert list(getattr(export, name).columns) == list(columns), name


def test_pipit_fixtures_hold_what_their_readme_says():
    saxpy, cloverleaf = load_nsys(SAXPY), load_nsys(CLOVERLEAF)
    assert (len(saxpy.kernels), len(saxpy.memcpys)) == (5, 15)
    assert sql_count(SAXPY, "SELECT count(*) FROM NVTX_EVENTS") == 24  # 22 ranges, a domain, a thread name
    assert len(saxpy.nvtx) == 22
    assert (len(cloverleaf.kernels), len(cloverleaf.memcpys), len(cloverleaf.gpus)) == (1312, 279, 4)
    assert cloverleaf.nvtx.empty and list(cloverleaf.nvtx.columns) == list(COLUMNS["nvtx"])
    assert (saxpy.tool_version, cloverleaf.tool_version) == ("2022.2.1.31", "2024.5.1.113")


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: p.stem)
def test_kernel_names_resolve_through_string_ids(path):
    expected = sql(path, "SELECT k.start, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                         "JOIN StringIds s ON s.id = k.demangledName ORDER BY k.rowid")
    kernels = load_nsys(path).kernels
    assert list(zip(kernels["start_ns"], kernels["kernel"].astype(str))) == expected
    assert (kernels["duration_ns"] == kernels["end_ns"] - kernels["start_ns"]).all()


def test_nvtx_names_come_from_text_or_text_id_and_domains_from_create_events():
    nvtx = load_nsys(SAXPY).nvtx
    # 'saxpy' ranges carry their name in `text`, the MPI ranges through `textId`, in domain 'MPI'.
    assert nvtx["range"].value_counts().to_dict() == {
        "MPI:MPI_Send": 10, "saxpy": 5, "MPI:MPI_Recv": 5, "MPI:MPI_Init": 1, "MPI:MPI_Finalize": 1}
    saxpy_ranges = nvtx[nvtx["name"] == "saxpy"]
    assert saxpy_ranges["domain"].isna().all() and (saxpy_ranges["kind"] == "push_pop").all()
    assert set(nvtx.loc[nvtx["name"] == "MPI_Send", "domain"]) == {"MPI"}
    assert (nvtx["pid"] == 1230493).all() and (nvtx["tid"] == 1230493).all()


def test_memcpy_kinds_use_the_enum_table_or_the_builtin_labels():
    # saxpy (2022.2) has no ENUM_* tables; cloverleaf (2024.5) has ENUM_CUDA_MEMCPY_OPER.
    assert load_nsys(SAXPY).memcpys["copy_kind"].value_counts().to_dict() == {"Host-to-Device": 10, "Device-to-Host": 5}
    expected = dict(sql(CLOVERLEAF, "SELECT e.label, count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY m "
                                    "JOIN ENUM_CUDA_MEMCPY_OPER e ON e.id = m.copyKind GROUP BY e.label"))
    assert load_nsys(CLOVERLEAF).memcpys["copy_kind"].value_counts().to_dict() == expected


def test_gpu_info():
    gpus = load_nsys(CLOVERLEAF).gpus
    assert list(gpus["name"]) == ["NVIDIA A100-SXM4-80GB"] * 4
    assert list(gpus["device_id"]) == [0, 1, 2, 3]
    assert set(gpus["compute_capability"]) == {"8.0"} and set(gpus["sm_count"]) == {108}


# --- attribution on real exports, checked by hand against the rows ------------------------------

def test_saxpy_ranges_each_hold_one_kernel():
    summary = range_summary(load_nsys(SAXPY)).set_index("range")
    kernels_ns = sql_count(SAXPY, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    # Each 'saxpy' range holds one cudaLaunchKernel (recorded twice, as cudaLaunchKernel and
    # cudaLaunchKernel_v7000 with one correlation id: counted once); the memcpys happen outside.
    assert summary.loc["saxpy", ["count", "kernels", "kernel_ns", "copy_ns", "gpu_time_ns", "memcpy_count"]].tolist() == [
        5, 5, kernels_ns, 0, kernels_ns, 0]
    assert summary.loc["MPI:MPI_Init", "domain"] == "MPI"
    assert summary.loc[summary["domain"] == "MPI", ["kernels", "memcpy_count"]].to_numpy().sum() == 0


def test_h200_split_k_stage_ranges_hold_a_memset_and_a_kernel_per_launch():
    summary = range_summary(load_nsys(H200)).set_index("range")
    # v8 (split-K) zeroes C with a 4 MiB memset, then launches sgemm_v8_128x128; five timed launches
    # of 52,831 + 53,280 + 52,607 + 52,320 + 52,287 ns; the warm-up launches are outside every range.
    v8 = summary.loc["nsprof:sgemm/v8/1024x1024x1024"]
    assert v8[["domain", "count", "kernels", "kernel_ns", "memset_count", "memset_bytes", "memcpy_count"]].tolist() == [
        "nsprof", 5, 5, 263325, 5, 5 * 4194304, 0]
    assert v8["copy_ns"] > 0 and v8["gpu_time_ns"] == 263325 + v8["copy_ns"]  # the memsets' time: copy_ns, by SQL below
    verify = summary.loc["nsprof:verify/sgemm/v8/1024x1024x1024"]
    assert verify[["count", "kernels", "kernel_ns", "memset_bytes"]].tolist() == [1, 1, 52831, 4194304]
    assert summary.loc["CCCL:cub::DeviceReduce::Sum", ["count", "kernels"]].tolist() == [20, 40]


# The same attribution by plain SQL, for push/pop ranges (all this export has): the kernels whose
# runtime call started on the range's thread while it was open.
KERNELS_PER_RANGE_SQL = """
SELECT CASE WHEN n.domainId = 0 THEN COALESCE(n.text, s.value)
            ELSE d.text || ':' || COALESCE(n.text, s.value) END AS range,
       count(DISTINCT n.rowid), count(k.rowid), coalesce(sum(k."end" - k.start), 0)
FROM NVTX_EVENTS n
LEFT JOIN StringIds s ON s.id = n.textId
LEFT JOIN NVTX_EVENTS d ON d.eventType = 75 AND d.domainId = n.domainId
LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.globalTid = n.globalTid AND r.start >= n.start AND r.start < n."end"
LEFT JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId
WHERE n.eventType = 59 GROUP BY range ORDER BY range
"""


def test_h200_attribution_equals_plain_sql():
    summary = range_summary(load_nsys(H200))  # in natural order (v2 before v10), SQL's in plain text order
    assert sorted(summary[["range", "count", "kernels", "kernel_ns"]].itertuples(index=False, name=None)) == sorted(
        sql(H200, KERNELS_PER_RANGE_SQL))


# --- hand-built exports ---------------------------------------------------------------------------

THREAD_A, THREAD_B = global_tid(100, 100), global_tid(100, 101)
OTHER_PROCESS = global_tid(200, 200)
NAMES = {1: "k_compute(float*)", 2: "cudaLaunchKernel", 3: "outer", 4: "inner", 5: "cudaMemcpy"}


def test_hand_built_export_attribution(tmp_path):
    path = write_export(
        tmp_path / "t.sqlite", NAMES,
        kernels=[(1000, 1100, 1, global_pid(100), 1),   # call on A at 10, inside outer and inner
                 (1200, 1300, 2, global_pid(100), 1),   # call on A at 30, inside outer only
                 (1400, 1600, 3, global_pid(100), 1),   # call on B at 12: no push/pop range of B
                 (1700, 1800, 1, global_pid(200), 1)],  # other process, same correlation id as the first
        memcpys=[(2000, 2100, 4, global_pid(100), 4096, 1)],
        memsets=[(2200, 2300, 5, global_pid(100), 512)],
        runtime=[(10, 11, THREAD_A, 1, 2), (30, 31, THREAD_A, 2, 2), (12, 13, THREAD_B, 3, 2),
                 (15, 16, OTHER_PROCESS, 1, 2), (20, 21, THREAD_A, 4, 5), (50, 51, THREAD_A, 5, 5)],
        nvtx=[(5, 40, 59, None, THREAD_A, 3, 0),        # outer: push/pop on A
              (8, 20, 59, None, THREAD_A, 4, 0),        # inner: ends exactly at the memcpy call (excluded)
              (0, None, 60, "open", THREAD_B, None, 0),  # start/end range never closed: whole process
              (11, 13, 60, "window", THREAD_B, None, 0)],
    )
    export = load_nsys(path)
    assert len(export.kernels) == 4 and export.gpus.empty
    summary = range_summary(export).set_index("range")
    time = ["kernel_ns", "copy_ns", "gpu_time_ns"]
    assert summary.loc["outer", ["kernels", "memcpy_count", "memcpy_bytes", *time]].tolist() == [2, 1, 4096, 200, 100, 300]
    assert summary.loc["inner", ["kernels", "memcpy_count", *time]].tolist() == [1, 0, 100, 0, 100]
    assert summary.loc["open", ["kernels", "memcpy_count", "memset_count", "memset_bytes", *time]].tolist() == [
        3, 1, 1, 512, 400, 200, 600]
    assert summary.loc["window", ["kernels", *time]].tolist() == [1, 200, 0, 200]  # thread B's call at 12


def test_missing_tables_give_empty_frames(tmp_path):
    path = write_export(tmp_path / "t.sqlite", NAMES, absent=("CUPTI_ACTIVITY_KIND_KERNEL", "NVTX_EVENTS",
                                                              "CUPTI_ACTIVITY_KIND_MEMSET"))
    export = load_nsys(path)
    assert export.kernels.empty and export.nvtx.empty and export.memsets.empty
    assert range_summary(export).empty


# --- bad input: always one ParseError naming the file ------------------------------------------

def assert_parse_error(path: Path, fragment: str = "") -> ParseError:
    with pytest.raises(ParseError) as caught:
        load_nsys(path)
    message = str(caught.value)
    assert str(path) in message and "\n" not in message and fragment in message
    return caught.value


def test_missing_empty_and_non_sqlite_files(tmp_path):
    assert_parse_error(tmp_path / "absent.sqlite", "no such file")
    (tmp_path / "empty.sqlite").write_bytes(b"")
    assert_parse_error(tmp_path / "empty.sqlite", "empty file")
    (tmp_path / "text.sqlite").write_text("ID,Kernel Name\n0,k\n")
    assert_parse_error(tmp_path / "text.sqlite", "not a database")


def test_sqlite_that_is_not_an_nsys_export(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    assert_parse_error(path, "no StringIds table")


def test_missing_column_and_null_values(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
        conn.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId)")
    assert_parse_error(path, "has no column nameId")
    path = write_export(tmp_path / "null.sqlite", NAMES, runtime=[(None, 5, THREAD_A, 1, 2)])
    assert_parse_error(path, "CUPTI_ACTIVITY_KIND_RUNTIME.start")


@pytest.mark.parametrize("fraction", [0.02, 0.3, 0.6, 0.95])
def test_truncated_real_export(tmp_path, fraction):
    path = tmp_path / "truncated.sqlite"
    path.write_bytes(SAXPY.read_bytes()[: int(SAXPY.stat().st_size * fraction)])
    assert_parse_error(path)


def small_export_bytes() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = write_export(Path(tmp) / "small.sqlite", NAMES,
                            kernels=[(1000 + i, 1100 + i, i, global_pid(100), 1) for i in range(200)],
                            runtime=[(i, i + 1, THREAD_A, i, 2) for i in range(200)],
                            nvtx=[(0, 100, 59, None, THREAD_A, 3, 0)])
        return path.read_bytes()


SMALL_EXPORT = small_export_bytes()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.none() | st.integers(1, len(SMALL_EXPORT) - 1),
       flips=st.lists(st.tuples(st.integers(0, len(SMALL_EXPORT) - 1), st.integers(1, 255)), max_size=8))
def test_mangled_sqlite_bytes_give_parse_error_or_a_valid_export(cut, flips):
    data = bytearray(SMALL_EXPORT[:cut])
    for position, mask in flips:
        data[position % len(data)] ^= mask
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mangled.sqlite"
        path.write_bytes(bytes(data))
        try:
            export = load_nsys(path)
        except ParseError as err:
            assert str(path) in str(err) and "\n" not in str(err)
        else:
            assert isinstance(range_summary(export), pd.DataFrame)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 40), min_size=1, max_size=30, unique=True), st.data(), st.booleans())
def test_string_ids_resolve_as_a_plain_mapping_does(string_ids, data, sparse):
    """StringIds ids -> names against a dict lookup: repeated string values share a category, NULL
    ids stay missing, the categories are those in use in StringIds' order; ids nsys numbers
    sparsely (far past the table) take the other path to the same result, and an id with no row is
    a ParseError."""
    from nsprof.parse.nsys_sqlite import _names

    scale = 10**9 if sparse else 1
    values = data.draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=len(string_ids), max_size=len(string_ids)))
    strings = pd.Series(values, index=[i * scale for i in string_ids], dtype=object)
    drawn = data.draw(st.lists(st.one_of(st.none(), st.sampled_from(list(strings.index))), max_size=50))
    ids = pd.Series(drawn, dtype="Int64")
    names = _names(ids, strings, Path("x.sqlite"), "shortName")
    expected = [None if i is None else strings[i] for i in drawn]
    assert [None if pd.isna(name) else name for name in names] == expected
    in_order = list(dict.fromkeys(values))
    assert list(names.categories) == [value for value in in_order if value in set(expected)]
    with pytest.raises(ParseError, match="1 shortName ids have no row in StringIds"):
        _names(pd.Series([*drawn, (max(string_ids) + 1) * scale], dtype="Int64"), strings, Path("x.sqlite"), "shortName")
