"""Strict set-based grading of agent answers."""

from armbench.grading.strict import Grade, grade

__all__ = ["Grade", "grade"]
