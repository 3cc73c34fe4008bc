"""Provider failures in plain words (models/provider_errors.py), through LiteLLM's real HTTP path
to loopback servers: the class first, an authentication failure stops the set, a 429 is retried."""
from __future__ import annotations

import json

import litellm
import pytest

from armbench.models.client import ModelClient, ProviderFailure
from armbench.models.provider_errors import FailureKind
from armbench.models.retry import RetryPolicy
from tests.conftest import free_port
from tests.support.loopback import openai_endpoint


async def failure_at(api_base: str) -> ProviderFailure:
    client = ModelClient("openai/loopback", {"api_base": api_base, "api_key": "k"}, RetryPolicy(max_retries=0),
                         request_timeout=10)
    with pytest.raises(ProviderFailure) as failed:
        await client.complete([{"role": "user", "content": "hi"}], None)
    return failed.value


async def test_each_failure_is_named_by_its_class_then_in_the_providers_words():
    refused = await failure_at(f"http://127.0.0.1:{free_port()}/v1")  # nothing listens there
    assert refused.kind is FailureKind.cannot_connect and str(refused).startswith("cannot connect: ")
    for status, said in [(401, "authentication failed (401): "), (403, "authentication failed (403): "),
                         (429, "rate limited (429, retry after 0 s): "), (503, "server error (503): "),
                         (400, "bad request (400): "), (404, "not found (404): "),
                         (409, "asked to try again (409): "), (408, "timed out: ")]:
        with openai_endpoint(status) as endpoint:
            failure = await failure_at(endpoint.url)
        assert str(failure).startswith(said) and f"the provider says {status}" in str(failure), str(failure)
    assert [failure.stops_the_set(first_call) for failure, first_call in [
        (ProviderFailure(litellm.AuthenticationError("no", "openai", "m"), 1), False),
        (ProviderFailure(litellm.BadRequestError("no", "m", "openai"), 1), True),
        (ProviderFailure(litellm.BadRequestError("no", "m", "openai"), 1), False),
        (ProviderFailure(litellm.RateLimitError("no", "openai", "m"), 1), True),
    ]] == [True, True, False, False]


def run(cli, url: str, questions: str, *where: str) -> tuple[int, str, str]:
    return cli("run", "--model", "openai/loopback", "--api-base", url, "--skip-preflight", "--arm", "tooled",
               "--domain", "gpus", "--question", questions, "--concurrency", "1", "--quiet", *where,
               env={"OPENAI_API_KEY": "k"})


def records(out) -> list[dict]:
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_a_401_stops_the_set_after_its_first_run_and_a_429_is_retried(cli, tmp_path):
    out, questions = tmp_path / "refused", "gpus-design-01,gpus-design-02,gpus-design-03"
    with openai_endpoint(401, 200) as endpoint:  # the key is fixed after the first request
        code, _, err = run(cli, endpoint.url, questions, "--out", str(out))
        assert code == 1 and endpoint.statuses == [401]  # not retried, and no second run
        assert err.strip().splitlines()[-1].startswith(
            "failed: stopped at the first run the provider refused, as every run would be: authentication failed "
            "(401): ")
        [refused] = records(out)
        assert refused["error_kind"] == "infra" and refused["retryable"] is True

        code, _, err = run(cli, endpoint.url, questions, "--resume", str(out))  # runs the refused run again
    assert code == 0, err
    assert sorted(record["question_id"] for record in records(out)) == questions.split(",")
    assert json.loads((out / "runs.jsonl.retried").read_text())["run_id"] == refused["run_id"]

    with openai_endpoint(429, 200) as endpoint:
        code, _, err = run(cli, endpoint.url, "gpus-design-01", "--out", str(tmp_path / "retried"))
    assert code == 0, err
    [record] = records(tmp_path / "retried")
    assert endpoint.statuses == [429, 200] and record["retries"] == 1 and record["error_kind"] is None
