"""One typed query over one replica table: filters, sort, limit and an aggregate, bounded rows.

`gpu_query` and `fund_screener` are this engine over their own tables: each declares its fields
(`TableFields`), prepares its frame under those names and writes its own description.

`field`, `op`, `fn` and `order` are plain strings in the pydantic models (their choices are
advertised as JSON-schema enums) and are checked in `run_query`, so a mistake comes back as a
ToolError that names the valid choices instead of a generic schema violation.
"""

from __future__ import annotations

import calendar
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Annotated, Any

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model

from armbench.tools.base import MAX_RESULT_CHARS, Tool, ToolError

SOURCE_URL = "source_url"
NULL_OPS = ("is_null", "not_null")
COMPARISONS = {
    "eq": operator.eq,
    "ne": operator.ne,
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
}
OPS = (*COMPARISONS, "in", "contains", "starts_with", *NULL_OPS)
OPS_BY_KIND = {
    "string": ("eq", "ne", "in", "contains", "starts_with", *NULL_OPS),
    "number": (*COMPARISONS, "in", *NULL_OPS),
    "date": (*COMPARISONS, "in", *NULL_OPS),
    "boolean": ("eq", "ne", *NULL_OPS),
}
AGGREGATE_FNS = ("avg", "sum", "min", "max", "count")
EXPECTED_VALUE = {
    "string": "a string",
    "number": 'a JSON number (a numeric string such as "80" is accepted)',
    "date": 'a date "YYYY", "YYYY-MM" or "YYYY-MM-DD" (or a year number)',
    "boolean": 'true or false (the strings "true" and "false" are accepted)',
}
DATE_PATTERN = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")
SCALAR_SCHEMA = [{"type": "string"}, {"type": "number"}]
VALUE_SCHEMA = {
    "anyOf": [
        *SCALAR_SCHEMA,
        {"type": "array", "items": {"anyOf": SCALAR_SCHEMA}},
        {"type": "null"},
    ]
}
# A table with boolean fields advertises booleans too (tables without keep the schema they had).
VALUE_SCHEMA_WITH_BOOLEANS = {"anyOf": [{"type": "boolean"}, *VALUE_SCHEMA["anyOf"]]}

# The parts of a description every table query shares (its fields and examples are its own).
FILTERS_SPEC = """\
filters: a list of {field, op, value}; a row must satisfy all of them.
- text ops: eq, ne, in (list), contains, starts_with; all case-insensitive.
- number ops: eq, ne, gt, gte, lt, lte, in (list). value is a JSON number (a numeric string such \
as "80" is accepted).
- date ops: eq, ne, gt, gte, lt, lte, in (list). value "2022", "2022-05" or "2022-05-10" is a \
whole year, month or day: eq = inside it, ne = outside it, lt = before its first day, lte = on or \
before its last day, gt = after its last day, gte = on or after its first day.
- any field: is_null, not_null (value ignored).
Missing values are null, and a null never matches a comparison (only is_null)."""
BOOLEAN_OPS = "- true/false ops: eq, ne (value true or false)."
AGGREGATE_SPEC = """\
aggregate {fn: avg|sum|min|max|count, field} covers ALL matched rows, not just the returned \
page. count without a field counts matched rows."""


RESULT_SPEC = (
    "Result: matched, returned, truncated, rows, plus note (when truncated), sort {field, order, missing} "
    "(with sort_by) and aggregate {fn, field, value, rows, missing} (when asked); \"missing\" counts matched "
    "rows with no value for that field. Mistakes return {\"error\": {type, message, ...}} naming the valid "
    "choices."
)


@dataclass(frozen=True)
class TableFields:
    """A table's model-facing fields: their kinds (in the order the model sees them), the
    fields every row returns by default, the field (or fields, in turn, for a table without a
    one-column key) that orders unsorted rows and breaks ties, and an example value per kind for
    error messages."""

    kinds: dict[str, str]  # field -> "string" | "number" | "date" | "boolean": filter, sort, aggregate, return
    default_fields: tuple[str, ...]
    tie: str | tuple[str, ...]
    examples: dict[str, Any]
    noun: str  # "GPU": "[] = every GPU"
    max_limit: int = 200
    returned_only: tuple[str, ...] = ()  # fields a row can return that are chosen another way
    # The replica table's column for each field named otherwise: derived browsing solutions run a
    # question's SQL, written over the table, over the site's rows under these names.
    columns: dict[str, str] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.kinds)

    @property
    def ties(self) -> tuple[str, ...]:
        return (self.tie,) if isinstance(self.tie, str) else self.tie

    @property
    def tie_words(self) -> str:
        """How descriptions name the tie order: "gpu_id", "state, then year"."""
        return ", then ".join(self.ties)

    @property
    def returnable(self) -> tuple[str, ...]:
        return (*self.kinds, *self.returned_only, SOURCE_URL)

    def of_kind(self, *kinds: str) -> tuple[str, ...]:
        return tuple(field for field, kind in self.kinds.items() if kind in kinds)

    def aggregatable(self, fn: str) -> tuple[str, ...]:
        return {
            "avg": self.of_kind("number"),
            "sum": self.of_kind("number"),
            "min": self.of_kind("number", "date"),
            "max": self.of_kind("number", "date"),
            "count": self.names,
        }[fn]


