"""Offline LiteLLM providers. Importing this package registers them with LiteLLM."""
from armbench.models.litellm_setup import configure_litellm

configure_litellm()
