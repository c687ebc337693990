"""Peaks per GPU, for "% of peak" columns and roofline roofs: pure data, no I/O, importing no layer
of nsprof (only nsprof.paths), so that every layer (capture, parse, analyze, launch) may use it.

The datasheet table holds NVIDIA's published numbers (dense math, no structured sparsity),
labelled "datasheet": what the card is specified to do, not what it does. `nsprof ceilings`
measures what it does (nsprof.launch.gpu_ceilings; H200: a copy moves 4.25 of the 4.8 TB/s, see
profiles/ceilings-nvidia-h200.json) and saves a document that `with_measurements` lays over the
datasheet, value by value, so every value keeps its own source ("measured 2026-11-21 by ..." or
"datasheet"). Finding that document (--ceilings, the profile's manifest, nsprof's data directory)
is nsprof.ceilings.resolve's job, which every command uses; this module only combines.

A value neither source gives stays None (a GPU missing from the datasheet keeps only what was
measured), and every "% of peak" that needs it is NaN.

L1 bandwidth is not on datasheets; the table derives it from the published per-SM rate:
SMs x 128 bytes/clock x boost clock (H200: 132 x 128 x 1.98 GHz = 33.4 TB/s). L2 bandwidth is
not published for these GPUs, so it is known only once measured.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, replace
from typing import Any

from nsprof.paths import gpu_slug


@dataclass(frozen=True)
class Ceiling:
    """A GPU's peaks; None where neither the datasheet nor a measurement gives the value.

    `source` is where the values come from unless `sources` names another for a value
    (field name -> "measured <date> by <method>"); `source_of` answers for one value.
    """

    gpu: str
    fp32_tflop_per_s: float | None
    tf32_tensor_tflop_per_s: float | None
    fp16_tensor_tflop_per_s: float | None  # BF16 runs at the same rate
    dram_tbyte_per_s: float | None
    source: str = "datasheet"
    l2_tbyte_per_s: float | None = None
    l1_tbyte_per_s: float | None = None
    h2d_tbyte_per_s: float | None = None  # pinned host memory to the GPU over the bus (datasheet: the link's rate)
    d2h_tbyte_per_s: float | None = None  # and back
    fp8_tensor_tflop_per_s: float | None = None  # datasheet only: nsprof measures no FP8 peak
    int8_tensor_tops: float | None = None  # INT8 tensor ops (a multiply-add is 2), datasheet only
    sources: tuple[tuple[str, str], ...] = ()

    def source_of(self, field: str) -> str | None:
        if getattr(self, field) is None:
            return None
        return dict(self.sources).get(field, self.source)

    def to_json(self) -> dict:
        doc = asdict(self)
        doc["sources"] = dict(self.sources)
        return doc


def _l1(sms: int, boost_ghz: float) -> float:
    """L1 bandwidth in TB/s from the per-SM rate of 128 bytes per clock."""
    return round(sms * 128 * boost_ghz / 1000, 1)


# The host link each way, as the datasheets give it (PCIe 5.0 x16: 128 GB/s both ways together; 4.0:
# 64): a rate no copy reaches (the H200's pinned copies measured 55.5 GB/s), so a floor from it is a
# true lower bound. `nsprof ceilings` measures what copies do.
_PCIE5, _PCIE4 = 0.064, 0.032


def _linked(ceiling: Ceiling, link_tbyte_per_s: float) -> Ceiling:
    return replace(ceiling, h2d_tbyte_per_s=link_tbyte_per_s, d2h_tbyte_per_s=link_tbyte_per_s)


# First match wins, so a specific pattern precedes the general one for the same chip.
DATASHEET_CEILINGS: tuple[tuple[str, Ceiling], ...] = (
    (r"H200", _linked(Ceiling("H200 SXM", 67.0, 494.7, 989.4, 4.8, l1_tbyte_per_s=_l1(132, 1.98),
                              fp8_tensor_tflop_per_s=1978.9, int8_tensor_tops=1978.9), _PCIE5)),
    (r"H100.*PCIE", _linked(Ceiling("H100 PCIe", 51.2, 378.0, 756.0, 2.0, l1_tbyte_per_s=_l1(114, 1.755),
                                    fp8_tensor_tflop_per_s=1513.0, int8_tensor_tops=1513.0), _PCIE5)),
    (r"H100", _linked(Ceiling("H100 SXM", 67.0, 494.7, 989.4, 3.35, l1_tbyte_per_s=_l1(132, 1.98),
                              fp8_tensor_tflop_per_s=1978.9, int8_tensor_tops=1978.9), _PCIE5)),
    (r"A100(?=.*PCIE)(?=.*80GB)", _linked(Ceiling("A100 PCIe 80GB", 19.5, 156.0, 312.0, 1.935,
                                                  l1_tbyte_per_s=_l1(108, 1.41), int8_tensor_tops=624.0), _PCIE4)),
    (r"A100.*40GB", _linked(Ceiling("A100 40GB", 19.5, 156.0, 312.0, 1.555, l1_tbyte_per_s=_l1(108, 1.41),
                                    int8_tensor_tops=624.0), _PCIE4)),
    (r"A100", _linked(Ceiling("A100 SXM 80GB", 19.5, 156.0, 312.0, 2.039, l1_tbyte_per_s=_l1(108, 1.41),
                              int8_tensor_tops=624.0), _PCIE4)),
)  # FP8 and INT8: dense, as for the others (the datasheets' sparse figures are twice these); A100 has no FP8

# The values a measured ceilings document may set, in the order reports list them.
LEAST_MEASURED = 1e-3  # TB/s or TFLOP/s: 1 GB/s or 1 GFLOP/s; a "measured" value below it (1e-300) is no measurement
MEASURABLE = ("dram_tbyte_per_s", "l2_tbyte_per_s", "l1_tbyte_per_s", "fp32_tflop_per_s",
              "tf32_tensor_tflop_per_s", "fp16_tensor_tflop_per_s", "h2d_tbyte_per_s", "d2h_tbyte_per_s")


def datasheet_ceiling(gpu_name: str | None) -> Ceiling | None:
    """The datasheet peaks of a GPU by its reported name ('NVIDIA H200'), None if not listed."""
    if not gpu_name:
        return None
    name = gpu_name.upper()
    return next((ceiling for pattern, ceiling in DATASHEET_CEILINGS if re.search(pattern, name)), None)


def ceiling_for(gpu_name: str | None, measured: dict | None = None, origin: str | None = None) -> Ceiling | None:
    """The GPU's ceilings: measured values (a document `nsprof ceilings` saved for this GPU) where
    there are some, datasheet values for the rest; None when neither knows the GPU. A document
    measured on another GPU is ignored. `origin` says where the document was found (see
    with_measurements)."""
    datasheet = datasheet_ceiling(gpu_name)
    if measured is None or not measured_on(measured, gpu_name):
        return datasheet
    return with_measurements(datasheet, measured, origin)


def measured_on(document: dict | None, gpu_name: str | None) -> bool:
    """Whether a measured ceilings document was taken on this GPU (by name, as gpu_slug tells them apart)."""
    taken_on = measured_gpu(document) if document else None
    return gpu_name is not None and taken_on is not None and gpu_slug(taken_on) == gpu_slug(gpu_name)


def measured_gpu(document: dict) -> str | None:
    """The device name a measured ceilings document was taken on."""
    device = document.get("device")
    name = device.get("device") if isinstance(device, dict) else None
    return name if isinstance(name, str) else None


def with_measurements(base: Ceiling | None, document: dict, origin: str | None = None) -> Ceiling:
    """`base` (or nothing) with each value the document measured replaced, and its source noted:
    "measured <date> by <method>", then "; from <origin>" when `origin` says where the document was
    found (so that a caption can tell a profile's own ceilings from a file's).

    The document's "ceilings" maps a MEASURABLE name to {"value", "date", "method", ...}; entries
    without a finite number of at least LEAST_MEASURED (an Infinity, a boolean, 1e-300) are ignored.
    """
    # float | None each; Any because replace() below takes them as keywords of every field's type
    values: dict[str, Any] = {name: (getattr(base, name) if base else None) for name in MEASURABLE}
    sources = dict(base.sources) if base else {}
    for name, entry in (document.get("ceilings") or {}).items():
        value = entry.get("value") if isinstance(entry, dict) else None
        if name in MEASURABLE and isinstance(value, (int, float)) and not isinstance(value, bool) \
                and math.isfinite(value) and value >= LEAST_MEASURED:
            values[name] = float(value)
            source = f"measured {entry.get('date', '(undated)')} by {entry.get('method', 'an unnamed method')}"
            sources[name] = f"{source}; from {origin}" if origin else source
    if base is None:
        base = Ceiling(measured_gpu(document) or "unknown GPU", None, None, None, None, source="unknown")
    return replace(base, **values, sources=tuple(sorted(sources.items())))
