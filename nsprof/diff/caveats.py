"""A diff's warnings: what the reader must know beside the tables (different GPUs, tools or
versions, runs pooled across machines, counts that differ, what the runs can and cannot tell)."""

from __future__ import annotations

from nsprof.diff.judge import FEW_RUNS, Judge
from nsprof.diff.noise import NoiseFloor
from nsprof.diff.sides import UNNAMED_GPU, Side
from nsprof.diff.types import KernelRow, Row
from nsprof.ladder_runs.bench_types import timed_inputs

APART_WARNING = ("A and B ran on different GPUs (no UUID in common): no run measures the variation between machines, "
                 "so a change is called only beyond the noise floor of its category, and not at all in work of 10-100 "
                 "us or copies (a machine moved unchanged 10-100 us kernels by 14%; a copy's speed is its host's bus); "
                 "capture both sides on one machine to decide them")


def timing_source_warnings(sources: dict) -> list[str]:
    """Where one side's kernel times are ncu's and the other's a timeline's: they compare different clocks."""
    if sources["a"] != sources["b"] and "ncu" in sources.values():  # two timelines' tools: capture_warnings says so
        return [f"A's kernel times are {sources['a']}'s and B's {sources['b']}'s (ncu replays each launch "
                "with cold caches): the kernel changes compare different clocks"]
    return []


def count_warnings(kernels: list[KernelRow]) -> list[str]:
    """Where kernels both sides ran ran a different number of times (a run): their totals compare different work."""
    def per_run(row: Row, side: str) -> float:  # across runs, counts are summed over the side's runs
        return row[f"{side}_count"] / row.get(f"{side}_runs", 1)

    matched = [row for row in kernels if row["a_count"] and row["b_count"]]
    different = [row for row in matched if per_run(row, "a") != per_run(row, "b")]
    if not different:
        return []
    first = max(different, key=lambda row: row["a_total_ns"] + row["b_total_ns"])
    from nsprof.kernel_names import short_kernel_name

    counts = f"{per_run(first, 'a'):g} vs {per_run(first, 'b'):g}{' a run' if 'a_runs' in first else ''}"
    return [f"{len(different)} of {len(matched)} kernels ran a different number of times "
            f"({short_kernel_name(first['kernel'])}: {counts}): totals compare different amounts of work; the medians do not"]


def compiling_warnings(instances: dict) -> list[str]:
    """How many launches of each side were left out as compile-time work (sides.run_instances' `compiling`)."""
    counts = {side: instances[side]["compiling"] for side in ("a", "b")}
    if not any(counts.values()):
        return []
    return [f"left out of the kernels: {counts['a']:,} launches in A and {counts['b']:,} in B that no op of a module "
            "the program executed made (XLA's autotuning while it compiled: not the program's work)"]


def capture_warnings(a: Side, b: Side) -> list[str]:
    """What differs between two captures' GPUs, tools and software, and between the runs of each side."""
    warnings = []
    a_analysis, b_analysis = a.analyzed(), b.analyzed()
    if a_analysis.gpu != b_analysis.gpu:
        warnings.append(f"different GPUs: A ran on {a_analysis.gpu or UNNAMED_GPU}, B on {b_analysis.gpu or UNNAMED_GPU}")
    versions = [list(analysis.tool_versions) for analysis in (a_analysis, b_analysis)]
    if a_analysis.timeline_tool != b_analysis.timeline_tool:
        warnings.append(f"two tools: A traced by {a_analysis.timeline_tool}, B by {b_analysis.timeline_tool}; kernels pair "
                        "by name as both demangle it, and each tool's overhead is in its own times")
    elif all(versions) and versions[0] != versions[1]:
        warnings.append(f"different {a_analysis.timeline_tool} versions: A {', '.join(versions[0])}, B {', '.join(versions[1])}")
    warnings += _software_warnings(*(analysis.manifest or {} for analysis in (a_analysis, b_analysis)))
    return warnings + [line for side, capture in (("A", a), ("B", b)) for line in _mixed_runs(side, capture)]


def _mixed_runs(side: str, capture: Side) -> list[str]:
    """Where the runs of one side ran on different GPUs or were captured by different nsys versions:
    they are pooled as one program's runs, so their variation includes the machines' or the tools'."""
    if not capture.runs:
        return []
    found = []
    if len(gpus := capture.gpus()) > 1:
        found.append(f"{side}'s runs ran on {len(gpus)} kinds of GPU ({', '.join(gpus)}) and are pooled: their variation "
                     "includes the GPUs'; compare runs of one GPU")
    versions = sorted({version for run in (capture, *capture.runs) for version in run.analyzed().tool_versions})
    if len(versions) > 1:
        found.append(f"{side}'s runs were captured by {len(versions)} nsys versions ({', '.join(versions)}) and are pooled")
    return found


