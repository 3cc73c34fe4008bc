"""The API's "advanced" source queries, which wbgapi uses for everything it reads:
`sources/2/concepts`, `sources/2/{concept}/{ids}` (one concept: its variables) and
`sources/2/{concept}/{ids}/{concept}/{ids}...` (two or more: data), an optional trailing `/data`.

WDI's concepts are Country, Series and Time; a Time id is "YR2020" (a bare year is accepted too).
Shapes follow the World Bank's documentation of these queries: a JSON object (not the v2 array)
whose `source` holds the concepts, variables or data.
"""
from __future__ import annotations

from typing import Any

from armbench.domains.worldbank.api.catalog import LAST_UPDATED, SOURCE_ID, SOURCE_NAME, Catalog
from armbench.domains.worldbank.api.data import blocks_for, page_rows
from armbench.domains.worldbank.api.paging import page_count, page_of
from armbench.domains.worldbank.api.params import ApiError, Query
from armbench.domains.worldbank.api.render import (
    NAMESPACE,
    XML_HEAD,
    attributes,
    element,
    json_body,
    number,
    tagged,
)
from armbench.domains.worldbank.api.resources import select

CONCEPTS = {"country": "Country", "series": "Series", "time": "Time"}


def paging(query: Query, total: int, with_date: bool = False) -> dict[str, Any]:
    head: dict[str, Any] = {
        "page": query.page,
        "pages": page_count(total, query.per_page),
        "per_page": query.per_page,
        "total": total,
    }
    if with_date:
        head["lastupdated"] = LAST_UPDATED
    return head


def body(query: Query, head: dict[str, Any], source: Any, xml_items: list[str]) -> str:
    if query.format == "json":
        return json_body({**head, "source": source})
    inner = "".join(xml_items)
    source_xml = tagged("source", attributes({"id": SOURCE_ID, "name": SOURCE_NAME}), inner)
    return f"{XML_HEAD}\n<wb:data {NAMESPACE}{attributes(head)}>{source_xml}</wb:data>"


def concepts(query: Query) -> str:
    items = [{"id": name, "value": name} for name in CONCEPTS.values()]
    page = page_of(items, query)
    source = [{"id": SOURCE_ID, "name": SOURCE_NAME, "concept": page}]
    return body(query, paging(query, len(items)), source,
                [element("concept", item) for item in page])


def year_of(token: str) -> str:
    """"YR2020" or "2020" -> "2020"."""
    token = token.strip()
    return token[2:] if token.upper().startswith("YR") else token


def variables_of(catalog: Catalog, concept: str) -> list[dict[str, str]]:
    if concept == "Country":
        return [{"id": code, "value": catalog.economies[code].name}
                for code in sorted(catalog.data_economies)]
    if concept == "Series":
        return [{"id": i.code, "value": i.name} for i in catalog.indicators.values()]
    return [{"id": f"YR{year}", "value": str(year)} for year in catalog.years]


def chosen(catalog: Catalog, concept: str, segment: str) -> list[dict[str, str]]:
    items = variables_of(catalog, concept)
    index = {item["id"].upper(): item for item in items}

    def find(token: str) -> dict[str, str] | None:
        if concept == "Country":
            economy = catalog.economy(token)
            return index.get(economy.code) if economy else None
        if concept == "Time":
            return index.get(f"YR{year_of(token)}")
        return index.get(token.strip().upper())

    return select(items, segment, find)


def variables(catalog: Catalog, concept: str, segment: str, query: Query) -> str:
    items = chosen(catalog, concept, segment)
    page = page_of(items, query)
    source = [{"id": SOURCE_ID, "name": SOURCE_NAME,
               "concept": [{"id": concept, "name": concept, "variable": page}]}]
    xml = [tagged("concept", attributes({"id": concept, "name": concept}),
                  "".join(element("variable", item) for item in page))]
    return body(query, paging(query, len(items)), source, xml)


def data(catalog: Catalog, segments: dict[str, str], query: Query) -> str:
    series = [catalog.indicators[i["id"].upper()]
              for i in chosen(catalog, "Series", segments.get("Series", "all"))]
    economies = [catalog.economies[i["id"]]
                 for i in chosen(catalog, "Country", segments.get("Country", "all"))]
    years = sorted((int(i["value"]) for i in chosen(catalog, "Time", segments.get("Time", "all"))),
                   reverse=True)
    blocks = [block for indicator in series
              for block in blocks_for(catalog, indicator, economies, years, query)]
    records = []
    for indicator, economy, year in page_rows(blocks, query):
        value = catalog.value(indicator.code, economy.code, year)
        records.append({
            "variable": [
                {"concept": "Country", "id": economy.code, "value": economy.name},
                {"concept": "Series", "id": indicator.code, "value": indicator.name},
                {"concept": "Time", "id": f"YR{year}", "value": str(year)},
            ],
            "value": number(value),
        })
    source = {"id": SOURCE_ID, "name": SOURCE_NAME, "data": records}
    xml = [tagged("data", "", "".join(element("variable", v) for v in r["variable"])
                  + element("value", r["value"])) for r in records]
    total = sum(len(block.years) for block in blocks)
    return body(query, paging(query, total, with_date=True), source, xml)


def advanced(catalog: Catalog, segments: list[str], query: Query) -> str:
    """`segments` follow `sources/2/`."""
    if segments and segments[-1].lower() == "data":
        segments = segments[:-1]
    if [s.lower() for s in segments[:1]] == ["concepts"]:
        return concepts(query)
    if not segments or len(segments) % 2:
        raise ApiError("invalid")
    pairs: dict[str, str] = {}
    for name, ids in zip(segments[::2], segments[1::2]):
        concept = CONCEPTS.get(name.lower())
        if concept is None or concept in pairs:
            raise ApiError("invalid")
        pairs[concept] = ids
    if len(pairs) == 1:
        ((concept, ids),) = pairs.items()
        return variables(catalog, concept, ids, query)
    return data(catalog, pairs, query)
