import pytest
from pydantic import ValidationError

from armbench.grading.normalize import normalize_item
from armbench.grading.strict import Grade, extract_answer, grade, split_items
from armbench.types import MissReason, Outcome, StopReason


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # NFKC
        pytest.param("３５２", "352", id="nfkc-fullwidth-digits"),
        pytest.param("ﬁle", "file", id="nfkc-ligature"),
        pytest.param("café", "café", id="nfkc-keeps-accents"),
        # case-fold
        pytest.param("H200 NVL", "h200 nvl", id="casefold-upper"),
        pytest.param("Straße", "strasse", id="casefold-sharp-s"),
        pytest.param("H-200", "h-200", id="casefold-keeps-hyphen"),
        # whitespace
        pytest.param("  H200 \t NVL\n ", "h200 nvl", id="whitespace-collapse-strip"),
        pytest.param("H200NVL", "h200nvl", id="whitespace-not-inserted"),
        # quotes
        pytest.param("'Paris'", "paris", id="quotes-single"),
        pytest.param('"Paris"', "paris", id="quotes-double"),
        pytest.param("“Paris”", "paris", id="quotes-curly-double"),
        pytest.param("‘Paris’", "paris", id="quotes-curly-single"),
        pytest.param("`Paris`", "paris", id="quotes-backtick"),
        pytest.param('" Paris "', "paris", id="quotes-then-strip-whitespace"),
        pytest.param("\"Paris'", "\"paris'", id="quotes-mismatched-kept"),
        pytest.param('"Paris', '"paris', id="quotes-one-sided-kept"),
        pytest.param('""Paris""', '"paris"', id="quotes-only-one-pair"),
        pytest.param("”Paris“", "”paris“", id="quotes-curly-reversed-kept"),
        # trailing period
        pytest.param("Paris.", "paris", id="period-trailing"),
        pytest.param('"Paris."', "paris", id="period-inside-quotes"),
        pytest.param("etc..", "etc.", id="period-only-one"),
        pytest.param(".NET", ".net", id="period-leading-kept"),
        pytest.param("D.C. area", "d.c. area", id="period-internal-kept"),
        # nothing fuzzy
        pytest.param("352 GB", "352 gb", id="no-unit-stripping"),
        pytest.param("1,000", "1,000", id="no-number-parsing"),
        pytest.param("3.50", "3.50", id="no-decimal-parsing"),
        pytest.param("H200-NVL!", "h200-nvl!", id="no-punctuation-removal"),
    ],
)
def test_normalize_item(raw: str, expected: str) -> None:
    assert normalize_item(raw) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        pytest.param("ANSWER: 352", "352", id="plain"),
        pytest.param("Working...\nAnswer:  352 ", "352", id="case-insensitive"),
        pytest.param("   answer: 352", "352", id="leading-whitespace"),
        pytest.param("**ANSWER:** 352", "352", id="bold-with-colon"),
        pytest.param("**Answer**: 352", "352", id="bold-before-colon"),
        pytest.param("**ANSWER: 352**", "352", id="bold-whole-line"),
        pytest.param("ANSWER: 1\nthinking\nANSWER: 2\nbye", "2", id="last-line-wins"),
        pytest.param("The ANSWER: 352", None, id="not-at-line-start"),
        pytest.param("352", None, id="no-answer-line"),
        pytest.param("ANSWER: 352\nANSWER:   ", None, id="last-line-empty"),
        pytest.param("", None, id="empty-message"),
        pytest.param(None, None, id="no-message"),
    ],
)
def test_extract_answer(message: str | None, expected: str | None) -> None:
    assert extract_answer(message) == expected


@pytest.mark.parametrize(
    ("answer", "separator", "expected"),
    [
        pytest.param("A; B;C", "; ", ["a", "b", "c"], id="separator-with-space"),
        pytest.param("A; B;C", ";", ["a", "b", "c"], id="separator-bare"),
        pytest.param("A;; B ;", ";", ["a", "b"], id="drops-empty-items"),
        pytest.param("A, B", ";", ["a, b"], id="other-separator-not-split"),
        pytest.param("A\nB", "\n", ["a", "b"], id="newline-separator"),
    ],
)
def test_split_items(answer: str, separator: str, expected: list[str]) -> None:
    assert split_items(answer, separator) == expected


