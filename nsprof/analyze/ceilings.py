"""Datasheet peaks per GPU, for "% of peak" columns (pure data and arithmetic).

These are NVIDIA's published numbers (dense math, no structured sparsity), labelled "datasheet":
what the card is specified to do, not what it does. Measured ceilings (a device-to-device copy,
cuBLAS) are lower (H200: 4.08 of 4.8 TB/s) and come from another module.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

import pandas as pd

from nsprof.analyze.metrics import ratio, sum_measured


@dataclass(frozen=True)
class Ceiling:
    gpu: str
    fp32_tflop_per_s: float
    tf32_tensor_tflop_per_s: float
    fp16_tensor_tflop_per_s: float  # BF16 runs at the same rate
    dram_tbyte_per_s: float
    source: str = "datasheet"

    def to_json(self) -> dict:
        return asdict(self)


# First match wins, so a specific pattern precedes the general one for the same chip.
DATASHEET_CEILINGS: tuple[tuple[str, Ceiling], ...] = (
    (r"H200", Ceiling("H200 SXM", 67.0, 494.7, 989.4, 4.8)),
    (r"H100.*PCIE", Ceiling("H100 PCIe", 51.2, 378.0, 756.0, 2.0)),
    (r"H100", Ceiling("H100 SXM", 67.0, 494.7, 989.4, 3.35)),
    (r"A100(?=.*PCIE)(?=.*80GB)", Ceiling("A100 PCIe 80GB", 19.5, 156.0, 312.0, 1.935)),
    (r"A100.*40GB", Ceiling("A100 40GB", 19.5, 156.0, 312.0, 1.555)),
    (r"A100", Ceiling("A100 SXM 80GB", 19.5, 156.0, 312.0, 2.039)),
)


def datasheet_ceiling(gpu_name: str | None) -> Ceiling | None:
    """The datasheet peaks of a GPU by its reported name ('NVIDIA H200'), None if not listed."""
    if not gpu_name:
        return None
    name = gpu_name.upper()
    return next((ceiling for pattern, ceiling in DATASHEET_CEILINGS if re.search(pattern, name)), None)


def percent_of_peak(metrics: pd.DataFrame, ceiling: Ceiling) -> pd.DataFrame:
    """Add fp32_pct_of_peak, tensor_pct_of_peak and dram_pct_of_peak to kernel or range metrics.

    Tensor work mixes rates (TF32 runs at half the FP16 rate), so its percentage is the share of
    the duration that the tensor FLOPs would take at peak.
    """
    out = metrics.copy()
    duration_s = out["duration_ns"] * 1e-9
    out["fp32_pct_of_peak"] = 100 * ratio(out["flops"] / (ceiling.fp32_tflop_per_s * 1e12), duration_s)
    tensor_s_at_peak = sum_measured(out["tensor_16bit_flops"] / (ceiling.fp16_tensor_tflop_per_s * 1e12),
                                    out["tensor_tf32_flops"] / (ceiling.tf32_tensor_tflop_per_s * 1e12))
    out["tensor_pct_of_peak"] = 100 * ratio(tensor_s_at_peak, duration_s)
    out["dram_pct_of_peak"] = 100 * ratio(out["dram_bytes"] / (ceiling.dram_tbyte_per_s * 1e12), duration_s)
    return out
