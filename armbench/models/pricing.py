"""Model prices in LiteLLM's cost map: ours for the models it lacks, and the check a cost cap needs.

LiteLLM is imported inside each function: they run only for a model `get_model` has read, so it is
configured by then. One exception: `price_per_million` before LiteLLM is loaded (a plan, which
spends nothing, should not wait seconds for it) reads the cost map file LiteLLM would load, the one
bundled with it (configure_litellm makes it that one), by LiteLLM's own names; nothing else can be
in the map by then, since registering a price loads LiteLLM.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

from armbench.errors import UserError

BUNDLED_COST_MAP = "model_prices_and_context_window_backup.json"


def register_price(model: str, provider: str, input_per_million: float, output_per_million: float) -> None:
    """Price `model` (served by `provider`) in dollars per million tokens; a later price replaces it."""
    import litellm

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


def price_per_million(model: str) -> tuple[float, float] | None:
    """Dollars per million input and output tokens, when LiteLLM can price the model."""
    if "litellm" not in sys.modules:
        info = bundled_model_info(model)
    else:
        import litellm

        try:
            info = litellm.get_model_info(model)
        except Exception:  # LiteLLM's word for "not in the cost map"
            return None
    prices = (info or {}).get("input_cost_per_token"), (info or {}).get("output_cost_per_token")
    return None if None in prices else (prices[0] * 1e6, prices[1] * 1e6)


def bundled_model_info(model: str) -> dict[str, Any] | None:
    """`model`'s entry in LiteLLM's bundled cost map: under its full name, else under the name after
    its provider prefix when the entry is that provider's (`openai/gpt-4o-mini` is `gpt-4o-mini`)."""
    entries = bundled_cost_map()
    if model in entries:
        return entries[model]
    provider, _, name = model.partition("/")
    entry = entries.get(name)
    return entry if entry is not None and entry.get("litellm_provider") == provider else None


@cache
def bundled_cost_map() -> dict[str, Any]:
    spec = importlib.util.find_spec("litellm")  # finds the package without running it
    if spec is None or spec.origin is None:
        return {}
    return json.loads((Path(spec.origin).parent / BUNDLED_COST_MAP).read_text())


def check_priced(model: str) -> None:
    """A cost cap needs prices: refuse a model LiteLLM cannot price before anything runs."""
    if price_per_million(model) is None:
        raise UserError(
            f"LiteLLM has no price for {model!r}, so --max-cost/--max-cost-per-run cannot be "
            "enforced; give its price with --price IN,OUT, drop the cost cap, or use a model LiteLLM prices"
        )
