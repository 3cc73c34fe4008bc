"""What the World Bank tools share: resolving indicators, economies and groups given as codes or
names (a miss is a ToolError listing close matches), year checks and the optional value filter.

The tools read the `wb_*` tables through the replica's in-memory catalog (loaded straight from
Parquet, never over HTTP), so a tool and the API replica cannot disagree about the data.
"""
from __future__ import annotations

import difflib
import operator
from collections.abc import Callable
from typing import Annotated, Any

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from armbench.domains.worldbank import TABLES
from armbench.domains.worldbank.api.catalog import INCOME_UNIONS, Economy, Indicator, catalog
from armbench.tools.base import ToolError

COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
    "eq": operator.eq,
    "ne": operator.ne,
}
MAX_MATCHES = 8
GROUP_TABLES = {"region": "wb_regions", "income_group": "wb_income_levels",
                "lending_type": "wb_lending_types"}


class ValueFilter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: Annotated[str, WithJsonSchema({"type": "string", "enum": list(COMPARISONS)})] = Field(
        description="gt, gte, lt, lte, eq or ne."
    )
    value: float = Field(description="The number to compare each value with.")


def key(text: str) -> str:
    return " ".join(text.casefold().split())


def close_matches(token: str, entries: list[tuple[str, str]]) -> list[str]:
    """Labels of the (code, name) entries whose code or name contains every word of the token
    or looks like it; a label is "CODE: name"."""
    by_key = {}
    for code, name in entries:
        label = f"{code}: {name.strip()}"
        by_key.setdefault(key(code), label)
        by_key.setdefault(key(name), label)
    wanted = key(token)
    words = wanted.split()
    hits = [label for text, label in by_key.items() if words and all(w in text for w in words)]
    hits += [by_key[text] for text in difflib.get_close_matches(wanted, by_key, MAX_MATCHES, 0.6)]
    return list(dict.fromkeys(hits))[:MAX_MATCHES]


def indicator(token: str) -> Indicator:
    data = catalog()
    found = data.indicator(token) or next(
        (i for i in data.indicators.values() if key(i.name) == key(token)), None
    )
    if found is None:
        entries = [(i.code, i.name) for i in data.indicators.values()]
        raise ToolError(
            "unknown_indicator",
            f"no indicator {token!r}; give a code or the exact name",
            close_matches=close_matches(token, entries)
            or [f"{code}: {name}" for code, name in entries],
        )
    return found


def economy(token: str) -> Economy:
    data = catalog()
    found = data.economy(token) or next(
        (e for e in data.economies.values() if key(e.name) == key(token)), None
    )
    if found is None:
        raise ToolError(
            "unknown_economy",
            f"no economy {token!r}; give an ISO3 or World Bank code or the exact name "
            "(list_economies lists them)",
            close_matches=close_matches(token, [(e.code, e.name) for e in data.economies.values()]),
        )
    return found


def economies(tokens: list[str]) -> list[Economy]:
    return list(dict.fromkeys(economy(token) for token in tokens))


def group_choices(kind: str) -> dict[str, set[str]]:
    """Group label -> the classification codes it stands for (read from the tables directly, so
    tool descriptions need not load the catalog)."""
    table = TABLES.load(GROUP_TABLES[kind])
    if kind == "region":  # the geographic regions; the other region codes are aggregates
        table = table.filter(pl.col("id") != "")
    return {f"{code}: {name.strip()}": set(INCOME_UNIONS.get(code, (code,)))
            for code, name in zip(table["code"], table["name"])}


def group(kind: str, token: str) -> tuple[str, set[str]]:
    """(label, codes) of a region, income group or lending type given by code or name."""
    choices = group_choices(kind)
    for label, codes in choices.items():
        code, name = label.split(": ", 1)
        if key(token) in (key(code), key(name)):
            return label, codes
    raise ToolError(f"unknown_{kind}", f"no {kind.replace('_', ' ')} {token!r}",
                    valid_choices=list(choices))


def in_groups(economy_: Economy, chosen: dict[str, set[str]]) -> bool:
    codes = {
        "region": economy_.region.code,
        "income_group": economy_.income_level.code,
        "lending_type": economy_.lending_type.code,
    }
    return all(codes[kind] in allowed for kind, allowed in chosen.items())


def year(value: int, at: str) -> int:
    years = catalog().years
    if not years[0] <= value <= years[-1]:
        raise ToolError("bad_year", f"{at}: {value} is outside the data's years",
                        valid_range=[years[0], years[-1]])
    return value


def value_test(spec: ValueFilter | None) -> Callable[[float], bool]:
    if spec is None:
        return lambda value: True
    if spec.op not in COMPARISONS:
        raise ToolError("unknown_op", f"value_filter.op: unknown op {spec.op!r}",
                        valid_choices=list(COMPARISONS))
    compare = COMPARISONS[spec.op]
    return lambda value: compare(value, spec.value)


def value_of(indicator_: Indicator, economy_: Economy, at_year: int) -> float | None:
    return catalog().value(indicator_.code, economy_.code, at_year)


def economy_ref(economy_: Economy) -> dict[str, Any]:
    return {"economy": economy_.code, "name": economy_.name.strip()}


def year_ranges(years: list[int]) -> list[str]:
    """[1960, 1961, 1962, 1990] -> ["1960-1962", "1990"]."""
    ranges: list[list[int]] = []
    for value in sorted(years):
        if ranges and value == ranges[-1][1] + 1:
            ranges[-1][1] = value
        else:
            ranges.append([value, value])
    return [f"{a}" if a == b else f"{a}-{b}" for a, b in ranges]
