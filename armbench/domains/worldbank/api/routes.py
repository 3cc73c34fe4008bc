"""Path dispatch, case-insensitive as on the real API: `/v2/[en/]{resource}[/{ids}[/...]]`.

Resource names are accepted singular or plural (`country`, `countries`, `incomeLevels`, ...), as
the API and its clients use both. Every outcome is a `Reply`; nothing here raises.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from armbench.domains.worldbank.api import resources
from armbench.domains.worldbank.api.advanced import advanced
from armbench.domains.worldbank.api.catalog import SOURCE_ID, Catalog, catalog
from armbench.domains.worldbank.api.data import indicator_data
from armbench.domains.worldbank.api.params import ApiError, lowercase_keys, output_format, parse_query
from armbench.domains.worldbank.api.render import media_type, message_body
from armbench.domains.worldbank.api.request_error import REQUEST_ERROR_PAGE

log = logging.getLogger(__name__)

LANGUAGE = "en"
LISTS = {
    "country": resources.countries,
    "region": resources.regions,
    "incomelevel": resources.income_levels,
    "lendingtype": resources.lending_types,
    "indicator": resources.indicators,
    "source": resources.sources,
}
NAMES = {**{name: name for name in LISTS}, **{f"{name}s": name for name in LISTS},
         "countries": "country"}
STATUS_OF = {"bad_request": 400, "not_found": 404}


@dataclass(frozen=True)
class Reply:
    status: int
    body: str
    media_type: str


def resource_name(segment: str) -> str | None:
    return NAMES.get(segment.lower())


def dispatch(tables: Catalog, segments: list[str], params: dict[str, str]) -> str:
    if [s.lower() for s in segments[:1]] != ["v2"]:
        raise ApiError("not_found")
    segments = segments[1:]
    if segments and len(segments[0]) == 2 and segments[0].isalpha():
        if segments[0].lower() != LANGUAGE:
            raise ApiError("language")
        segments = segments[1:]
    name = resource_name(segments[0]) if segments else None
    if name is None:
        raise ApiError("not_found")
    query = parse_query(params)
    rest = segments[1:]
    if len(rest) <= 1:
        return LISTS[name](tables, rest[0] if rest else None, query)
    if name == "country" and len(rest) == 3 and resource_name(rest[1]) == "indicator":
        return indicator_data(tables, rest[0], rest[2], query)
    if name == "source" and rest[0] == SOURCE_ID:
        return advanced(tables, rest[1:], query)
    if name == "source":
        raise ApiError("invalid")
    raise ApiError("not_found")


def respond(path: str, items: Iterable[tuple[str, str]]) -> Reply:
    """The reply to GET `path` with these query parameters."""
    params = lowercase_keys(items)
    fmt = output_format(params.get("format"))
    try:
        body = dispatch(catalog(), [s for s in path.split("/") if s], params)
    except ApiError as error:
        if error.kind in STATUS_OF:
            return Reply(STATUS_OF[error.kind], REQUEST_ERROR_PAGE, "text/html")
        return Reply(200, message_body(fmt, error.kind), media_type(fmt))
    except Exception:  # the real API answers its own failures with this page, never a 500
        log.exception("worldbank replica failed on %s", path)
        return Reply(400, REQUEST_ERROR_PAGE, "text/html")
    return Reply(200, body, media_type(fmt))
