"""The exoplanets domain's site reader: its replica website read into the rows of exoplanet_query
(the contract: armbench/domains/parity.py).

It reads the list pages (/planets, 100 rows each) for the entities' addresses, then every entity's
page (/planets/<pl_name>): the list shows pl_name, hostname, disc_year, discoverymethod,
disc_facility; sy_snum, sy_pnum, pl_orbper, pl_rade, pl_bmasse, pl_orbeccen, sy_dist, st_teff,
st_spectype are on an entity's page only.

Written by `bench data build --domain exoplanets` from domain.yaml (armbench/tablekit/reader.py), and
checked by `bench domain check exoplanets`: edit domain.yaml, not this file.
"""
from __future__ import annotations

import html
import re
from urllib.parse import urlencode

from armbench.domains.reading import fetch_pages, list_pages

TOOL = 'exoplanet_query'
TABLE = 'exoplanets'  # the replica table these rows are, as derivations name it (derived solutions)
KEY = ('pl_name',)
OUT_OF_TOOL: dict[str, str] = {}  # the site shows the tool's rows only

LIST = '/planets'  # the list, by pl_name, 100 rows a page
# Each field as the pages show it, in their order: (name, label, text after a value, a missing value's
# text, whether it is a yes/no)
FIELDS = (
    ('pl_name', 'Planet', '', '—', False),
    ('hostname', 'Host star', '', '—', False),
    ('sy_snum', 'Stars in the system', '', '—', False),
    ('sy_pnum', 'Planets in the system', '', '—', False),
    ('discoverymethod', 'Discovery method', '', '—', False),
    ('disc_year', 'Discovery year', '', '—', False),
    ('disc_facility', 'Discovery facility', '', '—', False),
    ('pl_orbper', 'Orbital period', ' days', '— (not measured)', False),
    ('pl_rade', 'Planet radius', ' Earth radii', '— (not measured)', False),
    ('pl_bmasse', 'Planet mass', ' Earth masses', '— (not measured)', False),
    ('pl_orbeccen', 'Eccentricity', '', '— (not measured)', False),
    ('sy_dist', 'Distance', ' parsecs', '— (not measured)', False),
    ('st_teff', 'Stellar effective temperature', ' K', '— (not measured)', False),
    ('st_spectype', 'Spectral type', '', '— (not listed)', False),
)
YES_NO = {'yes': True, 'no': False}
# The list form's filters a scope (a derived solution's rows wanted, field -> value) can use: "value"
# (a choice, or a box that finds a part: rows beyond the scope, which the caller narrows), "yes_no",
# or "range" (a min and a max box).
LIST_FILTERS = {'disc_year': 'range', 'discoverymethod': 'value', 'disc_facility': 'value'}


LINK = re.compile(r'<th scope="row"><a href="([^"]*)">')
LINE = re.compile(r'<tr>\s*<th scope="row">(.*?)</th>\s*<td>(.*?)</td>\s*</tr>', re.S)


def read_site(base: str, scope: dict | None = None) -> list[dict]:
    """Every entity's page, found through the list pages (those the scope's filters give, when given)."""
    search = filtered(scope)
    pages = list_pages(base, f"{LIST}?{search}" if search else LIST)
    paths = [html.unescape(path) for page in pages for path in LINK.findall(page)]
    rows = []
    for path, page in zip(paths, fetch_pages(base, paths)):
        lines = LINE.findall(page)
        check_labels(base + path, [label for label, _ in lines])
        rows.append(row([cell for _, cell in lines]))
    return rows


def filtered(scope: dict | None) -> str:
    """The list's query for the scope's fields its form filters on: its rows, and perhaps more."""
    params = {}
    for name, value in (scope or {}).items():
        how = LIST_FILTERS.get(name)
        if how == "range":
            params |= {f"{name}_min": value, f"{name}_max": value}
        elif how == "yes_no":
            params[name] = {flag: word for word, flag in YES_NO.items()}[value]
        elif how == "value":
            params[name] = value
    return urlencode(params)


def check_labels(url: str, labels: list[str]) -> None:
    """The page heads its values as this reader expects, else the site changed since it was written."""
    shown, expected = [html.unescape(label) for label in labels], [field[1] for field in FIELDS]
    if shown != expected:
        raise ValueError(f"{url} shows {shown}, not {expected}: this reader is out of date with the site "
                         "(`bench data build --domain exoplanets` rewrites it)")


def row(cells: list[str]) -> dict:
    """A row by field name from its cells, in FIELDS' order: the text shown less the unit, None for a
    missing value, True/False for a yes/no (a word it does not know stays text, for the check to name)."""
    found = {}
    for (name, _, after, missing, yes_no), cell in zip(FIELDS, cells, strict=True):
        text = html.unescape(cell)
        found[name] = None if text == missing else YES_NO.get(text, text) if yes_no else text.removesuffix(after)
    return found
