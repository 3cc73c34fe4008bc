"""armbench as a native inspect_ai task, run through inspect's own `eval()` and `eval_set()` with
its `mockllm` model scripted to call our tools: the log holds the samples, the tool calls and our
scores; the tools inspect offers are ours; the budget holds as in `bench run`."""
from __future__ import annotations

from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai import eval_set, task_with
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model

import armbench
from armbench.arms.environment import ArmEnvironment
from armbench.inspect_tasks import inspect_tool, questions, without_refs
from armbench.questions import load_set_file, set_path, solution, with_replica_addresses
from armbench.types import Question, Solution

pytestmark = pytest.mark.slow  # each eval starts replicas and Chromium (kept warm between evals)


def first_question(domain: str, set_name: str = "heldout") -> Question:
    return load_set_file(set_path(domain, set_name)).questions[0]


def used(output: ModelOutput) -> ModelOutput:
    """mockllm's outputs carry usage, or inspect counts tokens with a tokenizer it would download."""
    output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
    return output


def played(question: Question, arm: str) -> Solution:
    """The solution the oracle plays in `arm`: the arm's own, or else browsing's (every arm browses)."""
    return solution(question, arm) or solution(question, "browsing")


def scripted(question: Question, arm: str, answer: str | None = None, repeat_calls: int = 1) -> Any:
    """mockllm playing the question's stored solution for `arm`, then answering (by default the
    reference: the solution's results are checked below, in the tool messages)."""
    calls = played(question, arm).calls * repeat_calls
    outputs = [used(ModelOutput.for_tool_call("mockllm/model", call.tool, with_replica_addresses(call.args)))
               for call in calls]
    final = answer if answer is not None else question.join_answer(question.answer)
    outputs.append(used(ModelOutput.from_content("mockllm/model", f"ANSWER: {final}")))
    return get_model("mockllm/model", custom_outputs=outputs)


def only_sample(log):
    assert log.status == "success", log.error
    (sample,) = log.samples
    return sample


@pytest.mark.parametrize("arm", ["tooled", "browsing"])
def test_a_question_played_through_our_tools_is_scored_by_our_grader(replica_env, tmp_path, arm):
    question = first_question("gpus")
    (log,) = inspect_eval(questions(domain="gpus", arm=arm, set="heldout"), model=scripted(question, arm),
                          sample_id=question.id, log_dir=str(tmp_path), display="none")
    sample = only_sample(log)
    called = [call.function for message in sample.messages if message.role == "assistant"
              for call in message.tool_calls or []]
    assert called == [call.tool for call in played(question, arm).calls]
    results = [message.text for message in sample.messages if message.role == "tool"]
    assert results and not any('"error"' in result for result in results), results
    (score,) = sample.scores.values()
    assert score.value == "C" and score.metadata == {"outcome": "fully_correct", "miss_reason": None}
    assert sample.messages[0].role == "system" and "budget of 24 tool calls" in sample.messages[0].text
    assert sample.messages[1].text == question.prompt()


def test_a_wrong_answer_a_spent_budget_and_an_inspect_limit_are_misses_as_in_bench_run(replica_env, tmp_path):
    question = first_question("gpus")
    (wrong,) = inspect_eval(questions(domain="gpus", arm="tooled"), model=scripted(question, "tooled", "Nobody"),
                            sample_id=question.id, log_dir=str(tmp_path), display="none")
    (score,) = only_sample(wrong).scores.values()
    assert score.value == "I" and score.answer == "Nobody" and score.metadata["outcome"] == "fully_incorrect"
    # A budget of 1 and a model that calls twice: the second call is not made, nothing is answered.
    (spent,) = inspect_eval(questions(domain="gpus", arm="tooled", budget=1),
                            model=scripted(question, "tooled", repeat_calls=2), sample_id=question.id,
                            log_dir=str(tmp_path), display="none")
    sample = only_sample(spent)
    assert sum(message.role == "tool" for message in sample.messages) == 1
    (score,) = sample.scores.values()
    assert score.value == "I" and score.metadata["miss_reason"] == "no_answer_budget"
    # inspect's own limit (110 tokens a call): the second call passes it, and the run stops there, at a cap.
    (capped,) = inspect_eval(questions(domain="gpus", arm="tooled"), model=scripted(question, "tooled"),
                             token_limit=150, sample_id=question.id, log_dir=str(tmp_path), display="none")
    sample = only_sample(capped)
    assert sample.limit.type == "token" and sample.metadata["episode"]["stop_reason"] == "token_cap"
    (score,) = sample.scores.values()
    assert score.value == "I" and score.metadata["miss_reason"] == "no_answer_limit"


