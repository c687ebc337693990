"""Which kernel of A is which kernel of B (pure pandas).

Four passes, each over what the earlier ones left unpaired:

1. Full names: a kernel of the same demangled name on both sides is one row.
2. Keys (nsprof.kernel_names.kernel_key): the name as another tool demangles it, so that an nsys
   capture and a torch.profiler trace of one program pair kernel by kernel.
3. The same name up to its numbers (`gemm<128>(float*)` and `gemm<64>(float*)`; cuBLAS's
   `nvjet_..._128x64_...` and `..._256x128_...`): a changed template argument or tile choice still
   pairs up. Several of one such shape on a side pair in the order of their first launch.
4. Base names (nsprof.kernel_names.base_name: no template arguments, parameters or
   namespaces), only where exactly one kernel of that base name is left on each side. PyTorch's
   `vectorized_elementwise_kernel<.., FillFunctor>` and `<.., CUDAFunctor_add>` share a base name
   and are different work: with several candidates the base name alone cannot say which is which.

CUDA graphs traced at graph level ("CUDA graph <id>") pair by id first, then as graphs
whatever their ids (pass 3), in the order of their first launch: a program that builds its graphs in another
order, or another number of them, still compares graph with graph. What pairs with nothing is `added` (only in B) or
`removed` (only in A).
"""

from __future__ import annotations

import re

import pandas as pd

from nsprof.kernel_names import base_name, kernel_key

NAME, KEY, NUMBERS, BASE_NAME = "name", "name as demangled", "name but numbers", "base name"
_NUMBER = re.compile(r"\d+")


def match_kernels(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """From each side's launches (name, start_ns): one row per name of either side,
    `side` ("a" or "b"), `name`, `key` (the row it compares in: B's name where it paired),
    `matched_by` (NAME, KEY, NUMBERS, BASE_NAME or None when it paired with nothing)."""
    left = {}
    for side, frame in (("a", a), ("b", b)):
        firsts = frame.groupby("name", sort=False, observed=True)["start_ns"].min().reset_index()
        firsts["name"] = firsts["name"].astype(str)
        left[side] = firsts.sort_values("start_ns", kind="stable").reset_index(drop=True)
    pairs: list[tuple[str, str, str]] = []
    for rule, shape, unique_only in ((NAME, str, False), (KEY, kernel_key, False), (NUMBERS, _numbers_masked, False),
                                     (BASE_NAME, base_name, True)):
        found = _pair_by(left["a"], left["b"], shape, unique_only)
        pairs += [(a_name, b_name, rule) for a_name, b_name in found]
        left = {side: names[~names["name"].isin({pair[index] for pair in found})]
                for index, (side, names) in enumerate(left.items())}
    rows: list[dict[str, str | None]] = [{"side": "a", "name": a_name, "key": b_name, "matched_by": rule}
                                         for a_name, b_name, rule in pairs]
    rows += [{"side": "b", "name": b_name, "key": b_name, "matched_by": rule} for _, b_name, rule in pairs]
    rows += [{"side": side, "name": name, "key": name, "matched_by": None}
             for side, names in left.items() for name in names["name"]]
    return pd.DataFrame(rows, columns=["side", "name", "key", "matched_by"])


def _pair_by(a: pd.DataFrame, b: pd.DataFrame, shape, unique_only: bool) -> list[tuple[str, str]]:
    """(A name, B name) pairs of equal shape, the n-th of a shape on each side together (both
    frames are in order of first launch); with `unique_only`, only shapes one of on each side."""
    keyed = []
    for names in (a, b):
        frame = pd.DataFrame({"name": names["name"], "shape": names["name"].map(shape)})
        frame["order"] = frame.groupby("shape").cumcount()
        if unique_only:
            frame = frame[frame.groupby("shape")["name"].transform("size") == 1]
        keyed.append(frame)
    paired = keyed[0].merge(keyed[1], on=["shape", "order"], suffixes=("_a", "_b"))
    return list(zip(paired["name_a"], paired["name_b"]))


def _numbers_masked(name: str) -> str:
    return _NUMBER.sub("#", name)