def bench_warnings(a: dict, b: dict) -> list[str]:
    """What differs between the environments two bench records ran in."""
    envs = [bench.get("env") or {} for bench in (a, b)]
    warnings = []
    if envs[0].get("device") != envs[1].get("device"):
        warnings.append(f"different GPUs: A ran on {envs[0].get('device')}, B on {envs[1].get('device')}")
    elif envs[0].get("uuid") and envs[1].get("uuid") and envs[0]["uuid"] != envs[1]["uuid"]:
        warnings.append(f"different cards: A ran on {envs[0]['uuid']}, B on {envs[1]['uuid']}; two cards of one model "
                        "differ by a few percent at some sizes")
    for key in ("driver", "runtime_cuda", "cupy"):
        if envs[0].get(key) and envs[1].get(key) and envs[0][key] != envs[1][key]:
            warnings.append(f"different {key}: A {envs[0][key]}, B {envs[1][key]}")
    timings = [bench.get("timing") or "without the host held ahead (a file from before the hold)" for bench in (a, b)]
    if "device" in envs[0] and "device" in envs[1] and timings[0] != timings[1]:
        warnings.append(f"timed differently: A {timings[0]}, B {timings[1]}; unheld, a kernel shorter than the host's "
                        "time to queue a launch reads the host's time too (nsprof.launch.measure._timed)")
    inputs = [_INPUTS[timed_inputs(bench)] for bench in (a, b)]
    if "device" in envs[0] and "device" in envs[1] and inputs[0] != inputs[1]:
        warnings.append(f"different inputs: A {inputs[0]}, B {inputs[1]}; on one set a product that fits in the L2 "
                        "reads it from there (nsprof explain cold-inputs)")
    return warnings


_INPUTS = {"cold": "each launch on the next of several copies of its buffers",
           "warm": "every launch on one set of buffers"}


def _software_warnings(a: dict, b: dict) -> list[str]:
    """Driver, CUDA and tool versions that two manifests both name and that differ."""
    def versions(manifest: dict) -> dict:
        found = {key: value for key, value in (manifest.get("software") or {}).items() if key in ("driver", "runtime_cuda")}
        found |= {f"{tool} version": (info or {}).get("version") for tool, info in (manifest.get("tools") or {}).items()
                  if tool != "nsys"}  # nsys's version comes from the exports themselves
        return {key: value for key, value in found.items() if value}

    ours, theirs = versions(a), versions(b)
    return [f"different {key}: A {ours[key]}, B {theirs[key]}" for key in ours if key in theirs and ours[key] != theirs[key]]


def noise_gpu_warnings(noise: NoiseFloor | None, a: Side, b: Side) -> list[str]:
    """A noise record measured on another kind of GPU than the sides': its floors may not hold."""
    if noise is None or noise.gpu is None:
        return []
    others = sorted(set(a.gpus() + b.gpus()) - {noise.gpu, UNNAMED_GPU})
    return [f"the noise record's floors were measured on an {noise.gpu}, and the sides ran on {' and '.join(others)}: "
            "another kind of GPU moves unchanged work by other amounts; measure floors there (nsprof noise RUNS "
            "--out FILE)"] if others else []


def runs_warnings(judge: Judge, runs: dict) -> list[str]:
    """What the runs can and cannot tell, as the diff's warnings (floors_apply says why floors apply)."""
    if judge.across_runs:
        alone = [side.upper() for side, count in runs.items() if count == 1]
        found = [f"{alone[0]} is one run: it borrows the other side's variation between runs"] if alone else []
        if judge.noise is not None and min(runs.values()) < FEW_RUNS:
            found.append(f"fewer than {FEW_RUNS} runs on a side: too few to tell a change from runs that cluster, so a "
                         f"change is also called only beyond the noise floor of its category; capture {FEW_RUNS} runs a "
                         f"side (nsprof profile --runs {FEW_RUNS}) to decide the rest")
        if judge.noise is not None and judge.apart:
            found.append(APART_WARNING)
        return found
    if judge.noise is None:  # two stages of one run
        return []
    return ["one run a side: the variation between runs is unmeasured, so a change is called only beyond the noise "
            "floor of its category (the note under the tables); capture several runs (nsprof profile --runs 5) to measure it",
            *([APART_WARNING] if judge.apart else [])]
