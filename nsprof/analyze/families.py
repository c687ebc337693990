"""Name families: kernel and NVTX range names that differ only in per-instance arguments or ids.

Programs write per-instance facts into names. XLA's ranges carry their arguments between `#`s, ids
among them (`XlaModule:#hlo_module=jit_update,program_id=65645#`, `Thunk:#hlo_op=copy.1,
unique_hlo_op_id=4294967297#`), and XLA numbers its fusions and modules (`input_reduce_fusion_47`,
`cudnn-conv.114`); torch.compile numbers its Triton kernels (`triton_poi_fused_add_view_3`);
PyTorch's `emit_nvtx` ranges end in `, seq = 12, op_id = 40`. One program then writes tens of
thousands of distinct names (86,511 in 30 steps of a JAX ResNet-50), and two runs of it share
few. A family is the name with those parts replaced by FAMILY_RULES, applied in order: every
table, `diff` and chart that groups by family says so, and --json lists each family's members.

The rules are data: a pattern, what it becomes, and the words that state it. A name no rule
touches is its own family, so the ladder's names (`nsprof:sgemm/v10/1024x1024x1024`,
`sgemm_v8<128, 128>`) and sizes stay apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd


@dataclass(frozen=True)
class FamilyRule:
    name: str
    pattern: re.Pattern[str]
    replacement: str
    says: str  # the rule in words, for captions and --json


_XLA_ARGUMENTS = re.compile(r"#([^#]*)#")
_ID_KEY = re.compile(r"^(?:\w*_)?id$")  # program_id, unique_hlo_op_id, run_id, id
_NUMBERED = re.compile(r"(?<=[A-Za-z])([._-])\d+(?=$|[^\w])")  # copy.1, cudnn-conv.114, fusion_3, transforms-1255


def _xla_arguments(match: re.Match[str]) -> str:
    """XLA's `#key=value,...#`: ids dropped, numbered values (`cudnn-conv.114`) as `.N`."""
    kept = [part for part in match.group(1).split(",") if not _ID_KEY.match(part.partition("=")[0].strip())]
    return "#" + ",".join(_NUMBERED.sub(r"\1N", part) for part in kept) + "#"


FAMILY_RULES = (
    FamilyRule("xla-arguments", _XLA_ARGUMENTS, "", "XLA's #...# arguments without their ids (program_id, "
               "unique_hlo_op_id) and with numbered modules and ops as .N (cudnn-conv.114: cudnn-conv.N)"),
    FamilyRule("numbered-kernel", re.compile(r"^([A-Za-z_][A-Za-z0-9_]*?(?:fusion|fused)[A-Za-z0-9_]*?)_\d+$"), r"\1_N",
               "generated kernels numbered by their compiler as _N (XLA's input_reduce_fusion_47, "
               "torch.compile's triton_poi_fused_add_3)"),
    FamilyRule("profiler-step", re.compile(r"^ProfilerStep#\d+$"), "ProfilerStep#N",
               "torch.profiler's numbered steps as ProfilerStep#N (one family: the loop's iterations)"),
    FamilyRule("pytorch-call", re.compile(r", (?:seq|op_id) = \d+"), "", "PyTorch's per-call `seq = N` and `op_id = N`"),
)


@lru_cache(maxsize=1 << 18)  # the same names come back from every table of one capture
def family_of(name: str) -> str:
    """The family a kernel or range name belongs to (the module docstring)."""
    text = str(name)
    if "#" in text:
        text = _XLA_ARGUMENTS.sub(_xla_arguments, text)
    for rule in FAMILY_RULES[1:]:
        text = rule.pattern.sub(rule.replacement, text)
    return text


def families(names: Iterable[str]) -> dict[str, str]:
    """Each distinct name's family (computed once per distinct name)."""
    return {name: family_of(name) for name in dict.fromkeys(map(str, names))}


def rules_applied(names: Iterable[str]) -> list[str]:
    """The words of each rule that changed at least one of these names, for a caption."""
    distinct = list(dict.fromkeys(map(str, names)))
    said = []
    for rule in FAMILY_RULES:
        if rule.name == "xla-arguments":
            changed = any("#" in name and _XLA_ARGUMENTS.sub(_xla_arguments, name) != name for name in distinct)
        else:
            changed = any(rule.pattern.search(name) for name in distinct)
        if changed:
            said.append(rule.says)
    return said


def family_column(names: pd.Series) -> pd.Series:
    """A column of families beside a column of names (a categorical for many repeated names)."""
    mapping = families(pd.unique(names.astype(str)))
    return names.astype(str).map(mapping)
