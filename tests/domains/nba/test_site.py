"""The NBA replica site (pages rendered by `create_app`): the HTML contract its scrapers read.

Expected rows are rebuilt here with polars from the parquet, never copied from the site.
"""
from __future__ import annotations

import re
from urllib.parse import quote

import polars as pl
import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from armbench.domains.nba import TABLES
from armbench.domains.nba.site.app import create_app
from armbench.domains.nba.site.fields import fraction as site_fraction
from tests.support.site_pages import check_error_page, row_value

SEASONS = TABLES.load("nba_seasons")
PLAYERS = TABLES.load("nba_players")
DRAFT = TABLES.load("nba_draft_picks")
NBA_DRAFT = DRAFT.filter(pl.col("league") == "NBA")
FOOTER = re.compile(r"<footer>.*bball-reference-datasets.*research use.*</footer>", re.S)
SORT_KEYS = ["player", "pos", "age", "team", "g", "gs", "mp", "pts", "trb", "ast"]
SEASON_ROW = re.compile(r'<tr><th scope="row">(?:<a href="/players/([a-z])/([a-z0-9]+)\.html">)?([^<]*)(?:</a>)?</th>'
                        r"((?:<td>[^<]*</td>){9})</tr>")
PLAYER_SORT_KEY = {"player": "player", "pos": "pos", "age": "age", "team": "team", "g": "games",
                   "gs": "games_started", "mp": "mp_per_game", "pts": "pts_per_game", "trb": "reb_per_game",
                   "ast": "ast_per_game"}


@pytest.fixture(scope="module")
def site() -> TestClient:
    return TestClient(create_app())


def text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(escape(value if isinstance(value, str) else str(value)))


def label(season: int) -> str:
    return f"{season - 1}-{season % 100:02d}"


def linked(name: str, bref_id: str | None) -> str:
    return f'<a href="/players/{bref_id[0]}/{bref_id}.html">{escape(name)}</a>' if bref_id else str(escape(name))


def expected_season_row(r: dict) -> str:
    cells = [r[name] for name in ("pos", "age", "team", "games", "games_started", "mp_per_game", "pts_per_game",
                                  "reb_per_game", "ast_per_game")]
    return (f'<tr><th scope="row">{linked(r["player"], r["bref_id"])}</th>'
            + "".join(f"<td>{text(c)}</td>" for c in cells) + "</tr>")


def season_rows(html: str) -> list[str]:
    return re.findall(r'<tr><th scope="row">.*?</tr>', html.split("<tbody>")[1].split("</tbody>")[0])


def column(rows: list[str], index: int) -> list[str]:
    """The `index`-th <td> of each row (0 = position)."""
    return [re.findall(r"<td>([^<]*)</td>", row)[index] for row in rows]


def h1(html: str) -> str:
    return re.search(r"<h1>(.*?)</h1>", html, re.S).group(1)


# ---- home, seasons index --------------------------------------------------------------------


def test_home_leads_to_the_seasons(site):
    assert site.get("/", follow_redirects=False).headers["location"] == "/leagues/"


def test_seasons_index_links_every_season_newest_first(site):
    html = site.get("/leagues/").text
    assert h1(html) == "NBA seasons"
    links = re.findall(r'<a href="/leagues/NBA_(\d{4})_per_game\.html">(\d{4}-\d\d)</a>', html)
    seasons = sorted(SEASONS["season"].unique().to_list(), reverse=True)
    assert [int(s) for s, _ in links] == seasons
    assert all(text == label(int(s)) for s, text in links)
    assert ("2000", "1999-00") in links and ("2021", "2020-21") in links
    totals = re.findall(r'<a href="/leagues/NBA_(\d{4})_totals\.html">totals</a>', html)
    assert [int(s) for s in totals] == seasons


# ---- season pages ---------------------------------------------------------------------------


