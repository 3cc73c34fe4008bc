"""Models by name: `get_model` is the one place a model string is read.

The string's prefix picks the provider; the Model it returns knows the rest (model.py):

    local/<name>                  a GGUF model run in-process by llama.cpp (local.py)
    anything else                 a LiteLLM model string, e.g. openai/gpt-4o-mini (litellm_model.py)

and, from other packages, the providers registered in the `armbench.providers` entry-point group
(pyproject.toml): each entry is named by its prefix and points at a function that sets the provider
up and returns its Model class. armbench's offline players register that way (armbench/players):

    scripted/<script>[+options]   a deterministic script plays the model, offline
    replay/<run-set dir>          the model's turns from a recorded run set

So this package is the LiteLLM seam alone: it never imports a player, which reads questions and
domains. Each provider is imported and set up the first time a model names it, after LiteLLM is
configured; so importing this package loads no LiteLLM (which takes seconds).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import cache

from armbench.models.litellm_setup import configure_litellm
from armbench.models.model import Model

ProviderLoader = Callable[[], type[Model]]
PROVIDERS: dict[str, ProviderLoader] = {}
PROVIDER_GROUP = "armbench.providers"
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


@provider("local")
def load_local() -> type[Model]:
    from armbench.models.local import LocalModel, set_up

    set_up()
    return LocalModel


@cache
def installed_providers() -> dict[str, ProviderLoader]:
    """The providers installed packages register as entry points (read once: about 40 ms)."""
    from importlib.metadata import entry_points

    def loader(point) -> ProviderLoader:
        return cache(lambda: point.load()())

    return {point.name: loader(point) for point in entry_points(group=PROVIDER_GROUP)}


def registered_providers() -> dict[str, ProviderLoader]:
    """Every provider by prefix: those installed, and those registered here (`@provider`), which win."""
    return installed_providers() | PROVIDERS


def provider_of(model: str) -> str:
    """The provider a model string names: its prefix, if a provider has it, else LiteLLM."""
    prefix, slash, _ = model.partition("/")
    return prefix if slash and prefix in registered_providers() else DEFAULT_PROVIDER


def get_model(model: str) -> Model:
    """The Model a string names. Nothing is checked yet (`Model.check` does that); LiteLLM is
    configured, and the provider set up, the first time."""
    configure_litellm()
    return registered_providers()[provider_of(model)]()(model)


def price_of(model: str) -> tuple[float, float] | None:
    """Dollars per million input and output tokens of the model a string names, None when unknown:
    a LiteLLM model's from LiteLLM's cost map file (without loading LiteLLM), another's from its provider."""
    from armbench.models.pricing import price_per_million

    return price_per_million(model if provider_of(model) == DEFAULT_PROVIDER else get_model(model).name)
