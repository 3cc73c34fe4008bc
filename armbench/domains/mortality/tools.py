"""mortality_query: CDC/NCHS deaths and age-adjusted death rates by state, year and cause, 1999-2017,
so a question across states, years or causes is one call (the site spreads these over a page per
cause and year, per state and year, and per cause nationally).

The query engine is `table_query`'s; this module declares the fields and the description.
"""
from __future__ import annotations

from functools import cache

import polars as pl

from armbench.domains.mortality import DOMAIN, TABLES
from armbench.domains.mortality.site.fields import national_href, state_href
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
    "state": "string", "year": "number", "cause": "string", "deaths": "number",
    "age_adjusted_rate_per_100k": "number", "is_national_total": "boolean", "cause_113_name": "string",
}
TABLE = TableFields(
    kinds=KINDS,
    default_fields=("state", "year", "cause", "deaths", "age_adjusted_rate_per_100k"),
    tie=("state", "year", "cause"),
    examples={"string": "Stroke", "number": 2003, "boolean": False},
    noun="state-year-cause row",
)

LINKS = 'the state\'s page for the row\'s year on the site, or for a "United States" row the national page of its cause'
DESCRIPTION = f"""\
Query CDC/NCHS "Leading Causes of Death: United States", 1999-2017 ({TABLES.rows("mortality"):,} rows): \
one row per state, year and cause, giving the number of deaths and the age-adjusted death rate. The \
states are the 50 states and the District of Columbia, plus "United States": the national total \
(is_national_total true), which is not a state; leave it out (is_national_total false) before \
ranking, counting or adding up states. The causes are the ten leading causes of death in the \
United States and "All causes"; no other cause is in the table.

Fields:
- text: state (the name written out, e.g. "New Mexico", "District of Columbia", or "United \
States"); cause, one of: All causes, Heart disease, Cancer, Unintentional injuries, CLRD (chronic \
lower respiratory diseases), Stroke, Alzheimer's disease, Diabetes, Influenza and pneumonia, Kidney \
disease, Suicide; cause_113_name (the cause's title in the NCHS list of 113 causes, with its ICD-10 \
codes, e.g. "Cerebrovascular diseases (I60-I69)").
- number: year (1999-2017); deaths (the number of resident deaths); age_adjusted_rate_per_100k (deaths \
per 100,000 population, age-adjusted to the 2000 U.S. standard population, one decimal: the figure \
that compares states and years).
- true/false: is_national_total (true on the "United States" rows only).

{filters_spec(TABLE)}

{sort_spec(TABLE, LINKS)}

{AGGREGATE_SPEC}

{RESULT_SPEC}

Example: the five highest age-adjusted stroke death rates among the states in 2003:
{{"filters": [{{"field": "cause", "op": "eq", "value": "Stroke"}}, {{"field": "year", "op": "eq", \
"value": 2003}}, {{"field": "is_national_total", "op": "eq", "value": false}}], "sort_by": \
"age_adjusted_rate_per_100k", "order": "desc", "limit": 5}}
"""



@cache
def mortality_frame() -> pl.DataFrame:
    rows = TABLES.load("mortality")
    pages = [national_href(cause) if national else state_href(state, year)
             for state, year, cause, national in rows.select("state", "year", "cause", "is_national_total").iter_rows()]
    return prepare(rows.select(*TABLE.names).with_columns(pl.Series(SOURCE_URL, pages)), TABLE)


MortalityQuery = query_tool("mortality_query", DESCRIPTION, TABLE, mortality_frame, lambda: endpoint(DOMAIN.replica).base_url)

TOOLS = [MortalityQuery]  # the tooled arm's typed tools for this domain
