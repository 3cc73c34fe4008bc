"""crash_query: NHTSA FARS state-years 1994-2013 with each state's FiveThirtyEight driver profile
joined, so a question across states and years is one call (the site spreads these over year and
state pages).

The query engine is `table_query`'s; this module declares the fields and the description.
"""
from __future__ import annotations

from functools import cache

import polars as pl

from armbench.domains.crashes import DOMAIN, TABLES
from armbench.domains.crashes.site.fields import state_href
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
    "state": "string", "state_abbr": "string", "year": "number", "fatalities": "number",
    "population_thousands": "number", "fatality_rate_per_100k_pop": "number",
    "licensed_drivers_thousands": "number", "fatality_rate_per_100k_drivers": "number",
    "registered_vehicles_thousands": "number", "fatality_rate_per_100k_vehicles": "number",
    "vmt_billions": "number", "fatality_rate_per_100m_vmt": "number",
    "drivers_in_fatal_collisions_per_billion_miles_2012": "number", "pct_drivers_speeding_2009": "number",
    "pct_drivers_alcohol_impaired_2012": "number", "pct_drivers_not_distracted_2012": "number",
    "pct_drivers_no_previous_accidents_2012": "number", "car_insurance_premium_usd_2011": "number",
    "insurer_losses_per_insured_driver_usd_2010": "number",
}
TABLE = TableFields(
    kinds=KINDS,
    default_fields=("state", "year", "fatalities", "fatality_rate_per_100m_vmt"),
    tie=("state", "year"),
    examples={"string": "Ohio", "number": 2001},
    noun="state-year",
)

DESCRIPTION = f"""\
Query NHTSA's Fatality Analysis Reporting System (FARS) state tables: one row per state and year, \
1994 to 2013 ({TABLES.rows("crashes"):,} rows: 49 states and the District of Columbia; South Carolina \
has no rows: its source file was a copy of Rhode Island's), with the state's FiveThirtyEight driver profile joined \
(the same values in each of its rows), so one call can filter across states, years and profiles. \
No national totals.

Fields:
- text: state (written out, e.g. "New Mexico"; "District of Columbia"); state_abbr (e.g. "NM").
- number, one year of one state: year; fatalities (deaths in motor vehicle crashes); \
population_thousands; licensed_drivers_thousands; registered_vehicles_thousands; vmt_billions \
(vehicle miles traveled, rounded to whole billions); NHTSA's rates (two decimals): \
fatality_rate_per_100k_pop, fatality_rate_per_100k_drivers, fatality_rate_per_100k_vehicles, \
fatality_rate_per_100m_vmt (per 100 million vehicle miles; compare it, not a rate computed from \
the rounded vmt_billions).
- number, the state's driver profile (one snapshot, the year in the name): \
drivers_in_fatal_collisions_per_billion_miles_2012; the percentages (0-100) of the drivers in fatal \
collisions who were speeding (pct_drivers_speeding_2009), alcohol-impaired \
(pct_drivers_alcohol_impaired_2012), not distracted (pct_drivers_not_distracted_2012) or in no \
previous accident (pct_drivers_no_previous_accidents_2012); car_insurance_premium_usd_2011; \
insurer_losses_per_insured_driver_usd_2010.

{filters_spec(TABLE)}

{sort_spec(TABLE, "the state's page on the site")}

{AGGREGATE_SPEC}

{RESULT_SPEC}

Example: the five states with the most registered vehicles in 2001:
{{"filters": [{{"field": "year", "op": "eq", "value": 2001}}], "sort_by": "registered_vehicles_thousands", \
"order": "desc", "limit": 5}}
"""



@cache
def crash_frame() -> pl.DataFrame:
    crashes = TABLES.load("crashes")
    pages = {state: state_href(state) for state in crashes["state"].unique()}
    return prepare(crashes.select(
        *TABLE.names,
        pl.col("state").replace_strict(pages).alias(SOURCE_URL),
    ), TABLE)


CrashQuery = query_tool("crash_query", DESCRIPTION, TABLE, crash_frame, lambda: endpoint(DOMAIN.replica).base_url)

TOOLS = [CrashQuery]  # the tooled arm's typed tools for this domain
