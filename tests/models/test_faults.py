"""A faulty provider (scripted, with injected faults) never makes a run graded wrong for an outage."""
import json

import pytest

from armbench.doctor import run_probe
from armbench.errors import UserError
from armbench.models import get_model
from armbench.models.faults import parse_options
from armbench.models.retry import RetryPolicy
from armbench.questions import load_sets
from armbench.run.runner import run_set
from armbench.run.store import RunSetStore
from armbench.types import RunConfig

FAST = RetryPolicy(max_retries=1, base_delay=0.0001)


def injected_tool_call_fault(store, record) -> bool:
    """True when the transcript shows a tool call the oracle never sends: arguments that are
    not JSON, or none at all (every stored solution passes arguments)."""
    for line in (store.directory / record.transcript_path).read_text().splitlines():
        for call in json.loads(line).get("tool_calls") or []:
            try:
                if json.loads(call["function"]["arguments"]) == {}:
                    return True
            except ValueError:
                return True
    return False


def test_every_stored_solution_passes_arguments():
    calls = [c for qs in load_sets() for q in qs.questions for s in q.solutions.values() for c in s.calls]
    assert calls and all(call.args for call in calls)


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_a_fifth_of_calls_failing_never_misgrades_a_run(tmp_path, concurrency):
    """20% of calls fail (429, 500, timeout, reset, malformed JSON, dropped args) with one retry
    allowed, so some runs do end as infra errors: each run is correct, an infra error, or a
    graded miss whose transcript shows the injected tool-call fault that caused it."""
    store = RunSetStore(tmp_path / "faulty")
    config = RunConfig(
        model=f"scripted/oracle+faults=0.2,seed={4 + concurrency}", arms=["tooled"], runs=3,
        concurrency=concurrency, max_retries=FAST.max_retries, retry_base_delay=FAST.base_delay,
    )
    result = await run_set(load_sets(["gpus"]), config, store, show_progress=False)
    records = store.records()
    assert len(records) == len(result.records) == 30

    correct = [r for r in records if r.correct]
    infra = [r for r in records if r.error_kind == "infra"]
    misses = [r for r in records if r.correct is False]
    assert len(correct) + len(infra) + len(misses) == 30
    for record in infra:
        assert record.correct is None and record.outcome is None and record.stop_reason == "infra_error"
    for record in misses:
        assert injected_tool_call_fault(store, record), (record.run_id, record.answer)
    assert sum(r.retries for r in records) > 0  # transient faults were retried away
    if concurrency == 1:  # one worker and a fresh seed: the same faults every time
        assert len(infra) >= 1 and len(misses) >= 1 and len(correct) >= 20


@pytest.mark.parametrize(
    "options, message",
    [("faults=2", "faults=2"), ("latency=-1", "latency=-1"), ("seed=x", "seed=x"), ("jitter=1", "jitter=1")],
)
def test_bad_fault_options_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        parse_options(options)
    with pytest.raises(UserError, match=message):
        get_model(f"scripted/oracle+{options}").check()


def test_fault_options_parse():
    behaviour = parse_options("faults=0.25,seed=7,latency=0.5")
    assert (behaviour.fault_rate, behaviour.seed, behaviour.latency) == (0.25, 7, 0.5)


async def lines(model: str) -> list[str]:
    return [check.line() for check in await run_probe(get_model(model).client(retry=FAST))]


async def test_doctor_passes_the_oracle():
    checks = await lines("scripted/oracle")
    assert [line.split()[:2] for line in checks] == [["ok", "provider:"], ["ok", "tool"], ["ok", "tool"]]


async def test_doctor_names_dropped_arguments():
    checks = await lines("scripted/drop-args")
    assert checks[-1].startswith("FAIL tool call:") and "arrived empty" in checks[-1]
    assert "dropped" in checks[-1]


async def test_doctor_names_malformed_arguments_and_provider_failures():
    assert "not valid JSON" in (await lines("scripted/malformed-json"))[-1]
    failed = await lines("scripted/rate-limit")
    assert failed == [failed[0]] and failed[0].startswith("FAIL provider: no reply after 2 attempt(s)")
