"""A user's CSV read as text columns, or one clear UserError: the table domain's only way in.

Every column is read as text (kinds are the spec's business, see build.py), so a CSV that
parses is never silently retyped; what does not parse is named: empty, no header, duplicate
or empty column names, rows of another width, bytes that are not UTF-8, a file over MAX_BYTES.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from armbench.errors import UserError

MAX_BYTES = 1 << 30


@dataclass(frozen=True)
class CsvTable:
    """The CSV's columns as text, and the file line each row ends on (for messages)."""

    frame: pl.DataFrame
    lines: list[int]

    def line(self, row: int) -> int:
        return self.lines[row]


def read_csv(path: Path) -> CsvTable:
    try:
        size = path.stat().st_size
    except OSError as error:
        raise UserError(f"cannot read CSV {path}: {error.strerror}") from None
    if size > MAX_BYTES:
        raise UserError(f"CSV {path} is {size / (1 << 30):.1f} GiB; the limit is 1 GiB")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UserError(f"CSV {path} is not UTF-8 text at byte {error.start}") from None
    except OSError as error:
        raise UserError(f"cannot read CSV {path}: {error.strerror}") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    rows, lines = [], []
    try:
        for row in reader:
            if row:  # a blank line
                rows.append(row)
                lines.append(reader.line_num)
    except csv.Error as error:
        raise UserError(f"CSV {path}:{reader.line_num} does not parse: {error}") from None
    if not rows:
        raise UserError(f"CSV {path} is empty: it needs a header line and at least one row")
    header, body = [name.strip() for name in rows[0]], rows[1:]
    problem = header_problem(header)
    if problem:
        raise UserError(f"CSV {path}: {problem}")
    if not body:
        raise UserError(f"CSV {path} has a header but no rows")
    for row, line in zip(body, lines[1:], strict=True):
        if len(row) != len(header):
            raise UserError(f"CSV {path}:{line} has {len(row)} values; the header has {len(header)} columns")
    frame = pl.DataFrame({name: [row[i] for row in body] for i, name in enumerate(header)},
                         schema=dict.fromkeys(header, pl.Utf8))
    return CsvTable(frame, lines[1:])


def header_problem(header: list[str]) -> str | None:
    if any(not name for name in header):
        return "a column of the header has no name (is the first line a header?)"
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        return f"column names repeat: {', '.join(duplicates)}"
    return None