def test_season_page_has_every_row_of_the_season_exactly_as_the_contract_says(site):
    html = site.get("/leagues/NBA_2021_per_game.html").text
    assert h1(html) == "2020-21 NBA Player Stats: Per Game"
    assert html.count("<table") == 1
    rows = season_rows(html)
    expected = SEASONS.filter(pl.col("season") == 2021)
    assert len(rows) == expected.height == 540
    assert all(SEASON_ROW.fullmatch(row) for row in rows)
    assert sorted(rows) == sorted(expected_season_row(r) for r in expected.iter_rows(named=True))
    assert "Kristaps Porziņģis" in html and "Luka Dončić" in html
    assert re.search(r'<th scope="row"><a href="/players/[a-z]/[a-z0-9]+\.html">[^<]+</a></th><td>[^<]+</td>'
                     r"<td>\d+</td><td>TOT</td>", html)


def test_season_page_links_its_totals_page(site):
    html = site.get("/leagues/NBA_2021_per_game.html").text
    assert '<a href="/leagues/NBA_2021_totals.html">2020-21 totals</a>' in html


def test_season_header_links_sort_each_column(site):
    html = site.get("/leagues/NBA_2021_per_game.html").text
    headers = re.findall(r'<th scope="col"><a href="\?sort=(\w+)&order=(asc|desc)">([^<]+)</a></th>', html)
    assert [key for key, _, _ in headers] == SORT_KEYS
    orders = {key: order for key, order, _ in headers}
    assert orders["pts"] == "asc"  # the current sort (points, highest first) flips
    assert orders["player"] == "asc" and orders["age"] == "desc"
    assert "Sorted by points per game, highest first" in html
    assert 'href="?sort=age&order=asc"' in site.get("/leagues/NBA_2021_per_game.html?sort=age&order=desc").text


def test_default_order_is_points_per_game_descending(site):
    rows = season_rows(site.get("/leagues/NBA_2021_per_game.html").text)
    points = [float(v) for v in column(rows, 6)]
    assert points == sorted(points, reverse=True)
    top = SEASONS.filter(pl.col("season") == 2021).sort("pts_per_game", descending=True).row(0, named=True)
    assert rows[0] == expected_season_row(top)


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("key", SORT_KEYS)
def test_every_column_sorts_both_ways_with_unknowns_last(site, key, order):
    for season in (1970, 2021):  # 1970: games started unknown for everyone, some minutes too
        rows = season_rows(site.get(f"/leagues/NBA_{season}_per_game.html?sort={key}&order={order}").text)
        frame = SEASONS.filter(pl.col("season") == season)
        name = PLAYER_SORT_KEY[key]
        values = frame[name].to_list()
        known = [v for v in values if v is not None]
        expected = sorted(known, key=lambda v: v.lower() if isinstance(v, str) else v, reverse=order == "desc")
        expected = [text(v) for v in expected] + [""] * (len(values) - len(known))
        if key == "player":
            shown = [re.sub(r"<[^>]+>", "", re.match(r'<tr><th scope="row">(.*?)</th>', r).group(1)) for r in rows]
        else:
            shown = column(rows, SORT_KEYS.index(key) - 1)
        assert shown == expected, (season, key, order)


def test_sorting_by_age_ascending(site):
    rows = season_rows(site.get("/leagues/NBA_2021_per_game.html?sort=age&order=asc").text)
    ages = [int(v) for v in column(rows, 1)]
    assert ages == sorted(ages) and ages[0] == SEASONS.filter(pl.col("season") == 2021)["age"].min()
    assert "Sorted by age, lowest first" in site.get("/leagues/NBA_2021_per_game.html?sort=age&order=asc").text


def test_unknown_values_are_empty_cells_and_players_without_an_id_are_not_linked(site):
    rows = season_rows(site.get("/leagues/NBA_1970_per_game.html").text)
    assert all(cells[4] == "" for cells in (re.findall(r"<td>([^<]*)</td>", r) for r in rows))  # no GS in 1970
    nameless = SEASONS.filter(pl.col("bref_id").is_null()).row(0, named=True)
    html = site.get(f"/leagues/NBA_{nameless['season']}_per_game.html").text
    assert expected_season_row(nameless) in html
    assert f'<th scope="row">{escape(nameless["player"])}</th>' in html


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("sort=height", 400, "Cannot sort by 'height'"),
        ("sort=PTS", 400, "Cannot sort by 'PTS'"),
        ("sort=pts&order=up", 400, "Unknown order 'up'"),
        ("order=ascending", 400, "Unknown order"),
        ("page=x", 400, "Page must be a whole number"),
        ("page=²", 400, "Page must be a whole number"),
        ("page=2", 404, "a season's table is one page"),
    ],
)
def test_bad_season_query_is_an_error_page(site, query, status, message):
    check_error_page(site, f"/leagues/NBA_2021_per_game.html?{query}", status, message, FOOTER)


