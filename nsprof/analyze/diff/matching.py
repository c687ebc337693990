"""Which kernel of A is which kernel of B (pure pandas).

Full names first: a kernel of the same demangled name on both sides is one row. Then base names
(nsprof.analyze.ladder.short_kernel_name: no template arguments, parameters or namespaces), so a
kernel whose template argument changed (gemm<128> -> gemm<64>) still pairs up: the leftovers of
one base name on each side are paired in the order of their first launch. CUDA graphs traced at
graph level ("CUDA graph <id>") pair the same way as graphs, whatever their ids: a program that
builds its graphs in another order, or another number of them, still compares graph with graph.
What pairs with nothing is `added` (only in B) or `removed` (only in A).
"""

from __future__ import annotations

import pandas as pd

from nsprof.analyze.ladder import short_kernel_name

GRAPH_BASE = "CUDA graph"
NAME, BASE_NAME = "name", "base name"


def match_kernels(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """From each side's launches (name, is_graph, start_ns): one row per name of either side,
    `side` ("a" or "b"), `name`, `key` (the row it compares in: B's name where it paired),
    `matched_by` (NAME, BASE_NAME or None when it paired with nothing)."""
    firsts = {side: frame.groupby("name", sort=False, observed=True).agg(
                  start_ns=("start_ns", "min"), is_graph=("is_graph", "first")).reset_index()
              for side, frame in (("a", a), ("b", b))}
    common = set(firsts["a"]["name"]) & set(firsts["b"]["name"])
    rows = []
    leftovers = {}
    for side, names in firsts.items():
        names = names.assign(name=names["name"].astype(str))
        same = names["name"].isin(common)
        rows += [{"side": side, "name": name, "key": name, "matched_by": NAME} for name in names["name"][same]]
        left = names[~same].sort_values("start_ns", kind="stable")
        left = left.assign(base=[GRAPH_BASE if graph else short_kernel_name(name, 10**6)
                                 for name, graph in zip(left["name"], left["is_graph"])])
        left["order"] = left.groupby("base").cumcount()
        leftovers[side] = left
    paired = leftovers["a"].merge(leftovers["b"], on=["base", "order"], suffixes=("_a", "_b"))
    key_of = {("a", a_name): b_name for a_name, b_name in zip(paired["name_a"], paired["name_b"])}
    key_of |= {("b", b_name): b_name for b_name in paired["name_b"]}
    for side, left in leftovers.items():
        for name in left["name"]:
            key = key_of.get((side, name))
            rows.append({"side": side, "name": name, "key": key or name, "matched_by": BASE_NAME if key else None})
    return pd.DataFrame(rows, columns=["side", "name", "key", "matched_by"])
