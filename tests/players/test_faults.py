"""A faulty provider (scripted, with injected faults) never makes a run graded wrong for an outage."""
import json

import pytest

from armbench.analysis.report import report_tables
from armbench.analysis.summary import summarize
from armbench.doctor import run_probe
from armbench.engine.store import RunSetStore
from armbench.errors import UserError
from armbench.models import get_model
from armbench.models.retry import RetryPolicy
from armbench.players.faults import PROVIDER_FAULTS, TOOL_CALL_FAULTS, parse_options
from armbench.questions import load_sets, solution
from armbench.types import RunConfig
from tests.support.models import run_set

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


def sort_runs(store, records) -> dict[str, list]:
    """Each run as correct, an infra error or excluded for an injected fault, checked to be what it
    says; a run graded wrong fails the test (the oracle, unharmed, is always right)."""
    runs = {"correct": [], "infra": [], "injected": []}
    for record in records:
        assert record.correct is not False, (record.run_id, record.answer, record.injected_faults)
        provider_faults = sum(fault in PROVIDER_FAULTS for fault in record.injected_faults)
        if record.correct:
            runs["correct"].append(record)
            assert not set(record.injected_faults) & set(TOOL_CALL_FAULTS)
            assert provider_faults == record.retries  # every retried fault is listed
        elif record.error_kind == "infra":
            runs["infra"].append(record)
            assert record.outcome is None and record.stop_reason == "infra_error"
            assert provider_faults == record.retries + 1  # the last one was not retried
        else:
            runs["injected"].append(record)
            assert record.error_kind == "injected" and record.outcome is None
            assert set(record.injected_faults) & set(TOOL_CALL_FAULTS) and record.error.startswith("an injected fault")
            assert injected_tool_call_fault(store, record), record.run_id
    return runs


def test_every_stored_solution_passes_arguments():
    calls = [c for qs in load_sets() for q in qs.questions for arm in q.solutions for c in solution(q, arm).calls]
    assert calls and all(call.args for call in calls)


@pytest.mark.slow
@pytest.mark.parametrize("concurrency", [1, 4])
async def test_a_fifth_of_calls_failing_never_misgrades_a_run(tmp_path, concurrency):
    """20% of calls fail (429, 500, timeout, reset, malformed JSON, dropped args) with one retry
    allowed, so some runs do end as infra errors and some have their tool calls corrupted: each run
    is correct, an infra error, or excluded for the injected tool-call fault its transcript shows."""
    store = RunSetStore(tmp_path / "faulty")
    config = RunConfig(
        model=f"scripted/oracle+faults=0.2,seed={4 + concurrency}", arms=["tooled"], runs=3,
        concurrency=concurrency, max_retries=FAST.max_retries, retry_base_delay=FAST.base_delay,
    )
    result = await run_set(load_sets(["gpus"], ["design", "heldout"]), config, store, show_progress=False)
    records = store.records()
    assert len(records) == len(result.records) == 30
    runs = sort_runs(store, records)
    assert sum(r.retries for r in records) > 0  # transient faults were retried away
    if concurrency == 1:  # one worker and a fresh seed: the same faults every time
        assert len(runs["infra"]) >= 1 and len(runs["injected"]) >= 1 and len(runs["correct"]) >= 20
    rows = summarize(records)
    assert [sum(getattr(row, f) for row in rows) for f in ("graded", "infra_errors", "injected_faults")] == [
        len(runs["correct"]), len(runs["infra"]), len(runs["injected"])]


@pytest.mark.slow
async def test_half_of_calls_failing_misgrades_no_run_in_any_domain_or_arm(tmp_path):
    """The fault-injection suite's promise: whatever a faulty provider does, no run is graded wrong.
    Runs that only had retried faults answered whole and are graded as usual. The first question of
    every set (`make oracle` asks them all, without faults)."""
    store = RunSetStore(tmp_path / "faulty")
    sets = load_sets()
    asked = tuple(question_set.questions[0].id for question_set in sets)
    config = RunConfig(model="scripted/oracle+faults=0.5,seed=1", arms=["tooled", "browsing"], concurrency=4,
                       questions=asked, max_retries=FAST.max_retries, retry_base_delay=FAST.base_delay)
    await run_set(sets, config, store, show_progress=False)
    records = store.records()
    assert len(records) == 2 * len(asked)
    assert {(r.domain, r.arm) for r in records} == {(qs.domain, arm) for qs in sets for arm in config.arms}
    runs = sort_runs(store, records)
    assert all(runs.values())  # each kind happened
    assert any(r.retries for r in runs["correct"])  # retried faults alone: graded, and right
    rows = summarize(records)
    assert sum(row.injected_faults for row in rows) == len(runs["injected"])
    notices = report_tables(records)[0].notices  # the report says how many each group excluded
    for row in rows:
        counted = f"{'/'.join(row.key)}: {row.injected_faults} run(s) excluded"
        assert any(n.startswith(counted) for n in notices) == bool(row.injected_faults)


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
    assert failed == [failed[0]] and failed[0].startswith("FAIL provider: rate limited (429") and "(after 2 attempt(s))" in failed[0]
