"""The registry: every op nsprof runs and the lookups every command uses.

The ops are the modules under nsprof/ops (one per ladder); what an op, a stage, a tile and a
precision are is nsprof.op_model, whose dataclasses this module hands on. Everything else
(CLI choices, bench tables, plot labels, `explain`, tests) finds ops and stages here, never
through an op module directly.
"""

from __future__ import annotations

from nsprof.errors import UsageError
from nsprof.op_model import REPO_ROOT, Op, Precision, Stage, Tile, find_kernel  # noqa: F401 (handed on)
from nsprof.ops import OPS


def all_ops() -> dict[str, Op]:
    return OPS


def get_op(name: str) -> Op:
    ops = all_ops()
    if name not in ops:
        raise UsageError(f"unknown op '{name}'", f"choose one of: {', '.join(ops)}")
    return ops[name]


def all_stages() -> list[Stage]:
    return [stage for op in all_ops().values() for stage in op.stages]


def stages_for(op: str = "sgemm") -> list[Stage]:
    return list(get_op(op).stages)


def library_stage(op: str) -> Stage:
    """The vendor-library stage of a ladder (cuBLAS for SGEMM): the baseline of "% of cuBLAS"."""
    return next(s for s in stages_for(op) if s.backend == "cublas")


def is_library_stage(op: str, stage: str) -> bool:
    return op in all_ops() and library_stage(op).stage == stage


def get_stage(op: str, stage: str) -> Stage:
    """One stage by name; "all", a list or nothing is a usage error."""
    chosen = select_stages(op, [stage]) if stage.strip().lower() not in ("", "all") and "," not in stage else []
    if len(chosen) != 1:
        raise UsageError(f"'{stage}' does not name one stage of {op}",
                         f"give one of {', '.join(s.stage for s in stages_for(op))}")
    return chosen[0]


def select_stages(op: str, names: list[str] | None) -> list[Stage]:
    """Resolve user-typed stage names ("v6", "6", "V6", "all", "v1,v6") in ladder order."""
    ladder = stages_for(op)
    prefix = get_op(op).stage_prefix
    by_name = {s.stage: s for s in ladder}
    tokens = [t.strip().lower() for n in (names or ["all"]) for t in n.split(",") if t.strip()]
    if not tokens or "all" in tokens:
        return list(ladder)
    chosen = []
    for token in tokens:
        name = f"{prefix}{token}" if token.isdigit() else token
        if name not in by_name:
            owners = [other for other, ladder_op in all_ops().items() if other != op
                      and any(stage.stage == token for stage in ladder_op.stages)]
            if owners:  # a stage of another ladder: the --op is what is missing
                raise UsageError(f"'{token}' is a stage of {' and '.join(owners)}, not of {op}",
                                 f"pass --op {owners[0]}")
            raise UsageError(
                f"unknown stage '{token}' for {op}",
                f"choose from {', '.join(by_name)} or 'all' (see `nsprof stages --op {op}`)",
            )
        if by_name[name] not in chosen:
            chosen.append(by_name[name])
    return sorted(chosen, key=lambda s: s.number)
