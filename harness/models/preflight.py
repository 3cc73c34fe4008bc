"""Check a model string before any run starts, so a typo or a missing key costs nothing."""
from __future__ import annotations

import litellm

from harness.errors import UserError
from harness.models.scripted import SCRIPTS


def check_model(model: str) -> None:
    try:
        _, provider, _, _ = litellm.get_llm_provider(model)
    except Exception:
        raise UserError(
            f"LiteLLM does not know the model {model!r}; use a provider string such as "
            "'openai/gpt-4o-mini', or 'scripted/oracle' offline"
        ) from None
    if provider == "scripted":
        name = model.split("/", 1)[1]
        if name not in SCRIPTS:
            raise UserError(f"no script {name!r}; scripts: {', '.join(sorted(SCRIPTS))}")
        return
    missing = [key for key in litellm.validate_environment(model=model)["missing_keys"] if "KEY" in key]
    if missing:
        raise UserError(
            f"model {model!r} needs {', '.join(missing)} in the environment; set it, or run "
            "offline with --model scripted/oracle"
        )
