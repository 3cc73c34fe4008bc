"""Retries of transient provider errors, the requests-per-minute limit, and one model call."""
import random

import httpx
import litellm
import pytest

from armbench.models import get_model
from armbench.models.client import ProviderFailure
from armbench.models.provider_errors import is_transient
from armbench.models.ratelimit import RpmLimiter
from armbench.models.retry import RetryPolicy, retry_after
from armbench.players.script_registry import Reply, register_script

WHERE = {"llm_provider": "scripted", "model": "m"}
FAST = RetryPolicy(max_retries=3, base_delay=0.001)
HELLO = [{"role": "user", "content": "hello"}]


@pytest.mark.parametrize(
    "error",
    [
        litellm.RateLimitError(message="429", **WHERE),
        litellm.InternalServerError(message="500", **WHERE),
        litellm.ServiceUnavailableError(message="503", **WHERE),
        litellm.BadGatewayError(message="502", **WHERE),
        litellm.APIConnectionError(message="reset", **WHERE),
        litellm.Timeout(message="slow", **WHERE),
        litellm.APIError(status_code=504, message="gateway timeout", **WHERE),
        litellm.APIError(status_code=408, message="request timeout", **WHERE),
        litellm.APIError(status_code=409, message="conflict", **WHERE),
        litellm.APIError(status_code=425, message="too early", **WHERE),
        ConnectionResetError("Connection reset by peer"),
        TimeoutError("no reply"),
    ],
    ids=type,
)
def test_transient_errors(error):
    assert is_transient(error)


@pytest.mark.parametrize(
    "error",
    [
        litellm.AuthenticationError(message="401", **WHERE),
        litellm.BadRequestError(message="400", **WHERE),
        litellm.NotFoundError(message="404", **WHERE),
        litellm.ContextWindowExceededError(message="too long", **WHERE),
        litellm.PermissionDeniedError(
            message="403", response=httpx.Response(403, request=httpx.Request("POST", "http://x")), **WHERE
        ),
        litellm.APIError(status_code=418, message="a teapot", **WHERE),
        ValueError("a bug"),
    ],
    ids=type,
)
def test_permanent_errors(error):
    assert not is_transient(error)


def test_backoff_doubles_with_jitter_and_is_capped():
    policy = RetryPolicy(base_delay=1.0, max_delay=10.0)
    rng = random.Random(0)
    error = litellm.InternalServerError(message="500", **WHERE)
    for attempt, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (6, 10.0)]:
        delays = [policy.delay(attempt, error, rng) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) > 1  # jittered


def test_retry_after_header_is_honoured_up_to_the_cap():
    response = httpx.Response(429, headers={"retry-after": "7"}, request=httpx.Request("POST", "http://x"))
    error = litellm.RateLimitError(message="429", response=response, **WHERE)
    assert retry_after(error) == 7.0
    assert RetryPolicy(base_delay=0.001, max_delay=60).delay(0, error, random.Random(0)) == 7.0
    assert RetryPolicy(base_delay=0.001, max_delay=5).delay(0, error, random.Random(0)) == 5.0


def flaky(failures: int, error_factory):
    """A script that fails `failures` times, then answers; `calls` counts every attempt."""
    calls = []

    def script(turn):
        calls.append(1)
        if len(calls) <= failures:
            raise error_factory()
        return Reply(text="ANSWER: ok")

    return script, calls


async def test_transient_errors_are_retried_until_the_model_answers(script_registry):
    script, calls = flaky(2, lambda: litellm.RateLimitError(message="429", **WHERE))
    register_script("flaky")(script)
    response, retries = await get_model("scripted/flaky").client(retry=FAST).complete(HELLO, None)
    assert response.choices[0].message.content == "ANSWER: ok"
    assert (retries, len(calls)) == (2, 3)


async def test_retries_stop_at_the_limit(script_registry):
    script, calls = flaky(10, lambda: litellm.InternalServerError(message="500", **WHERE))
    register_script("down")(script)
    with pytest.raises(ProviderFailure) as failure:
        await get_model("scripted/down").client(retry=FAST).complete(HELLO, None)
    assert failure.value.attempts == 4 and len(calls) == 4
    assert isinstance(failure.value.error, litellm.InternalServerError)


async def test_permanent_errors_are_not_retried(script_registry):
    script, calls = flaky(10, lambda: litellm.AuthenticationError(message="bad key", **WHERE))
    register_script("bad-key")(script)
    with pytest.raises(ProviderFailure) as failure:
        await get_model("scripted/bad-key").client(retry=FAST).complete(HELLO, None)
    assert failure.value.attempts == 1 and len(calls) == 1


async def test_a_call_past_the_request_timeout_is_a_retried_timeout(script_registry):
    register_script("mute")(lambda turn: Reply(text="late"))
    client = get_model("scripted/mute+latency=30").client(retry=RetryPolicy(max_retries=1, base_delay=0.001),
                                                          request_timeout=0.01)
    with pytest.raises(ProviderFailure) as failure:
        await client.complete(HELLO, None)
    assert isinstance(failure.value.error, TimeoutError) and failure.value.attempts == 2
    assert "no reply within 0.01 s" in str(failure.value)


class FakeClock:
    """Time that moves only when the limiter sleeps."""

    def __init__(self):
        self.now = 0.0
        self.starts = []

    def __call__(self):
        return self.now

    async def sleep(self, seconds):
        self.now += seconds


async def test_rpm_limiter_lets_at_most_n_calls_start_in_any_minute():
    clock = FakeClock()
    limiter = RpmLimiter(3, clock=clock, sleep=clock.sleep)
    starts = []
    for _ in range(10):
        await limiter.acquire()
        starts.append(clock.now)
    assert starts[:3] == [0.0, 0.0, 0.0]
    for i, start in enumerate(starts):
        assert sum(start - 60 < other <= start for other in starts[: i + 1]) <= 3
    assert starts[-1] == 180.0  # 10 calls at 3 a minute: the 10th starts in the fourth minute


async def test_the_client_waits_for_the_limiter_before_each_attempt(script_registry):
    script, calls = flaky(1, lambda: litellm.RateLimitError(message="429", **WHERE))
    register_script("flaky-once")(script)
    clock = FakeClock()
    limiter = RpmLimiter(1, clock=clock, sleep=clock.sleep)
    client = get_model("scripted/flaky-once").client(retry=FAST, limiter=limiter)
    await client.complete(HELLO, None)
    assert len(calls) == 2 and clock.now == 60.0  # the retry waited for the next minute
