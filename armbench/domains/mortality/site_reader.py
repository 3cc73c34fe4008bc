"""Read the mortality replica site into mortality_query's rows (the contract: armbench/domains/parity.py).

Pages read, 1 + 11 causes x 19 years = 210:
- `/sosmap/`, the index: every cause's name, page and NCHS title (its cause_113_name).
- `/causes/{slug}?year={year}`, one per cause and year: every state's deaths and age-adjusted rate
  for that cause and year, and the United States' above the table. A cause's page without a year
  is its latest year, and its year links name the others.
These pages hold every row: a state's year page (its causes) would take 51 x 19 = 969 pages for the
same figures, and a cause's national page repeats the United States figures of its year pages.

Standard library and the reading kit (armbench/domains/reading.py) only: in the python sandbox,
where armbench is not installed, it runs after the kit's text (`parity.reader_source`).
"""
from __future__ import annotations

import re

from armbench.domains.reading import Page, fetch

TOOL = "mortality_query"
TABLE = "mortality"  # the replica table these rows are, as derivations name it (derived solutions)
KEY = ("state", "year", "cause")
OUT_OF_TOOL: dict[str, str] = {}

NATIONAL = re.compile(r"United States, (\d{4}): age-adjusted death rate ([\d.,]+), ([\d,]+) deaths")
# A cause page's column headers -> the tool's fields.
COLUMNS = {"State": "state", "Age-adjusted death rate": "age_adjusted_rate_per_100k", "Deaths": "deaths"}


def read_site(base: str) -> list[dict]:
    """Every cause's rows, year by year: the states' and the United States'."""
    index = Page(fetch(f"{base}/sosmap/"))
    rows = []
    for name, title, *_ in index.tables[0]["body"]:
        href = next(href for href, text in index.links if text == name and href.startswith("/causes/"))
        cause = {"cause": name, "cause_113_name": title}
        latest = Page(fetch(base + href))
        years = [link for link, text in latest.links if re.fullmatch(r"\d{4}", text)]  # not the sort links
        for page in [latest, *(Page(fetch(f"{base}{href}{link}")) for link in years)]:
            rows += year_rows(page, cause)
    return rows


def year_rows(page: Page, cause: dict) -> list[dict]:
    """One cause's year: the United States' figures (the line above the table), then each state's."""
    national = NATIONAL.search(page.text)
    if national is None:
        raise ValueError(f"the {cause['cause']} page {page.headings[0]!r} has no United States line")
    year, rate, deaths = national.groups()
    united_states = {"state": "United States", "year": year, "deaths": deaths,
                     "age_adjusted_rate_per_100k": rate, "is_national_total": True}
    (header,) = page.tables[0]["head"]
    fields = [COLUMNS[title] for title in header]
    states = [{**dict(zip(fields, cells, strict=True)), "year": year, "is_national_total": False}
              for cells in page.tables[0]["body"]]
    return [{**row, **cause} for row in [united_states, *states]]
