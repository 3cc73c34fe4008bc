"""Generation settings: flags -> completion kwargs -> the provider, the manifest and resume; .env files."""
from __future__ import annotations

import json
import os

import litellm
import pytest
from litellm.utils import custom_llm_setup

from armbench.errors import UserError
from armbench.models.client import ModelClient
from armbench.models.generation import generation_kwargs, load_env_file
from armbench.models.litellm_setup import add_custom_provider, configure_litellm


def test_named_flags_and_model_args_become_completion_kwargs():
    settings = generation_kwargs(temperature=0.2, max_tokens=300, seed=7, reasoning_effort="low",
                                 api_base="http://127.0.0.1:8000/v1",
                                 model_args=['top_p=0.9', 'stop=["END"]', 'user=alice', 'logprobs=true'])
    assert settings == {"temperature": 0.2, "max_tokens": 300, "seed": 7, "reasoning_effort": "low",
                        "api_base": "http://127.0.0.1:8000/v1", "top_p": 0.9, "stop": ["END"], "user": "alice",
                        "logprobs": True}
    assert generation_kwargs() == {}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"temperature": 3.0}, "--temperature must be between 0 and 2"),
        ({"temperature": float("nan")}, "--temperature must be between 0 and 2"),
        ({"reasoning_effort": "extreme"}, "--reasoning-effort must be one of"),
        ({"api_base": "localhost:8000"}, "--api-base must be an http(s) URL"),
        ({"model_args": ["top_p"]}, "-M takes key=value"),
        ({"model_args": ["1x=2"]}, "-M takes key=value"),
        ({"model_args": ["x=NaN"]}, "not finite"),
        ({"model_args": ["x=[1, NaN]"]}, "not finite"),
        ({"model_args": ["model=gpt-4o"]}, "armbench sets model itself"),
        ({"model_args": ["tools=[]"]}, "armbench sets tools itself"),
        ({"model_args": ["timeout=5"]}, "armbench sets timeout itself (--request-timeout)"),
        ({"temperature": 0.1, "model_args": ["temperature=0.2"]}, "-M temperature sets what --temperature already sets"),
        ({"model_args": ["top_p=0.1", "top_p=0.2"]}, "-M top_p sets what -M top_p already sets"),
    ],
)
def test_bad_settings_are_one_line_errors(kwargs, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        generation_kwargs(**kwargs)


class Capturing(litellm.CustomLLM):
    """A provider that answers once and keeps what LiteLLM handed it."""

    def __init__(self):
        super().__init__()
        self.seen: dict = {}

    async def acompletion(self, model, messages, optional_params, **kwargs):
        self.seen = {**optional_params, "api_base": kwargs.get("api_base")}
        return litellm.ModelResponse(choices=[{"message": {"role": "assistant", "content": "ANSWER: x"}}])


@pytest.fixture
def capturing():
    """A provider registered for one test; LiteLLM's provider map is as it was afterwards."""
    configure_litellm()
    before = list(litellm.custom_provider_map)
    provider = Capturing()
    add_custom_provider("capturing", provider)
    yield provider
    litellm.custom_provider_map = before
    custom_llm_setup()


async def test_settings_reach_the_provider_through_litellm(capturing):
    provider = capturing
    settings = generation_kwargs(temperature=0.3, max_tokens=50, seed=11, api_base="http://127.0.0.1:9/v1",
                                 model_args=["top_k=4"])
    await ModelClient("capturing/any", settings).complete([{"role": "user", "content": "q"}], None)
    assert {key: provider.seen.get(key) for key in ("temperature", "max_tokens", "seed", "top_k", "api_base")} == {
        "temperature": 0.3, "max_tokens": 50, "seed": 11, "top_k": 4, "api_base": "http://127.0.0.1:9/v1"}


@pytest.mark.slow
def test_the_manifest_records_settings_and_a_resume_with_others_is_refused(cli, tmp_path):
    out = tmp_path / "set"
    plan = ["--model", "scripted/oracle", "--arm", "tooled", "--domain", "gpus", "--question", "gpus-design-01"]
    assert cli("run", *plan, "--temperature", "0.3", "-M", "top_p=0.9", "--out", str(out), "--quiet")[0] == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["completion_kwargs"] == {"temperature": 0.3, "top_p": 0.9}
    code, _, err = cli("run", *plan, "--temperature", "0.5", "-M", "top_p=0.9", "--resume", str(out))
    assert code == 2 and "generation settings" in err and "'temperature': 0.5" in err
    code, _, err = cli("run", *plan, "-M", "extra_body={}", "--provider-order", "A", "--out", str(tmp_path / "y"))
    assert code == 2


def test_an_env_file_sets_only_what_is_not_set(tmp_path, monkeypatch):
    env = tmp_path / "creds.env"
    env.write_text('# provider keys\nexport ARMBENCH_TEST_A="quoted value"\nARMBENCH_TEST_B=plain\n', encoding="utf-8")
    monkeypatch.setenv("ARMBENCH_TEST_B", "already")
    monkeypatch.delenv("ARMBENCH_TEST_A", raising=False)
    assert load_env_file(env) == ["ARMBENCH_TEST_A"]
    assert os.environ["ARMBENCH_TEST_A"] == "quoted value" and os.environ["ARMBENCH_TEST_B"] == "already"
    monkeypatch.delenv("ARMBENCH_TEST_A")
    monkeypatch.chdir(tmp_path)
    assert load_env_file(None) == []  # no ./.env here
    (tmp_path / ".env").write_text("ARMBENCH_TEST_A=from-dot-env\n", encoding="utf-8")
    assert load_env_file(None) == ["ARMBENCH_TEST_A"] and os.environ["ARMBENCH_TEST_A"] == "from-dot-env"
    with pytest.raises(UserError, match="--env-file"):
        load_env_file(tmp_path / "missing.env")
