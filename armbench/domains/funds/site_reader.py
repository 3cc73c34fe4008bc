"""Read the fund screener replica site into fund_screener's rows (the contract: armbench/domains/parity.py).

Pages read, 29,236 in all:
- `/funds?include_closed=1&page=N`, the screener with its "Include funds closed to new investors"
  box ticked (290 pages of 100, as many as its first one counts): the link to every fund's page,
  closed funds too. Its columns lack the category group and the inception date, so it is read
  for links only.
- `/funds/{symbol}`, one per fund: every field of the tool but `relevance`, one labelled line each.
  The relevance score orders the screener by default, but no page shows it (`TOOL_ONLY`).

Standard library and the reading kit (armbench/domains/reading.py) only: in the python sandbox,
where armbench is not installed, it runs after the kit's text (`parity.reader_source`).
"""
from __future__ import annotations

from armbench.domains.reading import fetch_pages, labelled_lines, list_links, list_query

TOOL = "fund_screener"
TABLE = "funds"  # the replica table these rows are, as derivations name it (derived solutions)
KEY = ("symbol",)
OUT_OF_TOOL: dict[str, str] = {}
TOOL_ONLY = {"relevance": "the website never shows it"}  # the score the screener sorts by, on no page

NOT_AVAILABLE = "n/a"  # how the site shows a missing value
# A fund page's line labels -> the tool's fields, shown as the tool holds them (or "n/a").
AS_SHOWN = {
    "Symbol": "symbol",
    "Name": "name",
    "Fund family": "family",
    "Category group": "category_group",
    "Category": "category",
    "Inception date": "inception_date",
    "Net expense ratio": "expense_ratio_pct",
    "1-year return": "return_1y_pct",
    "3-year return (annualized)": "return_3y_pct",
    "5-year return (annualized)": "return_5y_pct",
    "Minimum initial investment": "min_investment_usd",
}
LOAD_TYPES = {"front-end": "front", "deferred (CDSC)": "deferred"}  # the site's words -> the tool's
STATUSES = {"Open": "open", "Closed to new investors": "closed"}  # the site's words -> the tool's
ENTITY_LINK = r'<th scope="row"><a href="(/funds/[^"]+)">'  # a list row's link to its page
# The screener's filters a scope (field -> value) can use: the tool's field -> the screener's
# parameter. Each finds a superset of the scope's funds (a family or name by a part of it, a rating
# as a minimum); the derived solution keeps the exact ones.
LIST_FILTERS = {"category": "category", "family": "family", "load_type": "load", "symbol": "q", "rating": "min_rating"}


def read_site(base: str, scope: dict | None = None) -> list[dict]:
    """One row per fund page linked from the screener, closed funds included (filtered by the
    scope's fields it offers)."""
    path = "/funds?include_closed=1&" + list_query(scope, LIST_FILTERS)
    return [fund_row(page) for page in fetch_pages(base, list_links(base, path, ENTITY_LINK))]


def fund_row(page: str) -> dict:
    lines = labelled_lines(page)
    row = {field: None if lines[label] == NOT_AVAILABLE else lines[label] for label, field in AS_SHOWN.items()}
    # "3 stars" -> "3", "Not rated" -> None: the comparison reads numbers, not words.
    rating = lines["Star rating"]
    row["rating"] = None if rating == "Not rated" else rating.split(" ")[0]
    # "$5,061.9 M" -> "$5,061.9": millions of USD, the tool's unit; the comparison reads no "M".
    row["total_assets_musd"] = lines["Total assets"].removesuffix(" M")
    row["status"] = STATUSES[lines["Status"]]  # a field the tool returns, chosen by its `status` argument
    return row | load(lines["Load (maximum sales charge)"])


def load(shown: str) -> dict:
    """A fund's load as shown: "None" (the tool's type "none" and 0 %), or "5.75% front-end"."""
    if shown == "None":
        return {"load_type": "none", "load_pct": "0"}
    pct, words = shown.split(" ", 1)
    return {"load_type": LOAD_TYPES[words], "load_pct": pct}
