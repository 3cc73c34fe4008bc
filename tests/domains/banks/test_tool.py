"""bank_failure_query: failures and assistance in one table told apart by resolution_type, every
field filters by its kind, rows link to their bank pages, and mistakes are tool errors."""
from __future__ import annotations

import polars as pl
import pytest

from armbench.domains.banks import TABLES
from armbench.domains.banks.tools import DESCRIPTION, KINDS, BankFailureQuery
from armbench.questions import load_sets

FAILURES = TABLES.load("bank_failures")


def kind_of(dtype: pl.DataType) -> str:
    return "date" if dtype == pl.Date else "string" if dtype == pl.String else "number"


def test_the_fields_are_the_table_columns_with_their_kinds():
    assert set(KINDS) <= set(FAILURES.columns)
    assert {field: kind_of(FAILURES.schema[field]) for field in KINDS} == KINDS
    # Left out: city_state (city and state are fields) and fund_code (insurance_fund names the fund).
    assert set(FAILURES.columns) - set(KINDS) == {"city_state", "fund_code"}


async def test_every_field_filters():
    tool = BankFailureQuery()
    for field, kind in KINDS.items():
        outcome = await tool.invoke({"filters": [{"field": field, "op": "not_null"}], "limit": 1})
        assert not outcome.is_error and outcome.result["matched"] == FAILURES[field].count(), (field, kind)


async def test_assistance_is_a_row_kind_of_its_own():
    tool = BankFailureQuery()
    every = await tool.invoke({"filters": [{"field": "fail_year", "op": "eq", "value": 2009}],
                               "aggregate": {"fn": "count"}})
    failed = await tool.invoke({"filters": [{"field": "fail_year", "op": "eq", "value": 2009},
                                            {"field": "resolution_type", "op": "eq", "value": "failure"}],
                                "aggregate": {"fn": "count"}})
    assert (every.result["aggregate"]["value"], failed.result["aggregate"]["value"]) == (148, 140)
    assert 'resolution_type says which kind a row is: "FAILURE"' in DESCRIPTION


async def test_the_description_example_runs_and_rows_link_to_bank_pages():
    outcome = await BankFailureQuery().invoke({
        "filters": [{"field": "resolution_type", "op": "eq", "value": "ASSISTANCE"},
                    {"field": "fail_year", "op": "eq", "value": 1988}],
        "sort_by": "total_assets_thousands", "order": "desc", "limit": 5})
    expected = (FAILURES.filter((pl.col("resolution_type") == "ASSISTANCE") & (pl.col("fail_year") == 1988))
                .sort("total_assets_thousands", descending=True).head(5))
    rows = outcome.result["rows"]
    assert [r["bank_name"] for r in rows] == expected["bank_name"].to_list()
    assert [r["fail_date"] for r in rows] == [d.isoformat() for d in expected["fail_date"]]
    assert all(r["source_url"].endswith(f"/bank/{i}") for r, i in zip(rows, expected["fdic_id"]))


async def test_dates_filter_by_year_month_and_day():
    outcome = await BankFailureQuery().invoke({"filters": [{"field": "fail_date", "op": "eq", "value": "2023-03"}],
                                               "fields": ["bank_name"]})
    assert sorted(r["bank_name"] for r in outcome.result["rows"]) == ["SIGNATURE BANK", "SILICON VALLEY BANK"]


def test_the_example_names_nothing_a_question_asks():
    example = DESCRIPTION.split("Example:")[1]
    for question_set in load_sets(["banks"]):
        for question in question_set.questions:
            assert not any(answer in DESCRIPTION for answer in question.answer), question.id
            filters = [f for call in question.solutions["tooled"].calls for f in call.args["filters"]]
            years = {f["value"] for f in filters if f["field"] == "fail_year"}
            assert not any(f'"value": {year}' in example for year in years), question.id


@pytest.mark.parametrize("args", [
    {"filters": [{"field": "assets", "op": "gt", "value": 1}]},
    {"filters": [{"field": "state", "op": "gt", "value": "GA"}]},
    {"filters": [{"field": "fail_date", "op": "eq", "value": "March 2023"}]},
    {"filters": [{"field": "total_assets_thousands", "op": "gt", "value": "five billion"}]},
    {"sort_by": "loss"},
    {"aggregate": {"fn": "sum", "field": "bank_name"}},
])
async def test_mistakes_are_tool_errors(args):
    assert (await BankFailureQuery().invoke(args)).is_error
