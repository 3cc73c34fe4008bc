"""Strict set-based grading of agent answers."""

from armbench.grading.misses import MissReason, Outcome
from armbench.grading.strict import Grade, grade

__all__ = ["Grade", "MissReason", "Outcome", "grade"]