@pytest.mark.parametrize(
    ("answer", "reference", "separator", "stop_reason", "outcome", "miss"),
    [
        pytest.param("352", ["352"], ";", "answered", Outcome.fully_correct, None, id="exact"),
        pytest.param(
            "b; a; a", ["A", "B"], ";", "answered", Outcome.fully_correct, None,
            id="set-equality-ignores-order-and-duplicates",
        ),
        pytest.param(
            '"H200 NVL"; H200 SXM 141 GB.', ["H200 NVL.", "“H200 SXM 141 GB”"], ";", "answered",
            Outcome.fully_correct, None, id="multi-item-periods-and-quotes",
        ),
        pytest.param("３５２", ["352"], ";", "answered", Outcome.fully_correct, None, id="nfkc"),
        pytest.param(
            "Washington, D.C.", ["Washington, D.C."], ";", "answered",
            Outcome.fully_correct, None, id="comma-inside-single-item",
        ),
        pytest.param(
            "Washington, D.C.; Paris", ["Washington, D.C.", "Paris"], ";", "answered",
            Outcome.fully_correct, None, id="comma-inside-multi-item",
        ),
        pytest.param(
            "Washington", ["Washington, D.C."], ";", "answered",
            Outcome.fully_incorrect, MissReason.wrong, id="comma-inside-not-wrong-separator",
        ),
        pytest.param(
            None, ["352"], ";", "budget", Outcome.no_answer, MissReason.no_answer_budget,
            id="budget",
        ),
        pytest.param(
            None, ["352"], ";", "stopped", Outcome.no_answer, MissReason.no_answer_stopped,
            id="stopped",
        ),
        pytest.param(
            " ; ", ["352"], ";", "stopped", Outcome.no_answer, MissReason.no_answer_stopped,
            id="only-empty-items",
        ),
        pytest.param(
            None, ["352"], ";", "cost_cap", Outcome.no_answer, MissReason.no_answer_limit,
            id="cost-cap",
        ),
        pytest.param(
            None, ["352"], ";", "timeout", Outcome.no_answer, MissReason.no_answer_limit,
            id="timeout",
        ),
        pytest.param(
            None, ["352"], ";", "token_cap", Outcome.no_answer, MissReason.no_answer_limit,
            id="token-cap",
        ),
        pytest.param(
            None, ["352"], ";", "context_window", Outcome.no_answer, MissReason.no_answer_limit,
            id="context-window",
        ),
        pytest.param(
            "H200 NVL, H200 SXM 141 GB", ["H200 NVL", "H200 SXM 141 GB"], ";", "answered",
            Outcome.fully_incorrect, MissReason.wrong_separator, id="wrong-separator-comma",
        ),
        pytest.param(
            "a | b", ["a", "b"], ";", "answered",
            Outcome.fully_incorrect, MissReason.wrong_separator, id="wrong-separator-pipe",
        ),
        pytest.param(
            "a\nb", ["a", "b"], ",", "answered",
            Outcome.fully_incorrect, MissReason.wrong_separator, id="wrong-separator-newline",
        ),
        pytest.param(
            "a, b; c", ["a", "b", "c"], ";", "answered",
            Outcome.partially_correct, MissReason.extra_text, id="mixed-separators-not-wrong-separator",
        ),
        pytest.param(
            "a; b", ["a", "b", "c"], ";", "answered",
            Outcome.partially_correct, MissReason.missing_items, id="dropped-item",
        ),
        pytest.param(
            "a; b; c; d", ["a", "b", "c"], ";", "answered",
            Outcome.correct_with_extraneous, MissReason.extra_items, id="added-item",
        ),
        pytest.param(
            "352 bit", ["352"], ";", "answered",
            Outcome.fully_incorrect, MissReason.extra_text, id="extra-text",
        ),
        pytest.param(
            "a; 352 bit", ["a", "352"], ";", "answered",
            Outcome.partially_correct, MissReason.extra_text, id="extra-text-partial",
        ),
        pytest.param(
            "a; x", ["a", "b"], ";", "answered",
            Outcome.partially_correct, MissReason.wrong, id="partially-correct",
        ),
        pytest.param(
            "x; y", ["a", "b"], ";", "answered",
            Outcome.fully_incorrect, MissReason.wrong, id="fully-incorrect",
        ),
    ],
)
def test_grade(
    answer: str | None,
    reference: list[str],
    separator: str,
    stop_reason: str,
    outcome: Outcome,
    miss: MissReason | None,
) -> None:
    result = grade(answer, reference, separator, stop_reason=StopReason(stop_reason))
    assert result.outcome is outcome
    assert result.miss_reason is miss
    assert result.correct is (outcome is Outcome.fully_correct)


def test_missing_answer_line_grades_as_stopped() -> None:
    result = grade(
        extract_answer("I could not find it."), ["352"], ";", stop_reason=StopReason.stopped
    )
    assert (result.correct, result.outcome, result.miss_reason) == (
        False,
        Outcome.no_answer,
        MissReason.no_answer_stopped,
    )
    assert result.answer_items == []


def test_grade_reports_normalised_items_and_is_frozen() -> None:
    result = grade("“Paris”;  BERLIN.", ["Berlin", "Paris."], "; ", stop_reason=StopReason.answered)
    assert result.answer_items == ["paris", "berlin"]
    assert result.reference_items == ["berlin", "paris"]
    assert isinstance(result, Grade)
    with pytest.raises(ValidationError):
        result.correct = False  # type: ignore[misc]
