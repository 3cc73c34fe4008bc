"""Strict answer grading: extract the ANSWER line, compare normalised item sets."""

import re

from pydantic import BaseModel, ConfigDict

from armbench.grading.misses import classify_miss, classify_outcome
from armbench.grading.normalize import normalize_item, split_items
from armbench.types import MissReason, Outcome, StopReason

__all__ = ["Grade", "extract_answer", "grade", "split_items"]

# "ANSWER:", "**ANSWER:**", "**ANSWER**:" or "**ANSWER: ...**" (group 1 marks the last form).
_ANSWER_PREFIX = re.compile(
    r"\s*(?:\*\*answer:\*\*|\*\*answer\*\*:|(\*\*)?answer:)", re.IGNORECASE
)


class Grade(BaseModel):
    model_config = ConfigDict(frozen=True)

    correct: bool
    outcome: Outcome
    miss_reason: MissReason | None
    answer_items: list[str]
    reference_items: list[str]


def extract_answer(final_message: str | None) -> str | None:
    """The text of the last ANSWER line, or None if there is none or it is empty."""
    for line in reversed((final_message or "").splitlines()):
        match = _ANSWER_PREFIX.match(line)
        if match:
            text = line[match.end() :].strip()
            if match.group(1):
                text = text.removesuffix("**").strip()
            return text or None
    return None


def grade(
    answer_text: str | None,
    reference: list[str],
    separator: str,
    *,
    stop_reason: StopReason,
) -> Grade:
    answer_items = split_items(answer_text or "", separator)
    reference_items = [item for item in map(normalize_item, reference) if item]
    answer, expected = set(answer_items), set(reference_items)
    outcome = classify_outcome(answer, expected)
    return Grade(
        correct=outcome is Outcome.fully_correct,
        outcome=outcome,
        miss_reason=classify_miss(answer_text or "", answer, expected, stop_reason),
        answer_items=answer_items,
        reference_items=reference_items,
    )
