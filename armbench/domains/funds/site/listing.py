"""The screener's query string: check it, pick the matching funds in order.

`/funds?category=&family=&q=&expense_min=&expense_max=&min_rating=&max_minimum=&load=
&include_closed=&sort=&order=&page=`. Two defaults are the traps of real screeners: without
`include_closed` only funds open to new investors are listed, and without `sort` the order is
the hidden relevance score (highest first), which no column shows.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from armbench.domains.funds.site.catalog import Catalog
from armbench.domains.funds.site.fields import COLUMNS
from armbench.replicas.web.listing import BadQuery, ListQuery, choice, ordered_rows

RELEVANCE = "relevance"  # the default sort: a hidden column, never offered as a header
RATINGS = ["1", "2", "3", "4", "5"]
LOADS = {"none": "No load", "front": "Front-end load", "deferred": "Deferred load (CDSC)"}
TICKED = ("1", "on", "true", "yes")
UNTICKED = ("", "0", "off", "false", "no")


@dataclass(frozen=True)
class FundQuery(ListQuery):
    category: str = ""
    family: str = ""
    q: str = ""
    expense_min: float | None = None
    expense_max: float | None = None
    min_rating: int | None = None
    max_minimum: int | None = None
    load: str = ""
    include_closed: bool = False
    sort: str = RELEVANCE

    PATH = "/funds"
    COLUMNS = {column.key: column for column in COLUMNS}
    DEFAULT_SORT = RELEVANCE


LARGEST_NUMBER = 1e12  # past any fund's figure; larger ones would overflow the integer columns


def number(params: Mapping[str, str], name: str, label: str, example: str) -> float | None:
    raw = params.get(name, "").strip().replace(",", "")
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (raw.isascii() and 0 <= value <= LARGEST_NUMBER):  # float() also reads "١" (Arabic-Indic) as 1
        raise BadQuery(f"{label} must be a number from 0, e.g. {example}; got {raw!r}.")
    return value


def checkbox(params: Mapping[str, str], name: str) -> bool:
    value = params.get(name, "").strip().lower()
    if value not in TICKED + UNTICKED:
        raise BadQuery(f"{name} is a checkbox: send {name}=1 to tick it, or leave it out.")
    return value in TICKED


def parse_query(params: Mapping[str, str], catalog: Catalog) -> FundQuery:
    expense_min = number(params, "expense_min", "The lowest expense ratio (%)", "0.25")
    expense_max = number(params, "expense_max", "The highest expense ratio (%)", "0.75")
    if expense_min is not None and expense_max is not None and expense_min > expense_max:
        raise BadQuery(f"The expense ratio range is empty: from {expense_min:g}% to {expense_max:g}%.")
    minimum = number(params, "max_minimum", "The largest minimum investment ($)", "2500")
    rating = choice(params, "min_rating", "rating", RATINGS)
    return FundQuery(
        category=choice(params, "category", "category", catalog.categories),
        family=params.get("family", "").strip(),
        q=params.get("q", "").strip(),
        expense_min=expense_min,
        expense_max=expense_max,
        min_rating=int(rating) if rating else None,
        max_minimum=None if minimum is None else int(minimum),
        load=choice(params, "load", "load", list(LOADS)),
        include_closed=checkbox(params, "include_closed"),
        **FundQuery.parse_common(params),
    )


def conditions(query: FundQuery) -> list[pl.Expr]:
    found = [] if query.include_closed else [pl.col("status") == "open"]
    if query.category:
        found.append(pl.col("category") == query.category)
    if query.family:
        found.append(pl.col("family_lower").str.contains(query.family.lower(), literal=True))
    if query.q:
        text = query.q.lower()
        found.append(pl.col("name_lower").str.contains(text, literal=True)
                     | pl.col("symbol_lower").str.contains(text, literal=True))
    if query.expense_min is not None:
        found.append(pl.col("expense_ratio_pct") >= query.expense_min)
    if query.expense_max is not None:
        found.append(pl.col("expense_ratio_pct") <= query.expense_max)
    if query.min_rating is not None:
        found.append(pl.col("rating") >= query.min_rating)
    if query.max_minimum is not None:
        found.append(pl.col("min_investment_usd") <= query.max_minimum)
    if query.load:
        found.append(pl.col("load_type") == query.load)
    return found


def select(catalog: Catalog, query: FundQuery) -> list[int]:
    """Row indices matching `query`, in its order; unknowns last, ties by symbol."""
    found = conditions(query)
    return ordered_rows(catalog.frame, query, "symbol", RELEVANCE, where=found)
