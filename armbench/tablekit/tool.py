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
from armbench.tools.base import MAX_RESULT_CHARS, Tool
from armbench.tools.table_query import (
    AGGREGATE_SPEC,
    SOURCE_URL,
    TableFields,
    args_model,
    filters_spec,
    prepare,
    run_query,
    sort_key,
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
        f"sort_by + order (\"desc\" by default): rows lacking the field come last in either order; ties go by "
        f"{table.tie_words}. Without sort_by, rows are in {table.tie_words} order. limit: 1-{table.max_limit} rows (default "
        f"50); the whole result must stay under {MAX_RESULT_CHARS:,} characters. fields: see its schema; "
        f"source_url (the {spec.entity.one}'s page on the website) is always in every row.",
        AGGREGATE_SPEC,
        "Result: matched, returned, truncated, rows, plus note (when truncated), sort {field, order, missing} "
        "(with sort_by) and aggregate {fn, field, value, rows, missing} (when asked); \"missing\" counts matched "
        "rows with no value for that field. Mistakes return {\"error\": {type, message, ...}} naming the valid "
        "choices.",
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

    async def run(self: Tool, args: Any) -> dict[str, Any]:
        return run_query(table, frame(), args, site=endpoint(replica).base_url)

    camel = "".join(part.capitalize() for part in spec.tool.name.split("_"))
    return type(camel, (Tool,), {
        "__doc__": f"`{spec.tool.name}`: the {spec.name} table domain's typed query (armbench.tablekit).",
        "name": spec.tool.name,
        "description": description(spec, table, tables.rows(spec.table)),
        "Args": args_model(f"{camel}Args", table),
        "run": run,
    })
