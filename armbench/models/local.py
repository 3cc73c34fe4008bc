"""`local/<name>`: a GGUF model run in-process by llama-cpp-python, behind LiteLLM.

In-process rather than llama.cpp's OpenAI-compatible server: no second process, port or health
check to manage, and nothing else on the machine can reach the model. Generation runs on one
dedicated thread, always the same one (one model, one generation at a time; llama.cpp's CPU
state is not meant to move between threads), so the event loop keeps serving tools and other runs
meanwhile. Decoding is greedy with a fixed seed, so a run is repeatable.

Decoding is constrained, as local serving stacks do (llama.cpp's tool-call grammars, vLLM's guided
decoding): each reply is either one tool call in Qwen2.5's native `<tool_call>` form whose
arguments are valid for that tool's schema, or text ending in an `ANSWER:` line
(models/tool_grammar.py). Until the conversation holds a tool result the call is required (as
`tool_choice="required"`): an answer needs something looked up, and a 0.5B model otherwise answers
from memory on its first turn. The tools reach the model through the GGUF's own chat template,
with their descriptions shortened by one rule (models/local_prompt.py); the manifest records it all.
"""
from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import litellm
from litellm import CustomLLM, ModelResponse

from armbench.errors import UserError
from armbench.models.litellm_setup import add_custom_provider
from armbench.models.local_models import LOCAL_MODELS, LocalModelSpec, check_installed, load, local_model
from armbench.models.local_prompt import RULE, compact_tools
from armbench.models.model import Model
from armbench.models.pricing import register_price
from armbench.models.text_tool_calls import parse_tool_calls
from armbench.models.tool_grammar import grammar_sha256, tool_call_grammar

PROVIDER = "local"
ABANDON_MARGIN = 1e4  # above every other logit: the end token wins wherever it is allowed
FIRST_REPLY = "a tool call is required until the conversation holds a tool result (tool_choice 'required')"
GENERATOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="local-model")


def set_up() -> None:
    """Route `local/...` to llama.cpp, at $0 a token (once: get_model's loader)."""
    add_custom_provider(PROVIDER, LocalProvider())
    for name in LOCAL_MODELS:
        register_price(f"{PROVIDER}/{name}", PROVIDER, 0.0, 0.0)


class LocalModel(Model):
    provider = PROVIDER

    def check(self) -> None:
        """Refuse an unknown local model, or one whose runtime or weights are not installed."""
        check_installed(local_model(self.name.partition("/")[2]))

    def default_request_timeout(self, otherwise: float) -> float:
        spec = LOCAL_MODELS.get(self.name.partition("/")[2])
        return spec.request_timeout if spec else otherwise

    def decoding(self, offered: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        """Also the check, before any run starts, that every offered tool set converts to a grammar
        (an MCP server's tools may use a schema keyword the converter does not know)."""
        hashes = {}
        for key, tools in sorted(offered.items()):
            try:
                hashes[key] = {"until_a_tool_result": grammar_sha256(tool_call_grammar(tools, answer=False)),
                               "after": grammar_sha256(tool_call_grammar(tools))}
            except ValueError as error:
                raise UserError(f"{self.name} decodes under a grammar made from its tools' schemas, and the "
                                f"{key} tools do not convert: {error}") from None
        return {
            "constrained_decoding": True,
            "grammar_sha256": hashes,
            "first_reply": FIRST_REPLY,
            "tool_descriptions": RULE,
        }


class EndWhenAbandoned:
    """A llama-cpp-python logits processor: once the caller has given up on the call, the end
    token is made the most likely, so generation ends at the first token where the grammar allows
    the end (at once without one; under a tool-call grammar, when the call or answer being written
    is complete: every one is bounded), and the one generator thread is free for the next call.
    (Its chat API drops a caller's stopping criteria, and runs processors inside a C callback,
    where an exception is swallowed; only scores get through. Leaving the end token as the only
    choice would make llama.cpp abort the process where the grammar does not allow it yet.)"""

    def __init__(self) -> None:
        self.abandoned = threading.Event()
        self.end_token: int | None = None

    def __call__(self, _input_ids: Any, scores: Any) -> Any:
        if self.abandoned.is_set() and self.end_token is not None:
            scores[self.end_token] = scores.max() + ABANDON_MARGIN
        return scores


@lru_cache(maxsize=32)
def parsed_grammar(gbnf: str):
    """llama.cpp's parse of a grammar: once per distinct tool set, not once per turn."""
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string(gbnf, verbose=False)


def generate(spec: LocalModelSpec, request: dict[str, Any], grammar: str | None, stop: EndWhenAbandoned) -> dict:
    """On the generator thread."""
    model = load(spec)
    stop.end_token = model.token_eos()
    constrained = parsed_grammar(grammar) if grammar else None
    return model.create_chat_completion(**request, grammar=constrained, logits_processor=[stop])  # it iterates the list


class LocalProvider(CustomLLM):
    async def acompletion(self, model: str, messages: list, optional_params: dict, **_: Any):
        spec = local_model(model)
        check_installed(spec)
        tools = optional_params.get("tools") or []
        request = {
            "messages": [m if isinstance(m, dict) else m.model_dump() for m in messages],
            "tools": compact_tools(tools) or None,  # rendered by the GGUF's chat template (<tools>)
            "tool_choice": "auto" if tools else None,
            "temperature": 0.0,
            "max_tokens": spec.max_new_tokens,
            "seed": 0,
        }
        grammar = tool_call_grammar(tools, answer=looked_up(messages)) if tools else None
        stop = EndWhenAbandoned()
        try:
            output = await asyncio.get_running_loop().run_in_executor(GENERATOR, generate, spec, request, grammar, stop)
        except asyncio.CancelledError:  # a timeout: free the generator thread for the next call
            stop.abandoned.set()
            raise
        except ValueError as error:  # llama-cpp-python's only word for a prompt too long
            if "exceed context window" not in str(error):
                raise
            raise litellm.ContextWindowExceededError(
                message=str(error), model=f"local/{model}", llm_provider=PROVIDER) from None
        tool_names = [tool["function"]["name"] for tool in tools]
        return to_model_response(model, output, tool_names)

    def completion(self, *args: Any, **kwargs: Any):
        raise litellm.BadRequestError(message="local models are async-only", llm_provider=PROVIDER, model=PROVIDER)


def looked_up(messages: list) -> bool:
    """Whether the conversation holds a tool result yet."""
    return any((m if isinstance(m, dict) else m.model_dump()).get("role") == "tool" for m in messages)


def to_model_response(model: str, output: dict, tool_names: list[str]) -> ModelResponse:
    text = output["choices"][0]["message"].get("content") or ""
    calls = parse_tool_calls(text, tool_names)
    message: dict[str, Any] = {"role": "assistant", "content": None if calls else text}
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in calls
        ]
        # The call was written as text and parsed by armbench, not returned structured.
        message["provider_specific_fields"] = {"tool_calls_parsed_from_text": True, "raw_text": text}
    usage = output.get("usage") or {}
    response = ModelResponse(
        id=f"local-{uuid.uuid4().hex[:12]}",
        created=int(time.time()),
        model=f"local/{model}",
        choices=[{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        usage={
            "prompt_tokens": usage.get("prompt_tokens", 0),
            "completion_tokens": usage.get("completion_tokens", 0),
            "total_tokens": usage.get("total_tokens", 0),
        },
    )
    return response
