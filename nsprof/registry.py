"""The registry: every op nsprof runs and the lookups every command uses.

The ops are the modules under nsprof/ops (one per ladder); what an op, a stage, a tile and a
precision are is nsprof.op_model, whose dataclasses this module hands on. Everything else
(CLI choices, bench tables, plot labels, `explain`, tests) finds ops and stages here, never
through an op module directly.
"""

from __future__ import annotations

from nsprof.errors import UsageError
from nsprof.op_model import REPO_ROOT, Op, Precision, Stage, Tile, find_kernel, stage_order  # noqa: F401 (handed on)
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


def baseline_stage(op: str, precision: str) -> Stage:
    """The library stage that the op's stages of `precision` are compared with ("% of cuBLAS"), as
    the op declares it (Op.baselines: cuBLAS FP32 for SGEMM's fp32 stages, cuBLAS TF32 for its tf32)."""
    spec = get_op(op)
    if precision not in spec.baselines:
        raise UsageError(f"{op} declares no baseline for {precision}",
                         f"its baselines: {', '.join(f'{p} ({s})' for p, s in spec.baselines.items())}")
    return get_stage(op, spec.baselines[precision])


def baseline_of(op: str, stage: str) -> Stage | None:
    """The baseline a stage of the registry is compared with (itself for a baseline); None for a
    name the op does not have."""
    found = next((s for s in all_ops()[op].stages if s.stage == stage), None) if op in all_ops() else None
    return baseline_stage(op, found.precision.name) if found else None


def baseline_stages(op: str) -> list[Stage]:
    """The op's baselines, in ladder order."""
    names = set(get_op(op).baselines.values())
    return [s for s in stages_for(op) if s.stage in names]


def is_baseline_stage(op: str, stage: str) -> bool:
    return op in all_ops() and stage in all_ops()[op].baselines.values()


def get_stage(op: str, stage: str) -> Stage:
    """One stage by name; "all", a list or nothing is a usage error."""
    chosen = select_stages(op, [stage]) if stage.strip().lower() not in ("", "all") and "," not in stage else []
    if len(chosen) != 1:
        raise UsageError(f"'{stage}' does not name one stage of {op}",
                         f"give one of {', '.join(s.stage for s in stages_for(op))}")
    return chosen[0]


def select_stages(op: str, names: list[str] | None) -> list[Stage]:
    """Resolve user-typed stage names ("v6", "6", "V6", "9t", "all", "v1,v6") in ladder order."""
    ladder = stages_for(op)
    prefix = get_op(op).stage_prefix
    by_name = {s.stage: s for s in ladder}
    tokens = [t.strip().lower() for n in (names or ["all"]) for t in n.split(",") if t.strip()]
    if not tokens or "all" in tokens:
        return list(ladder)
    chosen = []
    for token in tokens:
        name = f"{prefix}{token}" if token[:1].isdigit() else token
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
    return sorted(chosen, key=lambda s: s.order)
