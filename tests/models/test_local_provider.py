"""The local provider through LiteLLM, with llama.cpp's model replaced by a fake (the model is the
only thing mocked): text tool calls become structured ones, usage and price, context overflow."""
import json

import litellm
import numpy as np
import pytest

import armbench.models.local as local
from armbench.models import get_model

MODEL = "local/qwen2.5-coder-0.5b"


class FakeLlama:
    def __init__(self, reply: str | Exception):
        self.reply = reply
        self.requests = []

    def token_eos(self):
        return 2

    def create_chat_completion(self, **request):
        self.requests.append(request)
        if isinstance(self.reply, Exception):
            raise self.reply
        return {"choices": [{"message": {"role": "assistant", "content": self.reply}}],
                "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}}


@pytest.fixture
def fake_model(monkeypatch):
    def install(reply):
        fake = FakeLlama(reply)
        monkeypatch.setattr(local, "check_installed", lambda spec: None)
        monkeypatch.setattr(local, "load", lambda spec: fake)
        monkeypatch.setattr(local, "parsed_grammar", lambda text: text)  # llama.cpp's parse: the fake gets the GBNF
        return fake

    return install


TOOLS = [{"type": "function", "function": {"name": "gpu_query", "parameters": {"type": "object", "properties": {}}}}]


async def ask():
    get_model(MODEL)  # sets the local provider up with LiteLLM
    return await litellm.acompletion(model=MODEL, tools=TOOLS, messages=[{"role": "user", "content": "How many GPUs?"}])


async def test_a_tool_call_written_as_text_becomes_a_structured_call_marked_parsed(fake_model):
    fake = fake_model('<tool_call>\n{"name": "gpu_query", "arguments": {"limit": 3}}\n</tool_call>')
    response = await ask()
    message = response.choices[0].message
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [
        ("gpu_query", {"limit": 3})]
    assert message.provider_specific_fields["tool_calls_parsed_from_text"] is True
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (120, 30)
    assert response._hidden_params["response_cost"] == 0.0
    assert fake.requests[0]["temperature"] == 0.0 and fake.requests[0]["tools"] == TOOLS
    scores = np.ones(4)  # the processor leaves a live call's scores alone
    (processor,) = fake.requests[0]["logits_processor"]
    assert (processor([], scores) == 1).all()


async def test_a_prompt_longer_than_the_context_is_a_context_window_error(fake_model):
    fake_model(ValueError("Requested tokens (17000) exceed context window of 16384"))
    with pytest.raises(litellm.ContextWindowExceededError):
        await ask()


async def test_a_generation_the_caller_gives_up_on_is_told_to_stop(monkeypatch):
    import asyncio
    import threading

    started, stopped = threading.Event(), threading.Event()

    class SlowLlama:
        """Samples greedily until the end token (2), as llama.cpp does, asking the processor each
        time; the end token is never likelier than the others on its own."""

        def token_eos(self):
            return 2

        def create_chat_completion(self, logits_processor, **request):
            started.set()
            while True:
                scores = np.ones(8)
                for processor in logits_processor:
                    scores = processor([], scores)
                if int(np.argmax(scores)) == 2:
                    break
                stopped.wait(0.01)
            stopped.set()
            return {"choices": [{"message": {"content": ""}}], "usage": {}}

    monkeypatch.setattr(local, "check_installed", lambda spec: None)
    monkeypatch.setattr(local, "load", lambda spec: SlowLlama())
    monkeypatch.setattr(local, "parsed_grammar", lambda text: text)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2):
            await ask()
    assert started.is_set() and await asyncio.to_thread(stopped.wait, 5)


def test_a_local_model_waits_longer_for_a_reply_by_default():
    assert get_model(MODEL).default_request_timeout(120.0) == 1800.0
    assert get_model("openai/gpt-4o-mini").default_request_timeout(120.0) == 120.0


async def test_the_model_is_held_to_a_tool_call_until_it_has_looked_something_up(fake_model):
    """The grammar llama.cpp gets: a call only on the first turn, a call or the answer form after a
    tool result; the tools arrive with their descriptions shortened by the small-model rule."""
    from armbench.models.tool_grammar import tool_call_grammar

    fake = fake_model("ANSWER: 12")
    get_model(MODEL)
    described = [{"type": "function", "function": {
        "name": "gpu_query", "description": "Query GPUs.\n\nExample: {}", "parameters": {"type": "object", "properties": {}}}}]
    first = [{"role": "user", "content": "How many GPUs?"}]
    await litellm.acompletion(model=MODEL, tools=described, messages=first)
    looked_up = [*first, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "gpu_query", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"matched": 12}'}]
    await litellm.acompletion(model=MODEL, tools=described, messages=looked_up)
    assert [r["grammar"] for r in fake.requests] == [tool_call_grammar(described, answer=False),
                                                     tool_call_grammar(described)]
    assert fake.requests[0]["grammar"].startswith("root ::= tool-call\n")
    assert fake.requests[0]["tools"][0]["function"]["description"] == "Query GPUs."


def test_the_manifest_records_the_grammars_and_the_description_rule():
    from armbench.models.local_prompt import RULE
    from armbench.models.tool_grammar import grammar_sha256, tool_call_grammar

    decoding = get_model(MODEL).decoding({"tooled/gpus": TOOLS})
    assert decoding == {
        "constrained_decoding": True,
        "grammar_sha256": {"tooled/gpus": {"until_a_tool_result": grammar_sha256(tool_call_grammar(TOOLS, answer=False)),
                                           "after": grammar_sha256(tool_call_grammar(TOOLS))}},
        "first_reply": local.FIRST_REPLY,
        "tool_descriptions": RULE,
    }
    assert get_model("scripted/oracle").decoding({"tooled/gpus": TOOLS}) is None


def test_tools_whose_schema_has_no_grammar_refuse_the_run_set_in_one_line():
    from armbench.errors import UserError

    dated = [{"type": "function", "function": {"name": "on_day", "parameters": {
        "type": "object", "properties": {"day": {"type": "string", "format": "date"}}}}}]
    with pytest.raises(UserError, match="the tooled/gpus tools do not convert: tool 'on_day': unsupported"):
        get_model(MODEL).decoding({"tooled/gpus": dated})
