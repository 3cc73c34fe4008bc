"""The World Bank question sets: shape, the study's questions, and every browsing solution run as a
plain-Python script against the replica served over HTTP, printing exactly its reference set."""
from __future__ import annotations

import pytest

from armbench.domains.worldbank.api.app import create_app
from armbench.questions import load_set_file, set_path
from tests.support.browsing_scripts import run_browsing_script
from tests.support.loopback import serve

SETS = {name: load_set_file(set_path("worldbank", name)) for name in ("design", "heldout")}
QUESTIONS = [q for question_set in SETS.values() for q in question_set.questions]


@pytest.fixture(scope="module")
def replica_url():
    with serve(create_app()) as url:
        yield url


def test_set_sizes_and_solutions():
    assert [len(SETS["design"].questions), len(SETS["heldout"].questions)] == [5, 6]
    for question in QUESTIONS:
        browsing = question.solutions["browsing"]
        assert [call.tool for call in browsing.calls] == ["python"]
        assert browsing.answer.source == "stdout"
        assert "{replica:worldbank}" in browsing.calls[0].args["code"]


def test_the_study_questions_and_their_rules():
    by_id = {q.id: q for q in QUESTIONS}
    tie = next(q for q in SETS["design"].questions if "infant mortality" in q.text)
    assert sorted(tie.answer) == ["France", "Netherlands"] and "fifth" in tie.tie_rule
    assert "15 million" in tie.text
    assert by_id["worldbank-heldout-01"].answer == ["Maldives"]
    greece = by_id["worldbank-heldout-02"]
    assert "1961 through 2024" in greece.text and len(greece.answer) == 14


@pytest.mark.slow
@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: q.id)
def test_browsing_script_prints_exactly_the_reference(replica_url, question):
    printed = run_browsing_script(question, replica_url)
    assert sorted(printed) == sorted(question.answer)  # the reference is a set
