"""source/<table>.csv -> data/<table>.parquet typed as domain.yaml says, and data/DATA.md.

Kinds: number -> Float64 (Int64 when every value is whole), date -> Date from "YYYY-MM-DD",
"YYYY-MM" or "YYYY" (the first day), bool -> true/false, yes/no, 1/0 (any case), text -> as
written. An empty cell is null. A value that is not of its kind is a UserError naming the row.
"""
from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import polars as pl

from armbench.errors import UserError
from armbench.replicas.tables import TableDir
from armbench.tablekit.csvfile import read_csv
from armbench.tablekit.spec import FieldSpec, TableSpec

TRUE, FALSE = {"true", "yes", "1", "y", "t"}, {"false", "no", "0", "n", "f"}
DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?", re.ASCII)


def build_table(spec: TableSpec, folder: Path, tables: TableDir) -> Path:
    source = folder / spec.source
    raw = read_csv(source)
    missing = [field.name for field in spec.fields if field.name not in raw.columns]
    if missing:
        raise UserError(f"{source} lacks the declared field(s) {', '.join(missing)}")
    frame = pl.DataFrame([typed(raw[field.name].to_list(), field, source) for field in spec.fields])
    path = tables.write(frame, spec.table)
    (tables.directory / "DATA.md").write_text(data_md(spec, frame, folder), encoding="utf-8")
    return path


def typed(values: list[str], field: FieldSpec, source: Path) -> pl.Series:
    cells = [value.strip() or None for value in values]
    try:
        if field.kind == "number":
            numbers = [None if cell is None else float(cell.replace(",", "")) for cell in cells]
            whole = all(n is None or n.is_integer() for n in numbers)
            return pl.Series(field.name, [None if n is None else int(n) for n in numbers] if whole else numbers,
                             dtype=pl.Int64 if whole else pl.Float64)
        if field.kind == "date":
            return pl.Series(field.name, [None if cell is None else parse_date(cell) for cell in cells], dtype=pl.Date)
        if field.kind == "bool":
            return pl.Series(field.name, [None if cell is None else parse_bool(cell) for cell in cells],
                             dtype=pl.Boolean)
    except ValueError as error:
        row = next(i for i, cell in enumerate(cells, start=2) if cell is not None and not fits(cell, field))
        raise UserError(f"{source}:{row}: {field.name} is declared {field.kind} but holds {cells[row - 2]!r} "
                        f"({error}); fix the value or the field's kind in domain.yaml") from None
    return pl.Series(field.name, cells, dtype=pl.Utf8)


def fits(cell: str, field: FieldSpec) -> bool:
    try:
        {"number": lambda c: float(c.replace(",", "")), "date": parse_date, "bool": parse_bool}[field.kind](cell)
    except ValueError:
        return False
    return True


def parse_date(text: str) -> date:
    match = DATE.fullmatch(text)
    if match is None:
        raise ValueError("not a date YYYY-MM-DD, YYYY-MM or YYYY")
    year, month, day = match.groups()
    return date(int(year), int(month or 1), int(day or 1))


def parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in TRUE | FALSE:
        return lowered in TRUE
    raise ValueError("not true/false, yes/no or 1/0")


def data_md(spec: TableSpec, frame: pl.DataFrame, folder: Path) -> str:
    """DATA.md: provenance (the spec's and source/SOURCE.md), then one line per field."""
    source_note = folder / "source" / "SOURCE.md"
    lines = [f"# {spec.title}: data", "", f"`{spec.table}.parquet`: {frame.height:,} rows, one per "
             f"{spec.entity.one}, built by `bench data build` from `{spec.source}` as `domain.yaml` declares "
             "(armbench/tablekit/build.py).", "", "## Provenance", "", spec.provenance, ""]
    if source_note.exists():
        lines += [source_note.read_text(encoding="utf-8").strip(), ""]
    lines += ["## Fields", "", "| field | kind | unit | nulls | description |", "| --- | --- | --- | --- | --- |"]
    for field in spec.fields:
        nulls = frame[field.name].null_count()
        meaning = f"{nulls:,}" + (f": {field.nulls}" if nulls and field.nulls else "")
        lines.append(f"| {field.name} | {field.kind} | {field.unit} | {meaning} | {field.description} |")
    return "\n".join(lines) + "\n"
