"""Every page's content, prepared once per process (the tables are small): a request only looks a
key up and, on a year page, picks one of the orders computed here.

Table rows are HTML already (`fields.figures_row`), in the exact shape the site's scrapers read.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import polars as pl
from markupsafe import Markup

from armbench.domains.crashes import TABLES
from armbench.domains.crashes.site.fields import PROFILE, YEAR_COLUMNS, figures_row, slug, state_link
from armbench.replicas.web.record import Spec, sections

ORDERS = ("asc", "desc")


@dataclass(frozen=True)
class Year:
    rows: dict[tuple[str, str], list[Markup]]  # (sort key, order) -> every state's row, in that order
    total: Markup  # the United States row (South Carolina included)


@dataclass(frozen=True)
class State:
    name: str
    abbr: str
    rows: list[Markup]  # one per year, oldest first
    profile: list[tuple[str, list[tuple[Spec, str]]]]  # the driver profile's sections, as shown


@dataclass(frozen=True)
class Catalog:
    years: dict[int, Year]  # newest first
    states: dict[str, State]  # by slug, A to Z
    national: list[Markup]  # one per year, oldest first


def year_pages(crashes: pl.DataFrame, national: pl.DataFrame) -> dict[int, Year]:
    """Each year's state rows in every (column, order); ties by state."""
    frame = crashes.with_row_index("row")
    rendered = [figures_row(state_link(r["state"]), r) for r in crashes.iter_rows(named=True)]
    totals = {r["year"]: figures_row("United States", r) for r in national.iter_rows(named=True)}
    pages = {year: Year({}, totals[year]) for year in sorted(totals, reverse=True)}
    for column in YEAR_COLUMNS:
        key = pl.col(column.sort_column)
        if column.kind == "text":
            key = key.str.to_lowercase()
        for order in ORDERS:
            ordered = frame.sort([pl.col("year"), key, pl.col("state")], descending=[False, order == "desc", False])
            grouped = ordered.group_by("year", maintain_order=True).agg(pl.col("row"))
            for year, indices in grouped.iter_rows():
                pages[year].rows[(column.key, order)] = [rendered[index] for index in indices]
    return pages


def state_pages(crashes: pl.DataFrame, profiles: pl.DataFrame) -> dict[str, State]:
    profile_of = {p["state"]: p for p in profiles.iter_rows(named=True)}
    pages = {}
    for (name, abbr), years in crashes.sort("state", "year").group_by("state", "state_abbr", maintain_order=True):
        rows = [figures_row(str(r["year"]), r) for r in years.iter_rows(named=True)]
        pages[slug(name)] = State(name, abbr, rows, sections(PROFILE, profile_of[name]))
    return pages


@cache
def catalog() -> Catalog:
    crashes = TABLES.load("crashes")
    national = TABLES.load("crashes_national").sort("year")
    return Catalog(
        years=year_pages(crashes, national),
        states=state_pages(crashes, TABLES.load("crashes_driver_profiles")),
        national=[figures_row(str(r["year"]), r) for r in national.iter_rows(named=True)],
    )
