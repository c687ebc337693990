"""Where `nsprof explain` reads its measurements: --from, else the newest fitting capture under
./profiles, else a committed example. The explain verb opens what is found here through the front
door (nsprof.profile_analysis.opened) and hands the pages its analysis: they find and load nothing
themselves."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from nsprof.errors import MissingPathError, ParseError
from nsprof.explain.cpu_gap_facts import CAPTURE_FIX
from nsprof.explain.evidence import Source
from nsprof.ladder.registry import REPO_ROOT, all_ops
from nsprof.parse.profile import tool_outputs
from nsprof.parse.sources import EXAMPLES, PROFILES_DIR, latest_profile
from nsprof.paths import missing_reason
from nsprof.profile_layout import CPU_RESULTS, PIPELINE_RESULTS

EXAMPLES_DIR = REPO_ROOT / PROFILES_DIR / EXAMPLES  # the committed captures
# The committed example capture of each ladder (profiles/examples/h200-<op>-<size>), where there is one.
LADDER_EXAMPLES = {op: next(iter(sorted(EXAMPLES_DIR.glob(f"h200-{op}-*"))), EXAMPLES_DIR / f"h200-{op}") for op in all_ops()}
PIPELINE_EXAMPLE = EXAMPLES_DIR / "h200-pipeline-1024"
PROGRAM_EXAMPLE = EXAMPLES_DIR / "h200-program-torch-train"  # a PyTorch training step
# the committed captures with CPU stages, per ladder (an H100's; the other examples are the H200's)
CPU_EXAMPLES = {op: EXAMPLES_DIR / name for op, name in (("sgemm", "h100-sgemm-cpu-1024"), ("sgemv", "h100-sgemv-cpu-4096"))}


def ladder_source(given: Path | None, op: str = "sgemm", stages: Collection[str] = ()) -> Source | None:
    """--from if given (a profile directory or ncu CSV, or a directory of profiles: then its latest
    with ncu output, as roofline's --from reads it); else the latest profile of `op`'s ladder under
    ./profiles with ncu output, found as the report commands find profiles
    (nsprof.parse.sources.latest_profile: by the manifest's start time; of those that captured any of
    `stages`, where one did); else the committed example of that ladder; None when there is none."""
    if given is not None:
        given = Path(given)
        if given.is_dir() and not any(tool_outputs(given)):
            latest = latest_profile(given, with_ncu=True)
            if latest is not None:
                return Source(latest.path, f"the newest profile under {given} with an ncu CSV (--from)")
        return Source(given, "given with --from")
    example = LADDER_EXAMPLES.get(op)
    latest = latest_profile(PROFILES_DIR, with_ncu=True, op=op, stages=stages)
    if latest is not None:
        most = " that profiled the most of this topic's stages" if stages else ""
        reason = (f"the newest profile of the {op} ladder under {PROFILES_DIR}/ with ncu output{most}" if latest.op == op else
                  f"the newest capture of another program under {PROFILES_DIR}/ (there is none of the {op} ladder)")
        if example is not None and latest.path.resolve() == example.resolve():
            reason += ": the committed example profile, measured on an NVIDIA H200"
        return Source(latest.path, f"{reason}; choose another with --from")
    if example is not None and example.is_dir():
        return Source(example, f"no {op} profile with an ncu CSV under ./{PROFILES_DIR}, so the committed example "
                               "profile, measured on an NVIDIA H200; pass --from for your own")
    return None


def pipeline_source(given: Path | None) -> Source:
    """--from, else the newest capture of `nsprof pipeline` under ./profiles with a timeline (it holds
    pipeline.json: a ladder's capture has no copies to speak of), else the committed example."""
    if given is not None:
        return Source(Path(given), "given with --from")
    latest = latest_profile(PROFILES_DIR, with_ncu=False, holding=PIPELINE_RESULTS)
    if latest is not None and latest.path.resolve() != PIPELINE_EXAMPLE.resolve() and tool_outputs(latest.path)[0]:
        return Source(latest.path, f"the newest capture of `nsprof pipeline` under {PROFILES_DIR}/; choose another with "
                                   "--from")
    if PIPELINE_EXAMPLE.is_dir():
        return Source(PIPELINE_EXAMPLE, "the committed capture of `nsprof pipeline` at 1024^3 on an NVIDIA H200; pass "
                                        "--from for your own")
    raise ParseError("no nsys capture to explain the pipeline with", "capture one with `nsprof pipeline` or `nsprof profile`")


def program_source(given: Path | None) -> Source:
    """--from, else the committed capture of a PyTorch training step."""
    if given is not None:
        return Source(Path(given), "given with --from")
    if PROGRAM_EXAMPLE.is_dir():
        shown = PROGRAM_EXAMPLE.relative_to(Path.cwd()) if PROGRAM_EXAMPLE.is_relative_to(Path.cwd()) else PROGRAM_EXAMPLE
        return Source(shown, "the committed capture of a PyTorch training step on an NVIDIA H200; pass --from for your own")
    raise ParseError("no capture of a program to explain", "capture one with `nsprof profile -- CMD` and pass --from")


def cpu_gap_source(given: Path | None, op: str | None = None) -> Source:
    """--from (a capture with CPU stages, or a directory holding some: its newest), else the newest
    capture under ./profiles that holds bench-cpu.json, else the committed example where there is
    one. A ParseError naming the fix where none is found."""
    if given is not None:
        path = Path(given)
        if not path.exists():
            raise MissingPathError(f"{path}: {missing_reason(path)}", "give a profile directory that `nsprof profile` wrote")
        if (path / CPU_RESULTS).is_file():
            return Source(path, "given with --from")
        latest = latest_profile(path, with_ncu=False, op=op, holding=CPU_RESULTS) if path.is_dir() else None
        if latest is not None:
            return Source(latest.path, f"the newest capture with CPU stages under {path} (--from)")
        raise ParseError(f"{path}: no CPU stages in it (no {CPU_RESULTS})", CAPTURE_FIX)
    latest = latest_profile(PROFILES_DIR, with_ncu=False, op=op, holding=CPU_RESULTS)
    if latest is not None and latest.path.resolve().parent != EXAMPLES_DIR:  # the user's own, not an example
        return Source(latest.path, f"the newest capture with CPU stages under {PROFILES_DIR}/; choose another with --from")
    example = CPU_EXAMPLES.get(op or "sgemm")
    if example is not None and example.is_dir():
        return Source(example, "the committed example capture with CPU stages (an H100's); pass --from for your own")
    raise ParseError(f"no capture with CPU stages (a {CPU_RESULTS}) under {PROFILES_DIR}/", CAPTURE_FIX)
