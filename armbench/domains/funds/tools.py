"""fund_screener: the whole fund table with typed filters, and no hidden defaults.

The screener website hides funds closed to new investors unless a box is ticked and orders its
list by a relevance score it never shows. This tool removes both traps: `status` is an explicit
argument, and `relevance` is a field. Its own description could add a trap back (a model read "no
hidden defaults" as "open funds only"), so it says in plain words what an omitted `status`
covers and how that differs from the website; a test holds it to that.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any

import polars as pl
from pydantic import Field, WithJsonSchema

from armbench.domains.funds import DOMAIN, TABLES
from armbench.domains.funds.data.metrics import AS_OF
from armbench.replicas.serve import endpoint
from armbench.tools.base import MAX_RESULT_CHARS, Tool, ToolError
from armbench.tools.table_query import (
    AGGREGATE_SPEC,
    FILTERS_SPEC,
    TableFields,
    args_model,
    check_choice,
    prepare,
    run_query,
)

STATUSES = ("any", "open", "closed")
DEFAULT_STATUS = "any"
TABLE = TableFields(
    kinds={
        "symbol": "string",
        "name": "string",
        "category_group": "string",
        "category": "string",
        "family": "string",
        "load_type": "string",
        "inception_date": "date",
        "expense_ratio_pct": "number",
        "return_1y_pct": "number",
        "return_3y_pct": "number",
        "return_5y_pct": "number",
        "rating": "number",
        "total_assets_musd": "number",
        "min_investment_usd": "number",
        "load_pct": "number",
        "relevance": "number",
    },
    default_fields=("symbol", "name", "category", "status"),
    tie="symbol",
    examples={"string": "Small Cap", "number": 0.5, "date": "2010"},
    noun="fund",
    returned_only=("status",),
)
DATA_NOTE = (
    "Generated data: every metric here (expense ratios, returns as of "
    f"{AS_OF.isoformat()}, star ratings, total assets, minimum investments, loads, inception "
    "dates, open/closed status and relevance) is synthetic, generated for benchmarking, not real "
    "fund data. Symbols, names, categories and families are from FinanceDatabase."
)

FUNDS = TABLES.load("funds")
COUNT = FUNDS.height
CLOSED = int((FUNDS["status"] == "closed").sum())
CATEGORIES = "; ".join(sorted(FUNDS["category"].unique()))
GROUPS = "; ".join(sorted(FUNDS["category_group"].drop_nulls().unique()))

DESCRIPTION = f"""\
Screen a table of {COUNT:,} US mutual fund share classes, one row per share class (ticker). \
Symbols, names, categories and families come from FinanceDatabase; every metric is GENERATED \
(synthetic, not real fund data; returns as of {AS_OF.isoformat()}), and each result says so in \
data_note.

status ("any", "open" or "closed"; default "any") picks funds by whether they are open to new \
investors. When status is omitted it is "any": the call INCLUDES the {CLOSED:,} funds that are \
closed to new investors, together with the open ones. The fund screener website differs: by \
default its list hides closed funds and shows only funds open to new investors (closed ones \
appear only when its "Include funds closed to new investors" box is ticked). So pass status \
"open" for funds open to new investors or to match what the website lists by default, and \
"closed" for closed funds only. Every row carries its status.

Fields:
- text: symbol (ticker, e.g. "VFIAX"); name; category_group (broad class: {GROUPS}); category \
(one of: {CATEGORIES}); family (fund family, e.g. "Vanguard Asset Management"; null when not \
listed); load_type ("none", "front" = front-end sales charge, "deferred" = contingent deferred \
sales charge).
- date: inception_date, returned as "YYYY-MM-DD".
- number: expense_ratio_pct (net expense ratio, %); return_1y_pct, return_3y_pct, return_5y_pct \
(total return %, 3 and 5 years annualized; null when the fund is younger than the period); \
rating (star rating 1-5 within its category; null when younger than 3 years); total_assets_musd \
(millions of USD); min_investment_usd (USD, 0 = no minimum); load_pct (maximum sales charge %, \
0 without a load); relevance (the score the website sorts its list by when no column is chosen, \
highest first; the website never shows it).

{FILTERS_SPEC}

sort_by + order ("desc" by default): rows lacking the field come last in either order; ties go \
by symbol. Without sort_by, rows are in symbol order. The website's default order is status \
"open", sort_by "relevance", order "desc". limit: 1-{TABLE.max_limit} rows (default 50); the \
whole result must stay under {MAX_RESULT_CHARS:,} characters. fields: see its schema; \
source_url (the fund's page on the screener website) is always in every row.

{AGGREGATE_SPEC}

Result: status, matched, by_status {{open, closed}} (the matched rows of each status), returned, \
truncated, rows, plus note (when truncated), sort {{field, order, missing}} (with sort_by), \
aggregate {{fn, field, value, rows, missing}} (when asked) and data_note; "missing" counts \
matched rows with no value for that field. Mistakes return {{"error": {{type, message, ...}}}} \
naming the valid choices.

Example: the three cheapest Health Care funds rated 4 stars or more that are open to new investors:
{{"status": "open", "filters": [{{"field": "category", "op": "eq", "value": "Health Care"}}, \
{{"field": "rating", "op": "gte", "value": 4}}], "sort_by": "expense_ratio_pct", "order": "asc", \
"limit": 3}}
-> {{"status": "open", "matched": ..., "by_status": {{"open": ..., "closed": 0}}, "returned": 3, \
"truncated": true, "rows": [{{"symbol": "...", "name": "...", "category": "Health Care", \
"status": "open", "rating": 4, "expense_ratio_pct": ..., "source_url": \
"http://127.0.0.1:.../funds/..."}}, ...], "note": "...", "sort": {{"field": \
"expense_ratio_pct", "order": "asc", "missing": 0}}, "data_note": "Generated data: ..."}}
"""

FundScreenerArgs = args_model(
    "FundScreenerArgs",
    TABLE,
    status=(Annotated[str, WithJsonSchema({"type": "string", "enum": list(STATUSES)})], Field(
        DEFAULT_STATUS,
        description=(
            'Funds by status: "any" (the default) includes funds closed to new investors; '
            '"open" = open to new investors only, as the website lists by default; "closed".'
        ),
    )),
)


@cache
def fund_frame() -> pl.DataFrame:
    return prepare(FUNDS, TABLE)


class FundScreener(Tool):
    name = "fund_screener"
    description = DESCRIPTION
    Args = FundScreenerArgs
    table = TABLE  # what it answers from (site-tool parity reads these: armbench/domains/parity.py)
    frame = staticmethod(fund_frame)

    async def run(self, args: FundScreenerArgs) -> dict[str, Any]:
        status = check_choice(args.status, STATUSES, "unknown_status", "status", "status")
        for i, spec in enumerate(args.filters):
            if spec.field == "status":
                raise ToolError("unknown_field", f"filters[{i}].field: status is not a filter field; "
                                'choose funds by status with the status argument ("any", "open" or "closed")',
                                valid_choices=list(TABLE.names))
        where = [] if status == "any" else [pl.col("status") == status]
        result = run_query(TABLE, fund_frame(), args, where, count_by=("status", ("open", "closed")),
                           site=endpoint(DOMAIN.replica).base_url)
        return {"status": status, **result, "data_note": DATA_NOTE}


TOOLS = [FundScreener]  # the tooled arm's typed tools for this domain
