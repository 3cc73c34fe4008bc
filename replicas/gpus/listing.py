"""The list page's query string: check it, pick the matching rows in order, build its links.

`/gpus?manufacturer=&year=&generation=&memory_type=&q=&sort=&order=&page=`. Select values must
be options of the form (a mistyped one is a 400 naming the choices, not a silent "0 match"); an
empty value means "any"; unknown parameters are ignored.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from urllib.parse import urlencode

import polars as pl

from replicas.gpus.catalog import Catalog
from replicas.gpus.fields import COLUMNS, Column

PAGE_SIZE = 100
COLUMN_OF_KEY = {column.key: column for column in COLUMNS}
DEFAULT_SORT = "released"
# (ascending, descending) wording; numbers and dates start descending, text ascending.
DIRECTION_WORDS = {
    "text": ("A to Z", "Z to A"),
    "number": ("lowest first", "highest first"),
    "date": ("oldest first", "newest first"),
}
MAX_LISTED_CHOICES = 40


class BadQuery(ValueError):
    """A query parameter the site cannot honour; shown as a 400 page with this message."""


def default_order(column: Column) -> str:
    return "asc" if column.kind == "text" else "desc"


@dataclass(frozen=True)
class ListQuery:
    manufacturer: str = ""
    year: int | None = None
    generation: str = ""
    memory_type: str = ""
    q: str = ""
    sort: str = DEFAULT_SORT
    order: str = "desc"
    page: int = 1

    @property
    def column(self) -> Column:
        return COLUMN_OF_KEY[self.sort]

    @property
    def is_default_sort(self) -> bool:
        return (self.sort, self.order) == (DEFAULT_SORT, "desc")

    def url(self, **changes: object) -> str:
        """This query as a `/gpus` link, with `changes`, leaving defaults out."""
        query = replace(self, **changes)
        params: dict[str, object] = {
            name: value
            for name in ("manufacturer", "year", "generation", "memory_type", "q")
            if (value := getattr(query, name)) not in ("", None)
        }
        if not query.is_default_sort:
            params.update(sort=query.sort, order=query.order)
        if query.page != 1:
            params["page"] = query.page
        return "/gpus" + (f"?{urlencode(params)}" if params else "")

    def sort_url(self, column: Column) -> str:
        """Sort by `column` from page 1; on the current sort column, flip the order."""
        if column.key == self.sort:
            order = "asc" if self.order == "desc" else "desc"
        else:
            order = default_order(column)
        return self.url(sort=column.key, order=order, page=1)

    def sort_description(self) -> str:
        ascending, descending = DIRECTION_WORDS[self.column.kind]
        words = ascending if self.order == "asc" else descending
        return f"Sorted by {self.column.noun}, {words}"


def choice(params: Mapping[str, str], name: str, label: str, options: list[str]) -> str:
    value = params.get(name, "").strip()
    if value and value not in options:
        if len(options) <= MAX_LISTED_CHOICES:
            raise BadQuery(f"Unknown {label} {value!r}. Choose one of: {', '.join(options)}.")
        raise BadQuery(f"Unknown {label} {value!r}. Choose one from the {label} list of the filter form.")
    return value


def parse_query(params: Mapping[str, str], catalog: Catalog) -> ListQuery:
    year = params.get("year", "").strip()
    if year and (not year.isdigit() or int(year) not in catalog.years):
        raise BadQuery(
            f"Unknown release year {year!r}. Choose a year from the list: GPUs in this database "
            f"were released from {catalog.years[-1]} to {catalog.years[0]}."
        )
    sort = params.get("sort", "").strip() or DEFAULT_SORT
    if sort not in COLUMN_OF_KEY:
        raise BadQuery(f"Cannot sort by {sort!r}. Sortable columns: {', '.join(COLUMN_OF_KEY)}.")
    order = params.get("order", "").strip() or default_order(COLUMN_OF_KEY[sort])
    if order not in ("asc", "desc"):
        raise BadQuery(f"Unknown order {order!r}: use asc or desc.")
    page = params.get("page", "").strip() or "1"
    if not page.isdigit() or int(page) < 1:
        raise BadQuery(f"Page must be a whole number from 1; got {page!r}.")
    all_generations = [g for _, generations in catalog.generations for g in generations]
    return ListQuery(
        manufacturer=choice(params, "manufacturer", "manufacturer", catalog.manufacturers),
        year=int(year) if year else None,
        generation=choice(params, "generation", "generation", all_generations),
        memory_type=choice(params, "memory_type", "memory type", catalog.memory_types),
        q=params.get("q", "").strip(),
        sort=sort,
        order=order,
        page=int(page),
    )


def select(catalog: Catalog, query: ListQuery) -> list[int]:
    """Row indices matching `query`, in its order; unknowns last, ties by name."""
    conditions = [
        pl.col(name) == value
        for name in ("manufacturer", "year", "generation", "memory_type")
        if (value := getattr(query, name)) not in ("", None)
    ]
    if query.q:
        conditions.append(pl.col("name_lower").str.contains(query.q.lower(), literal=True))
    frame = catalog.frame.filter(*conditions) if conditions else catalog.frame
    key = pl.col(query.column.sort_column)
    if query.column.kind == "text":
        key = key.str.to_lowercase()
    ordered = frame.sort([key, pl.col("name_lower")], descending=[query.order == "desc", False], nulls_last=True)
    return ordered["row"].to_list()


def page_count(total: int) -> int:
    return max(1, -(-total // PAGE_SIZE))


def page_numbers(page: int, pages: int, around: int = 2) -> list[int | None]:
    """First, last and `around` pages either side of `page`; None where pages are skipped."""
    shown = sorted({1, pages, *range(max(1, page - around), min(pages, page + around) + 1)})
    numbers: list[int | None] = []
    previous = 0
    for number in shown:
        if number - previous > 1:
            numbers.append(None)
        numbers.append(number)
        previous = number
    return numbers
