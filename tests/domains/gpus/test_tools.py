"""gpu_query on the real replica table; expectations are recomputed with polars from the parquet."""

from __future__ import annotations

import asyncio
import itertools
import json
from datetime import date
from typing import Any

import polars as pl
import pytest

from armbench.domains import DOMAINS
from armbench.domains.gpus import TABLES
from armbench.domains.gpus.tools import FIELDS, ZERO_MEANS_UNKNOWN, GpuQuery
from armbench.tools.table_query import OPS

RAW = pl.read_parquet(TABLES.path("gpus"))
TDP = pl.col("thermal_design_power_w")
RELEASED = pl.col("release_date")


def query(arguments: dict[str, Any] | str) -> dict[str, Any]:
    return asyncio.run(GpuQuery().invoke(arguments)).result


def matched(*filters: dict[str, Any]) -> int:
    return query({"filters": list(filters), "limit": 1})["matched"]


def error(arguments: dict[str, Any] | str) -> dict[str, Any]:
    result = query(arguments)
    assert "error" in result, result
    return result["error"]


def expected_count(condition: pl.Expr) -> int:
    return RAW.filter(condition).height


def lower(column: str) -> pl.Expr:
    return pl.col(column).str.to_lowercase()


# ---- ops -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "condition"),
    [
        (
            {"field": "manufacturer", "op": "eq", "value": "NVIDIA"},
            pl.col("manufacturer") == "NVIDIA",
        ),
        (
            {"field": "manufacturer", "op": "ne", "value": "nvidia"},
            pl.col("manufacturer") != "NVIDIA",
        ),
        ({"field": "memory_bus_bits", "op": "gt", "value": 4096}, pl.col("memory_bus_bits") > 4096),
        (
            {"field": "memory_bus_bits", "op": "gte", "value": 4096},
            pl.col("memory_bus_bits") >= 4096,
        ),
        ({"field": "die_size_mm2", "op": "lt", "value": 50}, pl.col("die_size_mm2") < 50),
        ({"field": "die_size_mm2", "op": "lte", "value": 50}, pl.col("die_size_mm2") <= 50),
        ({"field": "process_size_nm", "op": "eq", "value": 7}, pl.col("process_size_nm") == 7),
        (
            {"field": "manufacturer", "op": "in", "value": ["sony", "XGI"]},
            pl.col("manufacturer").is_in(["Sony", "XGI"]),
        ),
        (
            {"field": "memory_bus_bits", "op": "in", "value": [352, 384]},
            pl.col("memory_bus_bits").is_in([352, 384]),
        ),
        (
            {"field": "name", "op": "contains", "value": "RTX 40"},
            lower("name").str.contains("rtx 40"),
        ),
        (
            {"field": "generation", "op": "starts_with", "value": "SERVER"},
            lower("generation").str.starts_with("server"),
        ),
        ({"field": "architecture", "op": "is_null"}, pl.col("architecture").is_null()),
        ({"field": "architecture", "op": "not_null"}, pl.col("architecture").is_not_null()),
        (
            {"field": "fp16_gflop_s", "op": "gt", "value": 100_000},
            pl.col("half_float_performance_gflop_s") > 100_000,
        ),
        (
            {"field": "fp32_gflop_s", "op": "is_null"},
            pl.col("single_float_performance_gflop_s").is_null(),
        ),
        (
            {"field": "fp64_gflop_s", "op": "gte", "value": 10_000},
            pl.col("double_float_performance_gflop_s") >= 10_000,
        ),
        ({"field": "gpu_name", "op": "eq", "value": "tu102"}, pl.col("gpu_name") == "TU102"),
    ],
)
def test_each_op_matches_polars(spec: dict[str, Any], condition: pl.Expr) -> None:
    expected = expected_count(condition)
    assert expected > 0
    assert matched(spec) == expected


def test_string_comparisons_ignore_case() -> None:
    counts = {
        matched({"field": "manufacturer", "op": "eq", "value": v})
        for v in ("NVIDIA", "nvidia", "NvIdIa")
    }
    assert counts == {1286}


def test_filters_are_anded() -> None:
    both = matched(
        {"field": "manufacturer", "op": "eq", "value": "amd"},
        {"field": "memory_type", "op": "starts_with", "value": "hbm"},
    )
    assert both == expected_count(
        (pl.col("manufacturer") == "AMD") & lower("memory_type").str.starts_with("hbm")
    )


