"""World Bank typed tools: list_economies, get_series and rank_year over the `wb_*` tables.

Fitted to the study's question shapes (list economies by group without aggregates, a whole series
without paging, a ranked year with ties); each description is the model-facing spec.
"""
from __future__ import annotations

from functools import cache
from typing import Annotated, Any

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from armbench.domains.worldbank import TABLES, lookup
from armbench.domains.worldbank.api.catalog import Economy, catalog
from armbench.domains.worldbank.lookup import ValueFilter
from armbench.tools.base import Tool, ToolError
from armbench.tools.table_query import TableFields

MAX_ECONOMIES = 40
MAX_ECONOMY_YEARS = 800  # keeps a get_series result well under the tool result size limit
MAX_LIMIT = 100


def indicator_catalogue() -> str:
    """One line per indicator with the years it has values for."""
    spans = TABLES.load("wb_values").group_by("indicator").agg(
        pl.col("year").min().alias("first"), pl.col("year").max().alias("last")
    )
    rows = TABLES.load("wb_indicators").join(spans, left_on="code", right_on="indicator")
    return "\n".join(f"- {r['code']}: {r['name']} ({r['first']}-{r['last']})"
                     for r in rows.sort("code").iter_rows(named=True))


def group_catalogue() -> str:
    parts = [
        f"{kind.replace('_', ' ')}: " + "; ".join(lookup.group_choices(kind))
        for kind in ("region", "income_group", "lending_type")
    ]
    return "\n".join(f"- {part}" for part in parts)


def economy_counts() -> str:
    aggregates = TABLES.load("wb_countries")["is_aggregate"]
    return (f"{(~aggregates).sum()} countries and territories, plus {aggregates.sum()} "
            "aggregates")


# Descriptions are built from the tables' metadata at import; the values load on first call.
INDICATORS = indicator_catalogue()
GROUPS = group_catalogue()
COUNTS = economy_counts()
YEARS = f"{TABLES.load('wb_values')['year'].min()}-{TABLES.load('wb_values')['year'].max()}"

GROUP_FILTERS = f"""\
region, income_group, lending_type: World Bank classifications, by code or name \
(case-insensitive); given together, an economy must match all of them:
{GROUPS}
(MIC = LMC + UMC and LMY = LIC + LMC + UMC.)"""

ECONOMY_TOKENS = """\
Economies are given by ISO3 code ("KEN"), World Bank 2-character code ("KE") or exact World Bank \
name ("Kenya"), case-insensitive; a miss returns close matches."""

AGGREGATES = """\
Aggregates (World, regions, income groups, EU, OECD, ...) are not economies of any region, income \
group or lending type; they are left out unless include_aggregates is true."""

Choice = Annotated[str, WithJsonSchema({"type": "string", "enum": ["desc", "asc"]})]


class ListEconomiesArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    region: str | None = Field(None, description="Region code or name, e.g. SAS or South Asia.")
    income_group: str | None = Field(None, description="Income level code or name, e.g. LMC.")
    lending_type: str | None = Field(None, description="Lending type code or name, e.g. IDX.")
    include_aggregates: bool = Field(False, description="Also list aggregates (no group filter).")


class GetSeriesArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    indicator: str = Field(description="Indicator code or exact name, e.g. SP.POP.TOTL.")
    economies: list[str] = Field(min_length=1, max_length=MAX_ECONOMIES,
                                 description="Economies by code or name.")
    start_year: int = Field(description="First year, inclusive.")
    end_year: int = Field(description="Last year, inclusive.")
    value_filter: ValueFilter | None = Field(
        None, description="Keep only years whose value passes, e.g. {op: gt, value: 10}."
    )


class RankYearArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    indicator: str = Field(description="Indicator code or exact name, e.g. SP.DYN.LE00.IN.")
    year: int = Field(description="The year to rank.")
    economies: list[str] | None = Field(
        None, description="Only these economies (codes or names). Omit for every economy."
    )
    region: str | None = Field(None, description="Region code or name.")
    income_group: str | None = Field(None, description="Income level code or name.")
    lending_type: str | None = Field(None, description="Lending type code or name.")
    include_aggregates: bool = Field(False, description="Rank aggregates too.")
    order: Choice = Field("desc", description="desc = highest value first; asc = lowest first.")
    start_rank: int = Field(1, ge=1, description="First rank to return (5 = from fifth place).")
    limit: int = Field(10, ge=1, le=MAX_LIMIT, description=f"Rows to return, 1..{MAX_LIMIT}.")
    value_filter: ValueFilter | None = Field(
        None, description="Rank only values that pass, e.g. {op: gt, value: 50}."
    )


def chosen_groups(args: ListEconomiesArgs | RankYearArgs) -> dict[str, tuple[str, set[str]]]:
    given = {"region": args.region, "income_group": args.income_group,
             "lending_type": args.lending_type}
    return {kind: lookup.group(kind, token) for kind, token in given.items() if token}


