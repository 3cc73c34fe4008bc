"""`../shared/data/nba/` -> three tables (run by `bench data build`).

- nba_seasons: one row per NBA player-season, 1950-2021 (season = the year it ends: 2021 = 2020-21),
  each player named as the career table (2026) names him:
  a traded player's season is his `TOT` row (`traded` true, `teams` lists the teams in the order
  the source gives them); bio (birth date, height, colleges) and the player's NBA draft pick
  (year, round, overall pick, team) joined by Basketball-Reference id. ABA and BAA seasons are
  left out: the questions are about the NBA.
- nba_players: the career table (one row per player, 2026 snapshot).
- nba_draft_picks: every NBA and BAA draft pick, 1947-2025.
Nothing calls this at run time: the Parquet files are committed.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from armbench.domains.nba import TABLES

# Players the source's crosswalk left without an id because Basketball-Reference renamed them
# after 2021, matched here by their career table's name and seasons (players.csv). Brady Walker
# (an id two source players claim), James Phelan (two candidates) and Wayne Englestad (none) stay
# without one.
RENAMED = {
    "Alfred McGuire": "mcguial01", "Bill McGill": "mcgilbi01", "Efthimis Rentzias": "rentzef01",
    "Enes Kanter": "kanteen01", "Juan Hernangómez": "hernaju01", "Kenyon Martin Jr.": "martike04",
    "Micheal Ray Richardson": "richami01", "Nicolas Claxton": "claxtni01", "Sviatoslav Mykhailiuk": "mykhasv01",
    "Wesley Iwundu": "iwundwe01",
}
SEASON_COLUMNS = ["seas_id", "season", "player", "bref_id", "pos", "age", "experience", "team", "games",
                  "games_started", "minutes", "mp_per_game", "pts_per_game", "reb_per_game", "ast_per_game",
                  "fg", "fga", "x3p", "x3pa", "ft", "fta", "trb", "ast", "stl", "blk", "tov", "pts",
                  "fg_percent", "x3p_percent", "ft_percent"]


def read(shared_data: Path, name: str) -> pl.DataFrame:
    return pl.read_csv(shared_data / "nba" / f"{name}.csv", infer_schema_length=None)


def seasons(shared_data: Path, draft: pl.DataFrame, players: pl.DataFrame) -> pl.DataFrame:
    rows = read(shared_data, "player_seasons").filter(pl.col("league") == "NBA").select(SEASON_COLUMNS)
    rows = rows.with_columns(pl.col("bref_id").fill_null(pl.col("player").replace_strict(RENAMED, default=None)))
    # A traded player's season: his TOT row, with the teams he played for (in the source's order).
    teams = (rows.filter(pl.col("team") != "TOT")
             .group_by("season", "player", "bref_id", maintain_order=True)
             .agg(pl.col("team").str.join(", ").alias("teams"), pl.len().alias("stints")))
    traded = rows.filter(pl.col("team") == "TOT").select("season", "player", "bref_id").with_columns(traded=True)
    whole = rows.join(traded, on=["season", "player", "bref_id"], how="left", nulls_equal=True).with_columns(
        pl.col("traded").fill_null(False))
    whole = whole.filter(~pl.col("traded") | (pl.col("team") == "TOT"))
    whole = whole.join(teams.select("season", "player", "bref_id", "teams"), on=["season", "player", "bref_id"],
                       how="left", nulls_equal=True)
    bio = players.select("bref_id", pl.col("player").alias("name"), "birth_date", "height_in", "colleges")
    pick = first_nba_picks(draft).select("bref_id", "draft_year", pl.col("round").alias("draft_round"),
                                         pl.col("overall_pick").alias("draft_pick"), pl.col("team").alias("draft_team"))
    # One spelling per player everywhere: the career table's (2026), as the player pages show it.
    joined = whole.join(bio, on="bref_id", how="left").join(pick, on="bref_id", how="left")
    return joined.with_columns(pl.col("name").fill_null(pl.col("player")).alias("player")).drop("name").sort(
        "season", "player")


def first_nba_picks(draft: pl.DataFrame) -> pl.DataFrame:
    """Each drafted player's first NBA pick: the earliest year, within it the earliest pick (the
    season rows and the player pages both say this one)."""
    nba = draft.filter((pl.col("league") == "NBA") & pl.col("bref_id").is_not_null())
    return (nba.sort(["draft_year", "overall_pick", "round"], nulls_last=True, maintain_order=True)
            .unique("bref_id", keep="first", maintain_order=True))


def build(shared_data: Path) -> list[Path]:
    players = read(shared_data, "players").with_columns(pl.col("birth_date").str.to_date())
    draft = read(shared_data, "draft_picks").with_columns(
        pl.col("overall_pick").cast(pl.Int64), pl.col("round").cast(pl.Int64))
    return [TABLES.write(seasons(shared_data, draft, players), "nba_seasons"),
            TABLES.write(players, "nba_players"),
            TABLES.write(draft, "nba_draft_picks")]
