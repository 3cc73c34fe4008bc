"""Strict set-based grading of agent answers (strict), normalisation, outcomes and miss reasons."""
