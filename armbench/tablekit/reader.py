"""A table domain's site reader, `site_reader.py` in its folder: the text `bench data build` writes
from domain.yaml and `bench domain check` compares with the file (the contract it meets, and the
check that runs it: armbench/domains/parity.py).

A reader imports the standard library and the reading kit only (armbench/domains/reading.py: in the
python sandbox, where armbench is not installed, the kit's text comes first), so what it must know of
the site is baked into its text: the list's address, and
each field's label, unit, missing-value text and yes/no words, taken from site.py's own functions so
the two cannot disagree. It reads the fewest pages that show every field: the list pages when the
list shows them all, else the list pages for the addresses and then every entity's page. Given a
scope (a derived browsing solution's rows wanted, field -> value), it reads the list through the
form's filters on those fields (LIST_FILTERS, from site.filters), and so only the pages they give.
"""
from __future__ import annotations

from string import Template
from textwrap import fill

from armbench.tablekit.site import BOOL_WORDS, line, list_column
from armbench.tablekit.spec import FieldSpec, TableSpec

READER_FILE = "site_reader.py"

HEAD = '''\
"""The $name domain's site reader: its replica website read into the rows of $tool
(the contract: armbench/domains/parity.py).

$why

Written by `bench data build --domain $name` from domain.yaml (armbench/tablekit/reader.py), and
checked by `bench domain check $name`: edit domain.yaml, not this file.
"""
from __future__ import annotations

import html
import re
from urllib.parse import urlencode

from armbench.domains.reading import fetch_pages, list_pages

TOOL = $tool_literal
TABLE = $table_literal  # the replica table these rows are, as derivations name it (derived solutions)
KEY = $key
OUT_OF_TOOL: dict[str, str] = {}  # the site shows the tool's rows only

LIST = $path  # the list, by $key_field, $page_size rows a page
# Each field as the pages show it, in their order: (name, label, text after a value, a missing value's
# text, whether it is a yes/no)
FIELDS = (
$fields
)
YES_NO = $yes_no
# The list form's filters a scope (a derived solution's rows wanted, field -> value) can use: "value"
# (a choice, or a box that finds a part: rows beyond the scope, which the caller narrows), "yes_no",
# or "range" (a min and a max box).
LIST_FILTERS = $list_filters

'''

FROM_LIST = '''
LIST_HEADER = re.compile(r'<th scope="col"[^>]*>\\s*<a href="[^"]*">(.*?)</a>', re.S)
LIST_ROW = re.compile(r'<tr>\\s*<th scope="row"><a href="[^"]*">(.*?)</a></th>(.*?)</tr>', re.S)
LIST_CELL = re.compile(r"<td>(.*?)</td>", re.S)


def read_site(base: str, scope: dict | None = None) -> list[dict]:
    """Every row of the list pages (those the scope's filters give, when given)."""
    rows = []
    search = filtered(scope)
    for number, page in enumerate(list_pages(base, f"{LIST}?{search}" if search else LIST), start=1):
        check_labels(f"{base}{LIST}?page={number}", LIST_HEADER.findall(page))
        for first, rest in LIST_ROW.findall(page):
            rows.append(row([first, *LIST_CELL.findall(rest)]))
    return rows
'''

FROM_ENTITIES = '''
LINK = re.compile(r'<th scope="row"><a href="([^"]*)">')
LINE = re.compile(r'<tr>\\s*<th scope="row">(.*?)</th>\\s*<td>(.*?)</td>\\s*</tr>', re.S)


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
'''

COMMON = '''

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
                         "(`bench data build --domain $name` rewrites it)")


def row(cells: list[str]) -> dict:
    """A row by field name from its cells, in FIELDS' order: the text shown less the unit, None for a
    missing value, True/False for a yes/no (a word it does not know stays text, for the check to name)."""
    found = {}
    for (name, _, after, missing, yes_no), cell in zip(FIELDS, cells, strict=True):
        text = html.unescape(cell)
        found[name] = None if text == missing else YES_NO.get(text, text) if yes_no else text.removesuffix(after)
    return found
'''


def needs_entity_pages(spec: TableSpec) -> bool:
    """Whether the reader must read every entity's page: the list does not show every field."""
    return set(spec.site.list_fields) != {field.name for field in spec.fields}


def shown_fields(spec: TableSpec) -> list[FieldSpec]:
    """The fields in the order the reader's pages show them."""
    return spec.fields if needs_entity_pages(spec) else [spec.field(name) for name in spec.site.list_fields]


def field_entry(field: FieldSpec, on_entity_page: bool) -> tuple[str, str, str, str, bool]:
    """(name, label, text after a value, a missing value's text, yes/no), as the page writes them:
    site.py's own line or column, shown an empty value and a missing one."""
    if on_entity_page:
        shown_line = line(field)
        label, show = shown_line.label, shown_line.show
    else:
        column = list_column(field)
        label, show = column.header, lambda value: column.cell({field.name: value})
    return field.name, label, show(""), show(None), field.kind == "bool"


def why(spec: TableSpec) -> str:
    """The docstring's account of which pages the reader reads."""
    pages = f"the list pages ({spec.site.path}, {spec.site.page_size} rows each)"
    if not needs_entity_pages(spec):
        return f"It reads {pages} only: they show every field."
    address = "/".join(f"<{name}>" for name in spec.entity.address_fields)
    others = [field.name for field in spec.fields if field.name not in spec.site.list_fields]
    return (f"It reads {pages} for the entities' addresses, then every entity's page ({spec.site.path}/{address}): "
            f"the list shows {', '.join(spec.site.list_fields)}; {', '.join(others)} are on an entity's page only.")


def reader_text(spec: TableSpec) -> str:
    """The domain's site_reader.py."""
    on_entity_pages = needs_entity_pages(spec)
    body = HEAD + (FROM_ENTITIES if on_entity_pages else FROM_LIST) + COMMON
    entries = [field_entry(field, on_entity_pages) for field in shown_fields(spec)]
    return Template(body).substitute(
        name=spec.name,
        tool=spec.tool.name,
        why=fill(why(spec), 100),
        tool_literal=repr(spec.tool.name),
        table_literal=repr(spec.table),
        key=repr(tuple(spec.entity.address_fields)),
        path=repr(spec.site.path),
        key_field=spec.entity.key,
        page_size=spec.site.page_size,
        fields="\n".join(f"    {entry!r}," for entry in entries),
        yes_no=repr({word: value for value, word in BOOL_WORDS.items()}),
        list_filters=repr({name: filter_kind(spec.field(name)) for name in spec.site.filters}),
    )


def filter_kind(field: FieldSpec) -> str:
    """How the list's form filters on `field` (site.form_filter's controls, as a scope uses them)."""
    return "yes_no" if field.kind == "bool" else "value" if field.kind == "text" else "range"