def test_empty_sort_and_unknown_parameters_mean_the_default(site):
    default = site.get("/leagues/NBA_2021_per_game.html").text
    assert site.get("/leagues/NBA_2021_per_game.html?sort=&order=&x=1&page=1").text == default


@pytest.mark.parametrize("season", ["1949", "2022", "0", "02021", "２０２１", "x", "-2021", "2021.0", "9" * 30])
def test_unknown_season_is_a_404_page(site, season):
    check_error_page(site, f"/leagues/NBA_{quote(season)}_per_game.html", 404, "No NBA season ends in", FOOTER)


# ---- totals pages ---------------------------------------------------------------------------

TOTALS_SORT_KEYS = ["player", "pos", "age", "team", "teams", "g", "fg_pct", "fg3_pct", "ft_pct", "trb", "ast",
                    "stl", "blk", "pts", "id"]
TOTALS_FIELDS = ["player", "pos", "age", "team", "teams", "games", "fg_percent", "x3p_percent", "ft_percent", "trb",
                 "ast", "stl", "blk", "pts", "seas_id"]


def fraction(value: float | None) -> str:
    """.452 as Basketball-Reference writes a shooting percentage (1.000 for a perfect one)."""
    if value is None:
        return ""
    return f"{value:.3f}".removeprefix("0")


def expected_totals_row(r: dict) -> str:
    cells = [fraction(r[name]) if name.endswith("_percent") else text(r[name]) for name in TOTALS_FIELDS[1:]]
    return (f'<tr><th scope="row">{linked(r["player"], r["bref_id"])}</th>'
            + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")


def test_totals_page_has_every_row_of_the_season_with_totals_shooting_teams_and_row_id(site):
    html = site.get("/leagues/NBA_2021_totals.html").text
    assert h1(html) == "2020-21 NBA Player Stats: Totals"
    assert html.count("<table") == 1
    assert '<a href="/leagues/NBA_2021_per_game.html">' in html
    headers = re.findall(r'<th scope="col"><a href="\?sort=(\w+)&order=(?:asc|desc)">([^<]+)</a></th>', html)
    assert headers == list(zip(TOTALS_SORT_KEYS, ["Player", "Pos", "Age", "Tm", "Teams", "G", "FG%", "3P%", "FT%",
                                                  "TRB", "AST", "STL", "BLK", "PTS", "Row id"]))
    rows = season_rows(html)
    expected = SEASONS.filter(pl.col("season") == 2021)
    assert len(rows) == expected.height == 540
    assert sorted(rows) == sorted(expected_totals_row(r) for r in expected.iter_rows(named=True))
    points = [int(v) for v in column(rows, 12)]
    assert points == sorted(points, reverse=True) and "Sorted by total points, highest first" in html


def test_a_traded_players_totals_row_names_his_teams(site):
    traded = SEASONS.filter(pl.col("traded") & (pl.col("season") == 2021)).row(0, named=True)
    html = site.get("/leagues/NBA_2021_totals.html").text
    row = expected_totals_row(traded)
    assert row in html
    assert f"<td>TOT</td><td>{escape(traded['teams'])}</td>" in row and ", " in traded["teams"]


def test_shooting_percentages_read_as_basketball_reference_writes_them():
    assert [site_fraction(v) for v in (0.452, 0.0, 1.0, 0.05, None)] == [".452", ".000", "1.000", ".050", ""]


def test_totals_of_players_without_a_page_and_of_early_seasons(site):
    for r in SEASONS.filter(pl.col("bref_id").is_null()).iter_rows(named=True):
        html = site.get(f"/leagues/NBA_{r['season']}_totals.html").text
        assert f'<th scope="row">{escape(r["player"])}</th>' in html and expected_totals_row(r) in html
    rows = season_rows(site.get("/leagues/NBA_1970_totals.html").text)
    assert all(cells[10] == cells[11] == "" for cells in (re.findall(r"<td>([^<]*)</td>", r) for r in rows))


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("key", TOTALS_SORT_KEYS)
def test_every_totals_column_sorts_both_ways_with_unknowns_last(site, key, order):
    rows = season_rows(site.get(f"/leagues/NBA_1980_totals.html?sort={key}&order={order}").text)
    frame = SEASONS.filter(pl.col("season") == 1980)  # 1980: the first season with threes, blocks known
    name = TOTALS_FIELDS[TOTALS_SORT_KEYS.index(key)]
    values = frame[name].to_list()
    known = [v for v in values if v is not None]
    expected = sorted(known, key=lambda v: v.lower() if isinstance(v, str) else v, reverse=order == "desc")
    show = fraction if name.endswith("_percent") else text
    expected = [show(v) for v in expected] + [""] * (len(values) - len(known))
    if key == "player":
        shown = [re.sub(r"<[^>]+>", "", re.match(r'<tr><th scope="row">(.*?)</th>', r).group(1)) for r in rows]
    else:
        shown = column(rows, TOTALS_SORT_KEYS.index(key) - 1)
    assert shown == expected, (key, order)


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("sort=mp", 400, "Cannot sort by 'mp'"),
        ("sort=fg%", 400, "Cannot sort by 'fg%'"),
        ("sort=id&order=up", 400, "Unknown order 'up'"),
        ("page=0", 400, "Page must be a whole number"),
        ("page=2", 404, "a season's table is one page"),
    ],
)
def test_bad_totals_query_is_an_error_page(site, query, status, message):
    check_error_page(site, f"/leagues/NBA_2021_totals.html?{query}", status, message, FOOTER)