def test_numeric_string_is_coerced() -> None:
    as_string = matched({"field": "memory_size_gb", "op": "gte", "value": "80"})
    assert as_string == matched({"field": "memory_size_gb", "op": "gte", "value": 80}) > 0


def test_null_never_matches_a_comparison() -> None:
    below = matched({"field": "thermal_design_power_w", "op": "lt", "value": 100})
    not_below = matched({"field": "thermal_design_power_w", "op": "gte", "value": 100})
    not_equal = matched({"field": "thermal_design_power_w", "op": "ne", "value": 100})
    unknown = matched({"field": "thermal_design_power_w", "op": "is_null"})
    assert unknown == RAW["thermal_design_power_w"].null_count() == 627
    assert below + not_below + unknown == RAW.height
    assert not_equal == expected_count(TDP.is_not_null() & (TDP != 100))


# ---- dates -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "value", "condition"),
    [
        ("eq", "2022", RELEASED.dt.year() == 2022),
        ("eq", 2022, RELEASED.dt.year() == 2022),
        ("eq", "2022-05", RELEASED.is_between(date(2022, 5, 1), date(2022, 5, 31))),
        ("eq", "2022-05-10", RELEASED == date(2022, 5, 10)),
        ("ne", "2022", RELEASED.dt.year() != 2022),
        ("lt", "2020", RELEASED < date(2020, 1, 1)),
        ("lt", "2022-05", RELEASED < date(2022, 5, 1)),
        ("lte", "2022", RELEASED <= date(2022, 12, 31)),
        ("lte", "2022-05", RELEASED <= date(2022, 5, 31)),
        ("lte", "2022-02", RELEASED <= date(2022, 2, 28)),
        ("gt", "2022", RELEASED > date(2022, 12, 31)),
        ("gt", "2022-05-10", RELEASED > date(2022, 5, 10)),
        ("gte", "2022-05-10", RELEASED >= date(2022, 5, 10)),
        ("gte", "2022-05", RELEASED >= date(2022, 5, 1)),
        (
            "in",
            ["2021", "2023-02"],
            (RELEASED.dt.year() == 2021) | RELEASED.is_between(date(2023, 2, 1), date(2023, 2, 28)),
        ),
    ],
)
def test_date_values_are_intervals(op: str, value: Any, condition: pl.Expr) -> None:
    assert matched({"field": "release_date", "op": op, "value": value}) == expected_count(condition)


def test_eq_day_finds_that_day() -> None:
    result = query({"filters": [{"field": "release_date", "op": "eq", "value": "2022-05-10"}]})
    assert {row["name"] for row in result["rows"]} == {"Radeon RX 6650 XT", "Radeon RX 6950 XT"}
    assert {row["release_date"] for row in result["rows"]} == {"2022-05-10"}


@pytest.mark.parametrize(
    "value", ["2022-13", "2022-02-30", "22", "2022/05", "May 2022", 2022.5, ["2022"]]
)
def test_bad_dates_are_bad_values(value: Any) -> None:
    problem = error({"filters": [{"field": "release_date", "op": "eq", "value": value}]})
    assert problem["type"] == "bad_value"
    assert problem["expected"] and problem["example"]


def test_dates_reject_text_ops() -> None:
    problem = error({"filters": [{"field": "release_date", "op": "contains", "value": "2022"}]})
    assert problem["type"] == "bad_op"
    assert "contains" not in problem["valid_choices"] and "gte" in problem["valid_choices"]


# ---- zero means unknown ----------------------------------------------------------------------


def test_zero_memory_is_unknown() -> None:
    assert ZERO_MEANS_UNKNOWN[0] == "memory_size_gb"
    shared = {"field": "memory_type", "op": "eq", "value": "system shared"}
    result = query({"filters": [shared], "limit": 5, "fields": ["memory_size_gb"]})
    assert result["matched"] == 342
    assert all(row["memory_size_gb"] is None for row in result["rows"])
    assert matched({"field": "memory_size_gb", "op": "is_null"}) == 342
    assert matched({"field": "memory_size_gb", "op": "lte", "value": 0}) == 0


def test_smallest_memory_is_not_zero() -> None:
    result = query({"sort_by": "memory_size_gb", "order": "asc", "limit": 1})
    assert (
        result["rows"][0]["memory_size_gb"]
        == RAW.filter(pl.col("memory_size_gb") > 0)["memory_size_gb"].min()
    )
    assert result["sort"]["missing"] == 342


