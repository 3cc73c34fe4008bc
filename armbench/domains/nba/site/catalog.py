"""Every page's content, prepared once per process (the tables are small): a request only looks a
key up and, on a season's per-game or totals page, picks one of the orders computed here (a
season's at its first request: 144 season tables in every order would take a second of each start).

Table rows are HTML already (`fields.row`), in the exact shape the site's scrapers read.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

import polars as pl
from markupsafe import Markup

from armbench.domains.nba import TABLES
from armbench.domains.nba.data.build import first_nba_picks
from armbench.domains.nba.site.fields import (
    DASH,
    SEASON_COLUMNS,
    TOTALS_COLUMNS,
    cell,
    draft_line,
    height,
    player_link,
    row,
    season_label,
)
from armbench.replicas.web.listing import Column

ORDERS = ("asc", "desc")


@dataclass(frozen=True, eq=False)
class Season:
    label: str  # "2020-21"
    table: pl.DataFrame  # the season's rows, in the table's order
    columns: tuple[Column, ...]

    @cached_property
    def rows(self) -> dict[tuple[str, str], list[Markup]]:
        """(sort key, order) -> every row, in that order: unknowns last, ties by player name.
        Prepared at the season's first request (about 15 ms), not at start for all 72 seasons."""
        frame = self.table.with_row_index("row").with_columns(pl.col("player").str.to_lowercase().alias("tie"))
        rendered = [row(self.columns[0].cell(r), [column.cell(r) for column in self.columns[1:]])
                    for r in self.table.iter_rows(named=True)]
        orders = {}
        for column in self.columns:
            key = pl.col(column.sort_column)
            if column.kind == "text":
                key = key.str.to_lowercase()
            for order in ORDERS:
                indices = frame.sort([key, pl.col("tie"), pl.col("row")], descending=[order == "desc", False, False],
                                     nulls_last=True)["row"]
                orders[(column.key, order)] = [rendered[index] for index in indices]
        return orders


@dataclass(frozen=True)
class Player:
    name: str
    bio: list[tuple[str, str]]  # (label, value), in page order
    career: list[Markup]  # one row per NBA season, oldest first


@dataclass(frozen=True)
class Catalog:
    seasons: dict[int, Season]  # newest first: the per-game pages
    totals: dict[int, Season]  # the same seasons' totals pages
    letters: dict[str, list[Markup]]  # a letter that has players -> their index rows, by id
    players: dict[str, Player]  # by Basketball-Reference id
    drafts: dict[int, list[Markup]]  # NBA draft year, newest first -> picks in draft order


def season_pages(seasons: pl.DataFrame, columns: tuple[Column, ...] = SEASON_COLUMNS) -> dict[int, Season]:
    """Each season's table of `columns`, newest first."""
    return {season: Season(season_label(season), table, columns)
            for (season,), table in sorted(seasons.partition_by("season", as_dict=True).items(), reverse=True)}


def player_pages(players: pl.DataFrame, seasons: pl.DataFrame, draft: pl.DataFrame) -> dict[str, Player]:
    picks = {pick["bref_id"]: pick for pick in first_nba_picks(draft).iter_rows(named=True)}
    careers: dict[str, list[Markup]] = {}
    for r in seasons.filter(pl.col("bref_id").is_not_null()).sort("season", maintain_order=True).iter_rows(named=True):
        careers.setdefault(r["bref_id"], []).append(row(season_label(r["season"]), [
            cell(r[name]) for name in ("age", "team", "games", "games_started", "mp_per_game", "pts_per_game",
                                       "reb_per_game", "ast_per_game", "pts")
        ]))
    pages = {}
    for p in players.iter_rows(named=True):
        bio = [
            ("Position", p["pos"] or DASH),
            ("Born", p["birth_date"].isoformat() if p["birth_date"] else DASH),
            ("Height", height(p["height_in"])),
            ("College", p["colleges"] or DASH),
            ("Draft", draft_line(picks.get(p["bref_id"]))),
        ]
        pages[p["bref_id"]] = Player(p["player"], bio, careers.get(p["bref_id"], []))
    return pages


def letter_pages(players: pl.DataFrame) -> dict[str, list[Markup]]:
    letters: dict[str, list[Markup]] = {}
    for p in players.sort("bref_id").iter_rows(named=True):
        letters.setdefault(p["bref_id"][0], []).append(row(player_link(p["player"], p["bref_id"]), [
            cell(p[name]) for name in ("first_season", "last_season", "pos", "birth_date", "colleges")
        ]))
    return letters


def draft_pages(draft: pl.DataFrame, known: set[str]) -> dict[int, list[Markup]]:
    """Each NBA draft's picks by overall pick (picks without one last, by round); a player is
    linked when he has a page."""
    nba = draft.filter(pl.col("league") == "NBA").sort(
        ["draft_year", "overall_pick", "round"], descending=[True, False, False], nulls_last=True, maintain_order=True)
    pages: dict[int, list[Markup]] = {}
    for pick in nba.iter_rows(named=True):
        bref_id = pick["bref_id"] if pick["bref_id"] in known else None
        pages.setdefault(pick["draft_year"], []).append(row(cell(pick["overall_pick"]), [
            cell(pick["round"]), cell(pick["team"]), player_link(pick["player"], bref_id), cell(pick["college"]),
        ]))
    return pages


@cache
def catalog() -> Catalog:
    seasons = TABLES.load("nba_seasons")
    players = TABLES.load("nba_players")
    draft = TABLES.load("nba_draft_picks")
    return Catalog(
        seasons=season_pages(seasons),
        totals=season_pages(seasons, TOTALS_COLUMNS),
        letters=letter_pages(players),
        players=player_pages(players, seasons, draft),
        drafts=draft_pages(draft, set(players["bref_id"].to_list())),
    )
