"""`local/<name>`: a GGUF model run in-process by llama-cpp-python, behind LiteLLM.

In-process rather than llama.cpp's OpenAI-compatible server: no second process, port or health
check to manage, and nothing else on the machine can reach the model. Generation runs on one
dedicated thread, always the same one (one model, one generation at a time; llama.cpp's CPU
state is not meant to move between threads), so the event loop keeps serving tools and other runs
meanwhile. Decoding is greedy with a fixed seed, so a run is repeatable.
"""
from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import litellm
from litellm import CustomLLM, ModelResponse

from armbench.errors import UserError
from armbench.models.text_tool_calls import parse_tool_calls
from armbench.paths import ROOT

MODELS_DIR = Path(os.environ.get("ARMBENCH_MODELS_DIR", ROOT / "models"))


@dataclass(frozen=True)
class LocalModel:
    name: str
    filename: str
    context_tokens: int = 16_384
    max_new_tokens: int = 512  # a tool call or an answer line; a small model's rambling stops here
    request_timeout: float = 1800.0  # seconds per call: a long prompt takes minutes on 2 cores

    @property
    def path(self) -> Path:
        return MODELS_DIR / self.filename


LOCAL_MODELS = {
    "qwen2.5-coder-0.5b": LocalModel("qwen2.5-coder-0.5b", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
}
GENERATOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="local-model")


def default_request_timeout(model: str, otherwise: float) -> float:
    """A local model's own request timeout; `otherwise` for any other model."""
    provider, _, name = model.partition("/")
    return LOCAL_MODELS[name].request_timeout if provider == "local" and name in LOCAL_MODELS else otherwise


def local_model(name: str) -> LocalModel:
    spec = LOCAL_MODELS.get(name)
    if spec is None:
        raise UserError(f"no local model {name!r}; local models: {', '.join(LOCAL_MODELS)}")
    return spec


def check_installed(spec: LocalModel) -> None:
    """Refuse early, with the fix, when the runtime or the weights are missing."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        raise UserError("llama-cpp-python is not installed; run `make local-model`") from None
    if not spec.path.exists():
        raise UserError(f"model weights missing at {spec.path}; run `make local-model`")


@cache
def load(spec: LocalModel):
    from llama_cpp import Llama

    return Llama(
        model_path=str(spec.path),
        n_ctx=spec.context_tokens,
        n_threads=os.cpu_count() or 2,
        seed=0,
        verbose=False,
    )


class EndWhenAbandoned:
    """A llama-cpp-python logits processor: once the caller has given up on the call, only the
    end-of-text token is left to sample, so generation ends at the next token. (Its chat API
    drops a caller's stopping criteria; logits processors it passes on.)"""

    def __init__(self) -> None:
        self.abandoned = threading.Event()
        self.end_token: int | None = None

    def __call__(self, _input_ids: Any, scores: Any) -> Any:
        if self.abandoned.is_set() and self.end_token is not None:
            scores[:] = float("-inf")
            scores[self.end_token] = 0.0
        return scores


def generate(spec: LocalModel, request: dict[str, Any], stop: EndWhenAbandoned) -> dict:
    """On the generator thread."""
    model = load(spec)
    stop.end_token = model.token_eos()
    return model.create_chat_completion(**request, logits_processor=[stop])  # it iterates the list


class LocalProvider(CustomLLM):
    async def acompletion(self, model: str, messages: list, optional_params: dict, **_: Any):
        spec = local_model(model)
        check_installed(spec)
        tools = optional_params.get("tools") or []
        request = {
            "messages": [m if isinstance(m, dict) else m.model_dump() for m in messages],
            "tools": tools or None,
            "tool_choice": "auto" if tools else None,
            "temperature": 0.0,
            "max_tokens": spec.max_new_tokens,
            "seed": 0,
        }
        stop = EndWhenAbandoned()
        try:
            output = await asyncio.get_running_loop().run_in_executor(GENERATOR, generate, spec, request, stop)
        except asyncio.CancelledError:  # a timeout: free the generator thread for the next call
            stop.abandoned.set()
            raise
        except ValueError as error:  # llama-cpp-python's only word for a prompt too long
            if "exceed context window" not in str(error):
                raise
            raise litellm.ContextWindowExceededError(
                message=str(error), model=f"local/{model}", llm_provider="local") from None
        tool_names = [tool["function"]["name"] for tool in tools]
        return to_model_response(model, output, tool_names)

    def completion(self, *args: Any, **kwargs: Any):
        raise litellm.BadRequestError(message="local models are async-only", llm_provider="local", model="local")


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


PROVIDER = LocalProvider()
