"""The search's query string: check it, pick the matching rows in order.

`/daf/search?q=&type=&sort=&order=&page=`: `q` is part of a drug name or active ingredient (any
case); without `q` the page is the search form alone, with an empty one it is a 400 (nothing to
search for). What every list query shares (sorting, paging, links) is `armbench.replicas.web.listing`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from armbench.domains.drugs.site.catalog import Search
from armbench.domains.drugs.site.fields import APPLICATION_TYPES, SEARCH_COLUMNS
from armbench.replicas.web.listing import BadQuery, ListQuery, choice, ordered_rows

MAX_SEARCH_LENGTH = 100


@dataclass(frozen=True)
class SearchQuery(ListQuery):
    q: str | None = None  # None: no search asked for
    type: str = ""
    sort: str = "drug"

    PATH = "/daf/search"
    COLUMNS = {column.key: column for column in SEARCH_COLUMNS}
    DEFAULT_SORT = "drug"

    @property
    def is_default_sort(self) -> bool:
        """By drug name, A to Z (a text column's own direction), so links leave it out."""
        return (self.sort, self.order) == (self.DEFAULT_SORT, "asc")


def parse_search(params: Mapping[str, str]) -> SearchQuery:
    """The search's query string; BadQuery (a 400 page) for an empty or overlong search, an unknown
    application type, sort or order. Other parameters are ignored."""
    q = params.get("q")
    if q is not None:
        q = q.strip()
        if not q:
            raise BadQuery("Enter a drug name or an active ingredient (or part of one) to search for.")
        if len(q) > MAX_SEARCH_LENGTH:
            raise BadQuery(f"A search is at most {MAX_SEARCH_LENGTH} characters; this one has {len(q):,}.")
    return SearchQuery(q=q, type=choice(params, "type", "application type", list(APPLICATION_TYPES)),
                       **SearchQuery.parse_common(params))


def select(search: Search, query: SearchQuery) -> list[int]:
    """Row indices whose drug name or active ingredient contains the search, in the query's order;
    ties by drug name, ingredient and application (the rows' own order)."""
    text = query.q.lower()
    found = pl.col("drug_lower").str.contains(text, literal=True) | pl.col(
        "ingredient_lower").str.contains(text, literal=True)
    if query.type:
        found &= pl.col("appl_type") == query.type
    return ordered_rows(search.frame, query, "row", where=[found])
