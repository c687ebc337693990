"""Where the GPU time went in an nsys capture, as `nsys stats` reports it (pure functions).

- `kernel_summary`: one row per kernel name (the demangled name, as `cuda_gpu_kern_sum` prints it):
  `kernel`, `count`, `total_ns`, `avg_ns`, `median_ns`, `min_ns`, `max_ns`, `pct` (of all kernel
  and graph time), largest total first. Equal to `nsys stats -r cuda_gpu_kern_sum` on the same
  export, but for `pct` where graphs ran: a graph traced at graph level (nsys's default) is one row
  per graph, named "CUDA graph <id>", which cuda_gpu_kern_sum leaves out.
- `kernel_family_summary`: the same per name family (nsprof.analyze.families), with `names` and
  `members`, where a family holds several names.
- `memcpy_summary`: one row per kind of transfer (Host-to-Device, Device-to-Host, Device-to-Device,
  ..., and memset): `kind`, `count`, `bytes`, `total_ns`, `gbytes_per_s` (bytes over the summed
  transfer time), `pageable_count` (copies from or to pageable host memory: staged by the driver,
  slower, and never asynchronous). Equal to `cuda_gpu_mem_time_sum` and `cuda_gpu_mem_size_sum` on
  the same export.
"""

from __future__ import annotations

import pandas as pd

from nsprof.analyze.categorical import as_categorical, stack_categorical
from nsprof.analyze.families import family_of
from nsprof.analyze.metrics import ratio
from nsprof.parse.model import GpuTimeline

KERNEL_SUMMARY_COLUMNS = ("kernel", "count", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns", "pct")
MEMCPY_SUMMARY_COLUMNS = ("kind", "count", "bytes", "total_ns", "gbytes_per_s", "pageable_count")
PAGEABLE = "Pageable"
MEMSET = "memset"


def kernel_summary(exports: list[GpuTimeline]) -> pd.DataFrame:
    return _summary(_kernel_launches(exports), "kernel")[list(KERNEL_SUMMARY_COLUMNS)]


def kernel_family_summary(exports: list[GpuTimeline]) -> pd.DataFrame | None:
    """kernel_summary over name families (nsprof.analyze.families: XLA's and torch.compile's
    numbered kernels, `loop_add_fusion_12`, are one row), plus `names`, how many distinct names a
    family holds, and `members`, those names; None where no family holds two names."""
    launches = _kernel_launches(exports)
    names = as_categorical(launches["kernel"])
    family = pd.Series(names.categories.astype(str)).map(family_of)
    if not family.duplicated().any():
        return None
    codes, families = pd.factorize(family)
    grouped = pd.Categorical.from_codes(codes[names.codes], families)
    summary = _summary(launches.assign(kernel=grouped), "kernel")[list(KERNEL_SUMMARY_COLUMNS)]
    members = pd.Series(names.categories.astype(str)).groupby(family.to_numpy(), sort=False).agg(list)
    summary["members"] = summary["kernel"].map(members)
    summary.insert(1, "names", summary["members"].map(len))
    return summary


def _kernel_launches(exports: list[GpuTimeline]) -> pd.DataFrame:
    """Every kernel launch and graph launch traced at graph level: kernel, duration_ns."""
    return _stacked([frame for export in exports for frame in (
        export.kernels[["kernel", "duration_ns"]],
        export.graphs[["name", "duration_ns"]].rename(columns={"name": "kernel"}))],
        pd.DataFrame({"kernel": pd.Series(dtype=str), "duration_ns": pd.Series(dtype="int64")}))


def memcpy_summary(exports: list[GpuTimeline]) -> pd.DataFrame:
    copies = pd.concat([export.memcpys for export in exports], ignore_index=True)
    copies = copies.assign(kind=copies["copy_kind"].astype(str),
                           pageable=(copies["src_kind"] == PAGEABLE) | (copies["dst_kind"] == PAGEABLE))
    memsets = pd.concat([export.memsets for export in exports], ignore_index=True).assign(kind=MEMSET, pageable=False)
    columns = ["kind", "duration_ns", "bytes", "pageable"]
    transfers = _stacked([frame[columns] for frame in (copies, memsets)], pd.DataFrame({column: [] for column in columns}))
    summary = _summary(transfers, "kind")
    by_kind = transfers.groupby("kind", observed=True)
    summary["bytes"] = by_kind["bytes"].sum().reindex(summary["kind"]).to_numpy()
    summary["pageable_count"] = by_kind["pageable"].sum().reindex(summary["kind"]).astype(int).to_numpy()
    summary["gbytes_per_s"] = ratio(summary["bytes"].astype(float), summary["total_ns"].astype(float))  # byte/ns = GB/s
    return summary[list(MEMCPY_SUMMARY_COLUMNS)]


def _stacked(frames: list[pd.DataFrame], empty: pd.DataFrame) -> pd.DataFrame:
    """The non-empty frames one under the other (empty ones would blur the column types), or
    `empty` when all are empty."""
    frames = [frame for frame in frames if len(frame)]
    if not frames:
        return empty
    names = [column for column in frames[0] if not pd.api.types.is_numeric_dtype(frames[0][column])]
    return stack_categorical(frames, names)  # names stay codes: no Python object per event


def _summary(events: pd.DataFrame, key: str) -> pd.DataFrame:
    """Count and duration statistics of `events` per `key`, largest total first."""
    grouped = events.groupby(as_categorical(events[key]), sort=False, observed=True)["duration_ns"]
    summary = grouped.agg(count="count", total_ns="sum", avg_ns="mean", median_ns="median", min_ns="min",
                          max_ns="max").reset_index(names=key)
    summary[key] = summary[key].astype(object).astype(str)
    total = summary["total_ns"].sum()
    summary["pct"] = 100 * summary["total_ns"] / total if total else 0.0
    return summary.sort_values(["total_ns", key], ascending=[False, True], ignore_index=True)