def test_avg_memory_ignores_zeros() -> None:
    result = query({"aggregate": {"fn": "avg", "field": "memory_size_gb"}, "limit": 1})
    nonzero = RAW.filter(pl.col("memory_size_gb") > 0)["memory_size_gb"]
    assert result["aggregate"]["value"] == pytest.approx(nonzero.mean())
    assert (result["aggregate"]["rows"], result["aggregate"]["missing"]) == (nonzero.len(), 342)


# ---- sorting ---------------------------------------------------------------------------------

SMALL_VENDORS = {"field": "manufacturer", "op": "in", "value": ["xgi", "sony", "3dfx", "matrox"]}


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_nulls_sort_last_and_ties_go_by_name(order: str) -> None:
    result = query(
        {
            "filters": [SMALL_VENDORS],
            "sort_by": "thermal_design_power_w",
            "order": order,
            "limit": 200,
        }
    )
    expected_missing = expected_count(
        pl.col("manufacturer").is_in(["XGI", "Sony", "3dfx", "Matrox"]) & TDP.is_null()
    )
    assert result["sort"] == {
        "field": "thermal_design_power_w",
        "order": order,
        "missing": expected_missing,
    }
    assert expected_missing > 0
    tdps = [row["thermal_design_power_w"] for row in result["rows"]]
    known = [t for t in tdps if t is not None]
    assert tdps == known + [None] * expected_missing
    assert known == sorted(known, reverse=order == "desc")
    keys = [
        (row["thermal_design_power_w"] is None, row["thermal_design_power_w"], row["name"])
        for row in result["rows"]
    ]
    for (null_a, tdp_a, name_a), (null_b, tdp_b, name_b) in itertools.pairwise(keys):
        if null_a == null_b and tdp_a == tdp_b:
            assert name_a < name_b


def test_lowest_tdp_has_a_tdp() -> None:
    result = query({"sort_by": "thermal_design_power_w", "order": "asc", "limit": 1})
    assert result["rows"][0]["thermal_design_power_w"] == RAW["thermal_design_power_w"].min()
    assert result["sort"]["missing"] == 627


def test_text_sort_ignores_case() -> None:
    result = query(
        {
            "sort_by": "name",
            "order": "asc",
            "limit": 200,
            "fields": ["name"],
            "filters": [SMALL_VENDORS],
        }
    )
    names = [row["name"] for row in result["rows"]]
    assert names == sorted(names, key=str.lower)


def test_unsorted_rows_come_in_name_order() -> None:
    names = [row["name"] for row in query({"filters": [SMALL_VENDORS], "limit": 200})["rows"]]
    assert names == sorted(names)


# ---- aggregates ------------------------------------------------------------------------------

NVIDIA = {"field": "manufacturer", "op": "eq", "value": "nvidia"}
NVIDIA_ROWS = RAW.filter(pl.col("manufacturer") == "NVIDIA")


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        ("avg", NVIDIA_ROWS["thermal_design_power_w"].mean()),
        ("sum", NVIDIA_ROWS["thermal_design_power_w"].sum()),
        ("min", NVIDIA_ROWS["thermal_design_power_w"].min()),
        ("max", NVIDIA_ROWS["thermal_design_power_w"].max()),
        ("count", NVIDIA_ROWS["thermal_design_power_w"].count()),
    ],
)
def test_aggregate_covers_every_matched_row(fn: str, expected: float) -> None:
    result = query(
        {
            "filters": [NVIDIA],
            "limit": 1,
            "aggregate": {"fn": fn, "field": "thermal_design_power_w"},
        }
    )
    assert result["returned"] == 1 and result["matched"] == 1286
    missing = NVIDIA_ROWS["thermal_design_power_w"].null_count()
    assert result["aggregate"] == {
        "fn": fn,
        "field": "thermal_design_power_w",
        "value": pytest.approx(expected),
        "rows": 1286 - missing,
        "missing": missing,
    }
    assert "thermal_design_power_w" in result["rows"][0]


def test_count_without_field_counts_matched_rows() -> None:
    result = query({"filters": [NVIDIA], "limit": 1, "aggregate": {"fn": "count"}})
    assert result["aggregate"] == {
        "fn": "count",
        "field": None,
        "value": 1286,
        "rows": 1286,
        "missing": 0,
    }


def test_date_min_max_are_iso() -> None:
    latest = query({"aggregate": {"fn": "max", "field": "release_date"}, "limit": 1})["aggregate"][
        "value"
    ]
    assert latest == RAW["release_date"].max().isoformat() == "2025-12-11"