def enum(choices: tuple[str, ...] | list[str]) -> Any:
    return Annotated[str, WithJsonSchema({"type": "string", "enum": list(choices)})]


def args_model(name: str, table: TableFields, **extra: Any) -> type[BaseModel]:
    """The query's pydantic model; `extra` adds fields (name=(type, Field(...))) after the others."""
    strict = ConfigDict(extra="forbid")
    field_name = enum(table.names)
    filter_model = create_model(
        "Filter",
        __config__=strict,
        field=(field_name, Field(description="Field to test.")),
        op=(enum(OPS), Field(
            description="Comparison; see the tool description for what each op means per field type."
        )),
        value=(Annotated[Any, WithJsonSchema(
            VALUE_SCHEMA_WITH_BOOLEANS if table.of_kind("boolean") else VALUE_SCHEMA
        )], Field(
            None,
            description=(
                'Text, number, or date "YYYY" / "YYYY-MM" / "YYYY-MM-DD"; a list for `in`; '
                "omit for is_null / not_null."
            ),
        )),
    )
    aggregate_model = create_model(
        "Aggregate",
        __config__=strict,
        fn=(enum(AGGREGATE_FNS), Field(
            description="avg and sum need a number field; min and max a number or date field."
        )),
        field=(field_name | None, Field(
            None, description="Field to aggregate; omit with count to count matched rows."
        )),
    )
    return create_model(
        name,
        __config__=strict,
        filters=(list[filter_model], Field(
            default_factory=list,
            description=f"Conditions that must all hold (AND). [] = every {table.noun}.",
        )),
        sort_by=(field_name | None, Field(
            None, description=f"Field to sort rows by; rows lacking it come last. Ties go by {table.tie_words}."
        )),
        order=(enum(["asc", "desc"]), Field("desc", description="Sort order for sort_by.")),
        fields=(list[enum(table.returnable)] | None, Field(
            None,
            description=(
                f"Fields to return per row. Default: {', '.join(table.default_fields)} plus every "
                "field used in filters, sort_by and aggregate. source_url is always returned."
            ),
        )),
        limit=(int, Field(50, ge=1, le=table.max_limit, description=f"Rows to return, 1..{table.max_limit}.")),
        aggregate=(aggregate_model | None, Field(
            None, description="One aggregate over ALL matched rows (not only the returned ones)."
        )),
        **extra,
    )


def lowercase_column(field: str) -> str:
    return f"__lower_{field}"


def iso_column(field: str) -> str:
    return f"__iso_{field}"


def prepare(frame: pl.DataFrame, table: TableFields) -> pl.DataFrame:
    """`frame` (model-facing names) plus lower-cased text and ISO dates, in `tie` order."""
    return frame.with_columns(
        *(pl.col(f).str.to_lowercase().alias(lowercase_column(f)) for f in table.of_kind("string")),
        *(pl.col(f).dt.strftime("%Y-%m-%d").alias(iso_column(f)) for f in table.of_kind("date")),
    ).sort(list(table.ties))


def check_choice(value: str, choices: tuple[str, ...], kind: str, what: str, at: str) -> str:
    if value not in choices:
        raise ToolError(kind, f"{at}: unknown {what} {value!r}", valid_choices=list(choices))
    return value


def bad_value(table: TableFields, kind: str, value: Any, at: str, wanted: str | None = None) -> ToolError:
    return ToolError(
        "bad_value",
        f"{at}: {value!r} is not {wanted or EXPECTED_VALUE[kind]}",
        expected=EXPECTED_VALUE[kind],
        example=table.examples[kind],
    )


