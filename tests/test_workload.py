"""The library hands its own work to a fresh process as data (nsprof.workload), not as a command
line of its CLI: the options arrive as the keyword arguments of nsprof.api."""

from __future__ import annotations

import json
import subprocess

import pytest

from nsprof.api import workload_argv


def test_the_options_travel_as_one_json_object_of_keyword_arguments():
    options = {"op": "sgemm", "stages": ["v9", "v10"], "size": "1024", "chunks": 4, "repeat": 30, "warmup": 30}
    argv = workload_argv("pipeline", options)
    assert argv[1:4] == ["-m", "nsprof.workload", "pipeline"] and json.loads(argv[4]) == options
    with pytest.raises(ValueError):
        workload_argv("analyze", {})


def test_a_bad_option_is_one_line_and_exit_code_2():
    """The bench job, given an op that does not exist, fails before any GPU work: one line on
    stderr, exit code 2 (1 means a stage failed verification), nothing on stdout."""
    done = subprocess.run(workload_argv("bench", {"op": "nope"}), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("Error: ") and "nope" in done.stderr


def test_every_workload_the_library_names_is_one_the_runner_runs():
    from nsprof import workload
    from nsprof.api import WORKLOADS

    assert set(WORKLOADS) == set(workload._JOBS)
