"""One place that prepares LiteLLM for offline use and registers armbench's custom providers."""
from __future__ import annotations

import logging
import os
import warnings


def configure_litellm() -> None:
    # The bundled cost map, never a download at import time (no network here, nor in CI).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm
    from litellm.utils import custom_llm_setup

    litellm.suppress_debug_info = True
    # A call cancelled by a deadline (a run or request timeout) can leave LiteLLM's provider
    # coroutine un-awaited; the warning says nothing the run record does not.
    warnings.filterwarnings(
        "ignore", message="coroutine '.*acompletion' was never awaited", category=RuntimeWarning
    )
    litellm.drop_params = True
    logging.getLogger("LiteLLM").setLevel(logging.ERROR)

    from armbench.models.local import LOCAL_MODELS
    from armbench.models.local import PROVIDER as local
    from armbench.models.scripted import PROVIDER as scripted

    ours = {"scripted": scripted, "local": local}
    providers = [entry for entry in litellm.custom_provider_map if entry["provider"] not in ours]
    litellm.custom_provider_map = [
        *providers,
        *({"provider": name, "custom_handler": handler} for name, handler in ours.items()),
    ]
    custom_llm_setup()

    # A local model costs nothing per token.
    for name in LOCAL_MODELS:
        register_price(f"local/{name}", 0.0, 0.0)
    from armbench.models import scripts  # noqa: F401  (registers the built-in scripts)


def register_price(model: str, input_per_million: float, output_per_million: float) -> None:
    """Price a model LiteLLM's cost map lacks, in dollars per million tokens."""
    import litellm

    provider = model.split("/", 1)[0] if "/" in model else "openai"
    litellm.register_model(
        {
            model: {
                "input_cost_per_token": input_per_million / 1e6,
                "output_cost_per_token": output_per_million / 1e6,
                "litellm_provider": provider,
                "mode": "chat",
            }
        }
    )
