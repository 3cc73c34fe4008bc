"""The banks question sets: shape, every solution run (the tooled ones through the tool, the
browsing ones as plain-Python scripts against the replica served over HTTP), and the trap biting:
left in, assistance transactions change the answers of questions about failed banks."""
from __future__ import annotations

import asyncio

import polars as pl
import pytest

from armbench.domains.banks import TABLES
from armbench.domains.banks.site.app import create_app
from armbench.domains.banks.tools import BankFailureQuery
from armbench.questions import derive_answer, derived_solution, implied_scope, load_set_file, set_path, solution
from armbench.types import Derivation
from tests.support.browsing_scripts import run_browsing_script
from tests.support.loopback import serve

SETS = {name: load_set_file(set_path("banks", name)) for name in ("design", "heldout")}
QUESTIONS = {q.id: q for question_set in SETS.values() for q in question_set.questions}
FAILURE_ONLY = "resolution_type = 'FAILURE' AND "


@pytest.fixture(scope="module")
def replica_url():
    with serve(create_app()) as url:
        yield url


def test_set_sizes_and_solutions():
    assert [len(SETS["design"].questions), len(SETS["heldout"].questions)] == [1, 4]
    for question in QUESTIONS.values():
        tooled = question.solutions["tooled"]
        assert [call.tool for call in tooled.calls] == ["bank_failure_query"]
        assert {"field": "resolution_type", "op": "eq", "value": "FAILURE"} in tooled.calls[0].args["filters"]
        browsing = solution(question, "browsing")
        assert [call.tool for call in browsing.calls] == ["python"] and browsing.answer.source == "stdout"
        assert "{replica:banks}" in browsing.calls[0].args["code"]


def test_every_tooled_solution_is_right():
    for question in QUESTIONS.values():
        solution = question.solutions["tooled"]
        result = asyncio.run(BankFailureQuery().invoke(solution.calls[0].args)).result
        assert sorted(solution.answer.apply(result)) == sorted(question.answer), question.id


@pytest.mark.slow
@pytest.mark.parametrize("question", QUESTIONS.values(), ids=lambda q: q.id)
def test_browsing_script_prints_exactly_the_reference(replica_url, question):
    assert sorted(run_browsing_script(question, replica_url)) == sorted(question.answer)


def test_counting_assistance_as_failure_changes_the_answers():
    """Without the failure condition, the 2008 open-bank assistance to Citibank joins the design
    answer and 2009 counts 148, not 140: the trap is in the data the questions ask about."""
    changed = {qid for qid, q in QUESTIONS.items() if FAILURE_ONLY in q.derivation.sql
               and sorted(derive_answer(Derivation(sql=q.derivation.sql.replace(FAILURE_ONLY, ""))))
               != sorted(q.answer)}
    assert changed == {"banks-design-01", "banks-heldout-03"}
    loose = derive_answer(Derivation(sql=QUESTIONS["banks-design-01"].derivation.sql.replace(FAILURE_ONLY, "")))
    assert "CITIBANK, NATIONAL ASSOCIATION" in loose


def test_without_the_failures_only_filter_the_design_browsing_script_lists_assisted_banks(replica_url):
    question = QUESTIONS["banks-design-01"]
    loose = question.model_copy(update={"derivation": Derivation(sql=question.derivation.sql.replace(FAILURE_ONLY, ""))})
    assert implied_scope(loose) == {"fail_year": 2008}  # BankFind's resolution filter is off too
    printed = run_browsing_script(question, replica_url, derived_solution(loose, implied_scope(loose)))
    assisted = TABLES.load("bank_failures").filter(
        (pl.col("resolution_type") == "ASSISTANCE") & (pl.col("fail_year") == 2008)
        & (pl.col("total_assets_thousands") > 5_000_000))["bank_name"]
    assert sorted(printed) == sorted([*question.answer, *assisted])
