"""nsprof's public API: what the commands do, callable the same way from a notebook or a script.

    from nsprof import api
    run = api.bench(["v6", "v9"], ["4096"])                     # needs a GPU: run.records
    analysis = api.analyze("profiles/examples/h200-sgemm-1024")   # any machine
    ladder = api.load_ladder(["profiles/examples/h200-sgemm-1024"])
    api.write_roofline(ladder, "reports")
    api.write_report(ladder, "reports/h200")
    api.write_timeline("profiles/examples/h200-pipeline-1024", trace="reports/pipeline.json")
    flows = api.pipeline("sgemm", ["v9"], "1024")                   # needs a GPU (and nsys for the breakdown)

Every command of the CLI is a thin wrapper over one of these; each lives in nsprof.verbs, one module per
verb owning its steps across the layers, and this module only names them. What they return, by kind:
- what reads or computes returns one result object that render/ turns into tables and JSON:
  analyze (CaptureAnalysis), analyze_many (ManyCaptures), diff (DiffResult), load_ladder
  (LadderAnalysis), load_timeline (nsprof.timeline.Timeline), explain (Explanation), stages (Op),
  choose_hot_kernels (GuidedChoice);
- what runs on the GPU returns its JSON document, as --json prints it: bench (BenchRun, whose
  `document` it is, with `written`), pipeline (dict), measure_ceilings (dict, and the files
  written), doctor (a list of check records), profile (the profile directory and its manifest);
- what writes files returns the list[Path] it wrote, in order: write_roofline, write_report,
  write_diff, write_captures_report, write_timeline.
Every function raises nsprof.errors exceptions (with a fix hint) for bad input.
"""

from __future__ import annotations

from nsprof.verbs.analysis import analyze, analyze_many, is_many_captures, write_captures_report
from nsprof.verbs.bench import BenchRun, bench, stages
from nsprof.verbs.capture import check_verified, choose_hot_kernels, profile, profile_commands, profile_request
from nsprof.verbs.ceilings import doctor, measure_ceilings, measure_cpu_ceilings
from nsprof.verbs.common import WORKLOADS, history_path, workload_argv
from nsprof.verbs.diff import diff, diff_side, measure_noise_record, noise_floor, write_diff
from nsprof.verbs.explain import explain
from nsprof.verbs.history import history, history_add, write_history_chart
from nsprof.verbs.ladder import ROOFLINE_CSV_COLUMNS, ROOFLINE_FILES, load_ladder, unplaced_lines, write_report, write_roofline
from nsprof.verbs.pipeline import CAPTURED_FLOWS, pipeline
from nsprof.verbs.timeline import load_timeline, write_timeline

__all__ = [
    "CAPTURED_FLOWS",
    "ROOFLINE_CSV_COLUMNS",
    "ROOFLINE_FILES",
    "WORKLOADS",
    "BenchRun",
    "analyze",
    "analyze_many",
    "bench",
    "check_verified",
    "choose_hot_kernels",
    "diff",
    "diff_side",
    "doctor",
    "explain",
    "history",
    "history_add",
    "history_path",
    "is_many_captures",
    "load_ladder",
    "load_timeline",
    "measure_ceilings",
    "measure_cpu_ceilings",
    "measure_noise_record",
    "noise_floor",
    "pipeline",
    "profile",
    "profile_commands",
    "profile_request",
    "stages",
    "unplaced_lines",
    "workload_argv",
    "write_captures_report",
    "write_diff",
    "write_history_chart",
    "write_report",
    "write_roofline",
    "write_timeline",
]
