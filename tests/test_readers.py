"""The formats nsprof reads are readers in one registry (nsprof.parse.readers): profile loading
and the search for captures ask it, so a format is one Reader, tested here by adding one."""

from __future__ import annotations

import shutil
from pathlib import Path

from nsprof.parse import readers
from nsprof.parse.model import GpuTimeline, LaunchCounters
from nsprof.parse.nsys_sqlite import load_nsys
from nsprof.parse.profile import load_profile, tool_outputs

DATA = Path(__file__).parent / "data"
TRAIN = DATA / "user-programs" / "train.sqlite"
NCU_RAW = DATA / "user-programs" / "train-raw.csv"


def test_every_suffix_has_one_reader_and_the_message_names_them():
    claimed = [suffix for reader in readers.READERS for suffix in reader.suffixes]
    assert len(claimed) == len(set(claimed))
    assert readers.formats_read() == ("nsys .nsys-rep or .sqlite, ncu .ncu-rep or .csv, jax.profiler .trace.json.gz "
                                      "or .trace.json or perfetto_trace.json.gz, torch.profiler .json or .json.gz")


def test_a_csv_ncu_did_not_write_is_claimed_only_when_named(tmp_path):
    table = tmp_path / "bench.csv"
    table.write_text("stage,size,median_ms\nv1,1024,0.35\n")
    assert readers.reader_for(table) is None  # a search passes it over
    assert readers.reader_for(table, sniff=False).name == "ncu CSV page"  # named by the user: its reader says why not
    assert readers.reader_for(NCU_RAW).makes == readers.COUNTERS
    assert isinstance(readers.reader_for(NCU_RAW).load(NCU_RAW, None), LaunchCounters)


def test_a_new_format_is_one_reader(tmp_path, monkeypatch):
    """A made-up `.trace` format (here: an nsys export under another name) is found in a
    directory, loaded as a timeline and analyzed, by adding its Reader and nothing else."""
    trace = tmp_path / "run.trace"
    shutil.copy(TRAIN, trace)
    reader = readers.Reader("test trace", "tracer", readers.TIMELINE, (".trace",), load_nsys)
    monkeypatch.setattr(readers, "READERS", (*readers.READERS, reader))
    assert tool_outputs(tmp_path) == ([trace], [])
    profile = load_profile(tmp_path)
    assert len(profile.timelines) == 1 and isinstance(profile.timelines[0], GpuTimeline)
    assert profile.timelines[0].kernels.equals(load_profile(TRAIN).timelines[0].kernels)
    from nsprof import api

    assert api.analyze(trace).kernel_summary["count"].sum() == len(profile.timelines[0].kernels)
