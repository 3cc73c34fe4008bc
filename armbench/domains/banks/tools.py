"""bank_failure_query: the FDIC's failures and assistance transactions, 1934 to 2026-01, one row
each with assets, deposits and estimated loss, so a question across years, states and amounts is
one call (the site spreads these over the Failed Bank List, BankFind and the bank pages).

The query engine is `table_query`'s; this module declares the fields and the description.
"""
from __future__ import annotations

from functools import cache

import polars as pl

from armbench.domains.banks import DOMAIN, TABLES
from armbench.replicas.serve import endpoint
from armbench.tools.table_query import (
    AGGREGATE_SPEC,
    RESULT_SPEC,
    SOURCE_URL,
    TableFields,
    filters_spec,
    prepare,
    query_tool,
    sort_spec,
)

KINDS = {
    "bank_name": "string", "city": "string", "state": "string", "cert": "number", "fin": "number",
    "fail_date": "date", "fail_year": "number", "resolution_date": "date", "resolution_type": "string",
    "transaction_type": "string", "insurance_fund": "string", "charter_class": "string",
    "total_assets_thousands": "number", "total_deposits_thousands": "number",
    "estimated_loss_thousands": "number", "cost_as_of": "date", "uninsured_deposits": "number",
    "acquirer_name": "string", "acquirer_city": "string", "acquirer_state": "string", "bank_no": "number",
    "comments": "string", "fdic_id": "number",
}
TABLE = TableFields(
    kinds=KINDS,
    default_fields=("bank_name", "state", "fail_date", "resolution_type"),
    tie="fdic_id",
    examples={"string": "ASSISTANCE", "number": 1988, "date": "1988-06"},
    noun="failure or assistance transaction",
)

DESCRIPTION = f"""\
Query the FDIC's bank failures and assistance transactions (BankFind Suite), 1934 to January 2026 \
({TABLES.rows("bank_failures"):,} rows): one row per transaction, with the bank's assets, deposits \
and the FDIC's estimated loss. resolution_type says which kind a row is: "FAILURE" (the bank closed) \
or "ASSISTANCE" (the FDIC assisted an open bank, which did not fail). Filter on it: a question about \
failed banks means resolution_type "FAILURE".

Fields:
- text: bank_name (as the FDIC writes it, upper case, e.g. "PULASKI SAVINGS BANK"); city; state \
(two-letter code, e.g. "TX"; also PR, GU, VI); resolution_type ("FAILURE" or "ASSISTANCE"); \
transaction_type (the FDIC's code, e.g. PA, PI, PO, IDT, A/A); insurance_fund (FDIC, BIF, SAIF, DIF, \
FSLIC, RTC); charter_class (N, NM, SM, SB, SL, SI, MI); acquirer_name, acquirer_city, \
acquirer_state (null, or acquirer_name "PAYOUT" or "BRANCH SALE", when no one institution \
acquired the bank); comments.
- number: amounts in THOUSANDS of dollars (1000000 = $1 billion): total_assets_thousands, \
total_deposits_thousands, estimated_loss_thousands (the estimated cost to the insurance fund), \
uninsured_deposits (rarely reported); fail_year; cert (FDIC certificate number); fin (the Failed \
Bank List's "Fund"); bank_no; fdic_id (the row's id). Records before the 1980s often lack cert, \
assets and estimated loss; the newest failure has no estimated loss yet.
- date: fail_date (the closing date of a failure, the effective date of an assistance \
transaction); resolution_date; cost_as_of (when estimated_loss_thousands was estimated).

{filters_spec(TABLE)}

{sort_spec(TABLE, "the bank's page on the site", " (about oldest first)")}

{AGGREGATE_SPEC}

{RESULT_SPEC}

Example: the five largest assistance transactions of 1988 by total assets:
{{"filters": [{{"field": "resolution_type", "op": "eq", "value": "ASSISTANCE"}}, {{"field": "fail_year", \
"op": "eq", "value": 1988}}], "sort_by": "total_assets_thousands", "order": "desc", "limit": 5}}
"""



@cache
def bank_failures_frame() -> pl.DataFrame:
    page = pl.lit("/bank/") + pl.col("fdic_id").cast(pl.Utf8)
    return prepare(TABLES.load("bank_failures").select(*TABLE.names, page.alias(SOURCE_URL)), TABLE)


BankFailureQuery = query_tool("bank_failure_query", DESCRIPTION, TABLE, bank_failures_frame, lambda: endpoint(DOMAIN.replica).base_url)

TOOLS = [BankFailureQuery]  # the tooled arm's typed tools for this domain