@pytest.mark.parametrize("domain", ["gpus", "worldbank"])
def test_inspect_offers_our_tools_names_descriptions_and_schemas(domain):
    template = ArmEnvironment([domain]).template("tooled", domain)
    for tool in template.tools:
        ours, offered = tool.schema()["function"], inspect_tool(tool)
        assert (offered.name, offered.description) == (ours["name"], ours["description"])
        assert comparable(offered.parameters.model_dump(exclude_none=True)) == comparable(
            without_refs(ours["parameters"]))


def comparable(node: Any) -> Any:
    """A schema without what inspect's tool schema has no field for: pydantic's `title`s (the names
    say the same), `minItems` and `maxItems` (the tool still enforces them: a list out of bounds is a
    tool error the model reads, as in `bench run`), a `default` of null (inspect leaves out every
    null) and an empty `required` (inspect writes one out)."""
    if isinstance(node, list):
        return [comparable(item) for item in node]
    if isinstance(node, dict):
        return {key: comparable(value) for key, value in node.items()
                if key not in INSPECT_HAS_NO_FIELD_FOR and (key, value) not in (("required", []), ("default", None))}
    return node


INSPECT_HAS_NO_FIELD_FOR = {"title", "minItems", "maxItems"}


def test_an_eval_set_over_two_domains_and_two_arms_completes_and_bench_report_counts_it_alike(
        replica_env, tmp_path, cli):
    tasks = []
    for domain in ("gpus", "worldbank"):
        question = first_question(domain)
        for arm in ("tooled", "browsing"):
            answer = "Nobody" if (domain, arm) == ("gpus", "browsing") else None  # one miss among them
            tasks.append(task_with(questions(domain=domain, arm=arm), model=scripted(question, arm, answer)))
    done, logs = eval_set(tasks, log_dir=str(tmp_path / "logs"), display="none", retry_attempts=0,
                          sample_id=[first_question(d).id for d in ("gpus", "worldbank")])
    assert done and len(logs) == 4
    logs = [read_eval_log(log.location) for log in logs]  # eval_set hands back the logs' headers
    assert sorted(log.eval.task_args["arm"] + "/" + log.eval.task_args["domain"] for log in logs) == [
        "browsing/gpus", "browsing/worldbank", "tooled/gpus", "tooled/worldbank"]
    scored = {(log.eval.task_args["domain"], log.eval.task_args["arm"]): only_sample(log).scores["strict_answer"].value
              for log in logs}
    assert sorted(scored.values()) == ["C", "C", "C", "I"]

    code, stdout, stderr = cli("import", "inspect", *[log.location for log in logs], "--out", str(tmp_path / "imported"))
    assert code == 0, stderr
    assert "4 runs from 4 logs" in stdout and "3/4 correct" in stdout
    imported = armbench.report(tmp_path / "imported")
    assert {(row.domain, row.arm): (row.correct, row.graded) for row in imported.rows} == {
        key: (int(value == "C"), 1) for key, value in scored.items()}
    by_arm = {record.run_id: record for record in imported.records}
    tooled = by_arm[f"{first_question('gpus').id}.tooled.r0"]
    assert tooled.actions == len(played(first_question("gpus"), "tooled").calls) and tooled.tool_errors == 0
    assert tooled.question_set_hash == load_set_file(set_path("gpus", "heldout")).content_hash()
    code, stdout, _ = cli("report", str(tmp_path / "imported"))
    assert code == 0 and "mockllm/model" in stdout
    code, stdout, _ = cli("show", tooled.run_id, "--run-set", str(tmp_path / "imported"))
    assert code == 0 and "ANSWER" in stdout
    code, _, err = cli("run", "--model", "scripted/oracle", "--domain", "gpus", "--set", "heldout",
                       "--resume", str(tmp_path / "imported"))
    assert code == 2 and "imported from inspect logs" in err
