"""Per-run limits (wall time, tokens, cost), how each ends a run, and flagged empty tool arguments."""
import asyncio
from typing import Any

import litellm
import pytest
from pydantic import BaseModel

from armbench.engine.agent import run_episode
from armbench.engine.limits import RunLimits
from armbench.grading.strict import grade
from armbench.models import get_model
from armbench.models.retry import RetryPolicy
from armbench.players.script_registry import Reply, ScriptedToolCall, register_script
from armbench.players.scripts import play_solution
from armbench.tools.base import ArmTools, Tool
from tests.support.models import caller


class WaitArgs(BaseModel):
    seconds: float


class Wait(Tool):
    """A real tool that takes its time: the slow party in a tool-side timeout."""

    name = "wait"
    description = 'Waits `seconds`. Example: {"seconds": 1}.'
    Args = WaitArgs

    async def run(self, args: WaitArgs) -> dict[str, Any]:
        await asyncio.sleep(args.seconds)
        return {"waited": args.seconds}


def call_wait_then_answer(arguments):
    def script(turn):
        if not turn.tool_results():
            return Reply(tool_calls=[ScriptedToolCall("wait", arguments)])
        return Reply(text="ANSWER: done")

    return script


@pytest.fixture
async def gpu_arm(arm_env):
    async with arm_env.open_arm("tooled", "gpus") as arm:
        yield arm


@pytest.fixture
def question(gpu_design):
    return gpu_design.questions[0]


def graded(question, episode):
    return grade(episode.answer, question.answer, question.separator, stop_reason=episode.stop_reason)


async def test_timeout_while_waiting_for_the_model_is_an_infra_error(question, gpu_arm):
    episode = await run_episode(question, gpu_arm, caller("scripted/oracle+latency=30"), limits=RunLimits(timeout=0.2))
    assert (episode.stop_reason, episode.error_kind) == ("timeout", "infra")
    assert "waiting for the model" in episode.error and episode.answer is None


async def test_timeout_while_a_tool_runs_is_the_agents_failure(question, script_registry):
    register_script("waiter")(call_wait_then_answer({"seconds": 30}))
    episode = await run_episode(question, ArmTools("slow", [Wait()]), caller("scripted/waiter"), limits=RunLimits(timeout=0.2))
    assert (episode.stop_reason, episode.error_kind) == ("timeout", "agent")
    assert "while a tool ran" in episode.error
    assert graded(question, episode).miss_reason == "no_answer_limit"


async def test_token_cap_stops_before_the_next_model_call(question, gpu_arm):
    episode = await run_episode(question, gpu_arm, caller("scripted/oracle"), limits=RunLimits(max_tokens=10))
    assert (episode.stop_reason, episode.error_kind) == ("token_cap", "agent")
    assert len(episode.call_providers) == 1  # one call, then the cap held
    assert episode.answer is None and graded(question, episode).outcome == "no_answer"


async def test_cost_cap_stops_a_priced_model(question, gpu_arm, script_registry):
    register_script("pricey", free=False)(play_solution)
    get_model("scripted/pricey").set_price(1000.0, 1000.0)  # $1,000 per million tokens
    episode = await run_episode(question, gpu_arm, caller("scripted/pricey"), limits=RunLimits(max_cost_usd=0.01))
    assert episode.stop_reason == "cost_cap" and "$0.0100 per run" in episode.error
    assert episode.usage.cost_usd >= 0.01


async def test_an_unpriced_call_under_a_cost_cap_is_an_infra_error(question, gpu_arm, script_registry):
    register_script("unpriced", free=False)(play_solution)
    episode = await run_episode(question, gpu_arm, caller("scripted/unpriced"), limits=RunLimits(cost_must_be_known=True))
    assert (episode.stop_reason, episode.error_kind) == ("infra_error", "infra")
    assert "cost cap cannot be enforced" in episode.error


async def test_a_full_context_window_is_the_agents_failure(question, gpu_arm, script_registry):
    @register_script("overflow")
    def overflow(turn):
        raise litellm.ContextWindowExceededError(message="too long", llm_provider="scripted", model="overflow")

    client = get_model("scripted/overflow").client(retry=RetryPolicy(base_delay=0.001))
    episode = await run_episode(question, gpu_arm, client)
    assert (episode.stop_reason, episode.error_kind, episode.retries) == ("context_window", "agent", 0)


class NoArgs(BaseModel):
    pass


class Ping(Tool):
    """A tool without parameters: `{}` is the only call it can get, so there is nothing to drop."""

    name = "ping"
    description = "Answers pong."
    Args = NoArgs

    async def run(self, args: NoArgs) -> dict[str, Any]:
        return {"pong": True}


async def test_empty_arguments_are_counted_for_every_tool_that_takes_some(question, gpu_arm, script_registry):
    register_script("waiter-no-args")(call_wait_then_answer({}))
    episode = await run_episode(question, ArmTools("slow", [Wait()]), caller("scripted/waiter-no-args"))
    assert episode.empty_tool_args == 1 and episode.tool_errors == 1
    # gpu_query requires nothing and `{}` is a legal query for every GPU, but a provider that drops
    # the arguments sends just that: it is counted too.
    dropped = await run_episode(question, gpu_arm, caller("scripted/drop-args"))
    assert dropped.empty_tool_args == dropped.actions_by_tool["gpu_query"] >= 1
    register_script("pinger")(lambda turn: Reply(text="ANSWER: x") if turn.tool_results()
                              else Reply(tool_calls=[ScriptedToolCall("ping", {})]))
    pinged = await run_episode(question, ArmTools("ping", [Ping()]), caller("scripted/pinger"))
    assert (pinged.actions, pinged.empty_tool_args, pinged.tool_errors) == (1, 0, 0)


async def test_each_model_call_records_who_served_it(question, gpu_arm):
    episode = await run_episode(question, gpu_arm, caller("scripted/oracle"))
    assert episode.call_providers == ["scripted"] * (episode.actions + 1)
    assert episode.provider == "scripted"
