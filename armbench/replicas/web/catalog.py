"""A site's data, prepared once per process so a request only filters, sorts and slices."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl


@dataclass(frozen=True)
class SiteCatalog:
    """`frame`: the table plus `row` (its index) and what the filters need; `cells`: every row's
    list cells already formatted (with its page's `href`), so a list page formats nothing;
    `row_of`: the row index of each record page's key (slug, symbol); `table`: the original rows."""

    table: pl.DataFrame
    frame: pl.DataFrame
    cells: list[dict[str, str]]
    row_of: dict[str, int]

    def row(self, index: int) -> dict[str, Any]:
        """A record's original values, as its own page shows them."""
        return self.table.row(index, named=True)
