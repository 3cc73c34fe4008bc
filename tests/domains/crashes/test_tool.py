"""crash_query: its fields and ops over the crashes rows, its description (one worked example, no
question's answer), the site its source_url points at, and mistakes as tool errors."""
from __future__ import annotations

import json
import re
from urllib.parse import urlparse

import polars as pl
import pytest
from fastapi.testclient import TestClient

from armbench.domains import DOMAINS
from armbench.domains.crashes import TABLES
from armbench.domains.crashes.site.app import create_app
from armbench.domains.crashes.tools import KINDS, TABLE, CrashQuery
from armbench.questions import load_sets

CRASHES = TABLES.load("crashes")


async def call(args: dict) -> dict:
    outcome = await CrashQuery().invoke(args)
    assert not outcome.is_error, outcome.result
    return outcome.result


def test_the_domain_registers_the_tool_with_one_worked_example():
    assert DOMAINS["crashes"].tool_classes() == [CrashQuery]
    schema = CrashQuery().schema()["function"]
    assert schema["name"] == "crash_query" and CrashQuery.description.count("Example:") == 1
    assert schema["parameters"]["$defs"]["Filter"]["properties"]["field"]["enum"] == list(KINDS)
    assert set(KINDS) == set(CRASHES.columns)
    assert all(field in CrashQuery.description for field in KINDS)


def example() -> dict:
    return json.loads(re.search(r"Example: .*?\n(\{.*\})\n", CrashQuery.description, re.S).group(1))


async def test_the_descriptions_example_holds():
    result = await call(example())
    expected = CRASHES.filter(pl.col("year") == 2001).sort("registered_vehicles_thousands", descending=True).head(5)
    assert [row["state"] for row in result["rows"]] == expected["state"].to_list()
    assert result["matched"] == 50 and result["returned"] == 5


def test_the_example_is_no_questions_tooled_call():
    stored = [call.args for qs in load_sets(["crashes"]) for q in qs.questions for call in q.solutions["tooled"].calls]
    assert len(stored) >= 9 and example() not in stored
    assert not any(f["field"] == "registered_vehicles_thousands" for args in stored for f in args.get("filters", []))
    assert not any(args.get("sort_by") == "registered_vehicles_thousands" for args in stored)


def test_no_description_names_a_reference_answer():
    answers = {item for qs in load_sets(["crashes"]) for q in qs.questions for item in q.answer if not item[0].isdigit()}
    assert answers and not [item for item in answers if item in CrashQuery.description]


async def test_every_field_filters():
    for field, kind in KINDS.items():
        result = await call({"filters": [{"field": field, "op": "not_null"}], "limit": 1})
        assert result["matched"] == CRASHES.height, (field, kind)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ([{"field": "state", "op": "eq", "value": "new mexico"}], pl.col("state") == "New Mexico"),
        ([{"field": "state_abbr", "op": "in", "value": ["nm", "OH"]}], pl.col("state_abbr").is_in(["NM", "OH"])),
        ([{"field": "state", "op": "starts_with", "value": "north"}], pl.col("state").str.starts_with("North")),
        ([{"field": "state", "op": "contains", "value": "of col"}], pl.col("state") == "District of Columbia"),
        ([{"field": "year", "op": "gte", "value": 2010}, {"field": "fatality_rate_per_100k_pop", "op": "lt", "value": 8}],
         (pl.col("year") >= 2010) & (pl.col("fatality_rate_per_100k_pop") < 8)),
        ([{"field": "pct_drivers_speeding_2009", "op": "gte", "value": "40"}], pl.col("pct_drivers_speeding_2009") >= 40),
        ([{"field": "year", "op": "in", "value": [1996, 2006]}, {"field": "vmt_billions", "op": "ne", "value": 4}],
         pl.col("year").is_in([1996, 2006]) & (pl.col("vmt_billions") != 4)),
    ],
)
async def test_filters_match_the_rows_polars_finds(filters, expected):
    result = await call({"filters": filters, "fields": ["state", "year"], "limit": 200})
    matched = CRASHES.filter(expected)
    assert result["matched"] == matched.height > 0
    assert sorted((r["state"], r["year"]) for r in result["rows"]) == sorted(matched.select("state", "year").rows())


async def test_ties_go_by_state_then_year():
    """A profile field is the same in each of a state's rows: its ties show the order."""
    result = await call({"sort_by": "pct_drivers_speeding_2009", "order": "desc", "fields": ["state", "year"],
                         "limit": 60})
    top = CRASHES["pct_drivers_speeding_2009"].max()
    expected = (CRASHES.filter(pl.col("pct_drivers_speeding_2009") == top).sort("state", "year")
                .select("state", "year").rows())
    assert [(r["state"], r["year"]) for r in result["rows"][:len(expected)]] == expected
    unsorted = await call({"filters": [{"field": "year", "op": "lte", "value": 1995}], "limit": 4})
    assert [(r["state"], r["year"]) for r in unsorted["rows"]] == [("Alabama", 1994), ("Alabama", 1995),
                                                                   ("Alaska", 1994), ("Alaska", 1995)]


async def test_an_aggregate_covers_every_matched_row():
    result = await call({"filters": [{"field": "year", "op": "eq", "value": 2005}],
                         "aggregate": {"fn": "sum", "field": "fatalities"}, "limit": 1})
    assert result["aggregate"]["value"] == CRASHES.filter(pl.col("year") == 2005)["fatalities"].sum()
    assert result["aggregate"]["rows"] == 50 and result["returned"] == 1 and result["truncated"]


async def test_south_carolina_matches_nothing():
    result = await call({"filters": [{"field": "state", "op": "eq", "value": "South Carolina"}]})
    assert result["matched"] == 0 and result["rows"] == []


async def test_source_url_is_the_states_page_which_shows_the_row():
    result = await call({"filters": [{"field": "state", "op": "in", "value": ["District of Columbia", "New York"]},
                                     {"field": "year", "op": "eq", "value": 2008}]})
    site = TestClient(create_app())
    for row in result["rows"]:
        url = urlparse(row["source_url"])
        assert url.path == "/states/" + row["state"].lower().replace(" ", "-")
        page = site.get(url.path)
        assert page.status_code == 200
        assert f'<tr><th scope="row">2008</th><td>{row["fatalities"]:,}</td>' in page.text


@pytest.mark.parametrize("args", [
    {"filters": [{"field": "deaths", "op": "gt", "value": 1}]},
    {"filters": [{"field": "state", "op": "gt", "value": "Ohio"}]},
    {"filters": [{"field": "year", "op": "contains", "value": "20"}]},
    {"filters": [{"field": "year", "op": "eq", "value": "two thousand"}]},
    {"filters": [{"field": "year", "op": "in", "value": []}]},
    {"sort_by": "rank"},
    {"aggregate": {"fn": "avg", "field": "state"}},
    {"aggregate": {"fn": "median", "field": "fatalities"}},
    {"fields": ["state", "state, year"]},
    {"limit": 0},
    {"limit": TABLE.max_limit + 1},
])
async def test_mistakes_are_tool_errors(args):
    assert (await CrashQuery().invoke(args)).is_error, args