def candidates(args: ListEconomiesArgs | RankYearArgs, groups: dict[str, tuple[str, set[str]]],
               explicit: list[str] | None = None) -> list[Economy]:
    """Economies named explicitly (aggregates included) or else every economy (aggregates only
    when asked for), narrowed by the group filters."""
    if explicit:
        pool = lookup.economies(explicit)
    else:
        pool = [e for e in catalog().economies.values()
                if args.include_aggregates or not e.is_aggregate]
    allowed = {kind: codes for kind, (_, codes) in groups.items()}
    return [e for e in pool if lookup.in_groups(e, allowed)]


class ListEconomies(Tool):
    name = "list_economies"
    description = f"""\
List the World Bank's economies ({COUNTS}), optionally \
only those of a region, income group and/or lending type (current World Bank classification).

{GROUP_FILTERS}
{AGGREGATES}

Result: matched, filters (as resolved), rows [{{code, name, region, income_group, \
lending_type}}] in code order. Codes work in get_series and rank_year.

Example: {{"region": "NAC"}} -> {{"matched": 3, "filters": {{"region": "NAC: North America"}}, \
"rows": [{{"code": "BMU", "name": "Bermuda", "region": "North America", "income_group": "High \
income", "lending_type": "Not classified"}}, ...]}}"""
    Args = ListEconomiesArgs

    async def run(self, args: ListEconomiesArgs) -> dict[str, Any]:
        groups = chosen_groups(args)
        economies = candidates(args, groups)
        return {
            "matched": len(economies),
            "filters": {kind: label for kind, (label, _) in groups.items()},
            "rows": [
                {"code": e.code, "name": e.name.strip(), "region": e.region.name.strip(),
                 "income_group": e.income_level.name, "lending_type": e.lending_type.name}
                for e in economies
            ],
        }


# The rows the tools answer from (site-tool parity reads these: armbench/domains/parity.py).
VALUES = TableFields(
    kinds={"indicator": "string", "indicator_name": "string", "economy": "string",
           "name": "string", "region": "string", "income_group": "string",
           "lending_type": "string", "year": "number", "value": "number"},
    default_fields=("indicator", "economy", "name", "year", "value"),
    tie=("indicator", "economy", "year"),
    examples={"string": "KEN", "number": 2020},
    noun="economy-year value",
)


@cache
def values_frame() -> pl.DataFrame:
    """Every indicator x economy with data x year of the source, the value null where none is
    published: the grid the API's data endpoint serves, and what get_series and rank_year look up
    (as values or as missing), with the economy fields list_economies returns."""
    data = catalog()
    economies = pl.DataFrame([
        {"economy": e.code, "name": e.name.strip(), "region": e.region.name.strip(),
         "income_group": e.income_level.name, "lending_type": e.lending_type.name}
        for e in map(data.economies.get, data.data_economies)
    ])
    indicators = pl.DataFrame({"indicator": [i.code for i in data.indicators.values()],
                               "indicator_name": [i.name for i in data.indicators.values()]})
    years = pl.DataFrame({"year": list(data.years)})
    values = TABLES.load("wb_values").select(
        "indicator", pl.col("country").alias("economy"), pl.col("year").cast(pl.Int64), "value")
    grid = indicators.join(economies, how="cross").join(years, how="cross")
    return grid.join(values, on=["indicator", "economy", "year"], how="left").select(list(VALUES.kinds))


class GetSeries(Tool):
    name = "get_series"
    description = f"""\
Get one indicator's yearly values (World Bank World Development Indicators) for up to \
{MAX_ECONOMIES} economies over a range of years, complete: no paging, every year in the range \
(at most {MAX_ECONOMY_YEARS} economy-years per call: economies x years).

Indicators (code: name (years with data)):
{INDICATORS}
{ECONOMY_TOKENS} Years: {YEARS}.
value_filter {{op: gt|gte|lt|lte|eq|ne, value}} keeps only the years whose value passes (e.g. \
the years inflation was above 10%).

Result: indicator, rows [{{economy, name, year, value}}] (by economy as given, then year \
ascending; only years with a value that pass value_filter), matched (rows), and missing \
[{{economy, name, years}}]: the years in the range with no published value (never silently \
dropped; they cannot pass or fail value_filter).

Example: {{"indicator": "SP.POP.TOTL", "economies": ["CAN", "Mexico"], "start_year": 2019, \
"end_year": 2020}} -> {{"indicator": {{"code": "SP.POP.TOTL", "name": "Population, total"}}, \
"rows": [{{"economy": "CAN", "name": "Canada", "year": 2019, "value": ...}}, {{"economy": "CAN", \
..., "year": 2020, ...}}, {{"economy": "MEX", "name": "Mexico", "year": 2019, ...}}, ...], \
"matched": 4, "missing": []}}"""
    Args = GetSeriesArgs
    table = VALUES  # what it answers from (site-tool parity reads these: armbench/domains/parity.py)
    frame = staticmethod(values_frame)

    async def run(self, args: GetSeriesArgs) -> dict[str, Any]:
        indicator = lookup.indicator(args.indicator)
        economies = lookup.economies(args.economies)
        first = lookup.year(args.start_year, "start_year")
        last = lookup.year(args.end_year, "end_year")
        if first > last:
            raise ToolError("bad_years", "start_year is after end_year")
        if len(economies) * (last - first + 1) > MAX_ECONOMY_YEARS:
            raise ToolError(
                "too_many_values",
                f"{len(economies)} economies x {last - first + 1} years is more than "
                f"{MAX_ECONOMY_YEARS} economy-years; ask for fewer economies or a shorter range "
                "(rank_year compares many economies in one year)",
            )
        passes = lookup.value_test(args.value_filter)
        rows, missing = [], []
        for economy in economies:
            absent = []
            for year in range(first, last + 1):
                value = lookup.value_of(indicator, economy, year)
                if value is None:
                    absent.append(year)
                elif passes(value):
                    rows.append({**lookup.economy_ref(economy), "year": year, "value": value})
            if absent:
                missing.append({**lookup.economy_ref(economy),
                                "years": lookup.year_ranges(absent)})
        return {
            "indicator": {"code": indicator.code, "name": indicator.name},
            "rows": rows,
            "matched": len(rows),
            "missing": missing,
        }


