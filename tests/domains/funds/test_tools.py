"""fund_screener on the real table, checked against polars; and its description held to saying
what an omitted status covers and how the website differs."""
from __future__ import annotations

import asyncio
import json
import re
from datetime import date
from typing import Any

import polars as pl
import pytest

from armbench.arms.tool_source import in_process_tools
from armbench.domains import DOMAINS
from armbench.domains.funds import TABLES
from armbench.domains.funds.site.catalog import catalog
from armbench.domains.funds.site.listing import FundQuery, select
from armbench.domains.funds.tools import TABLE, FundScreener
from armbench.engine.agent import run_episode
from armbench.grading.strict import grade
from armbench.questions import load_sets
from armbench.replicas import serve
from armbench.tools.base import MAX_RESULT_CHARS, ArmTools
from tests.support.models import caller

FUNDS = TABLES.load("funds")
CLOSED = FUNDS.filter(pl.col("status") == "closed").height


def call(arguments: dict[str, Any] | str) -> dict[str, Any]:
    return asyncio.run(FundScreener().invoke(arguments)).result


def matched(*filters: dict[str, Any], status: str = "any") -> int:
    return call({"status": status, "filters": list(filters), "limit": 1})["matched"]


def error(arguments: dict[str, Any] | str) -> dict[str, Any]:
    result = call(arguments)
    assert "error" in result, result
    return result["error"]


# ---- the description: no ambiguity about status -----------------------------------------------


def test_the_description_says_what_an_omitted_status_covers_and_how_the_website_differs():
    text = " ".join(FundScreener.description.split())
    # the default, named, and what it includes
    assert 'default "any"' in text
    assert 'When status is omitted it is "any": the call INCLUDES the' in text
    assert f"{CLOSED:,} funds that are closed to new investors" in text
    # the website's behaviour, and what to pass to match it
    assert "by default its list hides closed funds and shows only funds open to new investors" in text
    assert '"Include funds closed to new investors" box' in text
    assert 'pass status "open" for funds open to new investors or to match what the website lists' in text
    # nothing that reads as "open funds only" by default
    assert "no hidden defaults" not in text.lower() and "only open" not in text.lower()


def test_the_status_argument_says_the_same_in_its_schema():
    parameters = FundScreener().schema()["function"]["parameters"]
    status = parameters["properties"]["status"]
    assert status["enum"] == ["any", "open", "closed"] and status["default"] == "any"
    assert '"any" (the default) includes funds closed to new investors' in status["description"]
    assert "as the website lists by default" in status["description"]


def test_the_domain_registers_the_tool_with_one_worked_example():
    assert DOMAINS["funds"].tool_classes() == [FundScreener]
    schema = FundScreener().schema()["function"]
    json.dumps(schema)
    assert schema["name"] == "fund_screener" and FundScreener.description.count("Example:") == 1
    properties = schema["parameters"]["properties"]
    assert set(properties) == {"status", "filters", "sort_by", "order", "fields", "limit", "aggregate"}
    assert all(spec.get("description") for spec in properties.values())
    assert schema["parameters"]["$defs"]["Filter"]["properties"]["field"]["enum"] == list(TABLE.names)


def test_the_descriptions_example_holds():
    example = re.search(r"Example: .*?\n(\{.*?\})\n->", FundScreener.description, re.S).group(1)
    result = call(json.loads(example.replace("\\\n", "")))
    assert result["status"] == "open" and result["by_status"]["closed"] == 0 and result["returned"] == 3
    assert all(row["category"] == "Health Care" and row["rating"] >= 4 for row in result["rows"])


def test_no_description_names_a_reference_answer():
    answers = {item for qs in load_sets(["funds"]) for q in qs.questions for item in q.answer if not item[0].isdigit()}
    assert answers and not [item for item in answers if item in FundScreener.description]


# ---- status -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, FUNDS.height),
        ({"status": "any"}, FUNDS.height),
        ({"status": "open"}, FUNDS.height - CLOSED),
        ({"status": "closed"}, CLOSED),
    ],
)
def test_status_picks_the_funds_and_is_echoed(arguments, expected):
    result = call({**arguments, "limit": 1})
    assert result["matched"] == expected and result["status"] == arguments.get("status", "any")
    assert sum(result["by_status"].values()) == expected