@pytest.mark.parametrize("season", ["1949", "2022", "02021", "x", "9" * 30])
def test_unknown_totals_season_is_a_404_page(site, season):
    check_error_page(site, f"/leagues/NBA_{quote(season)}_totals.html", 404, "No NBA season ends in", FOOTER)


# ---- player index ---------------------------------------------------------------------------


def test_players_index_links_each_letter_that_has_players(site):
    html = site.get("/players/").text
    assert h1(html) == "Players"
    letters = re.findall(r'<a href="/players/([a-z])/">([A-Z])</a>', html)
    assert [lower for lower, _ in letters] == sorted(set(PLAYERS["bref_id"].str.slice(0, 1).to_list()))
    assert all(upper == lower.upper() for lower, upper in letters)


def test_letter_page_lists_every_player_of_the_letter_by_id(site):
    html = site.get("/players/p/").text
    assert h1(html) == "Players: P"
    rows = season_rows(html)
    players = PLAYERS.filter(pl.col("bref_id").str.starts_with("p")).sort("bref_id")
    expected = [
        f'<tr><th scope="row">{linked(p["player"], p["bref_id"])}</th>'
        + "".join(f"<td>{text(p[name])}</td>" for name in ("first_season", "last_season", "pos"))
        + f"<td>{p['birth_date'].isoformat() if p['birth_date'] else ''}</td><td>{text(p['colleges'])}</td></tr>"
        for p in players.iter_rows(named=True)
    ]
    assert rows == expected
    assert ('<tr><th scope="row"><a href="/players/p/porzikr01.html">Kristaps Porziņģis</a></th>'
            "<td>2016</td><td>2026</td><td>C-F</td><td>1995-08-02</td><td></td></tr>") in rows


@pytest.mark.parametrize("letter", ["A", "ab", "1", "ä", "%00", "-", "porzikr01"])
def test_unknown_letter_is_a_404_page(site, letter):
    check_error_page(site, f"/players/{quote(letter)}/", 404, "letters are a to z", FOOTER)


# ---- player pages ---------------------------------------------------------------------------


