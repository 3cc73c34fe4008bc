"""mortality_query: every field filters by its kind, sorts and aggregates over the table's rows,
each row's source_url is the site's page that shows it, and mistakes are tool errors."""
from __future__ import annotations

import json
import re

import polars as pl
import pytest
from fastapi.testclient import TestClient

from armbench.domains.mortality import TABLES
from armbench.domains.mortality.site.app import create_app
from armbench.domains.mortality.tools import DESCRIPTION, KINDS, MortalityQuery
from armbench.questions import load_sets, solution

TABLE = TABLES.load("mortality")
NOT_NATIONAL = {"field": "is_national_total", "op": "eq", "value": False}


async def query(args: dict) -> dict:
    outcome = await MortalityQuery().invoke(args)
    assert not outcome.is_error, outcome.result
    return outcome.result


async def test_every_field_filters():
    for field, kind in KINDS.items():
        result = await query({"filters": [{"field": field, "op": "not_null"}], "limit": 1})
        assert result["matched"] == TABLE.height == 10_868, (field, kind)


async def test_filters_by_text_number_and_boolean():
    result = await query({"filters": [{"field": "state", "op": "eq", "value": "west virginia"},
                                      {"field": "cause", "op": "eq", "value": "Unintentional injuries"},
                                      {"field": "year", "op": "gte", "value": 2017}]})
    assert result["matched"] == 1
    assert {k: result["rows"][0][k] for k in ("state", "year", "cause", "deaths", "age_adjusted_rate_per_100k")} == {
        "state": "West Virginia", "year": 2017, "cause": "Unintentional injuries", "deaths": 1892,
        "age_adjusted_rate_per_100k": 100.3}
    national = await query({"filters": [{"field": "is_national_total", "op": "eq", "value": True}], "limit": 1})
    assert national["matched"] == 19 * 11 == TABLE.filter(pl.col("state") == "United States").height
    icd = await query({"filters": [{"field": "cause_113_name", "op": "contains", "value": "I60-I69"}], "limit": 1})
    assert icd["matched"] == 19 * 52 and icd["rows"][0]["cause"] == "Stroke"


async def test_the_described_example_sorts_the_states_by_rate():
    example = json.loads(re.search(r"Example: .*?:\n(\{.*\})", DESCRIPTION, re.S).group(1))
    result = await query(example)
    expected = TABLE.filter((pl.col("cause") == "Stroke") & (pl.col("year") == 2003) & ~pl.col("is_national_total"))
    assert result["matched"] == expected.height == 51
    rates = [row["age_adjusted_rate_per_100k"] for row in result["rows"]]
    assert rates == sorted(expected["age_adjusted_rate_per_100k"].to_list(), reverse=True)[:5]
    assert result["rows"][0]["state"] == "South Carolina" and result["sort"]["missing"] == 0


def test_the_example_is_no_question_s_solution():
    example = json.loads(re.search(r"Example: .*?:\n(\{.*\})", DESCRIPTION, re.S).group(1))
    calls = [call.args for question_set in load_sets(["mortality"]) for question in question_set.questions
             for arm in question.solutions for call in solution(question, arm).calls]
    assert calls and example not in calls


def test_the_description_names_every_cause_the_table_has():
    for cause in TABLE["cause"].unique().to_list():
        assert cause in DESCRIPTION, cause
    assert f"{TABLE.height:,} rows" in DESCRIPTION


async def test_sum_over_the_states_is_the_national_total():
    where = [{"field": "cause", "op": "eq", "value": "Cancer"}, {"field": "year", "op": "eq", "value": 2010}]
    states = await query({"filters": [*where, NOT_NATIONAL], "aggregate": {"fn": "sum", "field": "deaths"}})
    national = await query({"filters": [*where, {"field": "state", "op": "eq", "value": "United States"}]})
    assert states["aggregate"]["rows"] == 51
    assert states["aggregate"]["value"] == national["rows"][0]["deaths"]
    counted = await query({"filters": [*where, NOT_NATIONAL, {"field": "age_adjusted_rate_per_100k", "op": "gt",
                                                              "value": 190}], "aggregate": {"fn": "count"}})
    expected = TABLE.filter((pl.col("cause") == "Cancer") & (pl.col("year") == 2010) & ~pl.col("is_national_total")
                            & (pl.col("age_adjusted_rate_per_100k") > 190))
    assert counted["aggregate"]["value"] == counted["matched"] == expected.height == 8


async def test_source_url_is_the_page_that_shows_the_row():
    site = TestClient(create_app())
    for state, cause, year in (("New York", "Suicide", 2001), ("United States", "Diabetes", 2012)):
        result = await query({"filters": [{"field": "state", "op": "eq", "value": state},
                                          {"field": "cause", "op": "eq", "value": cause},
                                          {"field": "year", "op": "eq", "value": year}]})
        row = result["rows"][0]
        path = re.sub(r"^http://127\.0\.0\.1:\d+", "", row["source_url"])
        assert path == ("/national/diabetes" if state == "United States" else "/states/new-york/2001")
        html = site.get(path).text
        assert f"<td>{row['deaths']:,}</td><td>{row['age_adjusted_rate_per_100k']:.1f}</td>" in html


@pytest.mark.parametrize(("args", "error"), [
    ({"filters": [{"field": "rate", "op": "gt", "value": 1}]}, "unknown_field"),
    ({"sort_by": "population"}, "unknown_field"),
    ({"filters": [{"field": "state", "op": "gt", "value": "Ohio"}]}, "bad_op"),
    ({"filters": [{"field": "is_national_total", "op": "contains", "value": "true"}]}, "bad_op"),
    ({"filters": [{"field": "year", "op": "eq", "value": "two thousand"}]}, "bad_value"),
    ({"filters": [{"field": "is_national_total", "op": "eq", "value": "no"}]}, "bad_value"),
    ({"aggregate": {"fn": "median", "field": "deaths"}}, "unknown_fn"),
    ({"aggregate": {"fn": "sum", "field": "state"}}, "bad_aggregate"),
])
async def test_mistakes_are_tool_errors_naming_the_choices(args, error):
    outcome = await MortalityQuery().invoke(args)
    assert outcome.is_error and outcome.result["error"]["type"] == error, outcome.result


async def test_ties_go_by_state_then_year_then_cause():
    """Every row of two years ties on a sort by year: their order is the tie order, whole."""
    result = await query({"filters": [{"field": "year", "op": "in", "value": [2016, 2017]},
                                      {"field": "state", "op": "in", "value": ["Utah", "Texas"]}],
                          "sort_by": "year", "order": "desc", "fields": ["state", "year", "cause"], "limit": 50})
    keys = [(row["state"], row["year"], row["cause"]) for row in result["rows"]]
    assert len(keys) == 44 and [key[1] for key in keys[:22]] == [2017] * 22
    assert keys[:22] == sorted(keys[:22]) and keys[0] == ("Texas", 2017, "All causes")
    assert "ties go by state, then year, then cause" in DESCRIPTION
