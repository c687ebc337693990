"""The registry: every op nsprof runs and the lookups every command uses.

The ops are the modules under nsprof/ladder/ops (one per ladder); what an op, a stage, a tile and a
precision are is nsprof.ladder.op_model, whose dataclasses this module hands on. Everything else
(CLI choices, bench tables, plot labels, `explain`, tests) finds ops and stages here, never
through an op module directly. `register_op` adds one from outside nsprof/ladder/ops (a test's own).
"""

from __future__ import annotations

import difflib

from nsprof.errors import UsageError
from nsprof.ladder.op_model import REPO_ROOT, LaunchConfig, Op, Precision, Stage, Workload, find_kernel, stage_order  # noqa: F401 (handed on)
from nsprof.ladder.ops import OPS
from nsprof.ladder.ops.tiles import Tile  # noqa: F401 (handed on)
from nsprof.ladder.stage_kinds import STAGE_KINDS


def all_ops() -> dict[str, Op]:
    return OPS


def register_op(op: Op) -> Op:
    """Add a ladder from outside nsprof/ladder/ops (a plug-in, a test's own), under a name not taken,
    once op_problems finds nothing wrong with it."""
    problems = [f"the name {op.name!r} is taken", *op_problems(op)] if op.name in OPS else op_problems(op)
    if problems:
        raise UsageError(f"op {op.name!r} cannot be registered: {'; '.join(problems)}",
                         "fix its declaration (see nsprof.ladder.op_model)")
    OPS[op.name] = op
    return op


def op_problems(op: Op) -> list[str]:
    """What breaks the op contract that the rest of nsprof relies on: stages that name this op,
    each once, in precisions the op declares, of a declared kind whose own rules they keep
    (nsprof.ladder.stage_kinds: an NVRTC stage's .cu file, a library call's lack of one), with launch
    configurations that are LaunchConfigs;
    for each of their precisions a baseline that is one of its own stages in that precision; a
    workload that is a Workload; a headline rate nsprof knows."""
    problems = []
    names = [s.stage for s in op.stages]
    problems += [f"stage {n} is listed twice" for n in sorted({n for n in names if names.count(n) > 1})]
    for stage in op.stages:
        if stage.op != op.name:
            problems.append(f"stage {stage.stage} names op {stage.op!r}")
        if op.precisions.get(stage.precision.name) is not stage.precision:
            problems.append(f"stage {stage.stage} computes in {stage.precision.name}, which the op does not declare")
        problems += [f"stage {stage.stage}: {config!r} is not a LaunchConfig (shape, entries, arch)"
                     for config in stage.tiles if not isinstance(config, LaunchConfig)]
        if STAGE_KINDS.get(str(getattr(stage.kind, "name", ""))) is not stage.kind:
            problems.append(f"stage {stage.stage} is of kind {stage.kind!r}, not one of nsprof.ladder.stage_kinds "
                            f"({', '.join(STAGE_KINDS)})")
        else:
            problems += stage.kind.problems(stage)
        if stage.modelled_tile and stage.modelled_tile not in {config.shape for config in stage.tiles}:
            problems.append(f"stage {stage.stage} models its accesses on a {stage.modelled_tile} tile it does not have")
    by_name = {s.stage: s for s in op.stages}
    for precision, name in op.baselines.items():
        if name not in by_name or by_name[name].precision.name != precision:
            problems.append(f"the {precision} baseline {name} is not a {precision} stage of {op.name}")
    problems += [f"no baseline for {p} stages" for p in dict.fromkeys(s.precision.name for s in op.stages)
                 if p not in op.baselines]
    if not isinstance(op.workload, Workload):
        problems.append("its workload has no problem() and launcher() (nsprof.ladder.op_model.Workload)")
    if op.headline not in ("flops", "bytes"):
        problems.append(f"headline {op.headline!r} is neither 'flops' nor 'bytes'")
    return problems


def get_op(name: str) -> Op:
    ops = all_ops()
    if name not in ops:
        raise UsageError(f"unknown op '{name}'", f"choose one of: {', '.join(ops)}")
    return ops[name]


def headline(name: str | None) -> str | None:
    """What a ladder is judged by ("flops" or "bytes", Op.headline); None for no op or one this
    nsprof does not know (a stage range another program, or a damaged export, names)."""
    op = all_ops().get(name) if name else None
    return op.headline if op is not None else None


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
    chosen = select_stages(op, [stage], one=True) if stage.strip().lower() not in ("", "all") and "," not in stage else []
    if len(chosen) != 1:
        raise UsageError(f"'{stage}' does not name one stage of {op}",
                         f"give one of {', '.join(s.stage for s in stages_for(op))}")
    return chosen[0]


ALL_OFFER = " or 'all'"  # where a list of stages may be asked for


def select_stages(op: str, names: list[str] | None, one: bool = False) -> list[Stage]:
    """Resolve user-typed stage names ("v6", "6", "V6", "9t", "all", "v1,v6") in ladder order; `one`:
    where a single stage is asked for, so that an unknown name is not offered 'all'."""
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
            close = difflib.get_close_matches(name, list(by_name), n=1)
            guess = f"did you mean {close[0]}? Or choose" if close else "choose"
            raise UsageError(
                f"unknown stage '{token}' for {op}",
                f"{guess} from {', '.join(by_name)}{'' if one else ALL_OFFER} (see `nsprof stages --op {op}`)",
            )
        if by_name[name] not in chosen:
            chosen.append(by_name[name])
    return sorted(chosen, key=lambda s: s.order)
