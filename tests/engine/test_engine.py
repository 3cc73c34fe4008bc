"""The run engine: the worker pool, run-set stop rules, and provider routing."""
import asyncio
import time
from contextlib import asynccontextmanager
from typing import Any

import pytest
from pydantic import BaseModel

from armbench.engine.agent import run_episode
from armbench.engine.runner import RunSetFailed
from armbench.engine.store import RunSetStore
from armbench.errors import UserError
from armbench.models import get_model
from armbench.models.retry import RetryPolicy
from armbench.players.script_registry import Reply, ScriptedToolCall, register_script
from armbench.players.scripts import play_solution, questions_by_prompt, server_error
from armbench.tools.base import ArmTools, Tool
from armbench.types import RunConfig
from tests.support.loopback import REPLY, openai_endpoint
from tests.support.models import run_set


class GaugeArgs(BaseModel):
    note: str = ""


class Gauge(Tool):
    """Counts how many runs are inside a tool call at once. A call stays until `awaited` are in, or
    for at most a second, so the count does not depend on how fast a busy machine starts them."""

    name = "gauge"
    description = "Measures concurrency."
    Args = GaugeArgs
    now = 0
    peak = 0
    awaited = 3

    async def run(self, args: GaugeArgs) -> dict[str, Any]:
        Gauge.now += 1
        Gauge.peak = max(Gauge.peak, Gauge.now)
        deadline = time.monotonic() + 1.0
        while Gauge.now < Gauge.awaited and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        Gauge.now -= 1
        return {"ok": True}


class GaugeArms:
    @asynccontextmanager
    async def open_arm(self, arm: str, domain: str, run_id: str | None = None):
        yield ArmTools(arm, [Gauge()])


@pytest.mark.slow
async def test_workers_pull_jobs_and_open_their_scope_once(tmp_path, gpu_design, script_registry):
    @register_script("gauge")
    def gauge(turn):
        return Reply(text="ANSWER: x") if turn.tool_results() else Reply(tool_calls=[ScriptedToolCall("gauge", {})])

    opened, closed = [], []

    @asynccontextmanager
    async def scope(worker):
        opened.append(worker)
        yield GaugeArms()
        closed.append(worker)

    config = RunConfig(model="scripted/gauge", arms=["tooled"], runs=4, concurrency=3)
    result = await run_set([gpu_design], config, RunSetStore(tmp_path / "s"), show_progress=False, worker_scope=scope)
    assert len(result.records) == 20
    assert sorted(opened) == sorted(closed) == [0, 1, 2]
    assert Gauge.peak == 3  # never more episodes in flight than workers


@pytest.mark.slow
async def test_too_many_infra_errors_fail_the_set_and_keep_every_record(tmp_path, gpu_design, gpu_heldout):
    store = RunSetStore(tmp_path / "down")
    config = RunConfig(model="scripted/server-error", arms=["tooled"], runs=3, concurrency=2,
                       max_retries=0, max_infra_errors=2)
    with pytest.raises(RunSetFailed, match="more than --max-infra-errors 2") as failed:
        await run_set([gpu_design, gpu_heldout], config, store, show_progress=False)
    records = store.records()
    assert 3 <= len(records) < 30
    assert [r.run_id for r in records] == [r.run_id for r in failed.value.result.records]
    assert all(r.error_kind == "infra" and r.correct is None for r in records)
    assert (store.directory / "runs.parquet").exists()
    # The limit counts the whole set: resuming with the same limit stops before any new run.
    with pytest.raises(RunSetFailed) as again:
        await run_set([gpu_design, gpu_heldout], config, store, resume=True, show_progress=False)
    assert again.value.result.records == [] and len(store.records()) == len(records)


def down_for(question_ids: set[str]):
    """A script whose provider fails (500) on these questions and plays the oracle on the others."""

    def script(turn):
        if questions_by_prompt()[turn.user_prompt].id in question_ids:
            return server_error(turn)
        return play_solution(turn)

    return script


@pytest.mark.slow
@pytest.mark.parametrize("down, fails", [(2, False), (3, True)])
async def test_more_than_half_the_planned_runs_as_infra_errors_fail_the_set_at_its_end(
        tmp_path, gpu_design, script_registry, down, fails):
    ids = [q.id for q in gpu_design.questions]
    register_script("half-down")(down_for(set(ids[:down])))
    store = RunSetStore(tmp_path / "set")
    config = RunConfig(model="scripted/half-down", arms=["tooled"], max_retries=0)
    if not fails:
        assert len((await run_set([gpu_design], config, store, show_progress=False)).records) == 5
        return
    with pytest.raises(RunSetFailed) as failed:
        await run_set([gpu_design], config, store, show_progress=False)
    assert str(failed.value) == ("3 of 5 planned runs are infra errors, more than half. First error: "
                                 "server error (500): litellm.InternalServerError: scripted 500 (after 1 attempt(s))")
    assert len(failed.value.result.records) == len(store.records()) == 5  # every run was run
    # --max-infra-errors overrides the rule: 3 are allowed.
    allowed = config.model_copy(update={"max_infra_errors": 3})
    await run_set([gpu_design], allowed, RunSetStore(tmp_path / "allowed"), show_progress=False)


@pytest.mark.slow
async def test_the_set_cost_cap_starts_no_new_run(tmp_path, gpu_design, script_registry):
    register_script("pricey", free=False)(play_solution)
    get_model("scripted/pricey").set_price(1000.0, 1000.0)
    store = RunSetStore(tmp_path / "capped")
    config = RunConfig(model="scripted/pricey", arms=["tooled"], runs=2, concurrency=1, max_cost=2.0)
    result = await run_set([gpu_design], config, store, show_progress=False)
    spent = [r.cost_usd for r in store.records()]
    assert 1 <= len(spent) < 10 and all(r.correct for r in result.records)
    assert sum(spent[:-1]) < 2.0 <= sum(spent)  # the run that crossed the cap was the last started
    assert "run-set cost cap reached" in result.halted and f"--resume {store.directory}" in result.halted


def test_provider_routing_is_for_openrouter_only():
    assert get_model("openrouter/x/y").provider_routing(["A", "B"], ["C"]) == {
        "extra_body": {"provider": {"order": ["A", "B"], "ignore": ["C"]}}
    }
    assert get_model("openai/gpt-4o").provider_routing([], []) == {}
    with pytest.raises(UserError, match="not an openrouter/ model"):
        get_model("openai/gpt-4o").provider_routing(["A"], [])


def test_the_manifest_config_leaves_credentials_out():
    config = RunConfig(model="m", arms=["tooled"], completion_kwargs={"api_key": "sk-1", "api_base": "u"})
    assert config.manifest_config()["completion_kwargs"] == {"api_base": "u"}


OPENROUTER_REPLY = {**REPLY, "model": "test/model", "provider": "TestUpstream"}  # names its upstream provider


async def test_routing_reaches_openrouter_and_the_upstream_provider_is_recorded(gpu_design):
    model = get_model("openrouter/test/model")
    with openai_endpoint(reply=OPENROUTER_REPLY) as endpoint:
        kwargs = {**model.provider_routing(["A"], ["B"]), "api_base": endpoint.url, "api_key": "k"}
        client = model.client(kwargs, RetryPolicy(max_retries=0))
        episode = await run_episode(gpu_design.questions[0], ArmTools("tooled", []), client)
    assert endpoint.bodies[0]["provider"] == {"order": ["A"], "ignore": ["B"]}
    assert episode.answer == "42" and episode.call_providers == ["TestUpstream"]
