"""Models by name: `get_model` is the one place a model string is read.

The string's prefix picks the provider; the Model it returns knows the rest (model.py):

    scripted/<script>[+options]   a deterministic script plays the model, offline (scripted.py)
    local/<name>                  a GGUF model run in-process by llama.cpp (local.py)
    replay/<run-set dir>          the model's turns from a recorded run set (replay.py)
    anything else                 a LiteLLM model string, e.g. openai/gpt-4o-mini (litellm_model.py)

Each provider is a module of its own, imported and set up the first time a model names it, after
LiteLLM is configured; so importing this package loads no LiteLLM (which takes seconds).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import cache

from armbench.models.litellm_setup import configure_litellm
from armbench.models.model import Model

ProviderLoader = Callable[[], type[Model]]
PROVIDERS: dict[str, ProviderLoader] = {}
DEFAULT_PROVIDER = "litellm"


def provider(prefix: str) -> Callable[[ProviderLoader], ProviderLoader]:
    """Register the provider of `<prefix>/...` strings: a function that imports and sets it up (run once)."""

    def register(load: ProviderLoader) -> ProviderLoader:
        PROVIDERS[prefix] = cache(load)
        return PROVIDERS[prefix]

    return register


@provider(DEFAULT_PROVIDER)
def load_litellm() -> type[Model]:
    from armbench.models.litellm_model import LiteLLMModel

    return LiteLLMModel


@provider("scripted")
def load_scripted() -> type[Model]:
    from armbench.models.scripted import ScriptedModel, set_up

    set_up()
    return ScriptedModel


@provider("local")
def load_local() -> type[Model]:
    from armbench.models.local import LocalModel, set_up

    set_up()
    return LocalModel


@provider("replay")
def load_replay() -> type[Model]:
    from armbench.models.replay import ReplayModel

    return ReplayModel


def provider_of(model: str) -> str:
    """The provider a model string names: its prefix, if a provider has it, else LiteLLM."""
    prefix, slash, _ = model.partition("/")
    return prefix if slash and prefix in PROVIDERS else DEFAULT_PROVIDER


def get_model(model: str) -> Model:
    """The Model a string names. Nothing is checked yet (`Model.check` does that); LiteLLM is
    configured, and the provider set up, the first time."""
    configure_litellm()
    return PROVIDERS[provider_of(model)]()(model)


def price_of(model: str) -> tuple[float, float] | None:
    """Dollars per million input and output tokens of the model a string names, None when unknown:
    a LiteLLM model's from LiteLLM's cost map file (without loading LiteLLM), another's from its provider."""
    from armbench.models.pricing import price_per_million

    return price_per_million(model if provider_of(model) == DEFAULT_PROVIDER else get_model(model).name)
