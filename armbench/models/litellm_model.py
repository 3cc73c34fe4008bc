"""Any LiteLLM model string (`openai/gpt-4o-mini`, `openrouter/...`): the default provider."""
from __future__ import annotations

import litellm

from armbench.errors import UserError
from armbench.models.model import Model


class LiteLLMModel(Model):
    needs_preflight = True  # a real provider may be unreachable, or drop or mangle tool arguments

    def __init__(self, name: str):
        super().__init__(name)
        # A bare name (`gpt-4o-mini`) is OpenAI's, as LiteLLM reads it.
        self.provider = name.split("/", 1)[0] if "/" in name else "openai"

    def check(self) -> None:
        """Refuse a model LiteLLM does not know, or one whose API key is not in the environment."""
        try:
            litellm.get_llm_provider(self.name)
        except Exception:
            raise UserError(
                f"LiteLLM does not know the model {self.name!r}; use a provider string such as "
                "'openai/gpt-4o-mini', or 'scripted/oracle' offline"
            ) from None
        missing = [key for key in litellm.validate_environment(model=self.name)["missing_keys"] if "KEY" in key]
        if missing:
            raise UserError(
                f"model {self.name!r} needs {', '.join(missing)} in the environment; set it, or run "
                "offline with --model scripted/oracle"
            )
