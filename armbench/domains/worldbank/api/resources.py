"""Metadata endpoints: country, region, incomeLevel, lendingType, indicator and source lists.

Each takes the id segment of the path (None or "all" = every record; else `;`-joined ids, matched
case-insensitively; any unknown id makes the whole request invalid, as on the real API).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from armbench.domains.worldbank.api.catalog import (
    LAST_UPDATED,
    SOURCE_ID,
    SOURCE_NAME,
    Catalog,
    Economy,
    Group,
    Indicator,
)
from armbench.domains.worldbank.api.paging import list_paging, page_of
from armbench.domains.worldbank.api.params import ApiError, Query
from armbench.domains.worldbank.api.render import XmlShape, v2_list

T = TypeVar("T")

COUNTRY = XmlShape("countries", "country")
REGION = XmlShape("regions", "region")
INCOME_LEVEL = XmlShape("incomeLevels", "incomeLevel", ("id", "iso2code"))
LENDING_TYPE = XmlShape("lendingTypes", "lendingType", ("id", "iso2code"))
INDICATOR = XmlShape("indicators", "indicator")
SOURCE = XmlShape("sources", "source")

SOURCE_RECORD = {
    "id": SOURCE_ID,
    "lastupdated": LAST_UPDATED,
    "name": SOURCE_NAME,
    "code": "WDI",
    "description": "",
    "url": "",
    "dataavailability": "Y",
    "metadataavailability": "Y",
    "concepts": "3",
}
FILTERS = ("region", "incomelevel", "lendingtype")


def split_ids(segment: str | None) -> list[str] | None:
    """None for every record; else the `;`-joined ids (an empty id is invalid)."""
    if segment is None or segment.strip().lower() == "all":
        return None
    ids = [part.strip() for part in segment.split(";")]
    if not all(ids):
        raise ApiError("invalid")
    return ids


def select(items: list[T], segment: str | None, find: Callable[[str], T | None]) -> list[T]:
    """The items the id segment names, in catalog order."""
    ids = split_ids(segment)
    if ids is None:
        return items
    chosen = []
    for token in ids:
        item = find(token)
        if item is None:
            raise ApiError("invalid")
        chosen.append(item)
    return [item for item in items if item in chosen]


def by_code(items: Iterable[T], code: Callable[[T], str]) -> Callable[[str], T | None]:
    lookup = {code(item).upper(): item for item in items}
    return lambda token: lookup.get(token.upper())


def group_json(group: Group) -> dict[str, str]:
    return {"id": group.code, "iso2code": group.iso2, "value": group.name}


def country_json(economy: Economy) -> dict[str, Any]:
    return {
        "id": economy.code,
        "iso2Code": economy.iso2,
        "name": economy.name,
        "region": group_json(economy.region),
        "adminregion": group_json(economy.admin_region),
        "incomeLevel": group_json(economy.income_level),
        "lendingType": group_json(economy.lending_type),
        "capitalCity": economy.capital_city,
        "longitude": economy.longitude,
        "latitude": economy.latitude,
    }


def indicator_json(indicator: Indicator) -> dict[str, Any]:
    return {
        "id": indicator.code,
        "name": indicator.name,
        "unit": "",
        "source": {"id": SOURCE_ID, "value": SOURCE_NAME},
        "sourceNote": indicator.source_note,
        "sourceOrganization": indicator.source_organization,
        "topics": [],
    }


def filtered_economies(catalog: Catalog, query: Query) -> list[Economy]:
    """The `region`, `incomeLevel` and `lendingType` filters: `;`-joined codes, ANDed together."""
    economies = list(catalog.economies.values())
    for kind in FILTERS:
        codes = split_ids(getattr(query, kind))
        if codes is None:
            continue
        allowed: set[str] = set()
        for code in codes:
            members = catalog.members(kind, code)
            if members is None:
                raise ApiError("invalid")
            allowed |= members
        economies = [e for e in economies if e.code in allowed]
    return economies


def listing(query: Query, shape: XmlShape, records: list[dict[str, Any]],
            all_strings: bool = False) -> str:
    paging = list_paging(query, len(records), all_strings=all_strings)
    return v2_list(query.format, shape, paging, page_of(records, query))


def countries(catalog: Catalog, segment: str | None, query: Query) -> str:
    economies = select(filtered_economies(catalog, query), segment, catalog.economy)
    return listing(query, COUNTRY, [country_json(e) for e in economies])


def regions(catalog: Catalog, segment: str | None, query: Query) -> str:
    chosen = select(catalog.regions, segment, by_code(catalog.regions, lambda r: r["code"]))
    records = [{"id": r["id"], "code": r["code"], "iso2code": r["iso2_code"], "name": r["name"]}
               for r in chosen]
    return listing(query, REGION, records, all_strings=True)


def income_levels(catalog: Catalog, segment: str | None, query: Query) -> str:
    levels = catalog.income_levels
    chosen = select(levels, segment, by_code(levels, lambda g: g.code))
    return listing(query, INCOME_LEVEL, [group_json(g) for g in chosen], all_strings=True)


def lending_types(catalog: Catalog, segment: str | None, query: Query) -> str:
    types = catalog.lending_types
    chosen = select(types, segment, by_code(types, lambda g: g.code))
    return listing(query, LENDING_TYPE, [group_json(g) for g in chosen], all_strings=True)


def indicators(catalog: Catalog, segment: str | None, query: Query) -> str:
    chosen = select(list(catalog.indicators.values()), segment, catalog.indicator)
    return listing(query, INDICATOR, [indicator_json(i) for i in chosen])


def sources(catalog: Catalog, segment: str | None, query: Query) -> str:
    chosen = select([SOURCE_RECORD], segment, lambda token: SOURCE_RECORD
                    if token == SOURCE_ID else None)
    return listing(query, SOURCE, chosen, all_strings=True)
