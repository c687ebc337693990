"""Nsight Compute units and numbers -> nsprof's base units.

By default (`--print-units auto`) ncu scales units for reading, with SI factors of 1000: byte-based
and count units take the prefixes K, M, G, T (Kbyte, Mbyte/second, Kinst) and time takes n, u, m
(nsecond, usecond, msecond). `--print-units base` prints the unscaled units. Either way nsprof
stores time in ns, sizes in bytes, rates per second, frequencies in hz.
"""

from __future__ import annotations

import math

TIME_IN_NS = {
    "psecond": 1e-3, "ps": 1e-3, "nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3,
    "msecond": 1e6, "ms": 1e6, "second": 1e9, "s": 1e9,
}
SI_PREFIXES = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
BINARY_PREFIXES = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}  # KiB, Mibyte
BYTE_SPELLINGS = ("byte", "B")
MISSING_VALUES = {"", "n/a", "(!) n/a", "nan"}


def base_unit(unit: str) -> tuple[str, float]:
    """The base unit of an ncu unit and the factor that converts values to it.

    >>> base_unit("Gbyte/second")
    ('byte/second', 1000000000.0)
    >>> base_unit("usecond")
    ('ns', 1000.0)
    >>> base_unit("cycle/nsecond")
    ('cycle/second', 1000000000.0)
    >>> base_unit("KiB")
    ('byte', 1024.0)
    """
    numerator, *denominators = unit.strip().split("/")
    base, factor = _quantity(numerator)
    for denominator in denominators:
        per, per_factor = _per(denominator)
        base, factor = f"{base}/{per}", factor * per_factor
    return base, factor


def _quantity(part: str) -> tuple[str, float]:
    if part in TIME_IN_NS:
        return "ns", TIME_IN_NS[part]
    if part.lower() == "hz":
        return "hz", 1.0
    if part[1:].lower() == "hz" and part[0] in SI_PREFIXES:  # Khz, MHz, Ghz
        return "hz", SI_PREFIXES[part[0]]
    if part in BYTE_SPELLINGS:
        return "byte", 1.0
    if part[:2] in BINARY_PREFIXES and part[2:] in BYTE_SPELLINGS:
        return "byte", BINARY_PREFIXES[part[:2]]
    if len(part) > 1 and part[0] in SI_PREFIXES and part[1:].islower():  # Kbyte, Minst, Gcycle
        return part[1:], SI_PREFIXES[part[0]]
    return part, 1.0  # inst, %, and units nsprof does not know: kept as printed (nsprof.parse.ncu_checks
    # refuses one that stands for a time or a size)


def _per(part: str) -> tuple[str, float]:
    """A denominator and its factor: time becomes 'second' (rates are per second), so that a value
    per nsecond is multiplied by 1e9; per Kcycle, a value is divided by 1e3."""
    if part in TIME_IN_NS:
        return "second", 1e9 / TIME_IN_NS[part]
    base, factor = _quantity(part)
    return base, 1 / factor


def parse_number(text: str) -> float | None:
    """'16,336,583' -> 16336583.0; 'n/a' or '' -> nan; anything else that is not a number -> None."""
    text = text.strip()
    if text.lower() in MISSING_VALUES:
        return math.nan
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None
