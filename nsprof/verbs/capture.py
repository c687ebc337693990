"""`profile`: what to capture, checked; the capture itself; and for a program, the hot kernels nsys
found that ncu profiles (the guided choice, beside the hot-kernel ranking it applies)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from nsprof.errors import UsageError
from nsprof.paths import PROFILES_DIR
from nsprof.verbs.common import check_runs

if TYPE_CHECKING:  # loaded with the calls that need them: `nsprof --help` stays fast
    from nsprof.capture.program import GuidedChoice, ProgramRequest
    from nsprof.capture.request import ProfileRequest


def profile_request(program: list[str] | None = None, stages: list[str] | None = None, sizes: list[str] | None = None,
                    op: str | None = None, *, tool: str = "both", metrics: list[str] | None = None,
                    clock_control: str = "none", repeat: int | None = None, ranges: list[str] | None = None,
                    kernel: str | None = None, launch_count: int | None = None, top: int | None = None,
                    runs: int = 1) -> ProfileRequest | ProgramRequest:
    """What `profile` should capture, checked: the ladder's stages at sizes (ProfileRequest), or
    the user's `program` (argv; ProgramRequest), with `runs` nsys runs. Options of the other kind
    are a UsageError."""
    from dataclasses import replace

    request = _capture_request(program, stages, sizes, op, tool, metrics, clock_control, repeat, ranges, kernel,
                               launch_count, top)
    check_runs(runs)
    if runs > 1 and "nsys" not in request.tools:
        raise UsageError("--runs repeats the nsys run, and --tool ncu takes none", "pass --tool nsys or --tool both")
    return replace(request, runs=runs)


def _capture_request(program, stages, sizes, op, tool, metrics, clock_control, repeat, ranges, kernel, launch_count, top):
    if program:  # your own program: the ladder's options do not apply
        from nsprof.capture.program import build_program_request

        ladder_only = [flag for flag, value in (("--stage", stages), ("--size", sizes), ("--op", op), ("--repeat", repeat))
                       if value]
        if ladder_only:
            raise UsageError(f"{', '.join(ladder_only)} {'is' if len(ladder_only) == 1 else 'are'} for the ladder's stages, "
                             "not for a program", "drop them, or drop the program after --")
        return build_program_request(program, tool, metrics, clock_control, ranges, kernel, launch_count, top)
    if ranges or kernel or launch_count is not None or top is not None:
        raise UsageError("--range, --kernel, --launch-count and --top select launches of your own program",
                         "give the program after --: nsprof profile --range step -- python train.py")
    from nsprof.capture.request import build_request

    return build_request(op or "sgemm", stages, sizes, tool, metrics, clock_control, repeat)


def profile_commands(request, out: str | Path = PROFILES_DIR, nsys: str | None = None, ncu: str | None = None) -> list[str]:
    """The command lines `profile` would run for `request` (from profile_request), one shell line
    each; runs nothing and needs no GPU."""
    from nsprof.capture.session import dry_run

    return [command.shell for command in dry_run(request, Path(out), {"nsys": nsys, "ncu": ncu})]


def profile(request, out: str | Path = PROFILES_DIR, nsys: str | None = None, ncu: str | None = None, *,
            force: bool = False, progress: Callable[[str], None] | None = None) -> tuple[Path, dict]:
    """Capture `request` (from profile_request) under nsys and/or ncu into a new profile directory
    under `out`; returns the directory and its manifest. A guided program capture hands ncu the hot
    kernels nsys found (choose_hot_kernels). A program that ran under nsys but died under ncu is
    returned too, not raised: its status says "partial: ..." and its "partial" entry how it died, the
    last kernel ncu reported and what to try (nsprof.capture.partial); `nsprof profile` exits 3."""
    from nsprof.capture.program import ProgramRequest
    from nsprof.capture.session import capture, capture_program

    tools = {"nsys": nsys, "ncu": ncu}
    if isinstance(request, ProgramRequest):
        return capture_program(request, Path(out), tools, force=force, progress=progress, chooser=choose_hot_kernels)
    return capture(request, Path(out), tools, force=force, progress=progress)


def check_verified(directory: Path, manifest: dict) -> None:
    """Raise VerificationFailed for the first stage of a capture that failed its verification."""
    from nsprof.capture.session import VerificationFailed

    failed = [v for v in manifest["verification"] if v["status"] == "failed"]
    if failed:
        first = failed[0]
        raise VerificationFailed(
            f"{first['stage']} {first['size']} failed verification ({first['message']})",
            f"its launches were not measured, so {directory} has no ranges for it; "
            f"check it with nsprof bench --stage {first['stage']}",
        )


def choose_hot_kernels(nsys_export: str | Path, top: int) -> GuidedChoice:
    """What a guided capture hands to ncu: the hot kernels of an nsys export (the fewest that make
    up COVERAGE_PCT of the kernel time that is not harness work, at most `top`;
    nsprof.analyze.hot_kernels.hot_rows), of its steady state where the program has one
    (nsprof.analyze.program_harness.steady_state), and how many launches of each configuration to
    pass over so that ncu profiles a steady-state one."""
    from nsprof.analyze.harness import harness_kernels
    from nsprof.analyze.hot_kernels import COVERAGE_PCT, hot_rows, nsys_kernel_rows
    from nsprof.analyze.iterations import steady_part
    from nsprof.capture.program import STEADY_SKIP, GuidedChoice
    from nsprof.profile_analysis import opened_profile

    exports = opened_profile(nsys_export).timelines
    steady, state = steady_part(exports)
    harness = harness_kernels(exports, state)
    ranked = nsys_kernel_rows(steady, harness)
    hot = hot_rows(ranked, top)
    hot = hot[hot["mangled_name"].notna()]  # graphs traced at graph level, and exports without the symbols
    # launches of each chosen configuration before the steady state: ncu passes over as many
    whole = nsys_kernel_rows(exports, harness).set_index(["kernel", "grid", "block"])["launches"]
    before = [int(whole.get((row.kernel, row.grid, row.block), row.launches)) - int(row.launches) for row in hot.itertuples()]
    kernels = tuple({"kernel": row.kernel, "mangled_name": row.mangled_name, "grid": row.grid, "block": row.block,
                     "launches": int(row.launches), "launches_before_steady_state": early,
                     "total_ns": int(row.total_ns), "pct": round(float(row.pct), 2)}
                    for row, early in zip(hot.itertuples(), before))
    skip = max(0, min([max([STEADY_SKIP, *before]), *(k["launches"] + k["launches_before_steady_state"] - 1
                                                       for k in kernels)]))
    work = ranked.loc[~ranked["harness"], "total_ns"].sum()
    covered = round(float(100 * hot["total_ns"].sum() / work), 2) if work else 0.0
    rule = (f"the fewest kernels (name and launch configuration) that make {COVERAGE_PCT:.0f}% of the kernel time "
            f"that is not harness work (nsprof.analyze.harness), at most {top}"
            + (f", in the steady state ({state.to_json()['rule']})" if state else "")
            + f"; each configuration of them profiled once, after its first {skip} launches")
    return GuidedChoice(kernels, covered, skip, rule)