def test_an_omitted_status_includes_closed_funds_in_rows_and_counts():
    result = call({"filters": [{"field": "category", "op": "eq", "value": "Mid Cap"}], "limit": 200})
    mid_cap = FUNDS.filter(pl.col("category") == "Mid Cap")
    assert result["by_status"] == {"open": mid_cap.height - result["by_status"]["closed"],
                                   "closed": mid_cap.filter(pl.col("status") == "closed").height}
    assert {row["status"] for row in result["rows"]} == {"open", "closed"}


def test_status_is_an_argument_not_a_filter():
    problem = error({"filters": [{"field": "status", "op": "eq", "value": "open"}]})
    assert problem["type"] == "unknown_field" and "status argument" in problem["message"]
    problem = error({"status": "opened"})
    assert problem["type"] == "unknown_status" and problem["valid_choices"] == ["any", "open", "closed"]


# ---- filters, sort, aggregates ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "condition"),
    [
        ({"field": "category", "op": "eq", "value": "small cap"}, pl.col("category") == "Small Cap"),
        ({"field": "family", "op": "contains", "value": "Fidelity"},
         pl.col("family").str.to_lowercase().str.contains("fidelity")),
        ({"field": "family", "op": "is_null"}, pl.col("family").is_null()),
        ({"field": "symbol", "op": "in", "value": ["vfiax", "FCNTX"]}, pl.col("symbol").is_in(["VFIAX", "FCNTX"])),
        ({"field": "name", "op": "starts_with", "value": "vanguard"},
         pl.col("name").str.to_lowercase().str.starts_with("vanguard")),
        ({"field": "category_group", "op": "ne", "value": "Equities"}, pl.col("category_group") != "Equities"),
        ({"field": "load_type", "op": "eq", "value": "front"}, pl.col("load_type") == "front"),
        ({"field": "expense_ratio_pct", "op": "lte", "value": 0.25}, pl.col("expense_ratio_pct") <= 0.25),
        ({"field": "return_1y_pct", "op": "gt", "value": 0}, pl.col("return_1y_pct") > 0),
        ({"field": "return_5y_pct", "op": "is_null"}, pl.col("return_5y_pct").is_null()),
        ({"field": "rating", "op": "in", "value": [1, 5]}, pl.col("rating").is_in([1, 5])),
        ({"field": "total_assets_musd", "op": "gte", "value": "10000"}, pl.col("total_assets_musd") >= 10000),
        ({"field": "min_investment_usd", "op": "eq", "value": 0}, pl.col("min_investment_usd") == 0),
        ({"field": "load_pct", "op": "gt", "value": 5}, pl.col("load_pct") > 5),
        ({"field": "inception_date", "op": "lt", "value": "1990"}, pl.col("inception_date") < date(1990, 1, 1)),
        ({"field": "inception_date", "op": "eq", "value": "2010-06"},
         pl.col("inception_date").is_between(date(2010, 6, 1), date(2010, 6, 30))),
        ({"field": "relevance", "op": "gt", "value": 80}, pl.col("relevance") > 80),
    ],
)
@pytest.mark.parametrize("status", ["any", "open", "closed"])
def test_each_filter_matches_polars(spec, condition, status):
    scope = FUNDS if status == "any" else FUNDS.filter(pl.col("status") == status)
    expected = scope.filter(condition).height
    assert matched(spec, status=status) == expected
    if status == "any":
        assert expected > 0


def test_relevance_desc_on_open_funds_is_the_websites_default_order():
    result = call({"status": "open", "filters": [{"field": "category", "op": "eq", "value": "Value"}],
                   "sort_by": "relevance", "limit": 100, "fields": ["symbol"]})
    site = catalog()
    listed = [site.cells[i]["symbol"] for i in select(site, FundQuery(category="Value"))[:100]]
    assert [row["symbol"] for row in result["rows"]] == listed


def test_sort_puts_unknowns_last_and_breaks_ties_by_symbol():
    result = call({"filters": [{"field": "category", "op": "eq", "value": "Technology"}],
                   "sort_by": "rating", "order": "asc", "limit": 200, "fields": ["symbol", "rating"]})
    ratings = [row["rating"] for row in result["rows"]]
    known = [r for r in ratings if r is not None]
    assert known == sorted(known) and ratings[len(known):] == [None] * (len(ratings) - len(known))
    ones = [row["symbol"] for row in result["rows"] if row["rating"] == 1]
    assert ones == sorted(ones) and result["sort"]["missing"] == FUNDS.filter(
        (pl.col("category") == "Technology") & pl.col("rating").is_null()).height


