"""Question files: loading, clear errors, references re-derived from data, the lock."""
import re
import shutil
from pathlib import Path

import pytest
import yaml

from armbench.domains import DOMAINS, find_domain
from armbench.domains.crashes.tools import CrashQuery
from armbench.engine.store import RunSetStore
from armbench.errors import UserError
from armbench.paths import QUESTIONS_DIR, QUESTIONS_DIR_ENV
from armbench.questions import (
    derived_solution,
    freeze,
    implied_scope,
    load_set_file,
    load_sets,
    read_lock,
    set_names,
    solution,
    tool_drift,
    unlocked_sets,
    verify,
)
from armbench.types import DERIVED, AnswerExtraction, Derivation, Derived
from tests.support.run_sets import make_manifest, make_record


@pytest.fixture
def bank(tmp_path):
    """A scratch copy of the question bank, safe to edit."""
    target = tmp_path / "questions"
    shutil.copytree(QUESTIONS_DIR, target)
    return target


def edit_set(path: Path, edit) -> None:
    raw = yaml.safe_load(path.read_text())
    edit(raw)
    path.write_text(yaml.safe_dump(raw, sort_keys=False))


def test_every_domain_has_a_design_and_two_held_out_sets_and_every_set_a_domain():
    assert set_names() == ["design", "heldout", "heldout-2"]
    assert {qs.key for qs in load_sets()} == {f"{name}/{set_name}" for name in DOMAINS for set_name in set_names()}


def test_the_bank_holds_ten_questions_a_domain_at_least_and_every_question_its_shapes():
    question_sets = load_sets()
    per_domain = {name: sum(len(qs.questions) for qs in question_sets if qs.domain == name) for name in DOMAINS}
    assert min(per_domain.values()) >= 10 and sum(per_domain.values()) >= 120, per_domain
    assert [q.id for qs in question_sets for q in qs.questions if not q.shapes] == []


def test_the_committed_sets_verify_and_match_their_lock():
    question_sets = load_sets()
    assert verify(question_sets) == []
    assert unlocked_sets(question_sets) == []


def test_the_lock_records_each_sets_tool_and_data_and_no_held_out_set_outlived_its_tool():
    """A failure here means a typed tool changed after its held-out sets were frozen: the change
    tunes the tool on questions that were to test it. Undo it, or write a new held-out set."""
    question_sets = load_sets()
    lock = read_lock()
    for question_set in question_sets:
        domain = find_domain(question_set.domain)
        assert lock[question_set.key]["data"] == domain.tables.hash(), question_set.key
        if question_set.set == "design":
            assert lock[question_set.key]["tool_manifest"] == domain.tool_manifest_hash(), question_set.key
    assert tool_drift(question_sets) == {}


def test_a_tool_description_edited_after_the_freeze_flags_its_domains_held_out_set(bank, monkeypatch, cli):
    lock = bank / "questions.lock"
    monkeypatch.setattr(CrashQuery, "description", CrashQuery.description + " Tip: sort by fatalities.")
    sets = load_sets(root=bank)
    drifted = tool_drift(sets, lock)
    assert list(drifted) == ["crashes/heldout", "crashes/heldout-2"]
    assert "crashes tool changed" in drifted["crashes/heldout"]
    freeze(sets, lock)  # a freeze follows the tool for the design set and never for a held-out one
    assert tool_drift(sets, lock) == drifted
    assert read_lock(lock)["crashes/design"]["tool_manifest"] == find_domain("crashes").tool_manifest_hash()
    monkeypatch.setenv(QUESTIONS_DIR_ENV, str(bank))
    code, out, err = cli("questions", "verify")
    assert code == 0 and "FLAGGED crashes/heldout: the crashes tool changed" in " ".join(err.split()), err
    code, out, _ = cli("questions", "list")
    flagged = [line.split()[0] for line in out.splitlines() if "tool changed since frozen" in line]
    assert flagged == ["crashes/heldout", "crashes/heldout-2"]


def test_a_run_set_over_a_flagged_held_out_set_says_so_in_every_report(tmp_path, cli):
    store = RunSetStore(tmp_path / "run")
    why = "the crashes tool changed since this held-out set was frozen (2026-12-01): it no longer tests ..."
    store.create(make_manifest(heldout_tool_changed={"crashes/heldout": why}))
    store.append(make_record())
    code, out, err = cli("report", str(store.directory))
    assert code == 0, err
    assert f"held-out set crashes/heldout: {why}" in " ".join(out.split())
    for page in ("report.md", "report.html"):
        assert "held-out set crashes/heldout: the crashes tool changed" in (store.directory / page).read_text()


