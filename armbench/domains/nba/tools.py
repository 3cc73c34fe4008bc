"""nba_query: NBA player-seasons 1949-50 to 2020-21 with each player's bio and draft pick joined,
so a question across seasons, birthdays and draft classes is one call (the site spreads these
over season, player and draft pages).

The query engine is `table_query`'s; this module declares the fields and the description.
"""
from __future__ import annotations

from functools import cache

import polars as pl

from armbench.domains.nba import DOMAIN, TABLES
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
    "player": "string", "season": "number", "team": "string", "traded": "boolean", "teams": "string",
    "pos": "string", "age": "number", "games": "number", "games_started": "number", "mp_per_game": "number",
    "pts_per_game": "number", "reb_per_game": "number", "ast_per_game": "number", "pts": "number",
    "trb": "number", "ast": "number", "stl": "number", "blk": "number", "fg_percent": "number",
    "x3p_percent": "number", "ft_percent": "number", "birth_date": "date", "birth_month": "number",
    "birth_day": "number", "height_in": "number",
    "colleges": "string", "draft_year": "number", "draft_round": "number", "draft_pick": "number",
    "draft_team": "string", "seas_id": "number",
}
TABLE = TableFields(
    kinds=KINDS,
    default_fields=("player", "season", "team", "pts_per_game"),
    tie="seas_id",
    examples={"string": "BOS", "number": 7, "date": "1962-03", "boolean": True},
    noun="player-season",
)

DESCRIPTION = f"""\
Query NBA regular seasons from Basketball-Reference: one row per player and season, 1949-50 to \
2020-21 ({TABLES.rows("nba_seasons"):,} rows), with the player's bio and NBA draft pick joined, so one call can filter \
across seasons, birthdays and draft classes. A season is named by the year it ends: season 2021 \
= 2020-21. A player traded during a season has one row for that season, his total (team "TOT", \
traded true, teams listing his teams); per-team splits are not rows.

Fields:
- text: player (as Basketball-Reference writes it, e.g. "Bill Russell"); pos; team (e.g. \
"LAL", or "TOT"); teams (the teams of a traded season, comma-separated); colleges (comma-separated; \
null when none is listed); draft_team.
- number: season (end year); age (on February 1 of the season); games; games_started (null before \
1981-82); mp_per_game, pts_per_game, reb_per_game, ast_per_game (per game, one decimal); pts, trb, \
ast, stl, blk (season totals; steals and blocks null before 1973-74); fg_percent, x3p_percent, \
ft_percent (0-1); height_in (inches); draft_year, draft_round, draft_pick (overall; null for an \
undrafted player or one without a Basketball-Reference id); seas_id (the source's row id).
- date: birth_date. birth_month (1-12) and birth_day (1-31) are its month and day as numbers, for \
birthdays across years.
- true/false: traded.

{filters_spec(TABLE)}

{sort_spec(TABLE, "the player's page on the site, or the season page for a player without one")}

{AGGREGATE_SPEC}

{RESULT_SPEC}

Example: the five best assist averages of the 1990-91 season among players with at least 60 games:
{{"filters": [{{"field": "season", "op": "eq", "value": 1991}}, {{"field": "games", "op": "gte", \
"value": 60}}], "sort_by": "ast_per_game", "order": "desc", "limit": 5}}
"""



@cache
def nba_frame() -> pl.DataFrame:
    page = (pl.when(pl.col("bref_id").is_not_null())
            .then(pl.lit("/players/") + pl.col("bref_id").str.slice(0, 1) + pl.lit("/") + pl.col("bref_id")
                  + pl.lit(".html"))
            .otherwise(pl.lit("/leagues/NBA_") + pl.col("season").cast(pl.Utf8) + pl.lit("_per_game.html")))
    born = TABLES.load("nba_seasons").with_columns(birth_month=pl.col("birth_date").dt.month().cast(pl.Int64),
                                birth_day=pl.col("birth_date").dt.day().cast(pl.Int64))
    return prepare(born.select(*TABLE.names, page.alias(SOURCE_URL)), TABLE)


NbaQuery = query_tool("nba_query", DESCRIPTION, TABLE, nba_frame, lambda: endpoint(DOMAIN.replica).base_url)

TOOLS = [NbaQuery]  # the tooled arm's typed tools for this domain
