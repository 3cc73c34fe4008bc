"""Indicator data: `country/{codes|all}/indicator/{ids}` with date, mrv, mrnev, paging, footnote.

Every economy of the source gets a row for every year of the source's time range (1960-2025),
with a null value where the data has none, as the real API does. Rows go indicator by indicator,
then economies in the API's data order (aggregates first, each group by name), then years from
the latest down.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from armbench.domains.worldbank.api.catalog import Catalog, Economy, Indicator
from armbench.domains.worldbank.api.paging import EMPTY_DATA_PAGING, data_paging
from armbench.domains.worldbank.api.params import ApiError, Query
from armbench.domains.worldbank.api.render import XmlShape, number, v2_list
from armbench.domains.worldbank.api.resources import select, split_ids

DATA = XmlShape("data", "data", ())
Row = tuple[Indicator, Economy, int]


@dataclass(frozen=True)
class Block:
    """The rows of one indicator for one economy: its years, latest first."""

    indicator: Indicator
    economy: Economy
    years: list[int]


def data_economies(catalog: Catalog, segment: str) -> list[Economy]:
    """Economies the source has data for; a known code without data (e.g. AFR) is invalid."""
    ordered = [catalog.economies[code] for code in catalog.data_economies]
    with_data = set(catalog.data_economies)
    return select(
        ordered, segment,
        lambda token: e if (e := catalog.economy(token)) and e.code in with_data else None,
    )


def chosen_indicators(catalog: Catalog, segment: str) -> list[Indicator]:
    """Indicators in the order the request names them."""
    ids = split_ids(segment)
    if ids is None:  # the real API has no `indicator/all`
        raise ApiError("invalid")
    found = [catalog.indicator(token) for token in ids]
    if any(indicator is None for indicator in found):
        raise ApiError("invalid")
    return list(dict.fromkeys(found))


def years_asked(catalog: Catalog, query: Query) -> list[int]:
    """The source's years inside `date`, latest first."""
    first, last = query.date or (catalog.years[0], catalog.years[-1])
    return [year for year in reversed(catalog.years) if first <= year <= last]


def blocks_for(catalog: Catalog, indicator: Indicator, economies: list[Economy],
               years: list[int], query: Query) -> list[Block]:
    """mrv: the latest N years with a value for any of the economies; mrnev: each economy's
    latest N years with a value."""
    series = catalog.values.get(indicator.code, {})
    if query.mrv:
        filled = [y for y in years if any(y in series.get(e.code, {}) for e in economies)]
        years = filled[: query.mrv]
    blocks = []
    for economy in economies:
        by_year = series.get(economy.code, {})
        wanted = [y for y in years if y in by_year][: query.mrnev] if query.mrnev else years
        if wanted:
            blocks.append(Block(indicator, economy, wanted))
    return blocks


def page_rows(blocks: list[Block], query: Query) -> list[Row]:
    """The rows of the requested page, without listing the rows before it."""
    skip, rows = (query.page - 1) * query.per_page, []
    for block in blocks:
        if skip >= len(block.years):
            skip -= len(block.years)
            continue
        for year in block.years[skip:]:
            if len(rows) == query.per_page:
                return rows
            rows.append((block.indicator, block.economy, year))
        skip = 0
    return rows


def record(catalog: Catalog, row: Row, query: Query, several: bool) -> dict[str, Any]:
    indicator, economy, year = row
    value = catalog.value(indicator.code, economy.code, year)
    result: dict[str, Any] = {
        "indicator": {"id": indicator.code, "value": indicator.name},
        "country": {"id": economy.iso2, "value": economy.name},
        "countryiso3code": economy.code,
        "date": str(year),
        "value": number(value),
    }
    if several and value is None:  # captured: multi-indicator rows without a value carry it
        result["scale"] = ""
    result.update(unit="", obs_status="", decimal=0)
    if query.footnote:
        result["footnote"] = ""
    return result


def indicator_data(catalog: Catalog, economy_segment: str, indicator_segment: str,
                   query: Query) -> str:
    indicators = chosen_indicators(catalog, indicator_segment)
    economies = data_economies(catalog, economy_segment)
    years = years_asked(catalog, query)
    blocks = [block for indicator in indicators
              for block in blocks_for(catalog, indicator, economies, years, query)]
    total = sum(len(block.years) for block in blocks)
    if not total:
        return v2_list(query.format, DATA, EMPTY_DATA_PAGING, None)
    several = len(indicators) > 1
    page = [record(catalog, row, query, several) for row in page_rows(blocks, query)]
    paging = data_paging(query, total, single_indicator=not several)
    return v2_list(query.format, DATA, paging, page)
