"""LiteLLM, set up for armbench: offline, quiet, and routing our own providers to their handlers.

`get_model` calls `configure_litellm` before it loads any provider, so LiteLLM is configured once,
explicitly, before anything of armbench uses it; no import configures it.
"""
from __future__ import annotations

import gc
import logging
import os
import warnings
from functools import cache
from typing import Any


@cache
def configure_litellm() -> None:
    """Once per process; later calls do nothing."""
    # The bundled cost map, never a download (no network here, nor in CI): LiteLLM reads this
    # when it is first imported, just below.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # No implicit .env: LiteLLM would read one found upward from its install folder. `bench` reads
    # --env-file or ./.env itself (models/generation.py), so where credentials come from is visible.
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    # Its import makes hundreds of thousands of objects and no garbage: the collections it would
    # set off meanwhile only walk them again and again (about 0.6 s of its 3.5 s of CPU).
    collecting = gc.isenabled()
    gc.disable()
    try:
        import litellm
    finally:
        if collecting:
            gc.enable()

    litellm.suppress_debug_info = True
    # A call cancelled by a deadline (a run or request timeout) can leave LiteLLM's provider
    # coroutine un-awaited; the warning says nothing the run record does not.
    warnings.filterwarnings(
        "ignore", message="coroutine '.*acompletion' was never awaited", category=RuntimeWarning
    )
    litellm.drop_params = True
    logging.getLogger("LiteLLM").setLevel(logging.ERROR)


def add_custom_provider(name: str, handler: Any) -> None:
    """Route `<name>/...` model strings to `handler` (a `litellm.CustomLLM`), replacing any earlier one."""
    import litellm
    from litellm.utils import custom_llm_setup

    others = [entry for entry in litellm.custom_provider_map if entry["provider"] != name]
    litellm.custom_provider_map = [*others, {"provider": name, "custom_handler": handler}]
    custom_llm_setup()
