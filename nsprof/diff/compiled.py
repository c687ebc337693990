"""Where two runs of a compiled program compiled differently: kernels whose times compare other
work because a compiler or its autotuner chose otherwise, not because the user changed anything.

XLA autotunes each convolution and matrix product when it compiles a program: it times candidate
algorithms and keeps the fastest, and on a busy or slightly different machine it keeps another one.
Two unchanged runs of one JAX ResNet-50 on one H200 (tests/data/jax/resnet50-*.trace.json.gz) ran
50 of the step's 1,347 (kernel, XLA op) pairs in one run and not the other: `cudnn-conv.170` ran
cuDNN's implicit GEMM in one and cuBLAS's GEMM in the other. A kernel shared by such ops ran 156
times in one and 92 in the other, and its median moved +4% with an interval that excluded zero: the
diff called it slower, a false alarm. torch.compile autotunes its Triton kernels alike: its first
run of a block tried two configurations of two pointwise kernels, its second took the one kept from
its cache (tests/data/runs/torch).

A kernel compiled differently (`differences`), where either side shows it:
- in an XLA program, launched by other ops (XLA's `module:op` of a jax.profiler trace) on the two
  sides, or by an op that runs another set of kernels on the other side (an op's kernels added or
  removed are this too, not `added` or `removed`; an eager PyTorch operator's are not);
- in a compiled program (XLA's, or a Triton kernel of torch.compile): launched in other launch
  configurations (grid and block, and where the export holds them registers per thread and dynamic
  shared memory: a recompiled kernel, or an autotuner's other pipeline depth, with the same sizes),
  or another number of times a run.
Such rows are `compiled differently`, never faster or slower; the loop's time per iteration (one
execution of the program's step) still compares the programs as they ran.

Launches of a jax.profiler trace that no op of a module the program executed made are XLA's own
work while compiling: the autotuner compiles each candidate as a module of its own
(`gemm_fusion_dot.5`) and runs it between redzone checks and delay kernels, none an op of the
program. `compile_work` finds them; the diff leaves them out of its kernel rows and says how many.
"""

from __future__ import annotations

import pandas as pd

from nsprof.analyze.framework import XLA_MODULE_RANGE

COMPILED = "compiled differently"
TRITON_PREFIX = "triton_"  # torch.compile's Triton kernels: triton_poi_..., triton_tem_fused_mm_...
SHOWN_OPS = 2  # ops named in a row's reason; the rest counted
_EXECUTED_MODULE = r"^" + XLA_MODULE_RANGE + r"#hlo_module=([^#,]+)[#,]"


def compile_work(launches: pd.DataFrame, tool: str, range_keys: pd.Series) -> pd.Series:
    """The launches of a jax.profiler trace that no op of an XLA module the program executed made
    (module docstring): True where so. `range_keys`: the capture's range families, XLA's module
    ranges among them (`TSL:XlaModule:#hlo_module=jit_train_step#`)."""
    if tool != "jax.profiler" or "operator" not in launches:
        return pd.Series(False, index=launches.index)
    executed = set(range_keys.astype(str).str.extract(_EXECUTED_MODULE, expand=False).dropna())
    module = launches["operator"].astype(str).str.partition(":")[0]
    return launches["operator"].isna() | ~module.isin(executed)


def is_compiled_program(range_keys: pd.Series, tool: str) -> bool:
    """Whether a capture is of an XLA program: a jax.profiler trace, or XLA's module ranges under nsys."""
    return tool == "jax.profiler" or bool(range_keys.astype(str).str.startswith(XLA_MODULE_RANGE).any())


