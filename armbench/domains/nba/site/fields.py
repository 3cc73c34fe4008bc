"""How the NBA site writes its values: cells, season labels, heights, draft lines, and the sortable
columns (`?sort=&order=`) of a season's two tables, per game and totals.

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
    if isinstance(value, int):
        return str(value)  # digits: nothing to escape (and escaping 22,452 rows' numbers is slow)
    if isinstance(value, float):
        return f"{value:.1f}"
    if isinstance(value, date):
        return value.isoformat()
    return str(escape(value))


def fraction(value: float | None) -> str:
    """A shooting percentage as Basketball-Reference writes it, a fraction to three decimals without
    the leading zero: 0.452 -> ".452", 1.0 -> "1.000"; null is empty."""
    if value is None:
        return ""
    shown = f"{value:.3f}"
    return shown[1:] if shown.startswith("0") else shown


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


def _fraction(name: str):
    return lambda r: fraction(r[name])


# The totals page's columns, in table order (Basketball-Reference's, limited to what the tables
# hold): the season's totals, steals, blocks, shooting, a traded player's teams and the row id.
TOTALS_COLUMNS: tuple[Column, ...] = (
    *SEASON_COLUMNS[:4],
    Column("teams", "Teams", "teams", "teams", "text", _text("teams")),
    SEASON_COLUMNS[4],
    Column("fg_pct", "FG%", "field goal percentage", "fg_percent", "number", _fraction("fg_percent")),
    Column("fg3_pct", "3P%", "three-point percentage", "x3p_percent", "number", _fraction("x3p_percent")),
    Column("ft_pct", "FT%", "free throw percentage", "ft_percent", "number", _fraction("ft_percent")),
    Column("trb", "TRB", "total rebounds", "trb", "number", _text("trb")),
    Column("ast", "AST", "total assists", "ast", "number", _text("ast")),
    Column("stl", "STL", "steals", "stl", "number", _text("stl")),
    Column("blk", "BLK", "blocks", "blk", "number", _text("blk")),
    Column("pts", "PTS", "total points", "pts", "number", _text("pts")),
    Column("id", "Row id", "row id", "seas_id", "number", _text("seas_id")),
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


@dataclass(frozen=True)
class TotalsQuery(SeasonQuery):
    """A totals page's query: as a season page's, over the totals columns."""

    COLUMNS = {column.key: column for column in TOTALS_COLUMNS}


def parse_totals_query(params: Mapping[str, str]) -> TotalsQuery:
    """The totals page's query string, read as a season page's."""
    return TotalsQuery(**TotalsQuery.parse_common(params))