@pytest.mark.parametrize(("fn", "field"), [("avg", "expense_ratio_pct"), ("sum", "total_assets_musd"),
                                           ("min", "inception_date"), ("max", "return_3y_pct"),
                                           ("count", "return_5y_pct")])
def test_aggregates_cover_every_matched_fund(fn, field):
    result = call({"status": "open", "filters": [{"field": "category", "op": "eq", "value": "Blend"}],
                   "aggregate": {"fn": fn, "field": field}, "limit": 1})
    column = FUNDS.filter((pl.col("category") == "Blend") & (pl.col("status") == "open"))[field]
    expected = {"avg": column.mean, "sum": column.sum, "min": column.min, "max": column.max,
                "count": column.count}[fn]()
    shown = expected.isoformat() if isinstance(expected, date) else pytest.approx(expected)
    assert result["aggregate"]["value"] == shown
    assert result["aggregate"]["missing"] == column.null_count() and result["returned"] == 1


# ---- rows, metadata, bounds, mistakes -----------------------------------------------------------


def test_rows_link_to_the_fund_page_on_the_replica_and_say_the_data_is_generated(monkeypatch):
    monkeypatch.setenv(serve.PORT_BASE_ENV, "9100")
    result = call({"filters": [{"field": "symbol", "op": "eq", "value": "VFIAX"}]})
    assert result["rows"] == [{"symbol": "VFIAX", "name": "Vanguard 500 Index Fund Admiral Shares",
                               "category": "Large Cap", "status": "open",
                               "source_url": "http://127.0.0.1:9102/funds/VFIAX"}]
    assert result["data_note"].startswith("Generated data:") and "not real fund data" in result["data_note"]


def test_every_field_can_be_returned_with_its_type():
    fields = [*TABLE.names, "status"]
    row = call({"filters": [{"field": "symbol", "op": "eq", "value": "VFIAX"}], "fields": fields})["rows"][0]
    assert list(row) == [*fields, "source_url"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["inception_date"])
    assert isinstance(row["rating"], int) and isinstance(row["min_investment_usd"], int)


def test_results_are_bounded():
    every_field = call({"fields": [*TABLE.names, "status"], "limit": 200})
    assert every_field["error"]["type"] == "result_too_large"
    few = call({"fields": ["symbol"], "limit": 200})
    assert few["returned"] == 200 and few["truncated"] and "narrow the filters" in few["note"]
    assert len(json.dumps(few)) < MAX_RESULT_CHARS


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [
        ({"filters": [{"field": "ticker", "op": "eq", "value": "X"}]}, "unknown_field"),
        ({"sort_by": "stars"}, "unknown_field"),
        ({"fields": ["symbol", "price"]}, "unknown_field"),
        ({"filters": [{"field": "name", "op": "like", "value": "x"}]}, "unknown_op"),
        ({"filters": [{"field": "category", "op": "gt", "value": "A"}]}, "bad_op"),
        ({"filters": [{"field": "rating", "op": "gte", "value": "five"}]}, "bad_value"),
        ({"filters": [{"field": "inception_date", "op": "lt", "value": "2020-13"}]}, "bad_value"),
        ({"aggregate": {"fn": "avg", "field": "category"}}, "bad_aggregate"),
        ({"aggregate": {"fn": "median", "field": "rating"}}, "unknown_fn"),
        ({"order": "up", "sort_by": "rating"}, "unknown_order"),
        ({"limit": 0}, "invalid_arguments"),
        ({"status": "open", "filter": []}, "invalid_arguments"),
        ('{"status": ', "invalid_json"),
    ],
)
def test_mistakes_are_structured_errors(arguments, kind):
    problem = error(arguments)
    assert problem["type"] == kind
    if kind in ("unknown_field", "unknown_op", "bad_op", "bad_aggregate", "unknown_fn", "unknown_order"):
        assert problem["valid_choices"]


# ---- the oracle through the agent loop ----------------------------------------------------------


async def test_the_oracle_answers_every_fund_question_with_the_tool():
    arm = ArmTools("tooled", in_process_tools("funds"))
    for question_set in load_sets(["funds"]):
        for question in question_set.questions:
            episode = await run_episode(question, arm, caller("scripted/oracle"))
            verdict = grade(episode.answer, question.answer, question.separator, stop_reason=episode.stop_reason)
            assert verdict.correct, (question.id, episode.answer)
            assert episode.actions_by_tool == {"fund_screener": 1}