def test_porzingis_bio_and_career(site):
    html = site.get("/players/p/porzikr01.html").text
    assert h1(html) == "Kristaps Porziņģis"
    bio = re.findall(r'<tr><th scope="row">([A-Za-z]+)</th><td>([^<]*)</td></tr>', html)
    assert [name for name, _ in bio] == ["Position", "Born", "Height", "College", "Draft"]
    assert row_value(html, "Born") == "1995-08-02"
    assert row_value(html, "Height") == "7-2"
    assert row_value(html, "College") == "—"
    assert row_value(html, "Draft") == "NYK, round 1, pick 4, 2015 NBA Draft"
    assert "<h2>Per game and totals, regular season</h2>" in html
    career = re.findall(r'<tr><th scope="row">(\d{4}-\d\d)</th>((?:<td>[^<]*</td>){9})</tr>', html)
    assert [season for season, _ in career] == [
        label(s) for s in SEASONS.filter(pl.col("bref_id") == "porzikr01").sort("season")["season"]]


def test_anthony_edwards_2020_21_row(site):
    html = site.get("/players/e/edwaran01.html").text
    assert h1(html) == "Anthony Edwards"
    r = SEASONS.filter((pl.col("bref_id") == "edwaran01") & (pl.col("season") == 2021)).row(0, named=True)
    cells = [r[name] for name in ("age", "team", "games", "games_started", "mp_per_game", "pts_per_game",
                                  "reb_per_game", "ast_per_game", "pts")]
    row = '<tr><th scope="row">2020-21</th>' + "".join(f"<td>{text(c)}</td>" for c in cells) + "</tr>"
    assert row in html
    assert re.findall(r'<th scope="row">2020-21</th>(?:<td>[^<]*</td>){5}<td>([^<]*)</td>', html) == ["19.3"]


@pytest.mark.parametrize("bref_id", ["abdulka01", "jamesle01", "russebi01", "kanteen01", "walkebr01"])
def test_career_has_one_row_per_season_in_order(site, bref_id):
    html = site.get(f"/players/{bref_id[0]}/{bref_id}.html").text
    seasons = SEASONS.filter(pl.col("bref_id") == bref_id).sort("season")
    shown = re.findall(r'<tr><th scope="row">(\d{4}-\d\d)</th>(?:<td>[^<]*</td>){8}<td>(\d*)</td></tr>', html)
    assert shown == [(label(s), text(p)) for s, p in zip(seasons["season"], seasons["pts"])]


def test_a_player_without_nba_seasons_shows_his_bio_and_says_so(site):
    flagg = PLAYERS.filter(pl.col("bref_id") == "flaggco01").row(0, named=True)
    assert SEASONS.filter(pl.col("bref_id") == "flaggco01").is_empty()
    html = site.get("/players/f/flaggco01.html").text
    assert h1(html) == escape(flagg["player"])
    assert row_value(html, "Draft") == "DAL, round 1, pick 1, 2025 NBA Draft"
    assert "No NBA regular-season games on record" in html and html.count("<table") == 1


def test_undrafted_and_unknown_values_read_as_the_contract_says(site):
    undrafted = PLAYERS.filter(~pl.col("bref_id").is_in(NBA_DRAFT["bref_id"].implode()))
    html = site.get(f"/players/{undrafted['bref_id'][0][0]}/{undrafted['bref_id'][0]}.html").text
    assert row_value(html, "Draft") == "Undrafted"
    no_birth = PLAYERS.filter(pl.col("birth_date").is_null())
    assert no_birth.height == 11  # as DATA.md says
    bref_id = no_birth["bref_id"][0]
    assert row_value(site.get(f"/players/{bref_id[0]}/{bref_id}.html").text, "Born") == "—"


def test_draft_line_agrees_with_the_seasons_table_for_every_player_with_seasons(site):
    """The first NBA pick the player page shows is the one nba_seasons joined (what the tool reads)."""
    picks = SEASONS.filter(pl.col("bref_id").is_not_null()).unique("bref_id").select(
        "bref_id", "draft_year", "draft_round", "draft_pick", "draft_team")
    for p in picks.sample(200, seed=17).iter_rows(named=True):
        shown = row_value(site.get(f"/players/{p['bref_id'][0]}/{p['bref_id']}.html").text, "Draft")
        if p["draft_year"] is None:
            assert shown == "Undrafted", p
        else:
            parts = [p["draft_team"], f"round {p['draft_round']}"]
            parts += [f"pick {p['draft_pick']}"] if p["draft_pick"] is not None else []
            assert shown == ", ".join([*parts, f"{p['draft_year']} NBA Draft"]), p


