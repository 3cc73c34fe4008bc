"""Read the crashes replica site into crash_query's rows (the contract: armbench/domains/parity.py).

Pages read, 52 in all:
- `/fatality-facts/`, the index: the link to every state's page.
- `/states/{slug}`, one per state: only a state's page shows its abbreviation and its driver
  profile, and its table holds all 20 of its years with every figure a year page shows, so the
  year pages (the same figures, without the abbreviation and profile) add nothing.
- `/national`: the United States' totals, every year on one page. They are also the footer row of
  every year page; the tool leaves them out on purpose ("No national totals").

Standard library and the reading kit (armbench/domains/reading.py) only: in the python sandbox,
where armbench is not installed, it runs after the kit's text (`parity.reader_source`).
"""
from __future__ import annotations

import re

from armbench.domains.reading import Page, fetch

TOOL = "crash_query"
TABLE = "crashes"  # the replica table these rows are, as derivations name it (derived solutions)
KEY = ("state", "year")
OUT_OF_TOOL = {"national": "No national totals"}

# The figures tables' column headers (a state's years, the national years) -> the tool's fields.
FIGURES = {
    "Year": "year",
    "Fatalities": "fatalities",
    "Population (thousands)": "population_thousands",
    "Fatalities per 100,000 population": "fatality_rate_per_100k_pop",
    "Licensed drivers (thousands)": "licensed_drivers_thousands",
    "Fatalities per 100,000 licensed drivers": "fatality_rate_per_100k_drivers",
    "Registered vehicles (thousands)": "registered_vehicles_thousands",
    "Fatalities per 100,000 registered vehicles": "fatality_rate_per_100k_vehicles",
    "Vehicle miles traveled (billions)": "vmt_billions",
    "Fatalities per 100 million VMT": "fatality_rate_per_100m_vmt",
}
# A state page's driver profile lines, by label -> the tool's fields.
PROFILE = {
    "Drivers involved in fatal collisions per billion miles (NHTSA, 2012)":
        "drivers_in_fatal_collisions_per_billion_miles_2012",
    "Drivers in fatal collisions who were speeding (NHTSA, 2009)": "pct_drivers_speeding_2009",
    "Drivers in fatal collisions who were alcohol-impaired (NHTSA, 2012)": "pct_drivers_alcohol_impaired_2012",
    "Drivers in fatal collisions who were not distracted (NHTSA, 2012)": "pct_drivers_not_distracted_2012",
    "Drivers in fatal collisions with no previous accidents (NHTSA, 2012)": "pct_drivers_no_previous_accidents_2012",
    "Car insurance premium (NAIC, 2011)": "car_insurance_premium_usd_2011",
    "Collision losses of insurers per insured driver (NAIC, 2010)": "insurer_losses_per_insured_driver_usd_2010",
}


def read_site(base: str) -> list[dict]:
    """Every state-year row (with its state's abbreviation and profile), then the national rows."""
    index = Page(fetch(f"{base}/fatality-facts/"))
    states = [href for href, _ in index.links if re.fullmatch(r"/states/[a-z-]+", href)]
    rows = [row for href in states for row in state_rows(Page(fetch(base + href)))]
    national = Page(fetch(f"{base}/national"))
    return rows + [{"state": "United States", **row, "out_of_tool": "national"}
                   for row in figures(national.tables[0])]


def state_rows(page: Page) -> list[dict]:
    """A state's years: its name is the page's heading; its abbreviation follows its name in the
    introduction ("New Mexico (NM): ..."); its profile is the same on each of its years."""
    name = page.headings[0]
    abbr = re.search(re.escape(name) + r" \(([A-Z]{2})\):", page.text)
    if abbr is None:
        raise ValueError(f"the page of {name} does not give its abbreviation as '{name} (XX):'")
    table, lines = page.tables
    profile = {PROFILE[label]: value for label, value in lines["body"]}
    return [{"state": name, "state_abbr": abbr.group(1), **row, **profile} for row in figures(table)]


def figures(table: dict) -> list[dict]:
    """A figures table's rows, by the field of each column's header."""
    (header,) = table["head"]
    fields = [FIGURES[title] for title in header]
    return [dict(zip(fields, cells, strict=True)) for cells in table["body"]]
