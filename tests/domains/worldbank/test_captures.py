"""Every captured real API request, replayed against the replica: same status, same paging element
(keys, types, request-determined values), same record shapes, same record order, same error bodies.

Values themselves differ (the captures are from 2021 and 2024); the replica's values are checked
against the data in test_api.py and through the real clients in
test_clients.py.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from starlette.testclient import TestClient

from armbench.domains.worldbank.api.app import create_app
from armbench.domains.worldbank.api.catalog import catalog

CAPTURES = json.loads(
    (Path(__file__).parents[2] / "fixtures" / "worldbank_captures.json").read_text(encoding="utf-8")
)
# Captured ids the replica's data lacks, replaced by ones it has (same endpoint, same shape).
SUBSTITUTES = {"1.0.hcount.1.90usd": "SP.POP.TOTL"}


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app())


def local(url: str) -> str:
    parts = urlsplit(url)
    path = parts.path
    for captured, ours in SUBSTITUTES.items():
        path = path.replace(captured, ours)
    return f"{path}?{parts.query}" if parts.query else path


def kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def shape(value: Any) -> Any:
    """Keys in order and value types, recursively; a data value may be a number or null; a list is
    just a list (the replica's indicator `topics` are empty: the data has none)."""
    if isinstance(value, dict):
        return [
            (key, "number|null" if key == "value" and kind(v) in ("number", "null") else shape(v))
            for key, v in value.items()
            if key != "scale"  # the multi-indicator null-row quirk, tested on its own
        ]
    return kind(value)


def record_shapes(records: list[dict]) -> set[str]:
    return {json.dumps(shape(record)) for record in records}


def order_key(record: dict, indicators: list[str]) -> tuple:
    """The order the real API lists records in, per endpoint. Sources have none: two captured
    pages of /v2/sources list them in different orders."""
    if "dataavailability" in record:
        return ()
    if "countryiso3code" in record:
        position = catalog().data_economies.index(record["countryiso3code"])
        return indicators.index(record["indicator"]["id"]), position, -int(record["date"])
    return (record.get("code") or record["id"],)


def requested_indicators(url: str) -> list[str]:
    parts = urlsplit(url).path.split("/")
    return parts[-1].upper().split(";") if "indicators" in parts else []


@pytest.mark.parametrize("capture", CAPTURES["wbdata_go"], ids=lambda c: local(c["url"]))
def test_captured_request(client, capture):
    response = client.get(local(capture["url"]))
    assert response.status_code == capture["status"]
    if "body_text" in capture:  # the HTML Request Error page
        assert response.text == capture["body_text"]
        assert response.headers["content-type"].startswith(capture["content_type"])
        return
    assert response.headers["content-type"] == capture["content_type"]
    ours, theirs = response.json(), capture["body_json"]
    if "message" in theirs[0]:
        assert ours == [{"message": theirs[0]["message"][:1]}]
        return
    assert shape(ours[0]) == shape(theirs[0])
    for key in ("page", "per_page", "sourceid", "sourcename"):
        assert ours[0].get(key) == theirs[0].get(key)
    assert record_shapes(ours[1]) == record_shapes(theirs[1])
    indicators = requested_indicators(capture["url"])
    for records in (ours[1], theirs[1]):
        keys = [order_key(record, indicators) for record in records]
        assert keys == sorted(keys)


def fetch_all(client, path: str) -> list[dict]:
    body = client.get(path, params={"format": "json", "per_page": 32500}).json()
    assert int(body[0]["pages"]) == 1
    return body[1]


def test_classification_lists_match_their_captures(client):
    captured = CAPTURES["r_worldbank"]
    assert fetch_all(client, "/v2/incomeLevel") == captured["incomeLevel"]
    assert fetch_all(client, "/v2/lendingType") == captured["lendingType"]
    regions = fetch_all(client, "/v2/region")
    assert [(r["code"], r["id"], r["iso2code"]) for r in regions] == [
        (r["code"], r["id"], r["iso2code"]) for r in captured["region"]
    ]


def test_the_country_list_has_the_captured_economies_and_shape(client):
    captured = CAPTURES["r_worldbank"]["country"]
    countries = fetch_all(client, "/v2/country")
    assert [c["id"] for c in countries] == captured["ids"]
    assert record_shapes(countries) == record_shapes(captured["records"])


def test_a_whole_series_has_the_captured_shape_and_order(client):
    captured = CAPTURES["r_worldbank"]["country_US_indicator_NY.GDP.MKTP.CD"]
    rows = fetch_all(client, "/v2/country/US/indicator/NY.GDP.MKTP.CD")
    assert record_shapes(rows) == record_shapes(captured["records"])
    dates = [row["date"] for row in rows]
    assert dates == sorted(dates, reverse=True) and captured["dates"] == sorted(
        captured["dates"], reverse=True
    )
    assert dates[-1] == captured["dates"][-1] == "1960"