def differences(a: pd.DataFrame, b: pd.DataFrame, compiled: bool) -> dict[str, str]:
    """Per kernel key compiled differently, what differed (module docstring). `a`, `b`: each side's
    launches (key, run, config, and operator where the trace names ops); `compiled`: both sides
    are of a compiled program."""
    reasons: dict[str, str] = {}
    if compiled and "operator" in a and "operator" in b:  # an eager program's operators (aten::mm) compile nothing
        _other_ops(a, b, reasons)
        _other_kernels(a, b, reasons)
    shared = sorted(set(a["key"]) & set(b["key"]))
    judged = [key for key in shared if compiled or str(key).startswith(TRITON_PREFIX)]
    runs = {side: int(frame["run"].max()) + 1 if len(frame) else 1 for side, frame in (("a", a), ("b", b))}
    configs = {side: _sets(frame[frame["config"] != ""], "config") for side, frame in (("a", a), ("b", b))}
    counts = {side: frame.groupby("key").size() / runs[side] for side, frame in (("a", a), ("b", b))}
    for key in judged:
        if key in reasons:
            continue
        config_a, config_b = configs["a"].get(key), configs["b"].get(key)
        if config_a and config_b and config_a != config_b:
            reasons[key] = (f"other launch configurations (A: {_listed(_configs(config_a))}; B: "
                            f"{_listed(_configs(config_b))})")
        elif counts["a"][key] != counts["b"][key]:
            reasons[key] = f"{_count(counts['a'][key])} vs {_count(counts['b'][key])} launches a run"
    return reasons


def _other_ops(a: pd.DataFrame, b: pd.DataFrame, reasons: dict[str, str]) -> None:
    ops_a, ops_b = _sets(a, "operator"), _sets(b, "operator")
    for key in sorted(set(ops_a) & set(ops_b)):
        if ops_a[key] != ops_b[key]:
            reasons[key] = (f"launched by other ops (only in A: {_listed(ops_a[key] - ops_b[key])}; only in B: "
                            f"{_listed(ops_b[key] - ops_a[key])})")


def _other_kernels(a: pd.DataFrame, b: pd.DataFrame, reasons: dict[str, str]) -> None:
    kernels_a, kernels_b = (_sets(frame.rename(columns={"key": "kernel", "operator": "key"}), "kernel")
                            for frame in (a, b))
    for op in sorted(set(kernels_a) & set(kernels_b)):
        if kernels_a[op] != kernels_b[op]:
            for key in sorted(kernels_a[op] ^ kernels_b[op]):
                reasons.setdefault(key, f"{op} ran other kernels ({len(kernels_a[op])} vs {len(kernels_b[op])})")


def _sets(frame: pd.DataFrame, column: str) -> dict:
    """Per key, the set of `column`'s values (missing ones left out)."""
    present = frame[["key", column]].dropna()
    return {key: set(values.astype(str)) for key, values in present.groupby("key", sort=False)[column]}


def _configs(labels: set) -> set:
    """Launch configurations as `grid 132x1x1 block 384x1x1 (168 regs, 213 KB smem)` (capture_facts labels them
    `132,1,1,384,1,1,168,218112`: the sizes, then registers per thread and dynamic shared memory where the
    export holds them)."""
    def named(label: str) -> str:
        parts = label.split(",")
        if len(parts) not in (6, 8):
            return label
        text = f"grid {'x'.join(parts[:3])} block {'x'.join(parts[3:6])}"
        if len(parts) == 8 and parts[6].isdigit() and parts[7].isdigit():
            smem = int(parts[7])
            shared = "" if not smem else f", {smem / 1024:.0f} KB smem" if smem >= 1024 else f", {smem} B smem"
            text += f" ({parts[6]} regs{shared})"
        return text
    return {named(label) for label in labels}


def _listed(values: set) -> str:
    """A few of `values`, an XLA op named without its module (`jit_train_step:fusion.3` -> `fusion.3`)."""
    ordered = sorted(str(value).rpartition(":")[2] for value in values)
    shown = ", ".join(ordered[:SHOWN_OPS]) or "none"
    return shown + (f" and {len(ordered) - SHOWN_OPS} more" if len(ordered) > SHOWN_OPS else "")


def _count(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
