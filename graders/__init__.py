"""Strict set-based grading of agent answers."""

from graders.misses import MissReason, Outcome
from graders.strict import Grade, grade

__all__ = ["Grade", "MissReason", "Outcome", "grade"]
