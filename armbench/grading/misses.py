"""An answer's outcome (DeepSearchQA's categories) and, when it missed, the reason why."""

from armbench.grading.normalize import split_items
from armbench.types import MissReason, Outcome, StopReason

_ALTERNATIVE_SEPARATORS = (",", ";", "|", "\n")


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
        if stop_reason is StopReason.budget:
            return MissReason.no_answer_budget
        if stop_reason.is_limit:
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
