"""What a CSV cell is, by kind: the one place cells are parsed (build, check) and kinds are guessed
(scaffold), so a guess is always a kind the build can read.

- number: 1234, -1.5, 1,234 (thousands grouped by commas), .5, 2e5; a whole number stays exact (it
  must fit 64 bits), others are floats and must be finite; nan, inf and 1_000 are not numbers;
- date: YYYY-MM-DD, YYYY-MM or YYYY (the first day of the month or year);
- bool: true/false, yes/no, 1/0, t/f, y/n, any case;
- text: anything. An empty cell is null in every kind.
"""
from __future__ import annotations

import math
import re
from datetime import date
from typing import Any

NUMBER = re.compile(r"[+-]?(?:(?:[0-9]+|[0-9]{1,3}(?:,[0-9]{3})+)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
WHOLE = re.compile(r"[+-]?[0-9]+")
LEADING_ZERO = re.compile(r"[+-]?0[0-9]")  # 007, 02134: an identifier, whose zeros a number would drop
DATE = re.compile(r"([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2}))?)?")
DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # what a guess calls a date: a whole ISO day
TRUE, FALSE = {"true", "yes", "1", "t", "y"}, {"false", "no", "0", "f", "n"}
GUESSED_BOOLS = {"true", "false", "yes", "no"}  # 1/0 columns are guessed numbers
INT64 = range(-(2**63), 2**63)


def number(text: str) -> int | float:
    if not NUMBER.fullmatch(text):
        raise ValueError("not a number")
    plain = text.replace(",", "")
    if WHOLE.fullmatch(plain):
        value = int(plain)
        if value not in INT64:
            raise ValueError("a whole number beyond 64 bits (keep the field text)")
        return value
    value = float(plain)
    if not math.isfinite(value):
        raise ValueError("too large for a number")
    return value


def day(text: str) -> date:
    match = DATE.fullmatch(text)
    if match is None:
        raise ValueError("not a date YYYY-MM-DD, YYYY-MM or YYYY")
    year, month, day_ = match.groups()
    return date(int(year), int(month or 1), int(day_ or 1))  # ValueError for 2021-02-30


def boolean(text: str) -> bool:
    lowered = text.lower()
    if lowered not in TRUE | FALSE:
        raise ValueError("not true/false, yes/no or 1/0")
    return lowered in TRUE


PARSERS = {"number": number, "date": day, "bool": boolean, "text": str}


def parse(kind: str, text: str) -> Any:
    """The cell's value as `kind` (ValueError when it is not one); None for an empty cell."""
    text = text.strip()
    return PARSERS[kind](text) if text else None


def fits(kind: str, text: str) -> bool:
    try:
        parse(kind, text)
    except ValueError:
        return False
    return True


def guess(cells: list[str]) -> str:
    """The narrowest kind every non-empty cell fits: bool, number, date, else text."""
    present = {cell.strip() for cell in cells} - {""}
    if not present:
        return "text"
    if {cell.lower() for cell in present} <= GUESSED_BOOLS:
        return "bool"
    if all(fits("number", cell) and not LEADING_ZERO.match(cell) for cell in present):
        return "number"
    if all(DAY.fullmatch(cell) and fits("date", cell) for cell in present):
        return "date"
    return "text"
