"""drug_query and its table: every field filters by its kind, the description's facts hold, the
stored tooled solutions give the questions' answers, and mistakes are tool errors."""
from __future__ import annotations

import json
import re

import polars as pl
import pytest

from armbench.domains.drugs import TABLES
from armbench.domains.drugs.tools import DESCRIPTION, KINDS, DrugQuery
from armbench.questions import load_sets

APPROVALS = TABLES.load("drug_approvals")
QUESTIONS = [question for question_set in load_sets(["drugs"]) for question in question_set.questions]


async def test_every_field_filters():
    tool = DrugQuery()
    for field, kind in KINDS.items():
        outcome = await tool.invoke({"filters": [{"field": field, "op": "not_null"}], "limit": 1})
        assert not outcome.is_error and outcome.result["matched"] > 0, (field, kind, outcome.result)
    assert set(KINDS) == set(APPROVALS.columns)


def test_the_description_states_the_table_as_it_is():
    assert f"({APPROVALS.height:,} rows)" in DESCRIPTION
    assert f"null for {APPROVALS['appl_type'].null_count():,} applications" in DESCRIPTION
    assert f"null for {APPROVALS['drug_name'].null_count():,} without products" in DESCRIPTION
    assert f"null for {APPROVALS['approval_date'].null_count()} applications" in DESCRIPTION
    for field in KINDS:
        assert field in DESCRIPTION, field


async def test_the_example_runs_and_asks_nothing_a_question_asks():
    example = json.loads(DESCRIPTION.split("Example: ", 1)[1].split("\n", 1)[1])
    outcome = await DrugQuery().invoke(example)
    assert not outcome.is_error and outcome.result["returned"] == 10
    assert {row["sponsor_name"] for row in outcome.result["rows"]} == {"BOEHRINGER INGELHEIM"}
    for question in QUESTIONS:
        names = set(question.answer)
        assert not names & {row["drug_name"] for row in outcome.result["rows"]}, question.id


async def test_type_1_is_matched_with_its_dash_not_type_10():
    tool = DrugQuery()
    loose = await tool.invoke({"filters": [{"field": "chemical_type", "op": "starts_with", "value": "type 1"}],
                               "aggregate": {"fn": "count"}, "limit": 1})
    strict = await tool.invoke({"filters": [{"field": "chemical_type", "op": "starts_with", "value": "Type 1 -"}],
                                "aggregate": {"fn": "count"}, "limit": 1})
    assert loose.result["aggregate"]["value"] - strict.result["aggregate"]["value"] == 6  # the Type 10s


async def test_a_row_links_its_application_page():
    outcome = await DrugQuery().invoke({"filters": [{"field": "drug_name", "op": "eq", "value": "lipitor"}],
                                        "fields": ["appl_no", "approval_date", "orphan"]})
    row = outcome.result["rows"][0]
    assert (row["appl_no"], row["approval_date"], row["orphan"]) == ("020702", "1996-12-17", False)
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/daf/application/020702", row["source_url"])


@pytest.mark.parametrize("question", [q for q in QUESTIONS if "tooled" in q.solutions], ids=lambda q: q.id)
async def test_the_stored_tooled_solution_gives_the_answer(question):
    solution = question.solutions["tooled"]
    tool = DrugQuery()
    results = [(await tool.invoke(call.args)).result for call in solution.calls]
    assert not any("error" in result for result in results)
    assert sorted(solution.answer.items(results)) == sorted(question.answer)


def test_the_sponsor_question_has_no_tooled_solution_because_one_call_cannot_count_per_sponsor():
    sponsors = next(q for q in QUESTIONS if q.id == "drugs-heldout-03")
    assert set(sponsors.solutions) == {"browsing"}
    andas = APPROVALS.filter((pl.col("appl_type") == "ANDA") & (pl.col("approval_date").dt.year() == 2017))
    assert andas.height > 200  # past one call's rows


async def test_mistakes_are_tool_errors():
    tool = DrugQuery()
    for args in ({"filters": [{"field": "sponsor", "op": "eq", "value": "x"}]},
                 {"filters": [{"field": "orphan", "op": "gt", "value": True}]},
                 {"filters": [{"field": "approval_date", "op": "eq", "value": "June 2018"}]},
                 {"filters": [{"field": "products", "op": "gte", "value": "many"}]},
                 {"sort_by": "approved"},
                 {"aggregate": {"fn": "avg", "field": "drug_name"}}):
        assert (await tool.invoke(args)).is_error, args
