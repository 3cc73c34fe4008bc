"""Reads the NBA replica into `nba_query` rows (the contract: armbench/domains/parity.py).

Pages read, and why:
- `/leagues/`, then every season page `/leagues/NBA_{season}_per_game.html` (72): one table per
  season with every player-season's position, age, team, games and per-game figures; the only page
  that shows a season's per-game figures and games started.
- every season's totals page `/leagues/NBA_{season}_totals.html` (72): the same players' season
  totals (points, rebounds, assists, steals, blocks), shooting percentages, teams and the source's
  row id. Its rows are returned as rows of their own (with the player's birth date, the key's third
  part), which the parity check merges with the season page's and checks where both show a field.
- every player page a season table links to (about 4,400): the bio (birth date, height, colleges,
  first NBA draft pick) and the career table, whose season points the totals page shows too.
The letter index and the draft pages show nothing these do not. Given a scope with a season (a
derived solution's), only that season's pages and its players' are read.

Standard library and the reading kit (armbench/domains/reading.py) only: in the python sandbox,
where armbench is not installed, it runs after the kit's text (`parity.reader_source`).
"""
from __future__ import annotations

import html
import re

from armbench.domains.reading import fetch, text

TOOL = "nba_query"
TABLE = "nba_seasons"  # the replica table these rows are, as derivations name it (derived solutions)
KEY = ("player", "season", "birth_date")  # namesakes share seasons, never a birthday too
OUT_OF_TOOL: dict[str, str] = {}

MISSING = {"", "—"}  # an empty cell, or a bio value the site does not know
NO_BIO = dict.fromkeys(("birth_date", "birth_month", "birth_day", "height_in", "colleges",
                        "draft_team", "draft_round", "draft_pick", "draft_year"))
DRAFT = re.compile(r"(?P<team>[^,]+)(?:, round (?P<round>\d+))?(?:, pick (?P<pick>\d+))?, (?P<year>\d{4}) NBA Draft")
# The site writes every table body row as <tr><th scope="row">..</th><td>..</td>..</tr>; reading
# them with regular expressions is several times faster than html.parser, which cost more than the
# fetch on these 4,400 pages.
HEADED_ROW = re.compile(r'<tr>\s*<th scope="row">(.*?)</th>(.*?)</tr>', re.S)
DATA_CELL = re.compile(r"<td>(.*?)</td>", re.S)
LINK = re.compile(r'<a href="([^"]+)"')


def read_site(base: str, scope: dict | None = None) -> list[dict]:
    rows = []
    players: dict[str, dict] = {}  # player page address -> its bio and career, read once

    def player(href: str) -> dict:
        if href not in players:
            players[href] = player_page(fetch(base + href))
        return players[href]

    seasons = re.findall(r'href="/leagues/NBA_(\d{4})_per_game\.html"', fetch(f"{base}/leagues/"))
    wanted = str((scope or {}).get("season", ""))
    for season in [season for season in seasons if season == wanted] if wanted else seasons:
        (season_rows,) = tables(fetch(f"{base}/leagues/NBA_{season}_per_game.html"))
        for (name, href), pos, age, team, games, started, mp, pts, reb, ast in season_rows:
            row = {"player": name, "season": season, "pos": pos, "age": age, "team": team,
                   "traded": team == "TOT",  # the season page: a traded player's one row has team TOT
                   "games": games, "games_started": started, "mp_per_game": mp, "pts_per_game": pts,
                   "reb_per_game": reb, "ast_per_game": ast}
            if href is None:
                row |= NO_BIO  # a player without a page: the site knows no bio or draft pick of his
            else:
                row |= player(href)["bio"] | player(href)["career"][season]
            rows.append(row)
        (totals_rows,) = tables(fetch(f"{base}/leagues/NBA_{season}_totals.html"))
        for (name, href), pos, age, team, teams, games, fg, x3p, ft, trb, ast, stl, blk, pts, seas_id in totals_rows:
            rows.append({"player": name, "season": season,
                         "birth_date": None if href is None else player(href)["bio"]["birth_date"],
                         "pos": pos, "age": age, "team": team, "teams": teams, "games": games,
                         "fg_percent": fg, "x3p_percent": x3p, "ft_percent": ft,  # 0-1, as ".452"
                         "trb": trb, "ast": ast, "stl": stl, "blk": blk, "pts": pts, "seas_id": seas_id})
    return rows


def player_page(page: str) -> dict:
    """A player's bio as tool fields, and each career row's season points by season (end year)."""
    bio_rows, career = tables(page)
    bio = {label: value for (label, _), value in bio_rows}
    born = bio["Born"]
    return {
        "bio": {
            "birth_date": born,
            # the tool's birth_month and birth_day are the birth date's month and day, as numbers
            "birth_month": born and born[5:7], "birth_day": born and born[8:10],
            "height_in": inches(bio["Height"]),
            "colleges": bio["College"],
            **draft(bio["Draft"]),
        },
        "career": {str(int(label[:4]) + 1): {"pts": cells[-1]} for (label, _), *cells in career},
    }


def inches(height: str | None) -> str | None:
    """ "6-9" -> "81": the site writes feet-inches, the tool inches, which the comparison cannot relate."""
    if height is None:
        return None
    feet, rest = height.split("-")
    return str(int(feet) * 12 + int(rest))


def draft(line: str) -> dict:
    """ "CLE, round 1, pick 1, 2003 NBA Draft" -> the four draft fields (a part the line leaves out is
    None); "Undrafted" -> all None."""
    found = DRAFT.fullmatch(line)
    if found is None and line != "Undrafted":
        raise ValueError(f"unexpected draft line {line!r}")
    part = found.group if found else lambda _: None
    return {"draft_team": part("team"), "draft_round": part("round"), "draft_pick": part("pick"),
            "draft_year": part("year")}


def tables(page: str) -> list[list[list]]:
    """Each table's body rows: the row header as (text, link or None), then each cell's text (None
    when the site shows it as missing)."""
    return [[[(text(header), link(header)), *(cell_value(cell) for cell in DATA_CELL.findall(cells))]
             for header, cells in HEADED_ROW.findall(table)]
            for table in page.split("<table")[1:]]


def cell_value(fragment: str) -> str | None:
    shown = text(fragment)
    return None if shown in MISSING else shown


def link(fragment: str) -> str | None:
    found = LINK.search(fragment)
    return html.unescape(found.group(1)) if found else None
