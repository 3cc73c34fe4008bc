"""A table domain's replica website, made from its `TableSpec` with the web kit the hand-written
sites use (armbench/replicas/web).

Routes: `/` (redirects to the list), `{path}` (the list: filters from `site.filters`, a "contains"
box over the key, every column sortable, 100 rows a page, by the key A to Z by default),
`{path}/{key}` (one entity, every field; `{path}/{within...}/{key}` when the key is unique only
together with `entity.within`, as a feature name is per target), for each field of `site.group_by` also
`{path}-by-{field}` (each value and its count) and `{path}-by-{field}/{value}` (that value's list,
the value spelled as the entity page shows it), and `/healthz`. Group pages sit beside the list rather than below it, so no
key's page can take their address. Every cell is formatted once, when the app is made, so a
request only filters, sorts and slices.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

import polars as pl
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from starlette.exceptions import HTTPException

from armbench.replicas.tables import TableDir
from armbench.replicas.web.catalog import SiteCatalog
from armbench.replicas.web.listing import MAX_LISTED_CHOICES, BadQuery, Column, ListQuery, choice, ordered_rows
from armbench.replicas.web.pages import add_list_page, create_site, results_context
from armbench.replicas.web.record import Sections, Spec, sections
from armbench.tablekit.spec import FieldSpec, TableSpec
from armbench.types import render_value

TEMPLATES = Path(__file__).resolve().parent / "templates"
MISSING = "—"
BOOL_WORDS = {True: "yes", False: "no"}
NUMBER = re.compile(r"-?\d{1,18}(\.\d{1,18})?", re.ASCII)
DATE = re.compile(r"(\d{4})(?:-(\d{2})-(\d{2}))?", re.ASCII)


def shown(value: Any) -> str:
    """A value as the site writes it: ISO dates, yes/no, numbers without separators (a year
    stored as a number must not read 1,998), whole floats without ".0"."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return BOOL_WORDS[value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return render_value(value, None)


def noun(field: FieldSpec) -> str:
    """How prose names a field: "Sorted by area km2", "Unknown country 'X'"."""
    return field.label or field.name.replace("_", " ")


def value_column(name: str) -> str:
    """The frame's column for a field. The frame holds only prefixed columns and `row`, the index
    the web kit orders by, so a field may be named `row`."""
    return f"value:{name}"


def lower_column(name: str) -> str:
    return f"lower:{name}"


def shown_column(name: str) -> str:
    """A field's values as `shown` writes them: what a group page's address matches."""
    return f"shown:{name}"


TIE = "tie"  # with `entity.within`: the key, then the within fields, that rows equal in the sort go by


@dataclass(frozen=True)
class Filter:
    """One control of the list's form: a select of the field's values, a "contains" box, or
    `<name>_min` and `<name>_max` boxes (numbers and dates)."""

    field: FieldSpec
    control: str  # select | contains | range
    options: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return self.field.header + (f" ({self.field.unit})" if self.field.unit else "")

    def read(self, params: Mapping[str, str]) -> dict[str, str]:
        """The parameters this filter was given, checked; a value it cannot honour is a BadQuery."""
        name = self.field.name
        if self.control == "select":
            return {name: choice(params, name, noun(self.field), list(self.options))}
        if self.control == "contains":
            return {name: params.get(name, "").strip()}
        low, high = (params.get(f"{name}_{end}", "").strip() for end in ("min", "max"))
        bounds = [self.bound(text, end) for text, end in ((low, "min"), (high, "max")) if text]
        if len(bounds) == 2 and bounds[0] > bounds[1]:
            raise BadQuery(f"The {noun(self.field)} range is empty: from {low} to {high}.")
        return {f"{name}_min": low, f"{name}_max": high}

    def bound(self, text: str, end: str) -> Any:
        """A min or max box's value: a number, or a date from YYYY-MM-DD or YYYY (its first day for
        min, its last for max)."""
        if self.field.kind == "number":
            if not NUMBER.fullmatch(text):
                raise BadQuery(f"{self.label} {end} must be a number such as 1500 or 2.5; got {text[:40]!r}.")
            return float(text) if "." in text else int(text)
        match = DATE.fullmatch(text)
        try:
            if match is None:
                raise ValueError(text)
            year, month, day = match.groups()
            if month is None:
                return date(int(year), 1, 1) if end == "min" else date(int(year), 12, 31)
            return date(int(year), int(month), int(day))
        except ValueError:
            raise BadQuery(f"{self.label} {end} must be a year (YYYY) or a date (YYYY-MM-DD); "
                           f"got {text[:40]!r}.") from None

    def conditions(self, chosen: Mapping[str, str]) -> list[pl.Expr]:
        """What the rows must meet for the values `read` accepted (`chosen`)."""
        name = self.field.name
        found = []
        if value := chosen.get(name):
            if self.control == "contains":
                found.append(pl.col(lower_column(name)).str.contains(value.lower(), literal=True))
            else:
                found.append(pl.col(value_column(name)) == value)
        if low := chosen.get(f"{name}_min"):
            found.append(pl.col(value_column(name)) >= self.bound(low, "min"))
        if high := chosen.get(f"{name}_max"):
            found.append(pl.col(value_column(name)) <= self.bound(high, "max"))
        return found


