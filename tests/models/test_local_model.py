"""A live run of the real local model: one question in each arm, recorded, then replayed.

Marked `local`: `make test` leaves these out (no model there); `make test-local` builds the model
(`make local-model`) and runs them, and so does the nightly workflow. Without the model they fail
with the fix, they do not skip.
"""
import pytest

from armbench.models import get_model
from armbench.models.local_models import local_model

pytestmark = pytest.mark.local

MODEL = "local/qwen2.5-coder-0.5b"
QUESTION = "gpus-heldout-01"


def test_one_question_in_each_arm_runs_live_records_and_replays(cli, tmp_path):
    get_model(MODEL).check()  # a missing model fails here, with the fix
    live, replayed = tmp_path / "live", tmp_path / "replay"
    plan = ["--arm", "all", "--set", "heldout", "--domain", "gpus", "--question", QUESTION, "--quiet"]

    code, _, err = cli("run", "--model", MODEL, *plan, "--record", "--out", str(live))
    assert code == 0, err
    from armbench.engine.store import open_run_set

    records = open_run_set(live).records()
    assert sorted(r.arm for r in records) == ["browsing", "tooled"]
    for record in records:
        assert record.error_kind != "infra", record.error
        assert record.correct is not None and record.prompt_tokens > 0 and record.completion_tokens > 0
        assert record.cost_usd == 0.0  # a local model is priced at $0, and marked local
        assert record.call_providers and set(record.call_providers) == {"local"}

    code, _, err = cli("run", "--model", f"replay/{live}", *plan, "--out", str(replayed))
    assert code == 0, err
    code, out, _ = cli("regress", "--baseline", str(live), str(replayed))
    assert code == 0 and "OK: no regression" in out


async def test_a_generation_given_up_on_ends_at_the_next_token(monkeypatch):
    import asyncio

    import litellm

    import armbench.models.local as local

    get_model(MODEL).check()  # sets the local provider up; a missing model fails here, with the fix
    spec = local_model(MODEL.split("/", 1)[1])
    await asyncio.to_thread(local.load, spec)  # loaded before the clock starts
    consulted: list[bool] = []
    original = local.EndWhenAbandoned.__call__

    def spy(self, input_ids, scores):
        consulted.append(self.abandoned.is_set())
        return original(self, input_ids, scores)

    monkeypatch.setattr(local.EndWhenAbandoned, "__call__", spy)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(5):
            await litellm.acompletion(model=MODEL, messages=[
                {"role": "user", "content": "Count from 1 to 400, one number per line."}])
    await asyncio.get_running_loop().run_in_executor(local.GENERATOR, lambda: None)  # drained
    assert consulted and consulted.count(True) == 1 and consulted[-1] is True


async def test_a_constrained_generation_given_up_on_ends_without_killing_the_process():
    """Under a tool-call grammar the end token is not allowed mid-call: the abandoned generation
    finishes its call (bounded) and ends; llama.cpp must not abort, and the next call works."""
    import asyncio

    import litellm

    import armbench.models.local as local

    get_model(MODEL).check()
    tools = [{"type": "function", "function": {"name": "lookup", "description": "Look a word up.", "parameters": {
        "type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"],
        "additionalProperties": False}}}]
    ask = [{"role": "user", "content": "Look up the word 'ephemeral' with the tool."}]
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.5):
            await litellm.acompletion(model=MODEL, messages=ask, tools=tools)
    await asyncio.get_running_loop().run_in_executor(local.GENERATOR, lambda: None)  # drained, alive
    reply = await litellm.acompletion(model=MODEL, messages=ask, tools=tools)
    [call] = reply.choices[0].message.tool_calls
    assert call.function.name == "lookup" and "word" in call.function.arguments
