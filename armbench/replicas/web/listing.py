"""A list page's query string: filters (the site's), sort column and order, page; and its links.

Select values must be options of the form (a mistyped one is a 400 naming the choices, not a
silent "0 match"); an empty value means "any"; unknown parameters are ignored.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar
from urllib.parse import urlencode

import numpy as np
import polars as pl

PAGE_SIZE = 100
# (ascending, descending) wording; numbers and dates start descending, text ascending.
DIRECTION_WORDS = {
    "text": ("A to Z", "Z to A"),
    "number": ("lowest first", "highest first"),
    "date": ("oldest first", "newest first"),
}
MAX_LISTED_CHOICES = 60


class BadQuery(ValueError):
    """A query parameter the site cannot honour; shown as a 400 page with this message."""


@dataclass(frozen=True)
class Column:
    """A column of a list page: its cell, and what sorting by it means."""

    key: str  # the `?sort=` value
    header: str
    noun: str  # "Sorted by <noun>, ..."
    sort_column: str
    kind: str  # text | number | date: sets the default direction and its wording
    cell: Callable[[dict[str, Any]], str]

    @property
    def default_order(self) -> str:
        return "asc" if self.kind == "text" else "desc"


@dataclass(frozen=True)
class ListQuery:
    """The parts every list query has; a site subclasses it with its filters as fields.

    `sort` is a column key, or the site's own default order when `DEFAULT_SORT` names no column.
    """

    sort: str = ""
    order: str = "desc"
    page: int = 1

    PATH: ClassVar[str]
    COLUMNS: ClassVar[Mapping[str, Column]]
    DEFAULT_SORT: ClassVar[str]
    PAGE_SIZE: ClassVar[int] = PAGE_SIZE

    @property
    def column(self) -> Column | None:
        return self.COLUMNS.get(self.sort)

    @property
    def is_default_sort(self) -> bool:
        return (self.sort, self.order) == (self.DEFAULT_SORT, "desc")

    def filters(self) -> dict[str, object]:
        """The site's filters that are set (not empty), in field order; a ticked box is 1.

        Set means not None, "" or an unticked box; a 0 is a value (`0 in (False,)` is true in
        Python, so the test is by identity)."""
        common = {"sort", "order", "page"}
        return {f.name: 1 if value is True else value for f in fields(self)
                if f.name not in common and not _unset(value := getattr(self, f.name))}

    def url(self, **changes: object) -> str:
        """This query as a link, with `changes`, leaving defaults out."""
        query = replace(self, **changes)
        params = query.filters()
        if not query.is_default_sort:
            params.update(sort=query.sort, order=query.order)
        if query.page != 1:
            params["page"] = query.page
        return self.PATH + (f"?{urlencode(params)}" if params else "")

    def sort_url(self, column: Column) -> str:
        """Sort by `column` from page 1; on the current sort column, flip the order."""
        if column.key == self.sort:
            order = "asc" if self.order == "desc" else "desc"
        else:
            order = column.default_order
        return self.url(sort=column.key, order=order, page=1)

    def sort_description(self) -> str:
        """"Sorted by memory size, highest first"; empty for an order no column shows."""
        if self.column is None:
            return ""
        ascending, descending = DIRECTION_WORDS[self.column.kind]
        return f"Sorted by {self.column.noun}, {ascending if self.order == 'asc' else descending}"

    @classmethod
    def parse_common(cls, params: Mapping[str, str]) -> dict[str, Any]:
        """sort, order and page from the query string (the site parses its own filters)."""
        sort = params.get("sort", "").strip() or cls.DEFAULT_SORT
        column = cls.COLUMNS.get(sort)
        if column is None and sort != cls.DEFAULT_SORT:
            raise BadQuery(f"Cannot sort by {sort!r}. Sortable columns: {', '.join(cls.COLUMNS)}.")
        order = params.get("order", "").strip() or (column.default_order if column else "desc")
        if order not in ("asc", "desc"):
            raise BadQuery(f"Unknown order {order!r}: use asc or desc.")
        page = params.get("page", "").strip() or "1"
        number = whole_number(page)
        if number is None or number < 1:
            raise BadQuery(f"Page must be a whole number from 1; got {page[:40]!r}.")
        return {"sort": sort, "order": order, "page": number}


def whole_number(text: str, max_digits: int = 9) -> int | None:
    """`text` as a whole number if it is ASCII digits, at most `max_digits` of them; else None.
    (`str.isdigit` accepts "²", which `int` rejects, and `int` refuses over 4,300 digits.)"""
    if text.isascii() and text.isdigit() and len(text) <= max_digits:
        return int(text)
    return None


def ordered_rows(frame: pl.DataFrame, query: ListQuery, tie: str, hidden: str | None = None,
                 where: Sequence[pl.Expr] = ()) -> list[int]:
    """The `row` indices of the rows of `frame` that meet every condition in `where`, in the query's
    order: by its column (text ignoring case), or by the `hidden` column a default sort uses;
    unknowns last, ties by `tie` (a column whose values are unique, so the order is total).

    The frame is sorted once per order it is asked for (a replica's frames never change), then each
    page filters that order: sorting the 29,000 funds took ~5 ms a page, filtering takes under 1."""
    column = query.column
    by = column.sort_column if column else hidden
    order = sorted_positions(frame, by, column is not None and column.kind == "text", tie, query.order == "desc")
    if where:
        matches = frame.select(pl.all_horizontal(where).fill_null(False)).to_series().to_numpy()
        order = order[matches[order]]
    return frame["row"].to_numpy()[order].tolist()


SORTED: dict[int, dict[tuple, np.ndarray]] = {}  # by id(frame), while it lives: its orders so far


def sorted_positions(frame: pl.DataFrame, by: str, text: bool, tie: str, descending: bool) -> np.ndarray:
    """The positions of `frame`'s rows by `by` (lower-cased when `text`), unknowns last, ties by
    `tie` ascending: sorted the first time this frame is asked for this order."""
    orders = SORTED.get(id(frame))
    if orders is None:
        orders = SORTED[id(frame)] = {}
        weakref.finalize(frame, SORTED.pop, id(frame), None)  # before the id can be another frame's
    wanted = (by, text, tie, descending)
    if wanted not in orders:
        key = pl.col(by).str.to_lowercase() if text else pl.col(by)
        keyed = frame.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("position"), key.alias("key"),
                             pl.col(tie).alias("tie"))
        ranked = keyed.sort(["key", "tie"], descending=[descending, False], nulls_last=True)
        orders[wanted] = ranked["position"].to_numpy()
    return orders[wanted]


def choice(params: Mapping[str, str], name: str, label: str, options: list[str]) -> str:
    value = params.get(name, "").strip()
    if value and value not in options:
        if len(options) <= MAX_LISTED_CHOICES:
            raise BadQuery(f"Unknown {label} {value!r}. Choose one of: {', '.join(options)}.")
        raise BadQuery(f"Unknown {label} {value!r}. Choose one from the {label} list of the filter form.")
    return value


def page_count(total: int, page_size: int = PAGE_SIZE) -> int:
    return max(1, -(-total // page_size))


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


def _unset(value: object) -> bool:
    return value is None or value is False or value == ""
