"""The agent loop against scripted models: only the model is scripted, the tools run for real."""
import json

import pytest

from armbench.domains.gpus.tools import GpuQuery
from armbench.engine.agent import run_episode
from armbench.grading.strict import grade
from armbench.models import get_model
from armbench.models.retry import RetryPolicy
from armbench.players.script_registry import Reply, ScriptedToolCall, register_script
from armbench.players.scripts import play_solution
from armbench.tools.base import ArmTools, ToolInfraError
from tests.support.models import caller


def question_by_id(question_set, qid):
    return next(q for q in question_set.questions if q.id == qid)


@pytest.fixture
async def arm(arm_env):
    async with arm_env.open_arm("tooled", "gpus") as arm:
        yield arm


async def test_oracle_answers_every_design_question(gpu_design, arm):
    for question in gpu_design.questions:
        episode = await run_episode(question, arm, caller("scripted/oracle"))
        verdict = grade(episode.answer, question.answer, question.separator, stop_reason=episode.stop_reason)
        assert verdict.correct, (question.id, episode.answer)
        assert episode.stop_reason == "answered"
        assert episode.actions_by_tool == {"gpu_query": len(question.solutions["tooled"].calls)}


async def test_tie_answered_with_a_comma_is_wrong_separator(gpu_design, arm, script_registry):
    register_script("comma-oracle")(lambda turn: play_solution(turn, separator=","))
    tie = question_by_id(gpu_design, "gpus-design-02")
    assert len(tie.answer) == 2 and tie.separator != ","
    episode = await run_episode(tie, arm, caller("scripted/comma-oracle"))
    verdict = grade(episode.answer, tie.answer, tie.separator, stop_reason=episode.stop_reason)
    assert "," in episode.answer
    assert not verdict.correct
    assert verdict.miss_reason == "wrong_separator"


async def test_malformed_tool_json_goes_back_to_the_model_until_budget(gpu_design, arm):
    question = gpu_design.questions[0]
    episode = await run_episode(question, arm, caller("scripted/malformed-json"), budget=5)
    assert episode.stop_reason == "budget"
    assert episode.actions == 5 and episode.tool_errors == 5
    tool_messages = [m for m in episode.transcript if m["role"] == "tool"]
    assert len(tool_messages) == 5
    assert json.loads(tool_messages[0]["content"])["error"]["type"] == "invalid_json"


async def test_dropped_arguments_reach_the_tool_and_the_answer_is_wrong(gpu_design, arm):
    question = question_by_id(gpu_design, "gpus-design-01")
    episode = await run_episode(question, arm, caller("scripted/drop-args"))
    call = next(m for m in episode.transcript if m.get("tool_calls"))["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {}
    verdict = grade(episode.answer, question.answer, question.separator, stop_reason=episode.stop_reason)
    assert not verdict.correct


@pytest.mark.parametrize("script", ["rate-limit", "server-error", "timeout"])
async def test_provider_failures_end_as_infra_errors_after_retries(gpu_design, arm, script):
    client = get_model(f"scripted/{script}").client(retry=RetryPolicy(max_retries=2, base_delay=0.001))
    episode = await run_episode(gpu_design.questions[0], arm, client)
    assert (episode.stop_reason, episode.error_kind) == ("infra_error", "infra")
    assert episode.error and "after 3 attempt(s)" in episode.error and episode.answer is None
    assert episode.retries == 2


async def test_unknown_tool_and_bad_arguments_are_reported_to_the_model(gpu_design, arm, script_registry):
    @register_script("confused")
    def confused(turn):
        seen = len(turn.tool_results())
        if seen == 0:
            return Reply(tool_calls=[ScriptedToolCall("web_search", {"q": "gpu"})])
        if seen == 1:
            return Reply(tool_calls=[ScriptedToolCall("gpu_query", {"limit": "many"})])
        return Reply(text="I could not do it.")

    episode = await run_episode(gpu_design.questions[0], arm, caller("scripted/confused"))
    errors = [json.loads(m["content"])["error"] for m in episode.transcript if m["role"] == "tool"]
    assert errors[0]["type"] == "unknown_tool" and "gpu_query" in errors[0]["valid_choices"]
    assert errors[1]["type"] in {"invalid_arguments", "bad_value"}
    assert episode.stop_reason == "stopped" and episode.tool_errors == 2


async def test_usage_is_recorded_and_an_unpriced_model_costs_unknown(gpu_design, arm, script_registry):
    register_script("unpriced-oracle", free=False)(play_solution)
    priced = await run_episode(gpu_design.questions[0], arm, caller("scripted/oracle"))
    unpriced = await run_episode(gpu_design.questions[0], arm, caller("scripted/unpriced-oracle"))
    assert priced.usage.cost_usd == 0.0
    assert unpriced.usage.cost_usd is None
    assert unpriced.usage.prompt_tokens > 0 and unpriced.usage.completion_tokens > 0
    assert priced.wall_seconds >= priced.model_seconds + priced.tool_seconds > 0


async def test_system_prompt_is_the_same_for_every_question(gpu_design, gpu_heldout, arm):
    first = await run_episode(gpu_design.questions[0], arm, caller("scripted/oracle"))
    second = await run_episode(gpu_heldout.questions[0], arm, caller("scripted/oracle"), budget=24)
    assert first.transcript[0] == second.transcript[0]
    assert "ANSWER:" in first.transcript[0]["content"]


async def test_a_tool_whose_backend_is_gone_ends_the_run_as_an_infra_error(gpu_design):
    class Orphan:
        """A tool whose server has died."""

        name = "gpu_query"

        def schema(self):
            return GpuQuery().schema()

        async def invoke(self, arguments):
            raise ToolInfraError("MCP server connection lost")

    episode = await run_episode(gpu_design.questions[0], ArmTools("tooled", [Orphan()]), caller("scripted/oracle"))
    assert episode.stop_reason == "infra_error" and episode.answer is None
    assert episode.error == "ToolInfraError: MCP server connection lost"
    assert episode.actions == 1


async def test_a_browser_context_opens_only_when_a_run_browses(arm_env):
    async with arm_env.open_arm("tooled", "gpus") as arm:
        session = arm.tool("browser_navigate").tool.session  # under its Supervised wrapper
        assert not (await arm.tool("gpu_query").invoke({"limit": 1})).is_error
        assert not session.opened
        page = await arm.tool("browser_navigate").invoke({"url": arm_env.endpoints["gpus"].base_url + "/gpus"})
        assert not page.is_error and "GPU" in page.result["title"]
        assert session.opened
