"""armbench harness: everything that is not an arm, a grader or a replica."""
import os

# LiteLLM fetches its cost map from the network at import unless told not to; there is no network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
