"""Pure analysis over parsed DataFrames: derived kernel metrics, GPU work per NVTX range,
datasheet ceilings, per-stage records. No I/O, no plotting."""

from nsprof.analyze.capture_analysis import CaptureAnalysis
from nsprof.analyze.metrics import kernel_metrics, range_metrics
from nsprof.analyze.nvtx_attribution import attribute_work, range_summary, summarize_ranges
from nsprof.analyze.percent_of_peak import percent_of_peak
from nsprof.ceilings.peaks import Ceiling, datasheet_ceiling

__all__ = [
    "CaptureAnalysis", "Ceiling", "attribute_work", "datasheet_ceiling",
    "kernel_metrics", "percent_of_peak", "range_metrics", "range_summary", "summarize_ranges",
]
