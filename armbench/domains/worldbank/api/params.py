"""Query-string parameters: names are case-insensitive; a bad value is an ApiError, never a crash.

The real API answers a bad id or parameter value with HTTP 200 and message 120 ("Invalid value"),
an unknown `source` with HTTP 400 and an HTML "Request Error" page, and a language it does not
serve with message 150.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from armbench.domains.worldbank.api.catalog import SOURCE_ID
from armbench.replicas.web.listing import whole_number

DEFAULT_PER_PAGE = 50
DATE_PATTERN = re.compile(r"(\d{4})(?::(\d{4}))?", re.ASCII)  # ASCII digits: \d alone matches "٢٠٢٠" too


class ApiError(Exception):
    """`kind` is one of: invalid (message 120), language (message 150), bad_request (HTTP 400
    Request Error page), not_found (HTTP 404 Request Error page)."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


@dataclass(frozen=True)
class Query:
    format: str  # "json" or "xml"
    page: int
    per_page: int
    date: tuple[int, int] | None
    mrv: int | None
    mrnev: int | None
    footnote: bool
    region: str | None
    incomelevel: str | None
    lendingtype: str | None


def lowercase_keys(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Parameter names as the API treats them: case-insensitive; the last one wins."""
    return {key.lower(): value for key, value in items}


def positive_int(raw: str | None, default: int | None) -> int | None:
    if raw is None or raw == "":
        return default
    number = whole_number(raw.strip())
    if number is None or number < 1:
        raise ApiError("invalid")
    return number


def date_range(raw: str | None) -> tuple[int, int] | None:
    if raw is None or raw == "":
        return None
    match = DATE_PATTERN.fullmatch(raw.strip())
    if match is None:
        raise ApiError("invalid")
    start = int(match.group(1))
    end = int(match.group(2) or start)
    if end < start:
        raise ApiError("invalid")
    return start, end


def output_format(raw: str | None) -> str:
    """JSON when asked for; XML otherwise, as the real API defaults to."""
    return "json" if (raw or "").strip().lower() == "json" else "xml"


def parse_query(params: dict[str, str]) -> Query:
    """Check every parameter the replica understands; others are ignored, as the API does."""
    source = params.get("source")
    if source is not None and source.strip() != SOURCE_ID:
        raise ApiError("bad_request")
    # No upper bound: the real API's largest page is unknown, and clients ask for 25,000 to 50,000
    # rows (pandas-datareader, the R clients); `whole_number` caps it at 9 digits, a page is a slice.
    per_page = positive_int(params.get("per_page"), DEFAULT_PER_PAGE)
    return Query(
        format=output_format(params.get("format")),
        page=positive_int(params.get("page"), 1),
        per_page=per_page,
        date=date_range(params.get("date")),
        mrv=positive_int(params.get("mrv"), None),
        mrnev=positive_int(params.get("mrnev"), None),
        footnote=(params.get("footnote") or "").strip().lower() == "y",
        region=params.get("region") or None,
        incomelevel=params.get("incomelevel") or None,
        lendingtype=params.get("lendingtype") or None,
    )
