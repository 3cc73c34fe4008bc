"""What a CSV says and what its table domain will be: each column as a field (name, kind, values
as the build types them), the key, and every choice domain.yaml will state (`Draft`).
The guesses are listed in scaffold.py's docstring; each is written into domain.yaml to correct.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from armbench.errors import UserError
from armbench.replicas.web.listing import MAX_LISTED_CHOICES
from armbench.tablekit import kinds
from armbench.tablekit.build import typed
from armbench.tablekit.check import key_problems
from armbench.tablekit.csvfile import CsvTable
from armbench.tablekit.spec import LIST_PARAMS, RESERVED_FIELDS, FieldSpec
from armbench.tablekit.yamltext import yaml_scalar

MAX_FILTERS = 6
LIST_FIELDS = 5
DEFAULT_FIELDS = 3
EXAMPLE_LIMIT = 3


@dataclass(frozen=True)
class Column:
    """One CSV column with its guessed kind and the values the build would make of it."""

    name: str  # the field's name
    header: str  # the CSV's
    kind: str
    values: pl.Series  # typed as the build types it: nulls for empty cells

    @property
    def filled(self) -> int:
        return len(self.values) - self.values.null_count()

    @property
    def distinct(self) -> int:
        return self.values.drop_nulls().n_unique()

    @property
    def example(self) -> Any:
        present = self.values.drop_nulls()
        return present[0] if len(present) else None

    @property
    def words(self) -> str:
        return self.name.replace("_", " ")


def field_names(headers: list[str]) -> list[str]:
    """Each header as a field name (see the module), all different."""
    names: list[str] = []
    for header in headers:
        name = re.sub(r"[^a-z0-9]+", "_", header.lower()).strip("_") or "column"
        if name[0].isdigit():
            name = f"f_{name}"
        if name in RESERVED_FIELDS:
            name += "_value"
        unique, number = name, 2
        while unique in names:
            unique, number = f"{name}_{number}", number + 1
        names.append(unique)
    return names


def profile(csv: CsvTable, source: Path) -> list[Column]:
    """Every column of the CSV as a field: its name and kind, and its values as the build types them."""
    columns = []
    for header, name in zip(csv.frame.columns, field_names(csv.frame.columns), strict=True):
        kind = kinds.guess(csv.frame[header].to_list())
        field = FieldSpec(name=name, kind=kind, column="" if name == header else header)
        columns.append(Column(name, header, kind, typed(csv, field, source)))
    return columns


def choose_key(columns: list[Column], csv: CsvTable, requested: str | None, source: Path) -> str:
    """`requested` (a header or a field name) if it can be the key (a value on every row, all
    different), else the first column that can; a UserError naming why not."""
    if requested is not None:
        column = next((c for c in columns if requested in (c.name, c.header)), None)
        if column is None:
            raise UserError(f"--key {requested} is not a column of {source} (columns: "
                            f"{', '.join(c.header for c in columns)})")
        why = key_problems(column.values, csv, source)
        if why:
            raise UserError(f"--key {requested} cannot be the key: {why[0]}")
        return column.name
    found = next((c.name for c in columns if not key_problems(c.values, csv, source)), None)
    if found is None:
        raise UserError(f"no column of {source} has a value on every row, all different, to be the key; "
                        "add an id column or pass --key")
    return found


@dataclass(frozen=True)
class Draft:
    """Everything domain.yaml will say, decided from the CSV."""

    name: str
    title: str
    port_offset: int
    key: str
    one: str
    many: str
    rows: int
    columns: list[Column]
    csv: Path

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    @property
    def list_fields(self) -> list[str]:
        return [self.key, *[c.name for c in self.columns if c.name != self.key]][:LIST_FIELDS]

    def choice_columns(self) -> list[Column]:
        """Text columns (not the key) of 2-60 distinct values that repeat: a select's options."""
        return [c for c in self.columns if c.kind == "text" and c.name != self.key
                and 2 <= c.distinct <= MAX_LISTED_CHOICES and c.distinct < c.filled]

    @property
    def filters(self) -> list[str]:
        chosen = [*(c for c in [*self.choice_columns(), *(c for c in self.columns if c.kind == "bool")]
                    if c.name not in LIST_PARAMS),  # the list page's own parameters
                  *(c for c in self.columns if c.kind == "number" and c.name != self.key)]
        return [c.name for c in chosen][:MAX_FILTERS]

    @property
    def group_by(self) -> str | None:
        choices = self.choice_columns()
        return min(choices, key=lambda c: c.distinct).name if choices else None

    @property
    def default_fields(self) -> list[str]:
        return self.list_fields[:DEFAULT_FIELDS]

    @property
    def intro(self) -> str:
        """What the table is (the tool adds how many rows it has, so the intro never goes stale)."""
        others = [c.words for c in self.columns if c.name != self.key]
        listed = (", ".join(others[:-1]) + " and " + others[-1]) if len(others) > 1 else "".join(others)
        return (f"A table of {self.many}, each named by its {self.column(self.key).words}"
                + (f", with {listed}." if listed else "."))

    def numbers(self) -> list[Column]:
        return [c for c in self.columns if c.kind == "number" and c.name != self.key]

    def tool_example(self) -> tuple[str, dict[str, Any]]:
        """A filter and a sort: what the tool's description shows (no example question's call)."""
        numbers = self.numbers()
        sort = numbers[0] if numbers else self.column(self.key)
        filtered = next((self.column(name) for name in self.filters
                         if self.column(name).kind in ("text", "bool") and name != sort.name), None)
        args: dict[str, Any] = {}
        says = f"the {EXAMPLE_LIMIT} {self.many}"
        if filtered is not None:
            value = filtered.values.drop_nulls().mode().sort()[0]  # the commonest value: several rows match
            args["filters"] = [{"field": filtered.name, "op": "eq", "value": value}]
        elif len(numbers) > 1:
            filtered = numbers[1]
            value = filtered.values.drop_nulls().sort()[filtered.filled // 2]  # the median
            args["filters"] = [{"field": filtered.name, "op": "gte", "value": value}]
        order = "desc" if sort.kind == "number" else "asc"
        args.update(sort_by=sort.name, order=order, limit=EXAMPLE_LIMIT)
        says += (f" with the highest {sort.words}" if order == "desc" else f" first by {sort.words}")
        if filtered is not None:
            condition = "is" if args["filters"][0]["op"] == "eq" else "is at least"
            says += f" whose {filtered.words} {condition} {yaml_scalar(value) if isinstance(value, bool) else value}"
        return says, args


def draft(name: str, csv: Path, raw: pl.DataFrame, columns: list[Column], key: str, port_offset: int,
          title: str | None) -> Draft:
    many = name.replace("_", " ")
    one = re.sub(r"ies$", "y", many) if many.endswith("ies") else re.sub(r"(?<!s)s$", "", many)
    return Draft(name=name, title=title or f"{many.capitalize()} table (website)", port_offset=port_offset,
                 key=key, one=one, many=many, rows=raw.height, columns=columns, csv=csv)
