"""Model prices in LiteLLM's cost map: ours for the models it lacks, and the check a cost cap needs.

LiteLLM is imported inside each function: they run only for a model `get_model` has read, so it is
configured by then.
"""
from __future__ import annotations

from armbench.errors import UserError


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
    import litellm

    try:
        info = litellm.get_model_info(model)
    except Exception:  # LiteLLM's word for "not in the cost map"
        return None
    prices = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    return None if None in prices else (prices[0] * 1e6, prices[1] * 1e6)


def check_priced(model: str) -> None:
    """A cost cap needs prices: refuse a model LiteLLM cannot price before anything runs."""
    if price_per_million(model) is None:
        raise UserError(
            f"LiteLLM has no price for {model!r}, so --max-cost/--max-cost-per-run cannot be "
            "enforced; give its price with --price IN,OUT, drop the cost cap, or use a model LiteLLM prices"
        )
