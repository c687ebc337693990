"""Parsers: Nsight Systems SQLite exports and Nsight Compute CSV into DataFrames with declared columns."""

from nsprof.parse.ncu_csv import NcuReport, load_ncu_csv, parse_ncu_csv
from nsprof.parse.nsys_sqlite import NsysExport, load_nsys

__all__ = ["NcuReport", "NsysExport", "load_ncu_csv", "load_nsys", "parse_ncu_csv"]
