"""Read the World Bank API replica whole: one row per indicator x economy x year it serves.

Three requests, each one page (a per_page above any total; further pages are read should one not be):
- `/v2/country`: every economy with its region, income level and lending type, which data rows
  do not carry (list_economies returns them, rank_year filters on them);
- `/v2/indicator`: the indicators the source serves, to name them in the data request;
- `/v2/country/all/indicator/{every indicator}?source=2`: every economy with data x every year of
  the source, a null value where none is published (the multi-indicator form needs `source`).

Standard library and the reading kit (armbench/domains/reading.py) only: in the python sandbox,
where armbench is not installed, it runs after the kit's text (`parity.reader_source`).
"""
from __future__ import annotations

import json
import urllib.parse
from typing import Any

from armbench.domains.reading import fetch

TOOL = "get_series"
KEY = ("indicator", "economy", "year")
OUT_OF_TOOL: dict[str, str] = {}
PER_PAGE = 1_000_000  # above the data's 332,310 rows: every list in one page


def fetch_json(url: str) -> Any:
    """The JSON reply; an HTTP error (`fetch`) or an API message (HTTP 200, e.g. "Invalid value") raises."""
    body = fetch(url, timeout=300)
    payload = json.loads(body)
    if isinstance(payload, list) and payload and "message" in payload[0]:
        raise RuntimeError(f"GET {url}: HTTP 200, an API message: {body[:300]}")
    return payload


def records(base: str, path: str, **params: str) -> list[dict[str, Any]]:
    """Every record of a v2 list, page after page."""
    rows, page, pages = [], 1, 1
    while page <= pages:
        query = urllib.parse.urlencode({**params, "format": "json", "per_page": PER_PAGE, "page": page})
        head, items = fetch_json(f"{base}/v2/{path}?{query}")
        rows += items or []
        page, pages = page + 1, int(head["pages"])
    return rows


def read_site(base: str) -> list[dict[str, Any]]:
    economies = {
        e["id"]: {"region": e["region"]["value"], "income_group": e["incomeLevel"]["value"],
                  "lending_type": e["lendingType"]["value"]}
        for e in records(base, "country")
    }
    indicators = ";".join(i["id"] for i in records(base, "indicator"))
    return [
        {"indicator": r["indicator"]["id"], "indicator_name": r["indicator"]["value"],
         "economy": r["countryiso3code"], "name": r["country"]["value"],
         **economies.get(r["countryiso3code"], {}), "year": r["date"],
         "value": None if r["value"] is None else str(r["value"])}
        for r in records(base, f"country/all/indicator/{indicators}", source="2")
    ]