@dataclass(frozen=True)
class TableQuery(ListQuery):
    """A table's list query. Its filters come from the spec, so they are (parameter, value) pairs
    rather than fields; `path` is the list page's or a group page's. A table's own subclass
    (`query_class`) sets COLUMNS and DEFAULT_SORT, the key; empty here because the fuzz suite
    reads every ListQuery subclass's COLUMNS."""

    chosen: tuple[tuple[str, str], ...] = ()
    path: str = ""
    order: str = "asc"

    COLUMNS: ClassVar[Mapping[str, Column]] = {}
    DEFAULT_SORT: ClassVar[str] = ""

    @property
    def PATH(self) -> str:  # the list kit's links and form read it
        return self.path

    @property
    def is_default_sort(self) -> bool:
        return (self.sort, self.order) == (self.DEFAULT_SORT, "asc")

    def filters(self) -> dict[str, object]:
        return dict(self.chosen)

    def value(self, param: str) -> str:
        """What the form shows in `param`'s control."""
        return dict(self.chosen).get(param, "")

    @classmethod
    def parse_sort(cls, params: Mapping[str, str]) -> dict[str, Any]:
        """sort, order and page; the default order is the key ascending, whatever its kind."""
        common = cls.parse_common(params)
        if common["sort"] == cls.DEFAULT_SORT and not params.get("order", "").strip():
            common["order"] = "asc"
        return common


def query_class(spec: TableSpec, columns: list[Column]) -> type[TableQuery]:
    attributes = {"COLUMNS": {column.key: column for column in columns}, "DEFAULT_SORT": spec.entity.key,
                  "PAGE_SIZE": spec.site.page_size}
    return type(f"{spec.name.title()}Query", (TableQuery,), attributes)


@dataclass(frozen=True)
class Grouping:
    """One `group_by` field's pages: each value's count under its shown text, in the value's order,
    and each such text lower-cased to its spelling."""

    field: FieldSpec
    counts: dict[str, int]
    spelling: dict[str, str]

    @classmethod
    def of(cls, field: FieldSpec, values: list[Any]) -> Grouping:
        counts = group_counts(values)
        return cls(field, counts, {value.lower(): value for value in reversed(counts)})

    def value(self, text: str) -> str | None:
        """A grouping value as the table spells it: exact, else ignoring case."""
        return text if text in self.counts else self.spelling.get(text.lower())


@dataclass(frozen=True)
class TableCatalog(SiteCatalog):
    """`row_of` maps each entity's address below the list page, unquoted (`spec.entity.page_key`:
    the key, or the within values and the key joined by "/"), `lower_row_of` the same lower-cased (a
    key typed in another case); `groupings` holds each group_by field's pages; `addresses_of`, with
    `entity.within` only, each lower-cased key's addresses (what a page missing the within part meant)."""

    spec: TableSpec
    query: type[TableQuery]
    filters: tuple[Filter, ...]
    layout: Sections
    lower_row_of: dict[str, int]
    groupings: tuple[Grouping, ...]
    addresses_of: dict[str, list[str]]

    def find(self, key: str) -> int | None:
        """A row by its address: exact, else ignoring case."""
        found = self.row_of.get(key)
        return self.lower_row_of.get(key.lower()) if found is None else found


def list_column(field: FieldSpec) -> Column:
    """A list column; yes/no sorts as text."""
    kind = "text" if field.kind == "bool" else field.kind
    header = field.header + (f" ({field.unit})" if field.unit else "")
    return Column(field.name, header, noun(field), value_column(field.name), kind,
                  lambda row: shown(row[field.name]))


def form_filter(field: FieldSpec, table: pl.DataFrame) -> Filter:
    if field.kind == "bool":
        return Filter(field, "select", tuple(BOOL_WORDS.values()))
    if field.kind != "text":
        return Filter(field, "range")
    values = table[field.name].drop_nulls().unique().to_list()
    if len(values) > MAX_LISTED_CHOICES:
        return Filter(field, "contains")
    return Filter(field, "select", tuple(sorted(values, key=lambda value: (value.lower(), value))))


