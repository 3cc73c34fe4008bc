"""The run vocabulary: every value has a meaning; configs, records and manifests keep their JSON."""
import json

import pytest

from armbench.paths import ROOT
from armbench.types import ErrorKind, Manifest, MissReason, Outcome, RunConfig, RunRecord, StopReason, Term
from armbench.web_profile import load_profile
from tests.support.run_sets import make_manifest, make_record

OLDER_RUN_SET = ROOT / "tests/fixtures/run_set_2026_11_30"  # written before later settings existed


@pytest.mark.parametrize("term", [*StopReason, *ErrorKind, *Outcome, *MissReason], ids=str)
def test_every_value_has_a_meaning(term: Term):
    assert term.meaning.strip() and term.meaning != term.value


def test_a_value_without_a_meaning_cannot_be_declared():
    with pytest.raises(TypeError):
        class Half(Term):
            bare = "bare"


def test_limits_are_the_stops_graded_as_no_answer_limit():
    assert {s for s in StopReason if s.is_limit} == {
        StopReason.timeout, StopReason.cost_cap, StopReason.token_cap, StopReason.context_window}


def test_the_manifest_config_is_the_run_config_without_model_or_credentials():
    config = RunConfig(model="m", arms=["tooled"], questions=("q1",), price_per_million=(1.0, 2.0),
                       completion_kwargs={"api_key": "sk-1", "API_KEY_2": "sk-2", "api_base": "u"})
    recorded = config.manifest_config()
    # the kind web is left out, so a run set without --web records what it always did
    assert list(recorded) == [name for name in RunConfig.model_fields if name not in ("model", "web")]
    assert recorded["completion_kwargs"] == {"api_base": "u"}
    written = json.loads(json.dumps(make_manifest(config=recorded).model_dump(mode="json")))["config"]
    assert RunConfig(model="m", **written) == config.model_copy(update={"completion_kwargs": {"api_base": "u"}})
    throttled = config.model_copy(update={"web": load_profile("real")})
    written = json.loads(json.dumps(throttled.manifest_config()))
    assert list(written)[-1] == "web" and RunConfig(model="m", **written).web == load_profile("real")


def test_an_older_manifest_reads_and_its_config_gains_only_newer_settings_at_their_defaults():
    """Settings added since a run set was made read as their defaults."""
    stored = json.loads((OLDER_RUN_SET / "manifest.json").read_text())
    manifest = Manifest.model_validate(stored)
    config = RunConfig(model=manifest.model, **manifest.config)
    today = config.manifest_config()
    assert {key: today[key] for key in stored["config"]} == stored["config"]
    defaults = RunConfig(model="m", arms=["tooled"]).manifest_config()
    assert {key: today[key] for key in today.keys() - stored["config"].keys()} == {
        key: defaults[key] for key in today.keys() - stored["config"].keys()}
    assert {key: value for key, value in manifest.model_dump(mode="json").items() if key != "config"} == {
        key: value for key, value in stored.items() if key != "config"}


def test_a_record_written_before_the_move_loads_and_writes_back_byte_for_byte():
    lines = (OLDER_RUN_SET / "runs.jsonl").read_text().splitlines()
    for line in lines:
        record = RunRecord.model_validate_json(line)
        assert isinstance(record.stop_reason, StopReason) and isinstance(record.outcome, Outcome)
        assert record.model_dump_json() == line


def test_replay_of_and_resumes_are_written_only_when_there_is_one():
    written = make_manifest().model_dump(mode="json")
    assert "replay_of" not in written and "resumes" not in written and "sandbox_isolation" not in written


def test_injected_faults_are_written_only_when_a_run_had_some():
    assert "injected_faults" not in make_record().model_dump_json()
    faulty = make_record(injected_faults=["timeout", "dropped_args"])
    assert RunRecord.model_validate_json(faulty.model_dump_json()) == faulty


def test_only_infra_errors_and_injected_faults_are_excluded_from_accuracy():
    assert {kind for kind in ErrorKind if kind.is_excluded} == {ErrorKind.infra, ErrorKind.injected}