@pytest.mark.parametrize(
    ("aggregate", "kind"),
    [
        ({"fn": "avg", "field": "name"}, "bad_aggregate"),
        ({"fn": "sum", "field": "release_date"}, "bad_aggregate"),
        ({"fn": "avg"}, "bad_aggregate"),
        ({"fn": "median", "field": "die_size_mm2"}, "unknown_fn"),
        ({"fn": "avg", "field": "tdp"}, "unknown_field"),
    ],
)
def test_bad_aggregates_name_valid_choices(aggregate: dict[str, Any], kind: str) -> None:
    problem = error({"aggregate": aggregate})
    assert problem["type"] == kind
    assert problem["valid_choices"]


# ---- result shape ----------------------------------------------------------------------------


def test_truncation_is_reported() -> None:
    result = query({"filters": [NVIDIA], "limit": 5})
    assert (result["matched"], result["returned"], result["truncated"]) == (1286, 5, True)
    assert "1281 more rows matched" in result["note"]
    small = query({"filters": [SMALL_VENDORS], "limit": 200})
    assert (small["matched"], small["returned"], small["truncated"]) == (66, 66, False)
    assert "note" not in small and "sort" not in small and "aggregate" not in small


def test_every_row_has_source_url() -> None:
    for arguments in (
        {"filters": [SMALL_VENDORS], "limit": 200},
        {"filters": [SMALL_VENDORS], "fields": ["die_size_mm2"]},
        {"filters": [SMALL_VENDORS], "fields": ["source_url", "name"]},
    ):
        rows = query(arguments)["rows"]
        assert rows and all(
            row["source_url"].startswith("https://www.techpowerup.com/gpu-specs/") for row in rows
        )


def test_default_fields_add_every_used_field() -> None:
    result = query(
        {
            "filters": [NVIDIA, {"field": "die_size_mm2", "op": "gt", "value": 800}],
            "sort_by": "memory_bus_bits",
            "aggregate": {"fn": "avg", "field": "fp32_gflop_s"},
            "limit": 1,
        }
    )
    assert list(result["rows"][0]) == [
        "name",
        "manufacturer",
        "release_date",
        "die_size_mm2",
        "memory_bus_bits",
        "fp32_gflop_s",
        "source_url",
    ]


def test_explicit_fields_and_value_types() -> None:
    result = query(
        {
            "filters": [{"field": "name", "op": "eq", "value": "GeForce RTX 2080 Ti"}],
            "fields": list(FIELDS),
        }
    )
    row = result["rows"][0]
    assert list(row) == [*FIELDS, "source_url"]
    assert row["release_date"] == "2018-09-20"
    assert row["memory_bus_bits"] == 352 and isinstance(row["memory_bus_bits"], int)
    assert isinstance(row["thermal_design_power_w"], int) and isinstance(
        row["memory_size_gb"], float
    )
    assert row["transistor_count_m"] == 18600.0 and row["fp32_gflop_s"] == 13450.0


@pytest.mark.parametrize("limit", [0, 201, -1])
def test_limit_bounds_are_rejected(limit: int) -> None:
    assert error({"limit": limit})["type"] == "invalid_arguments"


@pytest.mark.parametrize("limit", [1, 200])
def test_limit_bounds_are_accepted(limit: int) -> None:
    assert query({"filters": [SMALL_VENDORS], "limit": limit})["returned"] == min(limit, 66)


# ---- mistakes --------------------------------------------------------------------------------


def test_unknown_field_names_the_fields() -> None:
    problem = error({"filters": [{"field": "tdp", "op": "gt", "value": 100}]})
    assert problem["type"] == "unknown_field"
    assert problem["valid_choices"] == list(FIELDS) and len(FIELDS) == 17
    assert "boost_clock_mhz" not in FIELDS


@pytest.mark.parametrize(
    "arguments",
    [
        {"sort_by": "speed"},
        {"fields": ["name", "price"]},
        {"filters": [{"field": "source_url", "op": "not_null"}]},
    ],
)
def test_unknown_field_anywhere_is_structured(arguments: dict[str, Any]) -> None:
    problem = error(arguments)
    assert problem["type"] == "unknown_field"
    assert "name" in problem["valid_choices"]


def test_unknown_op_names_the_ops() -> None:
    problem = error({"filters": [{"field": "name", "op": "like", "value": "rtx"}]})
    assert problem["type"] == "unknown_op"
    assert problem["valid_choices"] == list(OPS)


