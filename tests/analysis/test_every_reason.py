"""A run set holding every stop reason, error kind, outcome and miss reason, through every report
path: each exits 0, and each that shows a reason says what it means."""
import html
import json

import pytest

from armbench.engine.store import RunSetStore
from armbench.types import ErrorKind, MissReason, Outcome, StopReason
from tests.support.run_sets import make_manifest, make_record

# (stop reason, error kind, outcome, miss reason): every combination a run can end in.
ENDINGS = [
    (StopReason.answered, None, Outcome.fully_correct, None),
    (StopReason.answered, None, Outcome.correct_with_extraneous, MissReason.extra_items),
    (StopReason.answered, None, Outcome.partially_correct, MissReason.missing_items),
    (StopReason.answered, None, Outcome.partially_correct, MissReason.extra_text),
    (StopReason.answered, None, Outcome.fully_incorrect, MissReason.wrong_separator),
    (StopReason.answered, None, Outcome.fully_incorrect, MissReason.wrong),
    (StopReason.stopped, None, Outcome.no_answer, MissReason.no_answer_stopped),
    (StopReason.budget, None, Outcome.no_answer, MissReason.no_answer_budget),
    (StopReason.timeout, ErrorKind.agent, Outcome.no_answer, MissReason.no_answer_limit),
    (StopReason.cost_cap, ErrorKind.agent, Outcome.no_answer, MissReason.no_answer_limit),
    (StopReason.token_cap, ErrorKind.agent, Outcome.no_answer, MissReason.no_answer_limit),
    (StopReason.context_window, ErrorKind.agent, Outcome.no_answer, MissReason.no_answer_limit),
    (StopReason.infra_error, ErrorKind.infra, None, None),
    (StopReason.timeout, ErrorKind.infra, None, None),
    (StopReason.answered, ErrorKind.injected, None, None),
]
ARMS = ("browsing", "tooled")


def run_id(index: int, arm: str) -> str:
    return f"q{index:02}.{arm}.r0"


def build(directory) -> RunSetStore:
    store = RunSetStore(directory)
    store.create(make_manifest(model="scripted/fixture"))
    for arm in ARMS:
        for index, (stop, kind, outcome, miss) in enumerate(ENDINGS):
            answer = "x" if stop is StopReason.answered else None
            excluded = kind is not None and kind.is_excluded
            reply = f"ANSWER: {answer}" if answer else "I could not find it."
            messages = [{"role": "user", "content": "question"}, {"role": "assistant", "content": reply}]
            store.append(make_record(
                run_id=run_id(index, arm), question_id=f"q{index:02}", arm=arm, answer=answer,
                correct=None if excluded else outcome is Outcome.fully_correct,
                outcome=outcome, miss_reason=miss, stop_reason=stop, error_kind=kind,
                error=None if kind is None else f"ended as {stop}",
                injected_faults=["rate_limit", "dropped_args"] if kind is ErrorKind.injected else [],
                transcript_path=store.write_transcript(run_id(index, arm), messages),
            ))
    return store


def flat(text: str) -> str:
    """Text as read, without line wraps, table borders or HTML escapes."""
    return " ".join(html.unescape(text).replace("│", " ").split())


@pytest.fixture
def every_reason(tmp_path) -> tuple[RunSetStore, RunSetStore]:
    return build(tmp_path / "a"), build(tmp_path / "b")


RUN_STOP_REASONS = set(StopReason) - {StopReason.submitted}  # a synthesis episode's ending, never a run's


def test_the_fixture_holds_every_value():
    assert {stop for stop, *_ in ENDINGS} == RUN_STOP_REASONS
    assert {kind for _, kind, *_ in ENDINGS} - {None} == set(ErrorKind)
    assert {outcome for *_, outcome, _ in ENDINGS} - {None} == set(Outcome)
    assert {miss for *_, miss in ENDINGS} - {None} == set(MissReason)


def test_the_report_explains_every_outcome_and_miss_reason(every_reason, cli):
    store, _ = every_reason
    code, out, _ = cli("report", str(store.directory), "--full")
    assert code == 0
    markdown = (store.directory / "report.md").read_text()
    page = (store.directory / "report.html").read_text()
    for text in (out, markdown, page):
        for term in [*Outcome, *MissReason]:
            assert term.meaning in flat(text), term
        for arm in ARMS:
            assert f"gpus/design/{arm}: 1 run(s) excluded from accuracy: an injected fault" in flat(text)


def test_every_transcript_page_explains_its_reasons(every_reason, cli):
    store, _ = every_reason
    assert cli("report", str(store.directory))[0] == 0
    pages = flat("".join(p.read_text() for p in (store.directory / "transcripts").glob("*.html")))
    for term in [*RUN_STOP_REASONS, *ErrorKind, *Outcome, *MissReason]:
        assert term.meaning in pages, term


def test_the_json_report_counts_every_value(every_reason, cli):
    store, _ = every_reason
    code, out, _ = cli("report", str(store.directory), "--json")
    assert code == 0
    report = json.loads(out)
    misses = {row["arm"]: row["counts"] for row in report["miss_reasons"]}
    assert misses["tooled"] == {m.value: 4 if m is MissReason.no_answer_limit else 1 for m in MissReason}
    outcomes = {row["arm"]: row["counts"] for row in report["outcomes"]}
    assert outcomes["tooled"][Outcome.no_answer] == 6
    assert [(row["infra_errors"], row["injected_faults"]) for row in report["rows"]] == [(2, 1), (2, 1)]


def test_comparing_and_regressing_two_such_sets(every_reason, cli):
    a, b = (str(store.directory) for store in every_reason)
    code, out, _ = cli("report", a, b)
    assert code == 0 and "no question changed" in out
    code, out, _ = cli("regress", "--baseline", a, b)
    assert code == 0 and "OK" in out
    assert cli("regress", "--baseline", a, b, "--json")[0] == 0


@pytest.mark.parametrize("index", [0, 3, 9, 11, 13, 14])
def test_show_explains_the_runs_reasons(every_reason, cli, index):
    store, _ = every_reason
    stop, kind, outcome, miss = ENDINGS[index]
    code, out, _ = cli("show", run_id(index, "tooled"), "--run-set", str(store.directory))
    assert code == 0
    for term in (stop, kind, outcome, miss):
        if term is not None:
            assert f"{term.value} ({term.meaning})" in flat(out), term
