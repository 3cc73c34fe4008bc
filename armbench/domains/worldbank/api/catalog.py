"""The `wb_*` tables as the lookups the API needs: economies by code, group members, values.

Codes are matched case-insensitively, as the real API does; an economy is found by its ISO3 code
or its World Bank 2-character code.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from armbench.domains.worldbank import TABLES

SOURCE_ID = "2"
SOURCE_NAME = "World Development Indicators"
# The date of the values snapshot (datasets/world-development-indicators, 2026-07-01).
LAST_UPDATED = "2026-07-01"
# Income groups that are unions of the groups economies are classified in.
INCOME_UNIONS = {"MIC": ("LMC", "UMC"), "LMY": ("LIC", "LMC", "UMC")}


@dataclass(frozen=True)
class Group:
    """A region, income level or lending type as the API names it."""

    code: str
    iso2: str
    name: str


NO_GROUP = Group("", "", "")


@dataclass(frozen=True)
class Economy:
    code: str
    iso2: str
    name: str
    is_aggregate: bool
    region: Group
    admin_region: Group
    income_level: Group
    lending_type: Group
    capital_city: str
    longitude: str
    latitude: str


@dataclass(frozen=True)
class Indicator:
    code: str
    name: str
    source_note: str
    source_organization: str


@dataclass(frozen=True)
class Catalog:
    economies: dict[str, Economy]  # by upper-case ISO3 code, in code order
    iso2_to_code: dict[str, str]
    regions: list[dict[str, str]]
    income_levels: list[Group]
    lending_types: list[Group]
    indicators: dict[str, Indicator]  # by upper-case code, in code order
    values: dict[str, dict[str, dict[int, float]]]  # indicator -> economy -> year -> value
    years: tuple[int, ...]  # the source's time dimension, ascending
    data_economies: tuple[str, ...]  # economies with data, in the API's data order

    def economy(self, token: str) -> Economy | None:
        key = token.strip().upper()
        return self.economies.get(self.iso2_to_code.get(key, key))

    def indicator(self, token: str) -> Indicator | None:
        return self.indicators.get(token.strip().upper())

    def value(self, indicator: str, economy: str, year: int) -> float | None:
        """The published value, or None where the data has none."""
        return self.values.get(indicator, {}).get(economy, {}).get(year)

    def members(self, kind: str, code: str) -> set[str] | None:
        """Codes of the economies in a region, income level or lending type; None if unknown."""
        code = code.strip().upper()
        countries = [e for e in self.economies.values() if not e.is_aggregate]
        if kind == "region":
            found = {e.code for e in countries if code in (e.region.code, e.admin_region.code)}
        elif kind == "incomelevel":
            wanted = INCOME_UNIONS.get(code, (code,))
            found = {e.code for e in countries if e.income_level.code in wanted}
        else:
            found = {e.code for e in countries if e.lending_type.code == code}
        return found or None


def group_lookup(table: str) -> dict[str, Group]:
    return {
        row["code"]: Group(row["code"], row["iso2_code"], row["name"])
        for row in TABLES.load(table).to_dicts()
    }


def economy_from_row(row: dict, regions: dict[str, Group], incomes: dict[str, Group],
                     lendings: dict[str, Group]) -> Economy:
    if row["is_aggregate"]:
        region = Group("NA", "NA", "Aggregates")
        income = Group("NA", "NA", "Aggregates")
        lending = Group("", "", "Aggregates")
    else:
        region = regions[row["region_code"]]
        income = incomes[row["income_level_code"]]
        lending = lendings[row["lending_type_code"]]
    return Economy(
        code=row["code"],
        iso2=row["iso2_code"],
        name=row["name"],
        is_aggregate=row["is_aggregate"],
        region=region,
        admin_region=regions.get(row["admin_region_code"] or "", NO_GROUP),
        income_level=income,
        lending_type=lending,
        capital_city=row["capital_city"] or "",
        longitude=row["longitude"] or "",
        latitude=row["latitude"] or "",
    )


def load_values() -> dict[str, dict[str, dict[int, float]]]:
    frame = TABLES.load("wb_values")
    values: dict[str, dict[str, dict[int, float]]] = {}
    for indicator, country, year, value in zip(
        frame["indicator"].to_list(), frame["country"].to_list(),
        frame["year"].to_list(), frame["value"].to_list(),
    ):
        values.setdefault(indicator, {}).setdefault(country, {})[year] = value
    return values


def data_order(economies: dict[str, Economy], with_data: set[str]) -> tuple[str, ...]:
    """Aggregates first, then economies, each by name ignoring case, as the real API lists data."""
    chosen = [economies[code] for code in with_data]
    chosen.sort(key=lambda e: (not e.is_aggregate, e.name.casefold(), e.code))
    return tuple(e.code for e in chosen)


@cache
def catalog() -> Catalog:
    regions = group_lookup("wb_regions")
    incomes = group_lookup("wb_income_levels")
    lendings = group_lookup("wb_lending_types")
    economies = {
        row["code"]: economy_from_row(row, regions, incomes, lendings)
        for row in TABLES.load("wb_countries").sort("code").to_dicts()
    }
    values = load_values()
    years_seen = {year for series in values.values() for by_year in series.values()
                  for year in by_year}
    with_data = {code for series in values.values() for code in series}
    indicators = {
        row["code"].upper(): Indicator(row["code"], row["name"], row["source_note"],
                                       row["source_organization"])
        for row in TABLES.load("wb_indicators").sort("code").to_dicts()
    }
    return Catalog(
        economies=economies,
        iso2_to_code={e.iso2.upper(): e.code for e in economies.values()},
        regions=TABLES.load("wb_regions").to_dicts(),
        income_levels=list(incomes.values()),
        lending_types=list(lendings.values()),
        indicators=indicators,
        values=values,
        years=tuple(range(min(years_seen), max(years_seen) + 1)),
        data_economies=data_order(economies, with_data),
    )
