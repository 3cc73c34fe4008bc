"""How the crashes site writes its values: cells, state slugs, the figures every table shows (the
columns of NHTSA's "Fatalities and Fatality Rates by State" table), the year page's sortable
columns (`?sort=&order=`) and the lines of a state's driver profile.

A cell is HTML (escaped text, or a link): rows are joined once when the site starts, so a page
request only picks an order.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from armbench.replicas.web.listing import Column, ListQuery
from armbench.replicas.web.record import Sections, Spec


def count(value: int) -> str:
    """3000 -> "3,000", as NHTSA's tables write counts."""
    return f"{value:,}"


def rate(value: float) -> str:
    """Rates with their two decimals: 1.1 -> "1.10"."""
    return f"{value:.2f}"


def percent(value: int) -> str:
    return f"{value}%"


def dollars(value: float) -> str:
    return f"${value:,.2f}"


def slug(state: str) -> str:
    """ "District of Columbia" -> "district-of-columbia": a state page's address."""
    return re.sub(r"[^a-z]+", "-", state.lower()).strip("-")


def state_href(state: str) -> str:
    return f"/states/{slug(state)}"


def row(header: str, cells: list[str]) -> Markup:
    """`<tr><th scope="row">header</th><td>..</td>...</tr>` from HTML pieces."""
    return Markup(f'<tr><th scope="row">{header}</th>' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")


def figure(key: str, header: str, noun: str, column: str, show: Callable[[Any], str]) -> Column:
    """A figure of a state-year (or of the nation's year): a number column, `show` writing it."""
    return Column(key, header, noun, column, "number", lambda r: show(r[column]))


# The figures every table shows, in table order: the columns of a state's and of the national
# page after the year, and of a year page after the state.
FIGURES: tuple[Column, ...] = (
    figure("fatalities", "Fatalities", "fatalities", "fatalities", count),
    figure("population", "Population (thousands)", "population", "population_thousands", count),
    figure("rate_population", "Fatalities per 100,000 population", "fatalities per 100,000 population",
           "fatality_rate_per_100k_pop", rate),
    figure("drivers", "Licensed drivers (thousands)", "licensed drivers", "licensed_drivers_thousands", count),
    figure("rate_drivers", "Fatalities per 100,000 licensed drivers", "fatalities per 100,000 licensed drivers",
           "fatality_rate_per_100k_drivers", rate),
    figure("vehicles", "Registered vehicles (thousands)", "registered vehicles", "registered_vehicles_thousands",
           count),
    figure("rate_vehicles", "Fatalities per 100,000 registered vehicles",
           "fatalities per 100,000 registered vehicles", "fatality_rate_per_100k_vehicles", rate),
    figure("vmt", "Vehicle miles traveled (billions)", "vehicle miles traveled", "vmt_billions", count),
    figure("rate_vmt", "Fatalities per 100 million VMT", "fatalities per 100 million vehicle miles traveled",
           "fatality_rate_per_100m_vmt", rate),
)


def figures_row(header: str, values: Mapping[str, Any]) -> Markup:
    """A table row: `header` (a state link or a year), then every figure."""
    return row(header, [column.cell(values) for column in FIGURES])


def state_link(state: str) -> str:
    return f'<a href="{state_href(state)}">{escape(state)}</a>'


# A year page's columns, in table order; `sort_column` is the crashes column sorted.
YEAR_COLUMNS: tuple[Column, ...] = (
    Column("state", "State", "state", "state", "text", lambda r: state_link(r["state"])),
    *FIGURES,
)


@dataclass(frozen=True)
class YearQuery(ListQuery):
    """A year page's query: `sort` (a column key), `order` (asc | desc); `page` is 1 (the table is
    one page; the shared parser reads it, so a malformed one is a 400 like anywhere else)."""

    sort: str = "fatalities"

    # Sort links are relative (`?sort=..&order=..`, or "" for the default order): the template
    # puts the year page's own path before them.
    PATH = ""
    COLUMNS = {column.key: column for column in YEAR_COLUMNS}
    DEFAULT_SORT = "fatalities"


def parse_year_query(params: Mapping[str, str]) -> YearQuery:
    """The year page's query string; BadQuery (a 400 page) for a sort or order it cannot honour.
    Other parameters are ignored."""
    return YearQuery(**YearQuery.parse_common(params))


# A state's driver profile (FiveThirtyEight's "bad-drivers" table), each line labelled with its
# source and year: the figures are of different years, and none is a series like the tables'.
PROFILE: Sections = ((
    "Driver profile (FiveThirtyEight, from NHTSA and NAIC figures of 2009-2012)",
    (
        Spec("Drivers involved in fatal collisions per billion miles (NHTSA, 2012)",
             ("drivers_in_fatal_collisions_per_billion_miles_2012",), lambda v: f"{v:.1f}"),
        Spec("Drivers in fatal collisions who were speeding (NHTSA, 2009)",
             ("pct_drivers_speeding_2009",), percent),
        Spec("Drivers in fatal collisions who were alcohol-impaired (NHTSA, 2012)",
             ("pct_drivers_alcohol_impaired_2012",), percent),
        Spec("Drivers in fatal collisions who were not distracted (NHTSA, 2012)",
             ("pct_drivers_not_distracted_2012",), percent),
        Spec("Drivers in fatal collisions with no previous accidents (NHTSA, 2012)",
             ("pct_drivers_no_previous_accidents_2012",), percent),
        Spec("Car insurance premium (NAIC, 2011)", ("car_insurance_premium_usd_2011",), dollars),
        Spec("Collision losses of insurers per insured driver (NAIC, 2010)",
             ("insurer_losses_per_insured_driver_usd_2010",), dollars),
    ),
),)
