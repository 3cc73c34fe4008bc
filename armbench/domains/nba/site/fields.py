"""How the NBA site writes its values: cells, season labels, heights, draft lines, and the season
table's sortable columns (`?sort=&order=` of a season page).

A cell is HTML (escaped text, or a link): rows are joined once when the site starts, so a page
request only picks an order. Unknown values are empty cells and sort last either way.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from markupsafe import Markup, escape

from armbench.replicas.web.listing import Column, ListQuery

DASH = "—"  # a bio value the tables do not hold


def cell(value: object) -> str:
    """A table cell's content: ints as they are, per-game floats with their one decimal, dates
    YYYY-MM-DD, text escaped; null is empty."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.1f}"
    if isinstance(value, date):
        return value.isoformat()
    return str(escape(value))


def season_label(season: int) -> str:
    """2021 -> "2020-21", 2000 -> "1999-00": a season by the years it spans."""
    return f"{season - 1}-{season % 100:02d}"


def player_href(bref_id: str) -> str:
    return f"/players/{bref_id[0]}/{bref_id}.html"


def player_link(name: str, bref_id: str | None) -> str:
    """The player's name, linked to his page when he has one."""
    if bref_id is None:
        return str(escape(name))
    return f'<a href="{player_href(bref_id)}">{escape(name)}</a>'


def height(inches: float | None) -> str:
    """81 -> "6-9" (feet-inches)."""
    if inches is None:
        return DASH
    whole = int(inches)
    return f"{whole // 12}-{whole % 12}"


def draft_line(pick: Mapping[str, Any] | None) -> str:
    """ "NYK, round 1, pick 4, 2015 NBA Draft"; a part the draft table lacks (the overall pick of
    some 1950s later-round picks) is left out; "Undrafted" when there is no NBA pick."""
    if pick is None:
        return "Undrafted"
    parts = [pick["team"]]
    if pick["round"] is not None:
        parts.append(f"round {pick['round']}")
    if pick["overall_pick"] is not None:
        parts.append(f"pick {pick['overall_pick']}")
    parts.append(f"{pick['draft_year']} NBA Draft")
    return ", ".join(parts)


def row(header: str, cells: list[str]) -> Markup:
    """`<tr><th scope="row">header</th><td>..</td>...</tr>` from HTML pieces."""
    return Markup(f'<tr><th scope="row">{header}</th>' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")


def _text(name: str):
    return lambda r: cell(r[name])


# The season page's columns, in table order; `sort_column` is the nba_seasons column sorted.
SEASON_COLUMNS: tuple[Column, ...] = (
    Column("player", "Player", "player name", "player", "text", lambda r: player_link(r["player"], r["bref_id"])),
    Column("pos", "Pos", "position", "pos", "text", _text("pos")),
    Column("age", "Age", "age", "age", "number", _text("age")),
    Column("team", "Tm", "team", "team", "text", _text("team")),
    Column("g", "G", "games", "games", "number", _text("games")),
    Column("gs", "GS", "games started", "games_started", "number", _text("games_started")),
    Column("mp", "MP", "minutes per game", "mp_per_game", "number", _text("mp_per_game")),
    Column("pts", "PTS", "points per game", "pts_per_game", "number", _text("pts_per_game")),
    Column("trb", "TRB", "rebounds per game", "reb_per_game", "number", _text("reb_per_game")),
    Column("ast", "AST", "assists per game", "ast_per_game", "number", _text("ast_per_game")),
)


@dataclass(frozen=True)
class SeasonQuery(ListQuery):
    """A season page's query: `sort` (a column key), `order` (asc | desc); `page` is 1 (the table
    is one page; the shared parser reads it, so a malformed one is a 400 like anywhere else)."""

    sort: str = "pts"

    PATH = "/leagues/"
    COLUMNS = {column.key: column for column in SEASON_COLUMNS}
    DEFAULT_SORT = "pts"

    def header_href(self, column: Column) -> Markup:
        """The column header's link: sort by it; on the current sort column, the other order."""
        if column.key == self.sort:
            order = "asc" if self.order == "desc" else "desc"
        else:
            order = column.default_order
        # Column keys and orders are fixed words: the link is written as is (a bare &, as
        # HTML allows before `order=`), not escaped to &amp;.
        return Markup(f"?sort={column.key}&order={order}")


def parse_season_query(params: Mapping[str, str]) -> SeasonQuery:
    """The season page's query string; BadQuery (a 400 page) for a sort or order it cannot honour.
    Other parameters are ignored."""
    return SeasonQuery(**SeasonQuery.parse_common(params))
