"""The two lists' query strings: check them, pick the matching rows in order.

- `/failed-bank-list?sort=&order=&page=`: failures only, as the FDIC's Failed Bank List is.
- `/bankfind?state=&year=&resolution=&name=&sort=&order=&page=`: BankFind's search, failures
  and assistance transactions alike unless `resolution` picks one (BankFind's own default: an
  assisted bank that stayed open is listed beside the failures).
What every list query shares (sorting, paging, links) is `armbench.replicas.web.listing`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from armbench.domains.banks.site.catalog import Catalog
from armbench.domains.banks.site.fields import BANKFIND_COLUMNS, FAILED_BANK_COLUMNS
from armbench.replicas.web.listing import BadQuery, ListQuery, choice, ordered_rows, whole_number

RESOLUTIONS = {"failure": "Failures only", "assistance": "Assistance transactions only"}


@dataclass(frozen=True)
class FailedBankQuery(ListQuery):
    sort: str = "closing"

    PATH = "/failed-bank-list"
    COLUMNS = {column.key: column for column in FAILED_BANK_COLUMNS}
    DEFAULT_SORT = "closing"


@dataclass(frozen=True)
class BankFindQuery(ListQuery):
    state: str = ""
    year: int | None = None
    resolution: str = ""
    name: str = ""
    sort: str = "effective"

    PATH = "/bankfind"
    COLUMNS = {column.key: column for column in BANKFIND_COLUMNS}
    DEFAULT_SORT = "effective"


def parse_failed_bank_query(params: Mapping[str, str]) -> FailedBankQuery:
    """Sort, order and page; other parameters are ignored."""
    return FailedBankQuery(**FailedBankQuery.parse_common(params))


def failed_banks(catalog: Catalog, query: FailedBankQuery) -> list[int]:
    """Every failure's row index, in the query's order; unknowns last, ties by name."""
    return ordered_rows(catalog.failures, query, "tie")


def parse_bankfind_query(params: Mapping[str, str], catalog: Catalog) -> BankFindQuery:
    year = params.get("year", "").strip()
    if year and whole_number(year) not in catalog.years:
        raise BadQuery(f"Unknown year {year[:40]!r}. Choose a year from the list: the FDIC's records run "
                       f"from {catalog.years[-1]} to {catalog.years[0]}.")
    return BankFindQuery(
        state=choice(params, "state", "state", catalog.states),
        year=whole_number(year) if year else None,
        resolution=choice(params, "resolution", "resolution", list(RESOLUTIONS)),
        name=params.get("name", "").strip(),
        **BankFindQuery.parse_common(params),
    )


def bankfind(catalog: Catalog, query: BankFindQuery) -> list[int]:
    """Row indices matching the search, in its order; unknowns last, ties by name."""
    found = []
    if query.state:
        found.append(pl.col("state") == query.state)
    if query.year is not None:
        found.append(pl.col("fail_year") == query.year)
    if query.resolution:
        found.append(pl.col("resolution_type") == query.resolution.upper())
    if query.name:
        found.append(pl.col("name_lower").str.contains(query.name.lower(), literal=True))
    return ordered_rows(catalog.frame, query, "tie", where=found)