def line(field: FieldSpec) -> Spec:
    """An entity page's line: the value with its unit, or "—" and what a null means."""
    def show(value: Any) -> str:
        if value is None:
            return f"{MISSING} ({field.nulls})" if field.nulls else MISSING
        return shown(value) + (f" {field.unit}" if field.unit else "")

    return Spec(field.header, (field.name,), show)


def first_index(texts: list[str]) -> dict[str, int]:
    """Each text's first row."""
    return {text: index for index, text in reversed(list(enumerate(texts)))}


def group_counts(values: list[Any]) -> dict[str, int]:
    """Each value's count under its shown text, in the value's order (text ignoring case); a
    null is in no group."""
    present = sorted((value for value in values if value is not None),
                     key=lambda value: (value.lower(), value) if isinstance(value, str) else value)
    return dict(Counter(shown(value) for value in present))


def make_catalog(spec: TableSpec, table: pl.DataFrame) -> TableCatalog:
    columns = [list_column(spec.field(name)) for name in spec.site.list_fields]
    filters = tuple(form_filter(spec.field(name), table) for name in spec.site.filters)
    key = spec.field(spec.entity.key)
    lowered = {f.field.name for f in filters if f.control == "contains"} | (
        {key.name} if spec.site.search or key.kind == "text" else set())
    frame = table.select(
        *(pl.col(f.name).replace_strict(BOOL_WORDS, default=None, return_dtype=pl.Utf8).alias(value_column(f.name))
          if f.kind == "bool" else pl.col(f.name).alias(value_column(f.name)) for f in spec.fields),
        *(pl.col(name).cast(pl.Utf8).str.to_lowercase().alias(lower_column(name)) for name in lowered),
    ).with_row_index("row")
    for group in spec.site.group_by:
        texts = [None if value is None else shown(value) for value in table[group].to_list()]
        frame = frame.with_columns(pl.Series(shown_column(group), texts, dtype=pl.Utf8))
    within = spec.entity.within
    if within:  # rows equal in the sort go by the key, then the within fields: the typed tool's tie order
        frame = frame.with_columns(pl.struct(value_column(name) for name in [spec.entity.key, *within]).alias(TIE))
    addresses = list(table.select(spec.entity.address_fields).iter_rows())
    keys = [spec.entity.page_key(values) for values in addresses]
    cells = [{"href": spec.page_path(values), **{c.key: c.cell(row) for c in columns}}
             for values, row in zip(addresses, table.iter_rows(named=True))]
    addresses_of: dict[str, list[str]] = {}
    for values in sorted(addresses, key=lambda values: [str(value) for value in values]) if within else ():
        addresses_of.setdefault(str(values[-1]).lower(), []).append(spec.page_path(values))
    return TableCatalog(
        table=table,
        frame=frame,
        cells=cells,
        row_of=first_index(keys),
        spec=spec,
        query=query_class(spec, columns),
        filters=filters,
        layout=((f"About this {spec.entity.one}", tuple(line(field) for field in spec.fields)),),
        lower_row_of=first_index([key.lower() for key in keys]),
        groupings=tuple(Grouping.of(spec.field(name), table[name].to_list()) for name in spec.site.group_by),
        addresses_of=addresses_of,
    )


def parse_query(params: Mapping[str, str], catalog: TableCatalog) -> TableQuery:
    chosen = {param: value for f in catalog.filters for param, value in f.read(params).items()}
    if catalog.spec.site.search:
        chosen["q"] = params.get("q", "").strip()
    return catalog.query(chosen=tuple((param, value) for param, value in chosen.items() if value),
                         path=catalog.spec.site.path, **catalog.query.parse_sort(params))


def select(catalog: TableCatalog, query: TableQuery) -> list[int]:
    """Row indices matching the list's filters and search, in the query's order."""
    chosen = dict(query.chosen)
    found = [condition for f in catalog.filters for condition in f.conditions(chosen)]
    if chosen.get("q"):
        found.append(pl.col(lower_column(catalog.spec.entity.key)).str.contains(chosen["q"].lower(), literal=True))
    return in_order(catalog, catalog.frame.filter(*found) if found else catalog.frame, query)


