"""The preflight: `bench run` with a real model first makes `bench doctor`'s round trip, so an
unreachable provider or mangled tool arguments stop it before a run set is spent on them."""
import pytest

from armbench.doctor import preflight
from armbench.models import get_model
from tests.conftest import free_port


async def test_the_oracle_passes_and_dropped_or_mangled_arguments_are_named():
    assert await preflight(get_model("scripted/oracle")) is None
    dropped = await preflight(get_model("scripted/drop-args"))
    assert (dropped.ok, dropped.name) == (False, "tool call") and "arrived empty" in dropped.detail
    mangled = await preflight(get_model("scripted/malformed-json"))
    assert (mangled.ok, mangled.name) == (False, "tool call") and "not valid JSON" in mangled.detail


@pytest.mark.slow
async def test_an_unreachable_provider_is_named(monkeypatch):
    monkeypatch.setenv("OLLAMA_API_BASE", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    failed = await preflight(get_model("ollama/llama3"), request_timeout=5)
    assert (failed.ok, failed.name) == (False, "provider") and failed.detail.startswith("cannot connect: ") and failed.detail.endswith("(after 3 attempt(s))")