def test_a_derived_browsing_solution_is_one_standalone_python_call_running_the_derivation():
    question = next(q for qs in load_sets(["crashes"], ["heldout"]) for q in qs.questions)
    assert question.solutions["browsing"] == DERIVED
    derived = solution(question, "browsing")
    [call] = derived.calls
    code = call.args["code"]
    assert call.tool == "python" and derived.answer.source == "stdout"
    assert not re.search(r"^\s*(from|import) armbench", code, re.M)  # the sandbox has no armbench
    assert f"SQL = {question.derivation.sql!r}" in code and "BASE = '{replica:crashes}'" in code


def test_a_derived_solution_needs_a_reader_that_names_its_table():
    question = next(q for qs in load_sets(["worldbank"], ["design"]) for q in qs.questions)
    with pytest.raises(UserError, match="worldbank site reader to name the table its rows are"):
        derived_solution(question)


def test_a_scoped_derived_solution_hands_its_scope_to_the_reader_and_names_columns_as_the_table_does():
    question = next(q for qs in load_sets(["gpus"], ["heldout-2"]) for q in qs.questions if q.id == "gpus-heldout-2-01")
    assert question.solutions["browsing"] == Derived(derived={"manufacturer": "Intel"})
    code = solution(question, "browsing").calls[0].args["code"]
    assert "SCOPE = {'manufacturer': 'Intel'}" in code
    # the SQL names the table's column, under which sqlite3 holds the tool's field
    assert "'fp64_gflop_s': 'double_float_performance_gflop_s'" in code


@pytest.mark.parametrize(("sql", "scope"), [
    ("SELECT name FROM gpus WHERE manufacturer = 'Intel' AND fp = (SELECT max(fp) FROM gpus WHERE manufacturer = 'Intel')",
     {"manufacturer": "Intel"}),
    ("SELECT count(*) FROM gpus WHERE memory_bus_bits = 256 AND memory_type IS NOT NULL", {"memory_bus_bits": 256}),
    ("WITH e AS (SELECT * FROM gpus WHERE generation = 'GeForce 40') SELECT name FROM e", {"generation": "GeForce 40"}),
    # the equality does not hold of every row read: no scope
    ("SELECT name FROM gpus WHERE manufacturer = 'Intel' AND fp = (SELECT max(fp) FROM gpus)", {}),
    ("SELECT name FROM gpus WHERE manufacturer = 'Intel' OR memory_type = 'HBM2'", {}),
    ("SELECT name FROM gpus WHERE NOT manufacturer = 'Intel'", {}),
    ("SELECT sum(CASE WHEN manufacturer = 'Intel' THEN 1 ELSE 0 END) FROM gpus", {}),
    ("SELECT a.name FROM gpus a JOIN gpus b ON a.name = b.name WHERE a.manufacturer = 'Intel'", {}),
    ("SELECT a.name FROM gpus a, gpus b WHERE a.manufacturer = 'Intel' AND b.manufacturer = 'Intel'", {}),
    # a literal of another kind than the field's says nothing the site's values can be compared with
    ("SELECT name FROM gpus WHERE memory_bus_bits = '256' AND manufacturer = 'Oregon OR'", {"manufacturer": "Oregon OR"}),
])
def test_the_implied_scope_is_what_every_query_over_the_table_requires(sql, scope):
    question = next(q for qs in load_sets(["gpus"], ["heldout-2"]) for q in qs.questions)
    assert implied_scope(question.model_copy(update={"derivation": Derivation(sql=sql)})) == scope


def test_a_domain_whose_reader_names_no_table_implies_no_scope():
    question = next(q for qs in load_sets(["worldbank"], ["design"]) for q in qs.questions)
    assert implied_scope(question) == {}


def test_a_scope_its_sql_does_not_require_fails_verify(bank):
    path = bank / "gpus" / "heldout-2.yaml"
    edit_set(path, lambda raw: raw["questions"][0]["solutions"].update(
        browsing={"derived": {"manufacturer": "Intel", "generation": "Xe-HPC"}}))
    assert verify([load_set_file(path)]) == [
        "gpus-heldout-2-01: the derived solution reads only rows where generation = 'Xe-HPC', which its SQL "
        "does not require of every row it reads"]