def in_order(catalog: TableCatalog, frame: pl.DataFrame, query: TableQuery) -> list[int]:
    """`frame`'s row indices by the query's column (the key, text ignoring case, when it is not
    listed); nulls last, ties by the key. The tool orders unsorted rows the same way."""
    key = catalog.spec.field(catalog.spec.entity.key)
    default = lower_column(key.name) if key.kind == "text" else value_column(key.name)
    return ordered_rows(frame, query, TIE if catalog.spec.entity.within else value_column(key.name), default)


def create_app(spec: TableSpec, tables: TableDir) -> FastAPI:
    data = make_catalog(spec, tables.load(spec.table))
    site, path, key_field = spec.site, spec.site.path, spec.field(spec.entity.key)
    one, many = spec.entity.one, spec.entity.many
    app, templates = create_site(spec.title, spec.name, tables.hash(), TEMPLATES, path, f"Browse all {many}")
    # What base.html and the breadcrumbs need on every page, error pages too.
    templates.env.globals.update(heading=site.heading, list_path=path, provenance=spec.provenance, noun=many)

    def unset(count: int) -> str:
        """The start of "2 cities have no country": the rows no group page lists."""
        if count == 0:
            return ""
        return f"1 {one} has" if count == 1 else f"{count:,} {many} have"

    def groups_path(grouping: Grouping) -> str:
        return f"{path}-by-{grouping.field.name}"

    def group_url(grouping: Grouping, value: str) -> str:
        return f"{groups_path(grouping)}/{quote(value, safe='')}"

    def add_group_pages(grouping: Grouping) -> None:
        field, index_path = grouping.field, groups_path(grouping)
        crumbs = {"groups_path": index_path, "group_noun": noun(field)}

        index = {"field": field, "groups": [(value, f"{count:,}", group_url(grouping, value))
                                            for value, count in grouping.counts.items()],
                 "counts": site.group_counts, "unset": unset(data.table.height - sum(grouping.counts.values())),
                 **crumbs}  # made once: a host index holds thousands of links

        @app.get(index_path, response_class=HTMLResponse)
        async def group_index(request: Request) -> Response:
            return templates.TemplateResponse(request, "group_index.html", index)

        @app.get(index_path + "/{value:path}", response_class=HTMLResponse)
        async def group_page(request: Request, value: str) -> Response:
            known = grouping.value(value)
            if known is None:
                raise HTTPException(404, f"No {one} has the {noun(field)} {value[:80]!r}. "
                                         f"See every {noun(field)} at {index_path}.")
            try:
                query = data.query(path=group_url(grouping, known), **data.query.parse_sort(request.query_params))
            except BadQuery as exc:
                raise HTTPException(400, str(exc)) from None
            rows = in_order(data, data.frame.filter(pl.col(shown_column(field.name)) == known), query)
            context = results_context(query, rows, data.cells, lambda n: f"{n:,} {one if n == 1 else many}")
            return templates.TemplateResponse(request, "group.html", {**context, "field": field, "value": known,
                                                                      **crumbs})

    indexes = [{"path": groups_path(g), "noun": noun(g.field)} for g in data.groupings]
    form = {"filters": data.filters, "search": key_field.header if site.search else "", "indexes": indexes}
    add_list_page(app, templates, path, data, parse_query, select, (one, many), form)
    for grouping in data.groupings:
        add_group_pages(grouping)

    def not_found(key: str) -> str:
        """A missing page's message: with `entity.within`, the address pattern and the pages
        whose key this is (a page asked for by the key alone)."""
        if not spec.entity.within:
            return f"No {one} has the {noun(key_field)} {key[:80]!r}. Find it in the list at {path}."
        pattern = "/".join(f"<{noun(spec.field(name))}>" for name in spec.entity.address_fields)
        message = f"No {one} is at {path}/{key[:80]}: a {one}'s page is {path}/{pattern}."
        pages = data.addresses_of.get(key.lower(), [])
        if pages:
            message += f" The {noun(key_field)} {key[:80]!r} has the page{'s' if len(pages) > 1 else ''} " \
                       f"{', '.join(pages[:10])}{', ...' if len(pages) > 10 else ''}."
        return message + f" Find it in the list at {path}."

    @app.get(path + "/{key:path}", response_class=HTMLResponse)
    async def entity_page(request: Request, key: str) -> Response:
        index = data.find(key)
        if index is None:
            raise HTTPException(404, not_found(key))
        row = data.row(index)
        groups = [(g.field.header, shown(row[g.field.name]), group_url(g, shown(row[g.field.name])))
                  for g in data.groupings if row[g.field.name] is not None]
        context = {"title": shown(row[key_field.name]), "sections": sections(data.layout, row), "groups": groups}
        return templates.TemplateResponse(request, "entity.html", context)

    return app
