"""A live run of the real local model: one question in each arm, recorded, then replayed.

Marked `local`: `make test` leaves these out (no model there); `make test-local` builds the model
(`make local-model`) and runs them, and so does the nightly workflow. Without the model they fail
with the fix, they do not skip.
"""
import pytest

from harness.models.local import check_installed, local_model

pytestmark = pytest.mark.local

MODEL = "local/qwen2.5-coder-0.5b"
QUESTION = "gpus-heldout-01"


def test_one_question_in_each_arm_runs_live_records_and_replays(cli, tmp_path):
    check_installed(local_model(MODEL.split("/", 1)[1]))  # a missing model fails here, with the fix
    live, replayed = tmp_path / "live", tmp_path / "replay"
    plan = ["--arm", "all", "--set", "heldout", "--domain", "gpus", "--question", QUESTION, "--quiet"]

    code, _, err = cli("run", "--model", MODEL, *plan, "--record", "--out", str(live))
    assert code == 0, err
    from harness.store import open_run_set

    records = open_run_set(live).records()
    assert sorted(r.arm for r in records) == ["browsing", "tooled"]
    for record in records:
        assert record.error_kind != "infra", record.error
        assert record.correct is not None and record.prompt_tokens > 0 and record.completion_tokens > 0
        assert record.cost_usd == 0.0  # a local model is priced at $0, and marked local
        assert record.call_providers and set(record.call_providers) == {"local"}

    code, _, err = cli("run", "--model", f"replay/{live}", *plan, "--out", str(replayed))
    assert code == 0, err
    code, out, _ = cli("regress", "--baseline", str(live), str(replayed))
    assert code == 0 and "OK: no regression" in out