def test_a_scope_naming_no_field_of_the_tool_is_refused():
    question = next(q for qs in load_sets(["gpus"], ["heldout-2"]) for q in qs.questions)
    with pytest.raises(UserError, match="scope names maker, not fields of gpu_query"):
        derived_solution(question, {"maker": "Intel"})


def test_a_changed_reference_fails_verify_naming_the_question(bank):
    path = bank / "gpus" / "design.yaml"
    edit_set(path, lambda raw: raw["questions"][0].update(answer=["384"]))
    problems = verify([load_set_file(path)])
    assert len(problems) == 1
    assert problems[0].startswith("gpus-design-01:") and "384" in problems[0]


def test_a_broken_derivation_is_reported_not_raised(bank):
    path = bank / "gpus" / "heldout.yaml"
    edit_set(path, lambda raw: raw["questions"][1]["derivation"].update(sql="SELECT nope FROM gpus"))
    problems = verify([load_set_file(path)])
    assert problems and "derivation failed" in problems[0]


def test_an_unknown_field_names_the_question_and_the_field(bank):
    path = bank / "gpus" / "design.yaml"
    edit_set(path, lambda raw: raw["questions"][2].update(difficulty="hard"))
    with pytest.raises(UserError, match=r"gpus-design-03: difficulty: unknown field"):
        load_set_file(path)


def test_malformed_yaml_is_a_user_error(bank):
    path = bank / "gpus" / "design.yaml"
    path.write_text("questions: [\n  - id: broken\n")
    with pytest.raises(UserError, match="not valid YAML"):
        load_set_file(path)


def test_a_set_in_the_wrong_folder_is_refused(bank):
    path = bank / "gpus" / "design.yaml"
    edit_set(path, lambda raw: raw.update(set="heldout"))
    with pytest.raises(UserError, match="lives at gpus/design"):
        load_set_file(path)


def test_unknown_domain_or_set_lists_the_choices(bank):
    with pytest.raises(UserError, match=f"choose from: {', '.join(sorted(DOMAINS))}"):
        load_sets(["nosuch"], root=bank)
    with pytest.raises(UserError, match="design, heldout"):
        load_sets(["gpus"], ["nosuch"], root=bank)


def test_the_lock_detects_an_edit_and_freeze_updates_it(bank):
    lock = bank / "questions.lock"
    sets = load_sets(root=bank)
    assert unlocked_sets(sets, lock) == []
    path = bank / "gpus" / "heldout.yaml"
    edit_set(path, lambda raw: raw["questions"][0].update(text=raw["questions"][0]["text"] + " "))
    edited = load_sets(root=bank)
    assert unlocked_sets(edited, lock) == ["gpus/heldout"]
    freeze(edited, lock)
    assert unlocked_sets(edited, lock) == []


def test_prompt_carries_premise_tie_rule_format_and_separator(gpu_design):
    tie = next(q for q in gpu_design.questions if q.tie_rule)
    prompt = tie.prompt()
    for part in (tie.text, tie.tie_rule, tie.answer_format, repr(tie.separator)):
        assert part in prompt


def test_answer_extraction_rules():
    result = {
        "rows": [{"name": "A", "bw": 5.0}, {"name": "B", "bw": 5.0}, {"name": "C", "bw": 4.0}],
        "aggregate": {"value": 19068.04},
    }
    rows = AnswerExtraction.model_validate({"from": "rows", "field": "name"})
    ties = AnswerExtraction.model_validate({"from": "rows", "field": "name", "ties_on": "bw"})
    agg = AnswerExtraction.model_validate({"from": "aggregate", "format": "{:.0f}"})
    assert rows.apply(result) == ["A", "B", "C"]
    assert ties.apply(result) == ["A", "B"]
    assert agg.apply(result) == ["19068"]
    with pytest.raises(ValueError):
        AnswerExtraction.model_validate({"from": "rows"})


def test_answer_across_every_call_keeps_what_each_result_gives():
    years = [{"rows": [{"state": s} for s in names]} for names in (["A", "B", "C"], ["C", "B"], ["B", "D", "C", "B"])]
    every = AnswerExtraction.model_validate({"from": "rows", "field": "state", "across": "every"})
    last = AnswerExtraction.model_validate({"from": "rows", "field": "state"})
    assert every.items(years) == ["B", "C"]
    assert last.items(years) == ["B", "D", "C", "B"]
    # The default is left out of dumps: the question-set hashes in questions.lock predate the field.
    assert "across" not in last.model_dump(by_alias=True) and every.model_dump(by_alias=True)["across"] == "every"