def test_order_is_checked() -> None:
    problem = error({"sort_by": "name", "order": "up"})
    assert problem["type"] == "unknown_order" and problem["valid_choices"] == ["asc", "desc"]


def test_string_gt_is_a_type_error() -> None:
    problem = error({"filters": [{"field": "name", "op": "gt", "value": "A"}]})
    assert problem["type"] == "bad_op"
    assert "gt" not in problem["valid_choices"] and "contains" in problem["valid_choices"]


@pytest.mark.parametrize(
    "spec",
    [
        {"field": "memory_size_gb", "op": "gt", "value": "lots"},
        {"field": "memory_size_gb", "op": "gt", "value": True},
        {"field": "memory_size_gb", "op": "gt", "value": None},
        {"field": "memory_size_gb", "op": "eq", "value": [80]},
        {"field": "memory_size_gb", "op": "in", "value": 80},
        {"field": "memory_size_gb", "op": "in", "value": []},
        {"field": "manufacturer", "op": "eq", "value": 5},
        {"field": "manufacturer", "op": "in", "value": ["nvidia", 5]},
    ],
)
def test_wrong_value_type_says_what_is_expected(spec: dict[str, Any]) -> None:
    problem = error({"filters": [spec]})
    assert problem["type"] == "bad_value"
    assert problem["expected"] and problem["example"] is not None
    assert problem["message"].startswith("filters[0].value")


def test_is_null_ignores_a_value() -> None:
    assert matched({"field": "architecture", "op": "is_null", "value": "whatever"}) == 25


def test_invalid_json_is_structured() -> None:
    assert error('{"filters": [')["type"] == "invalid_json"


def test_json_string_arguments_work() -> None:
    assert query(json.dumps({"filters": [NVIDIA], "limit": 1}))["matched"] == 1286


def test_unexpected_argument_is_rejected() -> None:
    assert error({"filter": [NVIDIA]})["type"] == "invalid_arguments"


# ---- known facts -----------------------------------------------------------------------------


def test_rtx_2080_ti_bus_width() -> None:
    result = query(
        {
            "filters": [{"field": "name", "op": "eq", "value": "geforce rtx 2080 ti"}],
            "fields": ["memory_bus_bits"],
        }
    )
    assert result["rows"] == [
        {
            "memory_bus_bits": 352,
            "source_url": "https://www.techpowerup.com/gpu-specs/geforce-rtx-2080-ti.c3305",
        }
    ]


def test_fastest_recent_nvidia_hbm_data_center_gpus() -> None:
    result = query(
        {
            "filters": [
                NVIDIA,
                {"field": "generation", "op": "starts_with", "value": "Server"},
                {"field": "release_date", "op": "gte", "value": "2022"},
                {"field": "release_date", "op": "lte", "value": "2024"},
                {"field": "memory_size_gb", "op": "gte", "value": 80},
                {"field": "memory_type", "op": "starts_with", "value": "HBM"},
            ],
            "sort_by": "memory_bandwidth_gb_s",
            "order": "desc",
            "limit": 2,
        }
    )
    expected = expected_count(
        (pl.col("manufacturer") == "NVIDIA")
        & pl.col("generation").str.starts_with("Server")
        & RELEASED.dt.year().is_between(2022, 2024)
        & (pl.col("memory_size_gb") >= 80)
        & pl.col("memory_type").str.starts_with("HBM")
    )
    assert result["matched"] == expected > 2
    assert [(row["name"], row["memory_bandwidth_gb_s"]) for row in result["rows"]] == [
        ("H200 NVL", 4890.0),
        ("H200 SXM 141 GB", 4890.0),
    ]


# ---- registry and schema ---------------------------------------------------------------------


def test_registry_and_schema() -> None:
    assert DOMAINS["gpus"].tool_classes() == [GpuQuery]
    schema = GpuQuery().schema()["function"]
    assert schema["name"] == "gpu_query"
    properties = schema["parameters"]["properties"]
    assert set(properties) == {"filters", "sort_by", "order", "fields", "limit", "aggregate"}
    assert all(spec.get("description") for spec in properties.values())
    definitions = schema["parameters"]["$defs"]
    assert definitions["Filter"]["properties"]["field"]["enum"] == list(FIELDS)
    assert definitions["Filter"]["properties"]["op"]["enum"] == list(OPS)
