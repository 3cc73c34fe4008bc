"""Check a model string before any run starts, so a typo or a missing key costs nothing."""
from __future__ import annotations

import litellm

from armbench.errors import UserError
from armbench.models.scripted import resolve
from armbench.models.replay import Recording, is_replay


def check_model(model: str) -> None:
    if is_replay(model):
        Recording.from_model(model)  # refuses a folder that holds no recording
        return
    try:
        _, provider, _, _ = litellm.get_llm_provider(model)
    except Exception:
        raise UserError(
            f"LiteLLM does not know the model {model!r}; use a provider string such as "
            "'openai/gpt-4o-mini', or 'scripted/oracle' offline"
        ) from None
    if provider == "scripted":
        try:
            resolve(model.split("/", 1)[1])
        except ValueError as error:
            raise UserError(str(error)) from None
        return
    missing = [key for key in litellm.validate_environment(model=model)["missing_keys"] if "KEY" in key]
    if missing:
        raise UserError(
            f"model {model!r} needs {', '.join(missing)} in the environment; set it, or run "
            "offline with --model scripted/oracle"
        )


def check_priced(model: str) -> None:
    """A cost cap needs prices: refuse a model LiteLLM cannot price before anything runs."""
    try:
        info = litellm.get_model_info(model)
    except Exception:
        info = {}
    if info.get("input_cost_per_token") is None or info.get("output_cost_per_token") is None:
        raise UserError(
            f"LiteLLM has no price for {model!r}, so --max-cost/--max-cost-per-run cannot be "
            "enforced; give its price with --price IN,OUT, drop the cost cap, or use a model LiteLLM prices"
        )
