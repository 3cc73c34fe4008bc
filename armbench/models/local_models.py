"""The local models armbench knows: each one's weights file, context and generation limits, and
how it is loaded into llama-cpp-python. (Running one behind LiteLLM is local.py's job.)"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from armbench.errors import UserError
from armbench.paths import ROOT

MODELS_DIR = Path(os.environ.get("ARMBENCH_MODELS_DIR", ROOT / "models"))


@dataclass(frozen=True)
class LocalModelSpec:
    name: str
    filename: str
    context_tokens: int = 16_384
    max_new_tokens: int = 512  # a tool call or an answer line; a small model's rambling stops here
    request_timeout: float = 1800.0  # seconds per call: a long prompt takes minutes on 2 cores

    @property
    def path(self) -> Path:
        return MODELS_DIR / self.filename


LOCAL_MODELS = {
    "qwen2.5-coder-0.5b": LocalModelSpec("qwen2.5-coder-0.5b", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
}


def local_model(name: str) -> LocalModelSpec:
    spec = LOCAL_MODELS.get(name)
    if spec is None:
        raise UserError(f"no local model {name!r}; local models: {', '.join(LOCAL_MODELS)}")
    return spec


def check_installed(spec: LocalModelSpec) -> None:
    """Refuse early, with the fix, when the runtime or the weights are missing."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        raise UserError("llama-cpp-python is not installed; run `make local-model`") from None
    if not spec.path.exists():
        raise UserError(f"model weights missing at {spec.path}; run `make local-model`")


PROMPT_CACHE_BYTES = 4 << 30


@cache
def load(spec: LocalModelSpec):
    """The model, with the KV state of earlier prompts kept in RAM: a turn re-reads only what is
    new since the longest prompt it shares a beginning with, and runs of one arm share the system
    prompt and tool definitions (about 4,000 tokens, a minute to read on 2 cores) even when the
    plan alternates arms."""
    from llama_cpp import Llama, LlamaRAMCache

    model = Llama(
        model_path=str(spec.path),
        n_ctx=spec.context_tokens,
        n_threads=os.cpu_count() or 2,
        seed=0,
        verbose=False,
    )
    model.set_cache(LlamaRAMCache(capacity_bytes=PROMPT_CACHE_BYTES))
    return model