class Conditions:
    """Builds the polars condition of each filter, checking its field, op and value."""

    def __init__(self, table: TableFields):
        self.table = table

    def string_value(self, value: Any, at: str) -> str:
        if not isinstance(value, str):
            raise bad_value(self.table, "string", value, at)
        return value.lower()

    def number_value(self, value: Any, at: str) -> float | int:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise bad_value(self.table, "number", value, at) from None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise bad_value(self.table, "number", value, at)
        return value

    def date_interval(self, value: Any, at: str) -> tuple[date, date]:
        """A year, month or day as its first and last day."""
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        match = DATE_PATTERN.fullmatch(value) if isinstance(value, str) else None
        if match is None:
            raise bad_value(self.table, "date", value, at)
        year, month, day = (int(part) if part else None for part in match.groups())
        try:
            if month is None:
                return date(year, 1, 1), date(year, 12, 31)
            if day is None:
                return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
            return date(year, month, day), date(year, month, day)
        except ValueError:
            raise bad_value(self.table, "date", value, at, wanted="a real calendar date") from None

    def boolean_value(self, value: Any, at: str) -> bool:
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if not isinstance(value, bool):
            raise bad_value(self.table, "boolean", value, at)
        return value

    def value_list(self, value: Any, kind: str, at: str) -> list[Any]:
        if not isinstance(value, list) or not value:
            raise bad_value(self.table, kind, value, at, wanted=f"a non-empty list of {kind} values for `in`")
        return value

    def string(self, field: str, op: str, value: Any, at: str) -> pl.Expr:
        column = pl.col(lowercase_column(field))
        if op == "in":
            return column.is_in([self.string_value(item, at) for item in self.value_list(value, "string", at)])
        text = self.string_value(value, at)
        if op == "contains":
            return column.str.contains(text, literal=True)
        if op == "starts_with":
            return column.str.starts_with(text)
        return COMPARISONS[op](column, text)

    def number(self, field: str, op: str, value: Any, at: str) -> pl.Expr:
        column = pl.col(field)
        if op == "in":
            items = self.value_list(value, "number", at)
            return pl.any_horizontal([column == self.number_value(item, at) for item in items])
        return COMPARISONS[op](column, self.number_value(value, at))

    def boolean(self, field: str, op: str, value: Any, at: str) -> pl.Expr:
        return COMPARISONS[op](pl.col(field), self.boolean_value(value, at))

    def date(self, field: str, op: str, value: Any, at: str) -> pl.Expr:
        column = pl.col(field)
        if op == "in":
            intervals = [self.date_interval(item, at) for item in self.value_list(value, "date", at)]
            return pl.any_horizontal([column.is_between(first, last) for first, last in intervals])
        first, last = self.date_interval(value, at)
        match op:
            case "eq":
                return column.is_between(first, last)
            case "ne":
                return (column < first) | (column > last)
            case "lt" | "gte":
                return COMPARISONS[op](column, first)
            case _:  # lte, gt
                return COMPARISONS[op](column, last)

    def of(self, spec: BaseModel, at: str) -> pl.Expr:
        field = check_choice(spec.field, self.table.names, "unknown_field", "field", f"{at}.field")
        op = check_choice(spec.op, OPS, "unknown_op", "op", f"{at}.op")
        if op == "is_null":
            return pl.col(field).is_null()
        if op == "not_null":
            return pl.col(field).is_not_null()
        kind = self.table.kinds[field]
        if op not in OPS_BY_KIND[kind]:
            raise ToolError(
                "bad_op",
                f"{at}: op {op!r} does not apply to {kind} field {field!r}",
                valid_choices=list(OPS_BY_KIND[kind]),
            )
        return getattr(self, kind)(field, op, spec.value, f"{at}.value")


def checked_aggregate(table: TableFields, spec: BaseModel) -> tuple[str, str | None]:
    fn = check_choice(spec.fn, AGGREGATE_FNS, "unknown_fn", "aggregate fn", "aggregate.fn")
    if spec.field is None:
        if fn != "count":
            raise ToolError(
                "bad_aggregate",
                f"aggregate: {fn} needs a field",
                valid_choices=list(table.aggregatable(fn)),
            )
        return fn, None
    field = check_choice(spec.field, table.names, "unknown_field", "field", "aggregate.field")
    if field not in table.aggregatable(fn):
        raise ToolError(
            "bad_aggregate",
            f"aggregate: {fn} does not apply to {table.kinds[field]} field {field!r}",
            valid_choices=list(table.aggregatable(fn)),
        )
    return fn, field


def aggregate_summary(matched: pl.DataFrame, fn: str, field: str | None) -> dict[str, Any]:
    if field is None:
        return {
            "fn": fn,
            "field": None,
            "value": matched.height,
            "rows": matched.height,
            "missing": 0,
        }
    column = matched[field]
    compute = {
        "count": column.count,
        "sum": column.sum,
        "avg": column.mean,
        "min": column.min,
        "max": column.max,
    }[fn]
    value = compute()
    if isinstance(value, date):
        value = value.isoformat()
    missing = column.null_count()
    return {
        "fn": fn,
        "field": field,
        "value": value,
        "rows": column.len() - missing,
        "missing": missing,
    }


def returned_fields(table: TableFields, args: BaseModel) -> list[str]:
    if args.fields:
        requested = [
            check_choice(f, table.returnable, "unknown_field", "field", f"fields[{i}]")
            for i, f in enumerate(args.fields)
        ]
    else:
        aggregate_field = args.aggregate.field if args.aggregate else None
        used = [spec.field for spec in args.filters] + [args.sort_by, aggregate_field]
        requested = [*table.default_fields, *(f for f in used if f)]
    return list(dict.fromkeys([*requested, SOURCE_URL]))


