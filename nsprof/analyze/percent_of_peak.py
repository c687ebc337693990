"""% of peak: kernel or range metrics placed against a GPU's ceilings (nsprof.ceilings.peaks),
counting "not measured" as nsprof.analyze.metrics does. Pure pandas, no I/O.
"""

from __future__ import annotations

import math

import pandas as pd

from nsprof.analyze.metrics import ratio, sum_measured
from nsprof.ceilings.peaks import Ceiling


def percent_of_peak(metrics: pd.DataFrame, ceiling: Ceiling) -> pd.DataFrame:
    """Add fp32_pct_of_peak, tensor_pct_of_peak and dram_pct_of_peak to kernel or range metrics.

    fp32_pct_of_peak is of FP32 FLOPs only: FP16 math on CUDA cores (fp16_flops) is placed against
    no peak (nsprof.analyze.roofline says why), though it counts in gflops_per_s.

    Tensor work mixes rates (TF32 runs at half the FP16 rate), so its percentage is the share of
    the duration that the tensor FLOPs would take at peak. A percentage whose peak the ceiling
    lacks (None) is NaN; so is the tensor one of work that ran at a rate with no known peak.
    """
    out = metrics.copy()
    duration_s = out["duration_ns"] * 1e-9
    out["fp32_pct_of_peak"] = 100 * ratio(_seconds_at_peak(out["flops"], ceiling.fp32_tflop_per_s), duration_s)
    tensor = ((out["tensor_16bit_flops"], ceiling.fp16_tensor_tflop_per_s),
              (out["tensor_tf32_flops"], ceiling.tf32_tensor_tflop_per_s),
              (_column(out, "tensor_fp8_flops"), ceiling.fp8_tensor_tflop_per_s),
              (_column(out, "tensor_int8_ops"), ceiling.int8_tensor_tops))
    known = [_seconds_at_peak(flops, peak) for flops, peak in tensor if peak is not None]
    tensor_s_at_peak = sum_measured(*known) if known else pd.Series(math.nan, index=out.index)
    for flops, peak in tensor:
        if peak is None:  # work at that rate cannot be placed against a peak
            tensor_s_at_peak = tensor_s_at_peak.mask(flops.fillna(0) > 0)
    out["tensor_pct_of_peak"] = 100 * ratio(tensor_s_at_peak, duration_s)
    out["dram_pct_of_peak"] = 100 * ratio(_seconds_at_peak(out["dram_bytes"], ceiling.dram_tbyte_per_s), duration_s)
    return out


def _seconds_at_peak(amount: pd.Series, peak_tera_per_s: float | None) -> pd.Series:
    """How long `amount` (FLOPs or bytes) takes at the peak; NaN throughout when the peak is unknown."""
    if peak_tera_per_s is None:
        return pd.Series(math.nan, index=amount.index, dtype=float)
    return amount / (peak_tera_per_s * 1e12)


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    """A column, or NaN throughout where an older table lacks it (not measured)."""
    return frame[name] if name in frame else pd.Series(math.nan, index=frame.index)
