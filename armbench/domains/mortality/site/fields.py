"""How the mortality site writes its addresses and values: slugs and page links, rates and death
counts, and the cause page's sortable columns and query (`?year=&sort=&order=`).

A cell is HTML (escaped text, or a link): rows are joined once when the site starts, so a page
request only picks a year and an order. The tool's `source_url` uses the same links.
"""
from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

from markupsafe import Markup, escape

from armbench.replicas.web.listing import BadQuery, Column, ListQuery, whole_number


def slug(name: str) -> str:
    """ "Alzheimer's disease" -> "alzheimers-disease", "District of Columbia" -> "district-of-columbia"."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower().replace("'", "")).strip("-")


def state_href(state: str, year: int) -> str:
    return f"/states/{slug(state)}/{year}"


def cause_href(cause: str, year: int) -> str:
    return f"/causes/{slug(cause)}?year={year}"


def national_href(cause: str) -> str:
    return f"/national/{slug(cause)}"


def link(href: str, text: str) -> str:
    return f'<a href="{escape(href)}">{escape(text)}</a>'


def rate(value: float) -> str:
    """An age-adjusted rate per 100,000, with its one decimal: 152.5."""
    return f"{value:.1f}"


def deaths(value: int) -> str:
    """A death count with thousands separators, as the CDC's tables write it: 599,108."""
    return f"{value:,}"


def row(header: str, cells: list[str]) -> Markup:
    """`<tr><th scope="row">header</th><td>..</td>...</tr>` from HTML pieces."""
    return Markup(f'<tr><th scope="row">{header}</th>' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")


# The cause page's columns, in table order; `sort_column` is the mortality column sorted. A row is
# one state's values of the page's cause and year.
CAUSE_COLUMNS: tuple[Column, ...] = (
    Column("state", "State", "state", "state", "text", lambda r: link(state_href(r["state"], r["year"]), r["state"])),
    Column("rate", "Age-adjusted death rate", "age-adjusted death rate", "age_adjusted_rate_per_100k", "number",
           lambda r: rate(r["age_adjusted_rate_per_100k"])),
    Column("deaths", "Deaths", "number of deaths", "deaths", "number", lambda r: deaths(r["deaths"])),
)


@dataclass(frozen=True)
class CauseQuery(ListQuery):
    """A cause page's query: `year` (default: the latest), `sort` (a column key; default the state,
    A to Z), `order` (asc | desc); `page` is 1 (the table is one page; the shared parser reads it,
    so a malformed one is a 400 like anywhere else)."""

    sort: str = "state"
    order: str = "asc"
    year: int = 0

    COLUMNS = {column.key: column for column in CAUSE_COLUMNS}
    DEFAULT_SORT = "state"

    def href(self, **changes: object) -> Markup:
        """This page's query with `changes`: year, sort and order always written out. They are a
        year and fixed words, so the link is written as is (a bare &, as HTML allows)."""
        query = replace(self, **changes)
        return Markup(f"?year={query.year}&sort={query.sort}&order={query.order}")

    def header_href(self, column: Column) -> Markup:
        """The column header's link: sort by it; on the current sort column, the other order."""
        if column.key == self.sort:
            return self.href(order="asc" if self.order == "desc" else "desc")
        return self.href(sort=column.key, order=column.default_order)


def parse_cause_query(params: Mapping[str, str], years: Collection[int]) -> CauseQuery:
    """The cause page's query string; BadQuery (a 400 page) for a year the site does not hold or a
    sort or order it cannot honour. Other parameters are ignored."""
    text = params.get("year", "").strip()
    year = whole_number(text, max_digits=4) if text else max(years)
    if year not in years:
        raise BadQuery(f"Unknown year {text[:40]!r}: this site holds the years {min(years)} to {max(years)}.")
    return CauseQuery(year=year, **CauseQuery.parse_common(params))
