"""drug_query: Drugs@FDA's original approvals, one row per application with its sponsor, chemical
type, review priority, orphan status and products joined, so a question across months, chemical
types and sponsors is one call (the site spreads these over monthly reports and application pages).

The query engine is `table_query`'s; this module declares the fields and the description.
"""
from __future__ import annotations

from functools import cache

import polars as pl

from armbench.domains.drugs import DOMAIN, TABLES
from armbench.domains.drugs.data.build import SEPARATOR
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
    "appl_no": "string", "appl_type": "string", "sponsor_name": "string", "drug_name": "string",
    "active_ingredient": "string", "form_route": "string", "marketing_status": "string", "products": "number",
    "approval_date": "date", "submission_no": "number", "chemical_type": "string", "review_priority": "string",
    "orphan": "boolean",
}
TABLE = TableFields(
    kinds=KINDS,
    default_fields=("appl_no", "appl_type", "drug_name", "sponsor_name", "approval_date"),
    tie="appl_no",
    examples={"string": "BOEHRINGER INGELHEIM", "number": 3, "date": "1999-07", "boolean": True},
    noun="original approval",
)

DESCRIPTION = f"""\
Query Drugs@FDA (the FDA's data files exported 2018-06-26; actions through 2018-06-25): one row \
per application's original approval ({TABLES.rows("drug_approvals"):,} rows), with its sponsor, \
chemical type, review priority, orphan status and products joined, so one call can filter across \
months, chemical types and sponsors. An application's original approval is its earliest ORIG \
submission with status approved; when two were approved that same day, the one with a chemical type. \
Not rows: tentative approvals, supplements, later ORIG approvals, applications never approved.

Fields:
- text: appl_no (six digits with leading zeros, e.g. "000004"); appl_type ("NDA", "ANDA" or "BLA"); \
sponsor_name (as Drugs@FDA abbreviates it, e.g. "BOEHRINGER INGELHEIM"); drug_name, \
active_ingredient, form_route (e.g. "TABLET;ORAL"), marketing_status ("Prescription", \
"Discontinued", "Over-the-counter", "None (Tentative Approval)"): the distinct values of the \
application's products, several joined with "{SEPARATOR}"; chemical_type (the original approval's \
submission classification, e.g. "Type 1 - New Molecular Entity", "Type 1 - New Molecular Entity \
and Type 4 - New Combination", "Type 3 - New Dosage Form"; null for most ANDAs; "Type 10 - ..." \
also begins with "Type 1", so match Type 1 with starts_with "Type 1 -"); review_priority \
("PRIORITY", "STANDARD"; older records "UNKNOWN" or "N/A"; null for most ANDAs and older NDAs).
- number: products (the application's product count); submission_no (the original approval's \
ORIG submission number, usually 1).
- date: approval_date (null for 2 applications whose date the files lack).
- true/false: orphan (the original approval carries orphan designation).
appl_type and sponsor_name are null for 1,463 applications missing from the files' application \
list; drug_name and the other product fields are null for 850 without products.

{filters_spec(TABLE)}

{sort_spec(TABLE, "the application's page on the site")}

{AGGREGATE_SPEC}

{RESULT_SPEC}

Example: the ten most recent original approvals of Boehringer Ingelheim's applications:
{{"filters": [{{"field": "sponsor_name", "op": "contains", "value": "boehringer"}}], \
"sort_by": "approval_date", "order": "desc", "limit": 10}}
"""



@cache
def drug_frame() -> pl.DataFrame:
    page = pl.lit("/daf/application/") + pl.col("appl_no")
    return prepare(TABLES.load("drug_approvals").select(*TABLE.names, page.alias(SOURCE_URL)), TABLE)


DrugQuery = query_tool("drug_query", DESCRIPTION, TABLE, drug_frame, lambda: endpoint(DOMAIN.replica).base_url)

TOOLS = [DrugQuery]  # the tooled arm's typed tools for this domain
