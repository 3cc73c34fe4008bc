"""nba_query and its table: Basketball-Reference's spot checks hold, a traded season is one row,
and every field filters by its kind."""
from __future__ import annotations

import polars as pl
import pytest

from armbench.domains.nba import TABLES
from armbench.domains.nba.tools import KINDS, NbaQuery


@pytest.fixture(scope="module")
def seasons() -> pl.DataFrame:
    return TABLES.load("nba_seasons")


def row(seasons: pl.DataFrame, player: str, season: int) -> dict:
    return seasons.filter((pl.col("player") == player) & (pl.col("season") == season)).row(0, named=True)


def test_the_source_spot_checks_hold(seasons):
    jordan = row(seasons, "Michael Jordan", 1988)
    assert (jordan["team"], jordan["games"], jordan["games_started"], jordan["pts"], jordan["pts_per_game"]) == (
        "CHI", 82, 82, 2868, 35.0)
    lebron = row(seasons, "LeBron James", 2021)
    assert (lebron["team"], lebron["games"], lebron["pts"]) == ("LAL", 45, 1126)


def test_a_traded_season_is_one_total_row(seasons):
    gordon = seasons.filter((pl.col("player") == "Aaron Gordon") & (pl.col("season") == 2021))
    assert gordon.height == 1
    season = gordon.row(0, named=True)
    assert (season["team"], season["traded"], season["teams"], season["pts"]) == ("TOT", True, "ORL, DEN", 618)
    assert seasons.group_by("season", "player", "bref_id").len()["len"].max() == 1


async def test_every_field_filters():
    tool = NbaQuery()
    for field, kind in KINDS.items():
        outcome = await tool.invoke({"filters": [{"field": field, "op": "not_null"}], "limit": 1})
        assert not outcome.is_error and outcome.result["matched"] > 0, (field, kind, outcome.result)


async def test_one_call_finds_a_draft_class_by_birthday():
    outcome = await NbaQuery().invoke({"filters": [
        {"field": "draft_year", "op": "eq", "value": 2015}, {"field": "birth_date", "op": "eq", "value": "1995-08"},
        {"field": "pts_per_game", "op": "gt", "value": 15}], "fields": ["player", "season"], "limit": 10})
    assert {r["player"] for r in outcome.result["rows"]} == {"Kristaps Porziņģis"}
    assert outcome.result["rows"][0]["source_url"].endswith("/players/p/porzikr01.html")


async def test_mistakes_are_tool_errors():
    tool = NbaQuery()
    for args in ({"filters": [{"field": "points", "op": "gt", "value": 1}]},
                 {"filters": [{"field": "traded", "op": "gt", "value": True}]},
                 {"filters": [{"field": "birth_date", "op": "eq", "value": "August"}]}):
        assert (await tool.invoke(args)).is_error, args
