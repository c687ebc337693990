"""Numbers for people: 41.7 µs, 54.1 TFLOP/s, 4,255 GB/s, 12.5%, 1.2 M (3 significant digits).

Every table, report and figure formats through here, so one quantity reads the same everywhere:
FLOP rates always in TFLOP/s, bandwidths always in GB/s (a copy's 55.5 GB/s and DRAM's 4,255 GB/s
side by side), durations and byte counts with an SI prefix. A missing value (None, NaN) reads as
MISSING.
"""

from __future__ import annotations

import math
from typing import TypeGuard

from nsprof.shorten import shortened

MISSING = "–"
_LARGE = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
_SMALL = ((1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"))


def si(value: float | None, unit: str, digits: int = 3) -> str:
    """`value` in `unit` with an SI prefix and `digits` significant digits: si(4.08e12, 'B/s') ->
    '4.08 TB/s'; si(4.17e-5, 's') -> '41.7 µs'. Values under 1 take m, µ, n only for seconds."""
    if _missing(value):
        return MISSING
    rounded = float(f"{value:.{digits - 1}e}")  # so that 999.96 G reads 1.00 T, not 1000 G
    prefixes = _LARGE + (_SMALL if unit == "s" else ((1.0, ""),))
    scale, prefix = next(((s, p) for s, p in prefixes if abs(rounded) >= s), prefixes[-1])
    return f"{_significant(rounded / scale, digits)} {prefix}{unit}".rstrip()


def duration_ns(value: float | None) -> str:
    """Nanoseconds as a duration: 41700 -> '41.7 µs'."""
    return si(value * 1e-9, "s") if _present(value) else MISSING


def bytes_per_s(value: float | None, unit: bool = True) -> str:
    """Bytes per second in GB/s: 4.255e12 -> '4,255 GB/s' (just '4,255' without `unit`, under a
    heading that names it)."""
    return _fixed(value, 1e9, " GB/s" if unit else "")


def flops_per_s(value: float | None, unit: bool = True) -> str:
    """FLOP per second in TFLOP/s: 1.27e13 -> '12.7 TFLOP/s'; 6.1e9 -> '0.00610 TFLOP/s'."""
    return _fixed(value, 1e12, " TFLOP/s" if unit else "")


def _fixed(value: float | None, scale: float, unit: str) -> str:
    return _significant(value / scale, 3) + unit if _present(value) else MISSING


def byte_count(value: float | None) -> str:
    return si(value, "B")


def count(value: float | None) -> str:
    """A count: exact up to 9,999, then with a prefix (1.2 M)."""
    if not _present(value):
        return MISSING
    return f"{value:,.0f}" if abs(value) < 10_000 else si(value, "")


def signed(value: float) -> str:
    """A change in percent, signed, to 0.1; a nonzero change that would round to 0.0 keeps 2
    significant digits (-0.03), so an interval that excludes 0 never prints a bound of -0.0."""
    if value == 0:
        return "0.0"
    return f"{value:+.1f}" if round(abs(value), 1) >= 0.1 else f"{value:+.2g}"


def change(value: float | None, unit: str = "%") -> str:
    """A change as `signed` writes it, with its unit ("%", or " pt" for points of a share)."""
    return f"{signed(value)}{unit}" if _present(value) else MISSING


def percent(value: float | None, digits: int = 1) -> str:
    return MISSING if _missing(value) else f"{value:.{digits}f}%"


def share(value: float | None) -> str:
    """A percentage of a reference (% of cuBLAS) to the unit; one below 1 keeps 2 significant digits
    (the CPU's serial loop at 0.00069% of cuBLAS), so that only a true 0 reads 0."""
    if not _present(value):
        return MISSING
    return f"{value:,.0f}" if value == 0 or abs(value) >= 1 else f"{value:.2g}"


def ratio(value: float | None, digits: int = 2) -> str:
    """A plain number with fixed decimals (an n-way degree of 1.68, 255 FLOP/byte)."""
    if not _present(value):
        return MISSING
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.{digits}f}"


def for_unit(unit: str):
    """The formatter for a metric's unit (nsprof.metric_catalog): a duration, bytes, a percentage,
    a ratio where the unit has a '/' (cycles per instruction), else a count."""
    by_unit = {"ns": duration_ns, "byte": byte_count, "%": percent}
    return by_unit.get(unit, ratio if "/" in unit else count)


def problem_size(size: str | None) -> str:
    """'1024x1024x1024' -> '1024³'; other shapes as they are."""
    if not isinstance(size, str):
        return MISSING
    parts = size.split("x")
    return f"{parts[0]}³" if len(parts) == 3 and len(set(parts)) == 1 else size


def truncate(text: str, width: int) -> str:
    return shortened(text, width)


def _significant(value: float, digits: int) -> str:
    """At least `digits` significant digits, thousands separated: 4255.3 -> '4,255', 12.71 -> '12.7'."""
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:,.{decimals}f}"


def _present(value: float | None) -> TypeGuard[float]:
    return not _missing(value)


def _missing(value) -> bool:
    """None, NaN (Python's or NumPy's) or pandas' NA; checked without importing pandas, so that the
    command line starts fast."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    try:
        return math.isnan(value)
    except TypeError:  # not a number: a label
        return False


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """'1 entry', '2 entries': a count with its noun agreeing ('entry', plural 'entries')."""
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"


def speedup(value: float) -> str:
    """How many times faster: '2.4x', '37x', '1,450x'; below 1, two digits: '0.011x'."""
    if value < 1:
        return f"{value:.2g}x"
    return f"{value:.1f}x" if value < 10 else f"{value:,.0f}x"
