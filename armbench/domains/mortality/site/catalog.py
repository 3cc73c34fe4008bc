"""Every page's content, prepared once per process (the table is small): a request only looks a key
up and, on a cause page, picks one of the orders computed here.

Table rows are HTML already (`fields.row`), in the exact shape the site's scrapers read.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import polars as pl
from markupsafe import Markup

from armbench.domains.mortality import TABLES
from armbench.domains.mortality.site.fields import (
    CAUSE_COLUMNS,
    cause_href,
    deaths,
    link,
    rate,
    row,
    slug,
)

ORDERS = ("asc", "desc")
ALL_CAUSES = "All causes"


@dataclass(frozen=True)
class CauseYear:
    united_states: tuple[str, str]  # the national (rate, deaths), as shown
    rows: dict[tuple[str, str], list[Markup]]  # (sort key, order) -> every state's row, in that order


@dataclass(frozen=True)
class Cause:
    name: str  # "Cancer"
    title: str  # the NCHS 113-cause list's: "Malignant neoplasms (C00-C97)"
    years: dict[int, CauseYear]
    national: list[Markup]  # the United States' rows, one per year, oldest first


@dataclass(frozen=True)
class StateYear:
    causes: list[Markup]  # the ten causes, ranked by deaths
    all_causes: Markup


@dataclass(frozen=True)
class State:
    name: str
    years: dict[int, StateYear]


@dataclass(frozen=True)
class Catalog:
    years: tuple[int, ...]  # oldest first
    causes: dict[str, Cause]  # by slug; All causes first, then by U.S. deaths in the latest year
    states: dict[str, State]  # by slug, A to Z: the 50 states and the District of Columbia


def cause_years(rows: pl.DataFrame) -> dict[int, CauseYear]:
    """One cause's state rows in every (column, order) per year; ties by state name."""
    states = rows.filter(~pl.col("is_national_total")).with_row_index("row")
    rendered = [row(CAUSE_COLUMNS[0].cell(r), [column.cell(r) for column in CAUSE_COLUMNS[1:]])
                for r in states.iter_rows(named=True)]
    national = {r["year"]: (rate(r["age_adjusted_rate_per_100k"]), deaths(r["deaths"]))
                for r in rows.filter(pl.col("is_national_total")).iter_rows(named=True)}
    pages = {year: CauseYear(figures, {}) for year, figures in sorted(national.items())}
    for column in CAUSE_COLUMNS:
        key = pl.col(column.sort_column)
        if column.kind == "text":
            key = key.str.to_lowercase()
        for order in ORDERS:
            ordered = states.sort([pl.col("year"), key, pl.col("state")], descending=[False, order == "desc", False])
            grouped = ordered.group_by("year", maintain_order=True).agg(pl.col("row"))
            for year, indices in grouped.iter_rows():
                pages[year].rows[(column.key, order)] = [rendered[index] for index in indices]
    return pages


def national_rows(rows: pl.DataFrame) -> list[Markup]:
    return [row(link(cause_href(r["cause"], r["year"]), str(r["year"])),
                [deaths(r["deaths"]), rate(r["age_adjusted_rate_per_100k"])])
            for r in rows.filter(pl.col("is_national_total")).sort("year").iter_rows(named=True)]


def state_pages(table: pl.DataFrame) -> dict[str, State]:
    """Each state's years, A to Z and oldest first: the ten causes by deaths (most first; equal
    counts share a rank and go by cause name), and all causes."""
    states_rows = table.filter(~pl.col("is_national_total"))
    whole = {(r["state"], r["year"]): r for r in states_rows.filter(pl.col("cause") == ALL_CAUSES).iter_rows(named=True)}
    causes = (states_rows.filter(pl.col("cause") != ALL_CAUSES)
              .with_columns(rank=pl.col("deaths").rank("min", descending=True).over("state", "year"))
              .sort(["state", "year", "deaths", "cause"], descending=[False, False, True, False]))
    ranked: dict[str, dict[int, list[Markup]]] = {}
    for r in causes.iter_rows(named=True):
        ranked.setdefault(r["state"], {}).setdefault(r["year"], []).append(row(str(r["rank"]), cause_cells(r)))
    return {slug(name): State(name, {year: StateYear(rows, row("", cause_cells(whole[name, year])))
                                     for year, rows in years.items()})
            for name, years in ranked.items()}


def cause_cells(r: dict) -> list[str]:
    return [link(cause_href(r["cause"], r["year"]), r["cause"]), deaths(r["deaths"]),
            rate(r["age_adjusted_rate_per_100k"])]


@cache
def catalog() -> Catalog:
    table = TABLES.load("mortality")
    latest = table["year"].max()
    order = (table.filter(pl.col("is_national_total") & (pl.col("year") == latest))
             .sort("deaths", descending=True)["cause"].to_list())
    causes = {}
    for name in order:
        rows = table.filter(pl.col("cause") == name)
        causes[slug(name)] = Cause(name, rows["cause_113_name"][0], cause_years(rows), national_rows(rows))
    return Catalog(years=tuple(sorted(table["year"].unique().to_list())), causes=causes, states=state_pages(table))
