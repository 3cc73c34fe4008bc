"""`bench questions new`: a question is written from the data, refused when it is unfair or
unanswerable, and saved only with solutions that give its answer."""
from __future__ import annotations

import json
import shutil

import pytest

from armbench.paths import QUESTIONS_DIR, QUESTIONS_DIR_ENV
from armbench.questions import load_set_file, load_sets, solution, verify
from armbench.types import Derived

LOWEST_2010 = ("SELECT state FROM crashes WHERE year = 2010 AND fatality_rate_per_100m_vmt = "
               "(SELECT min(fatality_rate_per_100m_vmt) FROM crashes WHERE year = 2010)")
TOOLED = {"calls": [{"tool": "crash_query", "args": {
    "filters": [{"field": "year", "op": "eq", "value": 2010}], "sort_by": "fatality_rate_per_100m_vmt",
    "order": "asc", "limit": 5}}], "answer": {"from": "rows", "field": "state", "ties_on": "fatality_rate_per_100m_vmt"}}
STATES = "state names written out in full"


@pytest.fixture
def bank(tmp_path, monkeypatch):
    target = tmp_path / "questions"
    shutil.copytree(QUESTIONS_DIR, target)
    monkeypatch.setenv(QUESTIONS_DIR_ENV, str(target))
    return target


def new(cli, *options: str, sql: str = LOWEST_2010, text: str = "Which state had the lowest rate in 2010?"):
    return cli("questions", "new", "crashes", "trial", "--text", text, "--answer-format", STATES, "--sql", sql,
               *options)


@pytest.mark.slow
def test_a_question_is_written_from_the_data_with_solutions_that_give_its_answer(bank, cli, replica_env):
    code, out, err = new(cli, "--tie-rule", "list every state tied for the lowest", "--tooled", json.dumps(TOOLED))
    assert code == 0, err
    assert "wrote crashes-trial-01" in out and "answer Massachusetts" in out
    # the SQL requires year = 2010 of every row it reads, so the derived solution reads only those
    assert "browsing: derived" in out and "reading only the rows where year = 2010" in out
    written = load_set_file(bank / "crashes" / "trial.yaml")
    [question] = written.questions
    assert question.answer == ["Massachusetts"] and question.solutions["browsing"] == Derived(derived={"year": 2010})
    assert solution(question, "tooled").calls[0].args == TOOLED["calls"][0]["args"]
    assert verify(load_sets(["crashes"], root=bank)) == []
    premise = "The rate is fatalities per 100 million vehicle miles traveled."
    code, out, _ = new(cli, "--tie-rule", "list every state tied for the lowest", "--premise", premise)
    assert code == 0 and "wrote crashes-trial-02" in out  # numbered after the first
    assert "no tooled solution" in out
    second = load_set_file(bank / "crashes" / "trial.yaml").questions[1]
    assert second.premise == premise and second.prompt().startswith(f"{second.text}\n\nGiven: {premise}")


@pytest.mark.parametrize("options, sql, refusal", [
    ((), "SELECT state FROM crashes WHERE year = 1900", "derives no answer"),
    ((), "SELECT state FROM crashes WHERE year = 2010 ORDER BY year LIMIT 1", "depends on the order of tied rows"),
    ((), "SELECT nosuch FROM crashes", "does not run over the replica tables"),
    ((), "SELECT state FROM crashes WHERE year = 2001 ORDER BY registered_vehicles_thousands DESC LIMIT 5",
     "crash_query's description example already answers it"),
    (("--tooled", json.dumps({**TOOLED, "answer": {**TOOLED["answer"], "field": "year"}})), LOWEST_2010,
     "the tooled solution answers ['2010'], the data ['Massachusetts']"),
    (("--tooled", json.dumps({**TOOLED, "answer": {**TOOLED["answer"], "field": "state_abbr"}})), LOWEST_2010,
     "cannot be read from its results: KeyError('state_abbr')"),
    (("--tooled", "{not json"), LOWEST_2010, "--tooled must be a JSON solution"),
])
def test_a_question_that_cannot_be_fair_or_checked_is_refused_and_nothing_is_written(bank, cli, options, sql, refusal):
    code, _, err = new(cli, *options, sql=sql)
    assert code == 2 and refusal in " ".join(err.split()), err
    assert not (bank / "crashes" / "trial.yaml").exists()


LOWEST_PAGE = """
import re, urllib.request
with urllib.request.urlopen("{replica:crashes}/years/2010?sort=rate_vmt&order=asc") as reply:
    page = reply.read().decode()
print(re.findall(r'<tr><th scope="row"><a href="[^"]+">([^<]+)</a>', page)[%d])
"""


@pytest.mark.slow
def test_a_hand_written_browsing_script_is_kept_only_when_it_gives_the_answer(bank, cli, replica_env, tmp_path):
    script = tmp_path / "browse.py"
    script.write_text(LOWEST_PAGE % 1)  # the second lowest
    code, _, err = new(cli, "--tie-rule", "all tied", "--browsing-code", str(script))
    assert code == 2 and "the browsing script answers" in err and "the data ['Massachusetts']" in err
    script.write_text(LOWEST_PAGE % 0)
    code, out, err = new(cli, "--tie-rule", "all tied", "--browsing-code", str(script), "--shape", "pick,tie")
    assert code == 0 and "browsing: your script gives the answer" in out, err
    [question] = load_set_file(bank / "crashes" / "trial.yaml").questions
    assert solution(question, "browsing").calls[0].args["code"] == script.read_text()
    assert [str(shape) for shape in question.shapes] == ["pick", "tie"]
