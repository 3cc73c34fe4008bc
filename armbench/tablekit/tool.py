"""A table domain's typed tool, `<name>_query`: `armbench.tools.table_query` over the domain's table,
described from domain.yaml (intro, fields with units and null meanings, one worked example).

The example in the description is the spec's, so it can be checked against the questions like any
other tool's (no example may be a question's solution).
"""
from __future__ import annotations

import json
from functools import cache
from typing import Any

import polars as pl

from armbench.replicas.serve import Replica, endpoint
from armbench.replicas.tables import TableDir
from armbench.tablekit.spec import FieldSpec, TableSpec
from armbench.tools.base import Tool
from armbench.tools.table_query import (
    AGGREGATE_SPEC,
    RESULT_SPEC,
    SOURCE_URL,
    TableFields,
    filters_spec,
    prepare,
    query_tool,
    sort_key,
    sort_spec,
)

QUERY_KIND = {"text": "string", "number": "number", "date": "date", "bool": "boolean"}
KIND_WORDS = {"text": "text", "number": "number", "date": 'date ("YYYY-MM-DD")', "bool": "true/false"}


def table_fields(spec: TableSpec) -> TableFields:
    examples: dict[str, Any] = {"string": "text", "number": 1, "date": "2000", "boolean": True}
    for field in reversed(spec.fields):  # the first field's example of each kind wins
        if field.example is not None:
            examples[QUERY_KIND[field.kind]] = field.example
    return TableFields(
        kinds={field.name: QUERY_KIND[field.kind] for field in spec.fields},
        default_fields=tuple(spec.tool.default_fields),
        # Rows the tie field does not tell apart (a key repeated across its `within` fields) go by those.
        tie=(spec.tool.tie, *(name for name in spec.entity.within if name != spec.tool.tie)),
        examples=examples,
        noun=spec.entity.one,
    )


def field_line(field: FieldSpec) -> str:
    details = [KIND_WORDS[field.kind]]
    if field.unit:
        details.append(field.unit)
    line = f"- {field.name} ({', '.join(details)})"
    if field.description:
        line += f": {field.description}"
    if field.nulls:
        line += f"; null = {field.nulls}"
    return line


def description(spec: TableSpec, table: TableFields, rows: int) -> str:
    tool = spec.tool
    return "\n\n".join([
        f"{tool.intro} {rows:,} rows, one per {spec.entity.one}; the same rows as the website's "
        f"{spec.site.heading} pages.",
        "Fields:\n" + "\n".join(field_line(field) for field in spec.fields),
        filters_spec(table),
        sort_spec(table, f"the {spec.entity.one}'s page on the website"),
        AGGREGATE_SPEC,
        RESULT_SPEC,
        f"Example: {tool.example.says}:\n{json.dumps(tool.example.args)}",
    ])


def tool_class(spec: TableSpec, tables: TableDir) -> type[Tool]:
    """The tool as a class, as every domain's TOOLS lists them; its rows load on its first call."""
    table = table_fields(spec)

    @cache
    def frame() -> pl.DataFrame:
        """By the tie field ignoring case, then by the tie fields as spelled (`prepare`'s order), so
        unsorted rows come in the site list's default order when the tie is the key."""
        rows = tables.load(spec.table)
        links = [spec.page_path(values) for values in rows.select(spec.entity.address_fields).iter_rows()]
        prepared = prepare(rows.with_columns(pl.Series(SOURCE_URL, links)), table)
        return prepared.sort([sort_key(table, table.ties[0]), *table.ties], nulls_last=True)

    replica = Replica(spec.name, spec.port_offset, "")  # where it listens: endpoint() needs no more
    return query_tool(spec.tool.name, description(spec, table, tables.rows(spec.table)), table, frame,
                      lambda: endpoint(replica).base_url)
