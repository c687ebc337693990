"""Parsers: Nsight Systems SQLite exports and Nsight Compute CSV into DataFrames with declared columns."""

from nsprof.parse.model import GpuTimeline, LaunchCounters
from nsprof.parse.ncu_csv import load_ncu_csv, parse_ncu_csv
from nsprof.parse.nsys_sqlite import load_nsys
from nsprof.parse.profile import Capture, load_profile

__all__ = ["Capture", "GpuTimeline", "LaunchCounters", "load_ncu_csv", "load_nsys", "load_profile", "parse_ncu_csv"]
