"""The fund question sets: shape, every browsing solution run as a plain-Python script against the
replica served over HTTP, and the traps biting: a browsing policy that reads page 1 with the site's
defaults misses the trap questions, and the tooled solutions without `status` miss the questions
about open (or closed) funds."""
from __future__ import annotations

import asyncio
import json

import pytest

from armbench.domains.funds import DOMAIN as FUNDS
from armbench.domains.funds.site.app import create_app
from armbench.domains.funds.tools import FundScreener
from armbench.engine.agent import run_episode
from armbench.grading.strict import grade
from armbench.players.script_registry import Reply, ScriptedToolCall, Turn, register_script
from armbench.players.scripts import questions_by_prompt
from armbench.questions import load_set_file, set_path, solution, with_replica_addresses
from armbench.replicas.supervisor import replicas_running
from armbench.tools.base import ArmTools
from armbench.tools.sandbox import ReplicaRoute
from armbench.tools.web_tools import web_tools
from tests.support.browsing_scripts import run_browsing_script
from tests.support.loopback import serve
from tests.support.models import caller

SETS = {name: load_set_file(set_path("funds", name)) for name in ("design", "heldout")}
QUESTIONS = {q.id: q for question_set in SETS.values() for q in question_set.questions}
# Questions a reader of page 1 with the site's defaults gets wrong: the answer needs closed
# funds, a sort, or more than 100 rows.
BROWSING_TRAPS = ("funds-design-01", "funds-design-02", "funds-design-04", "funds-heldout-01",
                  "funds-heldout-02", "funds-heldout-04", "funds-heldout-05")
# Questions about what the site lists by default: page 1 with the defaults is the right answer.
LISTED_BY_DEFAULT = ("funds-design-03", "funds-heldout-03")
# The whole list after `def list_funds(**filters):` in every browsing script: a reader of page 1
# with the defaults drops the box, the sort and the other pages.
PAGE_ONE = '''def list_funds(**filters):
    """Page 1 only, with the site's defaults: no closed funds, no column chosen for sorting."""
    shown = {k: v for k, v in filters.items() if k not in ("include_closed", "sort", "order")}
    return list_page(1, **shown)[0]

def every_page(**filters):'''


def browsing_code(question) -> str:
    return solution(question, "browsing").calls[0].args["code"]


# A derived solution (the site reader and the SQL) cut the same way: the screener's first page, with
# its defaults (open funds only), is all the reader reads.
DERIVED_CUTS = {'"/funds?include_closed=1&"': '"/funds?"',
                "for number in range(2, int(count[1]) + 1)])]": "for number in range(2, 2)])]"}


def page_one(code: str) -> str:
    """The browsing script cut to page 1 of the list with the site's defaults."""
    if "def list_funds(**filters):" in code:
        return code.replace("def list_funds(**filters):", PAGE_ONE, 1)
    for whole, cut in DERIVED_CUTS.items():
        assert whole in code
        code = code.replace(whole, cut)
    return code


def is_correct(question, episode) -> bool:
    return grade(episode.answer, question.answer, question.separator, stop_reason=episode.stop_reason).correct


@pytest.fixture(scope="module")
def replica_url():
    with serve(create_app()) as url:
        yield url


def test_set_sizes_and_solutions():
    assert [len(SETS["design"].questions), len(SETS["heldout"].questions)] == [5, 5]
    for question in QUESTIONS.values():
        assert [call.tool for call in question.solutions["tooled"].calls] == ["fund_screener"]
        assert "status" in question.solutions["tooled"].calls[0].args  # the oracle never relies on the default
        browsing = solution(question, "browsing")
        assert [call.tool for call in browsing.calls] == ["python"]
        assert browsing.answer.source == "stdout" and "{replica:funds}" in browsing_code(question)


def test_the_sets_ask_about_closed_funds_and_the_default_listing():
    texts = [q.text for q in QUESTIONS.values()]
    assert sum("including funds closed to new investors" in t for t in texts) >= 4
    assert sum("open to new investors" in t for t in texts) >= 3
    assert all("leave every other setting at its default" in QUESTIONS[qid].text for qid in LISTED_BY_DEFAULT)


@pytest.mark.slow
@pytest.mark.parametrize("question", QUESTIONS.values(), ids=lambda q: q.id)
def test_browsing_script_prints_exactly_the_reference(replica_url, question):
    printed = run_browsing_script(question, replica_url)
    assert sorted(printed) == sorted(question.answer)  # the reference is a set


@pytest.mark.parametrize("qid", [q.id for q in QUESTIONS.values()
                                 if q.solutions["tooled"].calls[0].args["status"] != "any"])
def test_without_status_the_tooled_solution_misses_questions_about_open_or_closed_funds(qid):
    """The tool's default (any) includes closed funds: a call that leaves status out is wrong
    wherever the question is about open funds only (or closed ones)."""
    question = QUESTIONS[qid]
    solution = question.solutions["tooled"]
    args = {key: value for key, value in solution.calls[0].args.items() if key != "status"}
    result = asyncio.run(FundScreener().invoke(args)).result
    assert result["status"] == "any" and result["by_status"]["closed"] > 0
    assert sorted(solution.answer.apply(result)) != sorted(question.answer)


def test_every_tooled_solution_is_right():
    for question in QUESTIONS.values():
        solution = question.solutions["tooled"]
        result = asyncio.run(FundScreener().invoke(solution.calls[0].args)).result
        assert sorted(solution.answer.apply(result)) == sorted(question.answer), question.id


# ---- a browsing policy that reads page 1 with the site's defaults, through the agent loop ------


def page_one_reader(turn: Turn) -> Reply:
    """Runs the question's browsing script cut to page 1 with the defaults (`page_one`), then answers
    with what it printed."""
    question = questions_by_prompt()[turn.user_prompt]
    results = turn.tool_results()
    if not results:
        return Reply(tool_calls=[ScriptedToolCall("python", with_replica_addresses({"code": page_one(browsing_code(question))}))])
    printed = [line.strip() for line in json.loads(results[-1])["stdout"].splitlines() if line.strip()]
    return Reply(text="ANSWER: " + question.join_answer(printed))


@pytest.fixture
def browsing_arm(replica_env):
    """The replica on a free port, which the scripts' `{replica:funds}` resolves to."""
    with replicas_running([FUNDS.replica]) as endpoints:
        route = ReplicaRoute(port=endpoints["funds"].port, socket_path=str(endpoints["funds"].socket_path))
        yield ArmTools("browsing", web_tools([route]))


@pytest.mark.slow
async def test_reading_page_one_with_the_site_defaults_misses_the_trap_questions(browsing_arm, script_registry):
    register_script("page-one-reader")(page_one_reader)
    verdicts = {}
    for qid in (*BROWSING_TRAPS, *LISTED_BY_DEFAULT):
        question = QUESTIONS[qid]
        episode = await run_episode(question, browsing_arm, caller("scripted/page-one-reader"))
        assert episode.stop_reason == "answered" and episode.actions_by_tool == {"python": 1}, episode.error
        verdicts[qid] = is_correct(question, episode)
    assert verdicts == {qid: qid in LISTED_BY_DEFAULT for qid in verdicts}