def output_column(table: TableFields, field: str) -> pl.Expr:
    if table.kinds.get(field) == "date":
        return pl.col(iso_column(field)).alias(field)
    return pl.col(field)


def sort_key(table: TableFields, field: str) -> str:
    return lowercase_column(field) if table.kinds[field] == "string" else field


def truncation_note(table: TableFields, hidden: int) -> str:
    return (
        f"{hidden} more rows matched; narrow the filters, use aggregate, "
        f"or sort and raise limit (max {table.max_limit})"
    )


def filters_spec(table: TableFields) -> str:
    """FILTERS_SPEC, with the true/false ops when the table has boolean fields (a table without
    keeps the text it always had)."""
    if not table.of_kind("boolean"):
        return FILTERS_SPEC
    return FILTERS_SPEC.replace("- any field:", f"{BOOLEAN_OPS}\n- any field:")


def run_query(table: TableFields, frame: pl.DataFrame, args: BaseModel, where: list[pl.Expr] = (),
              count_by: tuple[str, tuple[str, ...]] | None = None, site: str = "") -> dict[str, Any]:
    """The query's result over `frame` (already `prepare`d). `where` adds the tool's own
    conditions; `count_by` (column, its values) adds `by_<column>`: matched rows per value; `site`
    (the replica's base URL) goes before each row's site-relative `source_url`."""
    conditions = [*where, *(Conditions(table).of(spec, f"filters[{i}]") for i, spec in enumerate(args.filters))]
    sort_field = (check_choice(args.sort_by, table.names, "unknown_field", "field", "sort_by")
                  if args.sort_by is not None else None)
    order = check_choice(args.order, ("asc", "desc"), "unknown_order", "order", "order")
    aggregate = checked_aggregate(table, args.aggregate) if args.aggregate else None
    fields = returned_fields(table, args)

    matched = frame.filter(conditions) if conditions else frame
    ordered = matched
    if sort_field:
        ordered = matched.sort(
            [sort_key(table, sort_field), *table.ties], descending=[order == "desc", *(False for _ in table.ties)],
            nulls_last=True,
        )
    rows = ordered.head(args.limit).select([output_column(table, f) for f in fields]).to_dicts()
    for row in rows if site else ():
        row[SOURCE_URL] = site + row[SOURCE_URL]

    result: dict[str, Any] = {"matched": matched.height}
    if count_by:
        column, values = count_by
        counts = dict(matched[column].value_counts().iter_rows())
        result[f"by_{column}"] = {value: counts.get(value, 0) for value in values}
    result |= {
        "returned": len(rows),
        "truncated": matched.height > len(rows),
        "rows": rows,
    }
    if result["truncated"]:
        result["note"] = truncation_note(table, matched.height - len(rows))
    if sort_field:
        missing = matched[sort_field].null_count()
        result["sort"] = {"field": sort_field, "order": order, "missing": missing}
    if aggregate:
        result["aggregate"] = aggregate_summary(matched, *aggregate)
    return result


def sort_spec(table: TableFields, source_url: str, unsorted: str = "") -> str:
    """A description's paragraph on sort_by, order, limit and fields. `source_url` says which page
    a row links to; `unsorted` adds to "Without sort_by, rows are in <tie> order"."""
    return (
        f'sort_by + order ("desc" by default): rows lacking the field come last in either order; ties go by '
        f"{table.tie_words}. Without sort_by, rows are in {table.tie_words} order{unsorted}. limit: "
        f"1-{table.max_limit} rows (default 50); the whole result must stay under {MAX_RESULT_CHARS:,} "
        f"characters. fields: see its schema; source_url ({source_url}) is always in every row."
    )


def query_tool(name: str, description: str, table: TableFields, frame: Callable[[], pl.DataFrame],
               site: Callable[[], str]) -> type[Tool]:
    """A typed query tool over a table, as a class for a domain's TOOLS: `frame()` gives the
    prepared rows (cached by the caller, so they load on the first call), `site()` the replica's
    address that source_url paths are joined to."""
    camel = "".join(part.capitalize() for part in name.split("_"))

    async def run(self: Tool, args: Any) -> dict[str, Any]:
        return run_query(table, frame(), args, site=site())

    return type(camel, (Tool,), {
        "__doc__": f"`{name}`: a typed query over one table (armbench.tools.table_query).",
        "name": name,
        "description": description,
        "Args": args_model(f"{camel}Args", table),
        "run": run,
        "table": table,  # what it answers from (site-tool parity reads these: armbench/domains/parity.py)
        "frame": staticmethod(frame),
    })
