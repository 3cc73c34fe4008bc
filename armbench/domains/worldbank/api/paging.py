"""Paging: which records a page holds, and the paging element in each endpoint's own types.

The types differ by endpoint in the real API (captured): country and indicator lists give
`per_page` as a string and the rest as numbers; region, income level, lending type and source
lists give all four as strings; indicator data gives numbers plus the source fields.
"""
from __future__ import annotations

import math
from typing import Any, TypeVar

from armbench.domains.worldbank.api.catalog import LAST_UPDATED, SOURCE_ID, SOURCE_NAME
from armbench.domains.worldbank.api.params import Query

T = TypeVar("T")

# The paging element of an indicator-data query that matched nothing (public fixtures of real
# responses); its data element is null.
EMPTY_DATA_PAGING = {
    "page": 0, "pages": 0, "per_page": 0, "total": 0, "sourceid": None, "lastupdated": None,
}


def page_of(items: list[T], query: Query) -> list[T]:
    start = (query.page - 1) * query.per_page
    return items[start : start + query.per_page]


def page_count(total: int, per_page: int) -> int:
    return math.ceil(total / per_page)


def list_paging(query: Query, total: int, *, all_strings: bool = False) -> dict[str, Any]:
    paging = {
        "page": query.page,
        "pages": page_count(total, query.per_page),
        "per_page": str(query.per_page),
        "total": total,
    }
    return {key: str(value) for key, value in paging.items()} if all_strings else paging


def data_paging(query: Query, total: int, *, single_indicator: bool) -> dict[str, Any]:
    return {
        "page": query.page,
        "pages": page_count(total, query.per_page),
        "per_page": query.per_page,
        "total": total,
        "sourceid": SOURCE_ID if single_indicator else None,
        "sourcename": SOURCE_NAME if single_indicator else None,
        "lastupdated": LAST_UPDATED,
    }
