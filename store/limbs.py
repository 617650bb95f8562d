"""Exact amounts as integer limbs, in SQL: the columns of the totals tables and the
arithmetic that orders their sums (store.summary explains the limbs).

An amount is an integer of 1e-12 units kept as hi * 10**20 + mid * 10**10 + lo; a sum of
such rows has limbs of any size and sign. Normalised, the lower two lie in [0, 10**10) and
the first carries the sign: compared in order, normalised limbs order the sums exactly.
"""

from __future__ import annotations

SCALE = 12  # digits after the point: contract.commission.AMOUNT_SCALE
LIMB_DIGITS = 10
LIMBS = ("hi", "mid", "lo")
COMMISSION_LIMBS = tuple(f"commission_{limb}" for limb in LIMBS)
SALE_LIMBS = tuple(f"sale_{limb}" for limb in LIMBS)
# Every column after the key of a totals table, in the order the triggers write them.
TOTALS = ("row_count", *COMMISSION_LIMBS, "sale_rows", *SALE_LIMBS)
UNIT = 10**LIMB_DIGITS


def quotient(x: str, postgres: bool) -> str:
    """SQL of `x` divided by 10**10, truncated toward zero on both databases."""
    return f"div({x}, {UNIT})" if postgres else f"(({x}) / {UNIT})"


def remainder(x: str, postgres: bool) -> str:
    """SQL of the remainder of `x` by 10**10, with the sign of x."""
    return f"mod({x}, {UNIT})" if postgres else f"(({x}) % {UNIT})"


def low(x: str, postgres: bool) -> str:
    """SQL of `x` modulo 10**10, from 0 to 10**10 - 1."""
    return remainder(f"{remainder(x, postgres)} + {UNIT}", postgres)


def carry(x: str, postgres: bool) -> str:
    """SQL of `x` floor-divided by 10**10."""
    return quotient(f"{x} - {low(x, postgres)}", postgres)


def normalised(hi: str, mid: str, lo: str, postgres: bool) -> tuple[str, str, str]:
    """SQL of the normalised limbs (hi, mid, lo) of the sum hi * 10**20 + mid * 10**10 + lo,
    each limb given as an SQL expression."""
    carried = f"({mid} + {carry(lo, postgres)})"
    return (
        f"({hi} + {carry(carried, postgres)})",
        low(carried, postgres),
        low(lo, postgres),
    )


def split(units: int) -> tuple[int, int, int]:
    """An integer of units as its normalised limbs (`normalised`, in Python)."""
    hi, rest = divmod(units, UNIT * UNIT)
    mid, lo = divmod(rest, UNIT)
    return hi, mid, lo
