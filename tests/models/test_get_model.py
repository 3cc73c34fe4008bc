"""`get_model`: the one place a model string is read — each prefix to its provider, and every
string that cannot work refused before anything runs, with the fix."""
import gc
import os
import subprocess
import sys

import litellm
import pytest

from armbench.errors import UserError
from armbench.models import PROVIDERS, get_model, installed_providers, provider, provider_of
from armbench.models.litellm_model import LiteLLMModel
from armbench.models.litellm_setup import configure_litellm
from armbench.models.local import LocalModel
from armbench.players.replay import ReplayModel
from armbench.players.scripted import ScriptedModel


@pytest.mark.parametrize(
    "model, provider",
    [
        ("openai/gpt-4o-mini", LiteLLMModel),
        ("gpt-4o-mini", LiteLLMModel),
        ("openrouter/meta-llama/llama-3.1-8b-instruct", LiteLLMModel),
        ("scripted/oracle", ScriptedModel),
        ("scripted/oracle+faults=0.2,seed=1", ScriptedModel),
        ("local/qwen2.5-coder-0.5b", LocalModel),
        ("replay/results/some-run-set", ReplayModel),
    ],
)
def test_each_prefix_resolves_to_its_provider(model, provider):
    resolved = get_model(model)
    assert type(resolved) is provider and resolved.name == model


def test_the_players_come_from_entry_points_and_a_provider_registered_later_is_found():
    assert {"scripted", "replay"} <= set(installed_providers())  # pyproject's armbench.providers
    assert not {"scripted", "replay"} & set(PROVIDERS)  # the model seam registers no player itself
    get_model("scripted/oracle")  # the registry has been read

    @provider("toy")
    def load_toy():
        return LiteLLMModel

    try:
        assert provider_of("toy/any") == "toy" and type(get_model("toy/any")) is LiteLLMModel
    finally:
        del PROVIDERS["toy"]
    assert provider_of("toy/any") == "litellm"


def test_what_each_provider_knows():
    assert get_model("local/qwen2.5-coder-0.5b").default_request_timeout(120.0) == 1800.0
    assert get_model("scripted/oracle").default_request_timeout(120.0) == 120.0
    assert not get_model("replay/results/x").recordable and get_model("scripted/oracle").recordable
    get_model("scripted/oracle").check_priced()  # a script costs $0
    assert get_model("openai/gpt-4o-mini").needs_preflight and get_model("ollama/llama3").needs_preflight
    assert not any(get_model(offline).needs_preflight
                   for offline in ("scripted/oracle", "local/qwen2.5-coder-0.5b", "replay/results/x"))
    get_model("local/qwen2.5-coder-0.5b").check_priced()  # so does a local model


def test_a_price_is_registered_for_the_model_string(script_registry):
    from armbench.models.pricing import price_per_million
    from armbench.players.script_registry import register_script
    from armbench.players.scripts import play_solution

    register_script("priced-by-flag", free=False)(play_solution)
    model = get_model("scripted/priced-by-flag")
    with pytest.raises(UserError, match="no price for 'scripted/priced-by-flag'"):
        model.check_priced()
    model.set_price(1.5, 6.0)
    model.check_priced()
    assert price_per_million("scripted/priced-by-flag") == pytest.approx((1.5, 6.0))


def test_an_unknown_script_is_refused_naming_the_scripts():
    with pytest.raises(UserError, match="no script 'nosuch'; scripts: .*oracle"):
        get_model("scripted/nosuch").check()


def test_an_unknown_litellm_model_is_refused():
    with pytest.raises(UserError, match="LiteLLM does not know the model 'nosuchprovider/x'"):
        get_model("nosuchprovider/x").check()


def test_a_missing_api_key_is_named(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UserError, match="needs OPENAI_API_KEY in the environment"):
        get_model("openai/gpt-4o-mini").check()
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    get_model("openai/gpt-4o-mini").check()


def test_an_unknown_local_model_is_refused():
    with pytest.raises(UserError, match="no local model 'nosuch'; local models: qwen2.5-coder-0.5b"):
        get_model("local/nosuch").check()


def test_a_folder_without_a_recording_is_refused(tmp_path):
    with pytest.raises(UserError, match="holds no recording"):
        get_model(f"replay/{tmp_path}").check()
    (tmp_path / "recording").mkdir()
    get_model(f"replay/{tmp_path}").check()


def test_a_replay_has_no_live_model_to_call(tmp_path):
    with pytest.raises(UserError, match="plays a recording back"):
        get_model(f"replay/{tmp_path}").client()


def test_importing_the_models_package_loads_no_litellm():
    code = "import armbench.models, sys; assert 'litellm' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_get_model_configures_litellm_once():
    get_model("scripted/oracle")
    get_model("local/qwen2.5-coder-0.5b")
    configure_litellm()
    get_model("scripted/oracle")
    providers = [entry["provider"] for entry in litellm.custom_provider_map]
    assert sorted(providers) == ["local", "scripted"]
    assert litellm.drop_params and os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"  # the bundled cost map


def test_configuring_litellm_leaves_the_garbage_collector_as_it_found_it():
    """LiteLLM is imported with collections paused (they would only walk what the import made).
    Here it is imported already, so the import is free, and the pause and its end run as ever in
    the function's body (`__wrapped__`: the function itself runs once per process)."""
    collecting = gc.isenabled()
    try:
        for before in (True, False):
            gc.enable() if before else gc.disable()
            configure_litellm.__wrapped__()
            assert gc.isenabled() is before
    finally:
        gc.enable() if collecting else gc.disable()
