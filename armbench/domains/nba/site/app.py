"""The NBA replica site as an ASGI app; `create_app` is the factory `armbench.replicas.serve` runs.

Routes (Basketball-Reference's shapes):
- `/` redirects to `/leagues/`, the seasons index; `/healthz` (JSON: replica name and data hash).
- `/leagues/NBA_{season}_per_game.html`: every player of a season in one per-game table,
  `?sort={column}&order={asc|desc}` (default: points per game, highest first).
- `/leagues/NBA_{season}_totals.html`: the same players' season totals (points, rebounds, assists,
  steals, blocks), shooting percentages, a traded player's teams and the source's row id; sorted
  the same way (default: points, highest first).
- `/players/`, `/players/{letter}/`: the player index by the first letter of the player's id.
- `/players/{letter}/{bref_id}.html`: bio, first NBA draft pick, one row per NBA season.
- `/draft/`, `/draft/NBA_{year}.html`: each NBA draft's picks (no statistics).
A path value is looked up in what `catalog()` prepared (ASCII, bounded); anything else is a 404 page.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from string import ascii_lowercase

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup
from starlette.exceptions import HTTPException

from armbench.domains.nba import TABLES
from armbench.domains.nba.site.catalog import Season, catalog
from armbench.domains.nba.site.fields import (
    SEASON_COLUMNS,
    TOTALS_COLUMNS,
    SeasonQuery,
    parse_season_query,
    parse_totals_query,
    season_label,
)
from armbench.replicas.web.listing import BadQuery, Column, whole_number
from armbench.replicas.web.pages import create_site

TEMPLATES = Path(__file__).resolve().parent / "templates"
MAX_ID_LENGTH = 12  # Basketball-Reference player ids are 6 to 9 characters


def create_app() -> FastAPI:
    data = catalog()
    app, templates = create_site("NBA Stats Reference", "nba", TABLES.hash(), TEMPLATES, "/leagues/",
                                 "Browse NBA seasons")
    first_season, last_season = min(data.seasons), max(data.seasons)
    seasons_held = f"{season_label(first_season)} to {season_label(last_season)}"
    season_links = [(season, page.label) for season, page in data.seasons.items()]

    @app.get("/leagues/", response_class=HTMLResponse)
    async def leagues(request: Request) -> Response:
        return templates.TemplateResponse(request, "leagues.html", {"seasons": season_links})

    def season_table(request: Request, season: str, asked: Mapping[str, str], pages: dict[int, Season],
                     parse: Callable[[Mapping[str, str]], SeasonQuery], columns: tuple[Column, ...],
                     template: str) -> Response:
        """A season's per-game or totals page: 404 for a season the site does not hold, 400 for a
        query it cannot honour."""
        number = whole_number(season, max_digits=4)
        page = pages.get(number) if number is not None else None
        if page is None:
            raise HTTPException(404, f"No NBA season ends in {season[:40]!r}: this site holds the seasons "
                                     f"{seasons_held}. See the list at /leagues/.")
        try:
            query = parse(asked)
        except BadQuery as exc:
            raise HTTPException(400, str(exc)) from None
        if query.page != 1:
            raise HTTPException(404, f"Page {query.page} does not exist: a season's table is one page.")
        rows = page.rows[(query.sort, query.order)]
        context = {"season": page, "number": number, "query": query, "columns": columns,
                   "rows": Markup("\n").join(rows), "count": len(rows)}
        return templates.TemplateResponse(request, template, context)

    @app.get("/leagues/NBA_{season}_per_game.html", response_class=HTMLResponse)
    async def season_page(request: Request, season: str) -> Response:
        return season_table(request, season, request.query_params, data.seasons, parse_season_query, SEASON_COLUMNS,
                            "season.html")

    @app.get("/leagues/NBA_{season}_totals.html", response_class=HTMLResponse)
    async def totals_page(request: Request, season: str) -> Response:
        return season_table(request, season, request.query_params, data.totals, parse_totals_query, TOTALS_COLUMNS,
                            "totals.html")

    @app.get("/players/", response_class=HTMLResponse)
    async def players_index(request: Request) -> Response:
        return templates.TemplateResponse(request, "players.html", {"letters": list(data.letters)})

    def checked_letter(letter: str) -> str:
        if len(letter) != 1 or letter not in ascii_lowercase:
            raise HTTPException(404, f"No player index at /players/{letter[:40]}/: letters are a to z. "
                                     "See /players/.")
        return letter

    @app.get("/players/{letter}/", response_class=HTMLResponse)
    async def letter_page(request: Request, letter: str) -> Response:
        letter = checked_letter(letter)
        rows = data.letters.get(letter, [])
        context = {"letter": letter, "rows": Markup("\n").join(rows), "count": len(rows)}
        return templates.TemplateResponse(request, "letter.html", context)

    @app.get("/players/{letter}/{bref_id}.html", response_class=HTMLResponse)
    async def player_page(request: Request, letter: str, bref_id: str) -> Response:
        known = len(bref_id) <= MAX_ID_LENGTH and bref_id.isascii()
        player = data.players.get(bref_id) if known else None
        if player is None or letter != bref_id[0]:
            raise HTTPException(404, f"No player has the address /players/{letter[:40]}/{bref_id[:40]}.html. "
                                     "Find him in the index at /players/.")
        context = {"player": player, "career": Markup("\n").join(player.career), "seasons_held": seasons_held}
        return templates.TemplateResponse(request, "player.html", context)

    @app.get("/draft/", response_class=HTMLResponse)
    async def drafts_index(request: Request) -> Response:
        return templates.TemplateResponse(request, "drafts.html", {"years": list(data.drafts)})

    @app.get("/draft/NBA_{year}.html", response_class=HTMLResponse)
    async def draft_page(request: Request, year: str) -> Response:
        number = whole_number(year, max_digits=4)
        picks = data.drafts.get(number) if number is not None else None
        if picks is None:
            raise HTTPException(404, f"No NBA draft in {year[:40]!r}: this site holds the NBA drafts "
                                     f"{min(data.drafts)} to {max(data.drafts)}. See the list at /draft/.")
        context = {"year": number, "rows": Markup("\n").join(picks), "count": len(picks)}
        return templates.TemplateResponse(request, "draft.html", context)

    return app
