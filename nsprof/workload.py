"""The work nsprof runs in a process of its own, its options handed over as data: the same bench
in fresh processes (`bench --runs N`: a process each, nsprof.ladder_runs.bench_runs), and the flows of
`nsprof pipeline` under nsys (which traces a process): `python -m nsprof.workload JOB OPTIONS`
calls nsprof.api with OPTIONS, one JSON object of its keyword arguments, and prints the result as
JSON on stdout. The one command line nsprof runs as a person would type it is the ladder's
workload under nsys and ncu (`nsprof bench --op ...`, nsprof.capture.commands): the manifest
records it so that a person can run it again.
"""

from __future__ import annotations

import json
import sys


def _bench(options: dict) -> dict:
    from nsprof.api import bench

    return bench(**options).document  # saves nothing: the caller merges the runs


def _pipeline(options: dict) -> dict:
    from nsprof.api import pipeline

    return pipeline(**options, cold=False, capture=False, cpu=False)  # nsys captures these flows alone


_JOBS = {"bench": _bench, "pipeline": _pipeline}


def main(args: list[str] | None = None) -> int:
    """Run the job; an nsprof error is one line on stderr and exit code 2 (1 is a bench whose stage
    failed verification, which its document says)."""
    from nsprof.errors import NsprofError

    job, options = args if args is not None else sys.argv[1:]
    try:
        result = _JOBS[job](json.loads(options))
    except NsprofError as err:
        print(f"Error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
