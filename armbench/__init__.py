"""armbench: does a typed query tool help an LLM agent, compared with browsing the same data?"""
import os

# LiteLLM fetches its cost map from the network at import unless told not to; there is no network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