def test_a_pick_without_an_overall_number_leaves_it_out(site):
    once = NBA_DRAFT.group_by("bref_id").len().filter(pl.col("len") == 1)["bref_id"].implode()
    pick = NBA_DRAFT.filter(pl.col("overall_pick").is_null() & pl.col("bref_id").is_in(once)
                            & pl.col("bref_id").is_in(PLAYERS["bref_id"].implode())).row(0, named=True)
    html = site.get(f"/players/{pick['bref_id'][0]}/{pick['bref_id']}.html").text
    assert row_value(html, "Draft") == f"{pick['team']}, round {pick['round']}, {pick['draft_year']} NBA Draft"


@pytest.mark.parametrize("path", [
    "/players/a/porzikr01.html",  # the letter is not the id's first
    "/players/p/porzikr99.html",
    "/players/p/PORZIKR01.html",
    "/players/p/p.html",
    "/players/p/porzikr01",
    f"/players/p/{'p' * 5000}.html",
    "/players/p/porziņģis.html",
])
def test_unknown_player_is_a_404_page(site, path):
    check_error_page(site, quote(path), 404, "", FOOTER)


# ---- drafts ---------------------------------------------------------------------------------


def test_drafts_index_lists_nba_draft_years_newest_first(site):
    html = site.get("/draft/").text
    assert h1(html) == "NBA drafts"
    links = re.findall(r'<a href="/draft/NBA_(\d{4})\.html">(\d{4})</a>', html)
    assert all(year == shown for year, shown in links)
    assert [int(year) for year, _ in links] == sorted(NBA_DRAFT["draft_year"].unique().to_list(), reverse=True)


def test_2015_draft_lists_its_picks_in_order_without_stats(site):
    html = site.get("/draft/NBA_2015.html").text
    assert h1(html) == "2015 NBA Draft"
    rows = season_rows(html)
    picks = NBA_DRAFT.filter(pl.col("draft_year") == 2015).sort("overall_pick")
    known = set(PLAYERS["bref_id"].to_list())
    expected = [
        f'<tr><th scope="row">{p["overall_pick"]}</th><td>{p["round"]}</td><td>{p["team"]}</td>'
        f'<td>{linked(p["player"], p["bref_id"] if p["bref_id"] in known else None)}</td>'
        f"<td>{text(p['college'])}</td></tr>"
        for p in picks.iter_rows(named=True)
    ]
    assert rows == expected
    assert ('<tr><th scope="row">4</th><td>1</td><td>NYK</td>'
            '<td><a href="/players/p/porzikr01.html">Kristaps Porziņģis</a></td><td></td></tr>') in rows
    headers = re.findall(r'<th scope="col">([^<]*)</th>', html)
    assert len(headers) == 5 and not {"PTS", "G", "MP", "TRB", "AST"} & set(headers)
    assert "19.3" not in html and "per game" not in html.split("<main>")[1].split("</main>")[0].lower()


def test_a_draftee_without_a_player_page_is_not_linked(site):
    missing = NBA_DRAFT.filter(~pl.col("bref_id").is_in(PLAYERS["bref_id"].implode())).row(0, named=True)
    html = site.get(f"/draft/NBA_{missing['draft_year']}.html").text
    assert f"<td>{escape(missing['player'])}</td>" in html
    assert f"/{missing['bref_id']}.html" not in html


@pytest.mark.parametrize("year", ["1947", "1949", "2026", "x", "２０１５", "15", "-2015", "9" * 5000])
def test_unknown_draft_year_is_a_404_page(site, year):
    check_error_page(site, f"/draft/NBA_{quote(year)}.html", 404, "No NBA draft in", FOOTER)
