"""A record's own page (one GPU, one fund): labelled lines in headed sections."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Spec:
    """One labelled line of a record page, read from one or more columns."""

    label: str
    columns: tuple[str, ...]
    show: Callable[..., str]
    link: bool = False

    def render(self, row: dict[str, Any]) -> str:
        return self.show(*(row[column] for column in self.columns))


Sections = tuple[tuple[str, tuple[Spec, ...]], ...]


def sections(layout: Sections, row: dict[str, Any]) -> list[tuple[str, list[tuple[Spec, str]]]]:
    """The page's content: (heading, [(spec, shown value)]) per section."""
    return [(heading, [(spec, spec.render(row)) for spec in specs]) for heading, specs in layout]
