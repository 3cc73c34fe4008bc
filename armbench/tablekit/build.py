"""source/<table>.csv -> data/<table>.parquet typed as domain.yaml says, data/DATA.md, and the
domain's site reader (reader.py).

Cells are parsed by kinds.py: a number column is Int64 when every value is a whole number, else
Float64; dates are Date; bools Boolean; text as written; an empty cell is null. A value that is not
of its field's kind is a UserError naming its line.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from armbench.errors import UserError, read_text
from armbench.replicas.tables import TableDir
from armbench.tablekit import kinds
from armbench.tablekit.csvfile import CsvTable, read_csv
from armbench.tablekit.reader import READER_FILE, reader_text
from armbench.tablekit.spec import FieldSpec, TableSpec

DTYPES = {"date": pl.Date, "bool": pl.Boolean, "text": pl.Utf8}


def build_table(spec: TableSpec, folder: Path, tables: TableDir) -> Path:
    source = folder / spec.source
    frame = typed_table(spec, read_csv(source), source)
    path = tables.write(frame, spec.table)
    (tables.directory / "DATA.md").write_text(data_md(spec, frame, source_note(folder)), encoding="utf-8")
    (folder / READER_FILE).write_text(reader_text(spec), encoding="utf-8")
    return path


def source_note(folder: Path) -> str | None:
    """source/SOURCE.md, which DATA.md quotes (None when there is none)."""
    path = folder / "source" / "SOURCE.md"
    return read_text(path, "the data's SOURCE.md") if path.exists() else None


def missing_columns(spec: TableSpec, csv: CsvTable, source: Path) -> str | None:
    """The problem when the CSV lacks a declared field's column."""
    missing = [field.source_column for field in spec.fields if field.source_column not in csv.frame.columns]
    if not missing:
        return None
    return f"{source} lacks the declared column(s) {', '.join(missing)} (its columns: {', '.join(csv.frame.columns)})"


def typed_table(spec: TableSpec, csv: CsvTable, source: Path) -> pl.DataFrame:
    problem = missing_columns(spec, csv, source)
    if problem:
        raise UserError(problem)
    return pl.DataFrame([typed(csv, field, source) for field in spec.fields])


def typed(csv: CsvTable, field: FieldSpec, source: Path) -> pl.Series:
    """The field's column as its kind, named by the field."""
    values = []
    for row, cell in enumerate(csv.frame[field.source_column].to_list()):
        try:
            values.append(kinds.parse(field.kind, cell))
        except ValueError as error:
            raise UserError(f"{source}:{csv.line(row)}: {field.name} is declared {field.kind} but holds {cell!r} "
                            f"({error}); fix the value or the field's kind in domain.yaml") from None
    if field.kind == "number":
        whole = all(value is None or isinstance(value, int) for value in values)
        return pl.Series(field.name, values if whole else [None if v is None else float(v) for v in values],
                         dtype=pl.Int64 if whole else pl.Float64)
    return pl.Series(field.name, values, dtype=DTYPES[field.kind])


def data_md(spec: TableSpec, frame: pl.DataFrame, note: str | None) -> str:
    """DATA.md: provenance (the spec's and `note`, source/SOURCE.md), then one line per field."""
    lines = [f"# {spec.title}: data", "", f"`{spec.table}.parquet`: {frame.height:,} rows, one per "
             f"{spec.entity.one}, built by `bench data build` from `{spec.source}` as `domain.yaml` declares "
             "(armbench/tablekit/build.py).", "", "## Provenance", "", spec.provenance, ""]
    if note is not None:
        lines += [note.strip(), ""]
    lines += ["## Fields", "", "| field | kind | unit | nulls | description |", "| --- | --- | --- | --- | --- |"]
    for field in spec.fields:
        nulls = frame[field.name].null_count()
        meaning = f"{nulls:,}" + (f": {field.nulls}" if nulls and field.nulls else "")
        lines.append(f"| {field.name} | {field.kind} | {field.unit} | {meaning} | {field.description} |")
    return "\n".join(lines) + "\n"
