"""The moon domain's site reader: its replica website read into the rows of planetary_feature_query
(the contract: armbench/domains/parity.py).

It reads the list pages (/features, 100 rows each) for the entities' addresses, then every entity's
page (/features/<target>/<feature_name>): the list shows feature_name, target, feature_type,
diameter_km, approval_year; center_lat, center_lon, approval_date, origin, is_satellite_feature,
name_in_brackets are on an entity's page only.

Written by `bench data build --domain moon` from domain.yaml (armbench/tablekit/reader.py), and
checked by `bench domain check moon`: edit domain.yaml, not this file.
"""
from __future__ import annotations

import html
import re
from urllib.parse import urlencode

from armbench.domains.reading import fetch_pages, list_pages

TOOL = 'planetary_feature_query'
TABLE = 'planetary_features'  # the replica table these rows are, as derivations name it (derived solutions)
KEY = ('target', 'feature_name')
OUT_OF_TOOL: dict[str, str] = {}  # the site shows the tool's rows only

LIST = '/features'  # the list, by feature_name, 100 rows a page
# Each field as the pages show it, in their order: (name, label, text after a value, a missing value's
# text, whether it is a yes/no)
FIELDS = (
    ('feature_name', 'Feature name', '', '—', False),
    ('target', 'Target', '', '—', False),
    ('diameter_km', 'Diameter', ' km', '—', False),
    ('center_lat', 'Center latitude', ' degrees', '—', False),
    ('center_lon', 'Center longitude', ' degrees', '—', False),
    ('feature_type', 'Feature type', '', '—', False),
    ('approval_date', 'Approval date', '', '—', False),
    ('origin', 'Origin', '', '—', False),
    ('approval_year', 'Approval year', '', '— (no approval date ("-"))', False),
    ('is_satellite_feature', 'Satellite feature', '', '—', True),
    ('name_in_brackets', 'Name in brackets (dropped or not approved)', '', '—', True),
)
YES_NO = {'yes': True, 'no': False}
# The list form's filters a scope (a derived solution's rows wanted, field -> value) can use: "value"
# (a choice, or a box that finds a part: rows beyond the scope, which the caller narrows), "yes_no",
# or "range" (a min and a max box).
LIST_FILTERS = {'target': 'value', 'feature_type': 'value', 'approval_year': 'range', 'diameter_km': 'range', 'name_in_brackets': 'yes_no'}


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
                         "(`bench data build --domain moon` rewrites it)")


def row(cells: list[str]) -> dict:
    """A row by field name from its cells, in FIELDS' order: the text shown less the unit, None for a
    missing value, True/False for a yes/no (a word it does not know stays text, for the check to name)."""
    found = {}
    for (name, _, after, missing, yes_no), cell in zip(FIELDS, cells, strict=True):
        text = html.unescape(cell)
        found[name] = None if text == missing else YES_NO.get(text, text) if yes_no else text.removesuffix(after)
    return found
