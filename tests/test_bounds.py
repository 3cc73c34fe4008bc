"""Bounds before spending: a slip in a flag is refused with one line and exit 2 before anything runs
(the whole bank, a plan of a billion runs, a model that waits forever)."""
import pytest

import armbench
from armbench.api import plan_run, run_config
from armbench.errors import UserError
from armbench.questions import load_sets

ONE_SET = ["--domain", "gpus", "--set", "design", "--arm", "tooled"]


def refused(cli, *args: str) -> str:
    code, out, err = cli("run", *args)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and not out, err
    return err


@pytest.mark.parametrize("questions", [",,,", "", " , "])
def test_a_question_list_without_an_id_is_refused_rather_than_running_the_whole_bank(cli, tmp_path, questions):
    err = refused(cli, "--model", "scripted/oracle", "--question", questions, "--out", str(tmp_path / "set"))
    assert "--question names no question id" in err
    assert not (tmp_path / "set").exists()


@pytest.mark.parametrize("questions", [[], [""], [" ", "  "]])
def test_the_python_api_refuses_an_empty_question_list_too(tmp_path, questions):
    with pytest.raises(UserError, match="--question names no question id"):
        armbench.run("scripted/oracle", domains=["gpus"], questions=questions, out=tmp_path / "set")
    assert not (tmp_path / "set").exists()


def test_a_billion_runs_are_refused_with_the_count_and_the_flag_to_raise_the_limit(cli, tmp_path):
    err = refused(cli, "--model", "scripted/oracle", "--runs", "1000000000", "--out", str(tmp_path / "set"))
    questions = sum(len(question_set.questions) for question_set in load_sets())
    runs = questions * 2 * 1_000_000_000
    assert (f"the plan has {runs:,} runs ({questions} questions x 2 arms x --runs 1,000,000,000), "
            f"more than --max-runs 10,000; pass --max-runs {runs} to run them all") in err
    assert not (tmp_path / "set").exists()


def test_max_runs_is_the_largest_plan_accepted(tmp_path):
    config = run_config("scripted/oracle", arms=["tooled"], runs=3)
    where = dict(domains=["gpus"], sets=["design"], out=tmp_path / "set")
    assert plan_run(config, max_runs=15, **where).config.runs == 3  # 5 questions x 1 arm x 3
    with pytest.raises(UserError, match=r"the plan has 15 runs .* more than --max-runs 14; pass --max-runs 15"):
        plan_run(config, max_runs=14, **where)


def test_max_runs_counts_only_the_questions_asked(cli, tmp_path):
    err = refused(cli, "--model", "scripted/oracle", *ONE_SET, "--question", "gpus-design-01,gpus-design-02",
                  "--runs", "3", "--max-runs", "5", "--out", str(tmp_path / "set"))
    assert "the plan has 6 runs (2 questions x 1 arms x --runs 3), more than --max-runs 5" in err


@pytest.mark.parametrize("latency", ["inf", "nan", "-inf", "1e999", "-1"])
def test_a_scripted_latency_must_be_a_finite_number_of_seconds(cli, tmp_path, latency):
    err = refused(cli, "--model", f"scripted/oracle+latency={latency}", *ONE_SET, "--out", str(tmp_path / "set"))
    assert f"bad scripted-model option 'latency={latency}'" in err
    assert not (tmp_path / "set").exists()
