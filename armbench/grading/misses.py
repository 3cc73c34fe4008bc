"""Outcome categories (DeepSearchQA-style) and the reason a graded answer missed."""

from enum import StrEnum
from typing import Literal

from armbench.grading.normalize import split_items

StopReason = Literal["answered", "budget", "stopped", "timeout", "cost_cap", "token_cap", "context_window"]
# The run ended on a harness limit (wall time, cost, tokens) or a full context window.
_LIMIT_STOPS = ("timeout", "cost_cap", "token_cap", "context_window")

_ALTERNATIVE_SEPARATORS = (",", ";", "|", "\n")


class Outcome(StrEnum):
    fully_correct = "fully_correct"
    correct_with_extraneous = "correct_with_extraneous"
    partially_correct = "partially_correct"
    fully_incorrect = "fully_incorrect"
    no_answer = "no_answer"


class MissReason(StrEnum):
    no_answer_budget = "no_answer_budget"
    no_answer_stopped = "no_answer_stopped"
    no_answer_limit = "no_answer_limit"
    wrong_separator = "wrong_separator"
    extra_text = "extra_text"
    missing_items = "missing_items"
    extra_items = "extra_items"
    wrong = "wrong"


def classify_outcome(answer: set[str], reference: set[str]) -> Outcome:
    if not answer:
        return Outcome.no_answer
    if answer == reference:
        return Outcome.fully_correct
    if reference < answer:
        return Outcome.correct_with_extraneous
    if answer & reference:
        return Outcome.partially_correct
    return Outcome.fully_incorrect


def classify_miss(
    answer_text: str,
    answer: set[str],
    reference: set[str],
    stop_reason: StopReason,
) -> MissReason | None:
    """Why `answer` (the normalised items of `answer_text`) missed `reference`, or None."""
    if not answer:
        if stop_reason == "budget":
            return MissReason.no_answer_budget
        if stop_reason in _LIMIT_STOPS:
            return MissReason.no_answer_limit
        return MissReason.no_answer_stopped
    if answer == reference:
        return None
    if any(set(split_items(answer_text, sep)) == reference for sep in _ALTERNATIVE_SEPARATORS):
        return MissReason.wrong_separator
    if answer < reference:
        return MissReason.missing_items
    if answer > reference:
        return MissReason.extra_items
    if all(any(ref in item for item in answer) for ref in reference):
        return MissReason.extra_text
    return MissReason.wrong