def window(ranked: list[dict[str, Any]], start_rank: int, limit: int) -> list[dict[str, Any]]:
    """`limit` rows from `start_rank` on, extended so a tie is never split."""
    rows = [row for row in ranked if row["rank"] >= start_rank]
    cut = rows[:limit]
    if cut:
        cut += [row for row in rows[limit:] if row["value"] == cut[-1]["value"]]
    return cut


class RankYear(Tool):
    name = "rank_year"
    description = f"""\
Rank economies by one indicator (World Bank World Development Indicators) in one year: every \
economy you select, one call, ties reported.

Indicators (code: name (years with data)):
{INDICATORS}
Select economies with `economies` (a list; aggregates named there are ranked too) and/or the \
group filters; with neither, every economy is ranked. {ECONOMY_TOKENS}
{GROUP_FILTERS}
{AGGREGATES}
value_filter {{op, value}} ranks only values that pass (e.g. {{"op": "gt", "value": 50}}).

Ranks: order "desc" (default) puts the highest value first, "asc" the lowest. Equal values \
share a rank and the next rank skips (1, 2, 2, 4). start_rank (default 1) and limit (default \
10) pick the window; rows tied with the last returned row are always included too, so a limit \
never splits a tie (asking for rank 5 with limit 1 returns every economy ranked 5th).

Result: indicator, year, order, considered (economies selected), ranked (those with a value \
that passes value_filter), rows [{{rank, economy, name, value}}], truncated, missing \
[{{economy, name}}]: selected economies with no value that year (not ranked, never dropped \
silently).

Example: {{"indicator": "NY.GDP.PCAP.CD", "year": 2020, "region": "North America", "limit": 2}} \
-> {{"indicator": {{"code": "NY.GDP.PCAP.CD", ...}}, "year": 2020, "order": "desc", \
"considered": 3, "ranked": 3, "rows": [{{"rank": 1, "economy": "BMU", "name": "Bermuda", \
"value": ...}}, {{"rank": 2, ...}}], "truncated": true, "missing": []}}"""
    Args = RankYearArgs

    async def run(self, args: RankYearArgs) -> dict[str, Any]:
        indicator = lookup.indicator(args.indicator)
        year = lookup.year(args.year, "year")
        if args.order not in ("desc", "asc"):
            raise ToolError("unknown_order", f"order: unknown order {args.order!r}",
                            valid_choices=["desc", "asc"])
        passes = lookup.value_test(args.value_filter)
        selected = candidates(args, chosen_groups(args), args.economies)
        valued = [(e, lookup.value_of(indicator, e, year)) for e in selected]
        scored = [(e, v) for e, v in valued if v is not None and passes(v)]
        descending = args.order == "desc"
        scored.sort(key=lambda pair: (-pair[1] if descending else pair[1], pair[0].name))
        values = [v for _, v in scored]
        ranked = [
            {"rank": 1 + sum((other > v) if descending else (other < v) for other in values),
             **lookup.economy_ref(e), "value": v}
            for e, v in scored
        ]
        rows = window(ranked, args.start_rank, args.limit)
        return {
            "indicator": {"code": indicator.code, "name": indicator.name},
            "year": year,
            "order": args.order,
            "considered": len(selected),
            "ranked": len(ranked),
            "rows": rows,
            "truncated": len(rows) < len([r for r in ranked if r["rank"] >= args.start_rank]),
            "missing": [lookup.economy_ref(e) for e, v in valued if v is None],
        }


TOOLS = [ListEconomies, GetSeries, RankYear]  # the tooled arm's typed tools for this domain
