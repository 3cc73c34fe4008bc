"""`bench domain check NAME`: a table domain's spec against its data, one line per problem.

What it checks, in order (a check that needs an earlier one to pass is skipped when it fails):
- the folder has an `__init__.py` (else armbench does not find the domain) and domain.yaml loads
  (`load_spec`: every field the spec uses is declared, kinds are known, no field the kit reserves,
  no filter the list page cannot take, ...), naming the folder;
- its port offset and table name are no other domain's;
- the source CSV reads (`read_csv`) and has every declared field as a column;
- every value fits its field's kind (build.py's own parsing; the first bad line is named);
- the key is non-empty and unique on every row (or, with `entity.within`, unique together with
  those fields, each non-empty, and no two rows share a page address), and no part of an address is
  "." or ".." (no URL can name those);
- data/<table>.parquet is what `bench data build` would write now: the table is rebuilt in
  memory from the CSV and domain.yaml (the same work as the build, without compression) and
  compared column by column, dtypes and values; data/DATA.md is compared with the text the build
  would write; no other table lies in data/;
- when all that holds: the site reader, site_reader.py, is the text the build would write, and the
  tool's worked example runs on the table without an error.
Reminders that are not problems (provenance still TODO, fields without a description) are notes.

This layer cannot import the registry (`armbench.domains` imports table domains, not the reverse):
the caller passes what other domains hold as `Taken`.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from armbench.errors import UserError, read_text
from armbench.replicas.tables import TableDir
from armbench.tablekit.build import data_md, missing_columns, source_note, typed
from armbench.tablekit.csvfile import CsvTable, read_csv
from armbench.tablekit.reader import READER_FILE, reader_text
from armbench.tablekit.spec import NAME, SPEC_FILE, TableSpec, load_spec

TODO = "TODO"
UNNAMEABLE_KEYS = (".", "..")  # a URL path cannot end in them: clients resolve them away


@dataclass(frozen=True)
class Taken:
    """What other domains hold already: each one's port offset, and every table's domain."""

    offsets: Mapping[str, int] = field(default_factory=dict)  # domain name -> port offset
    tables: Mapping[str, str] = field(default_factory=dict)  # table name -> domain name
    reserved: frozenset[str] = frozenset()  # names no domain package may take (the registry's own)

    @classmethod
    def of(cls, domains: Iterable[Any], reserved: Iterable[str] = ()) -> Taken:
        """From registered domains (`armbench.domains.DOMAINS.values()`: each with `name`,
        `port_offset` and `tables`, a TableDir) and the names of the registry's module."""
        domains = list(domains)
        return cls({d.name: d.port_offset for d in domains},
                   {table: d.name for d in domains for table in d.tables.names()}, frozenset(reserved))

    def with_folder(self, domains_dir: Path) -> Taken:
        """Plus the table domains in `domains_dir` the registry does not hold (one scaffolded
        before the registry discovered it, say); a spec that does not load holds nothing."""
        offsets, tables = dict(self.offsets), dict(self.tables)
        for spec_file in sorted(domains_dir.glob(f"*/{SPEC_FILE}")) if domains_dir.is_dir() else []:
            try:
                spec = load_spec(spec_file.parent)
            except UserError:
                continue
            offsets.setdefault(spec.name, spec.port_offset)
            tables.setdefault(spec.table, spec.name)
        return Taken(offsets, tables, self.reserved)

    def free_offset(self) -> int | None:
        """The smallest port offset 0-99 no domain has."""
        used = set(self.offsets.values())
        return next((offset for offset in range(100) if offset not in used), None)

    def without(self, name: str) -> Taken:
        return Taken({d: o for d, o in self.offsets.items() if d != name},
                     {t: d for t, d in self.tables.items() if d != name}, self.reserved)


@dataclass(frozen=True)
class Checked:
    problems: list[str]
    notes: list[str]
    summary: str  # what was found to hold, for the "ok" line


def problems(folder: Path, taken: Taken | None = None) -> list[str]:
    """Every problem of the table domain in `folder`, one line each; [] when it is sound."""
    return check(folder, taken).problems


def check(folder: Path, taken: Taken | None = None) -> Checked:
    found: list[str] = []
    name = folder.name
    if not (folder / "__init__.py").is_file():
        found.append(f"{folder} has no __init__.py, so armbench does not find the domain "
                     "(`bench domain new` writes it; see armbench/tablekit/__init__.py)")
    try:
        spec = load_spec(folder)
    except UserError as error:
        return Checked([*found, one_line(str(error))], [], "")
    if spec.name != name:
        found.append(f"{folder / SPEC_FILE}: name is {spec.name!r} but the folder is {name!r}; make them the same")
    found += clashes(spec, (taken or Taken()).with_folder(folder.parent).without(spec.name).without(name))
    source = folder / spec.source
    try:
        csv = read_csv(source)
    except UserError as error:
        return Checked([*found, one_line(str(error))], [], "")
    found += filter(None, [missing_columns(spec, csv, source)])
    try:
        note = source_note(folder)
    except UserError as error:
        found.append(str(error))
        note = None
    columns: dict[str, pl.Series] = {}
    for declared in spec.fields:
        if declared.source_column in csv.frame.columns:
            try:
                columns[declared.name] = typed(csv, declared, source)
            except UserError as error:
                found.append(str(error))
    if all(name in columns for name in spec.entity.address_fields):
        found += key_problems(columns[spec.entity.key], csv, source, [columns[name] for name in spec.entity.within])
    built = pl.DataFrame(list(columns.values())) if len(columns) == len(spec.fields) else None
    found += data_problems(spec, folder, built, note)
    if not found:
        found += reader_problems(spec, folder) + example_problems(spec, folder)
    found = [one_line(problem) for problem in found]
    within = f" within {', '.join(spec.entity.within)}" if spec.entity.within else ""
    summary = (f"{len(spec.fields)} fields, {csv.frame.height:,} rows, key {spec.entity.key} unique{within}, port offset "
               f"{spec.port_offset}; data/{spec.table}.parquet and data/DATA.md match {spec.source} and {SPEC_FILE}")
    return Checked(found, notes(spec, folder, note), summary)


def one_line(text: str) -> str:
    """A problem on one line (PyYAML's messages span several)."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def clashes(spec: TableSpec, others: Taken) -> list[str]:
    found = []
    holder = next((d for d, offset in others.offsets.items() if offset == spec.port_offset), None)
    if holder is not None:
        free = others.free_offset()
        found.append(f"{SPEC_FILE}: port_offset {spec.port_offset} is domain {holder!r}'s too"
                     + (f"; the smallest free offset is {free}" if free is not None else ""))
    if spec.table in others.tables:
        found.append(f"{SPEC_FILE}: table {spec.table!r} is domain {others.tables[spec.table]!r}'s too; "
                     "table names are global (question SQL names them), choose another")
    return found


def key_problems(key: pl.Series, csv: CsvTable, source: Path, within: Sequence[pl.Series] = ()) -> list[str]:
    """Why `key` (with the `within` fields, when the key is unique only together with them) cannot
    name the rows: its first empty row, first repeated value, or a value no URL can end in, by the
    CSV's line numbers; [] when it can."""
    found = []
    for part in [*within, key]:
        empty = part.is_null().arg_true()
        if len(empty):
            what = f"the key {part.name} is empty" if part is key else \
                f"{part.name} is empty, and entity.within puts it in every page's address"
            found.append(f"{source}:{csv.line(empty[0])}: {what}; every row needs one")
    parts = pl.DataFrame([*within, key])
    filled = parts.select(pl.all_horizontal(pl.all().is_not_null())).to_series()
    if within:
        repeated = parts.is_duplicated() & filled
        if repeated.any():
            first, second = same_rows(parts, int(repeated.arg_true()[0]))
            found.append(f"{source}: the key {key.name} is not unique within {', '.join(w.name for w in within)}: "
                         f"{parts.row(first)!r} is on lines {csv.line(first)} and {csv.line(second)}; add the field "
                         "that tells them apart to entity.within")
        else:
            addresses = pl.Series(["/".join(map(str, values)) for values in parts.rows()])
            shared = addresses.is_duplicated() & filled
            if shared.any():
                first, second = (addresses == addresses[int(shared.arg_true()[0])]).arg_true().to_list()[:2]
                found.append(f"{source}: lines {csv.line(first)} and {csv.line(second)} have the same page address "
                             f"{addresses[first]!r} (a value with \"/\" in it); change one of them")
    else:
        repeated = key.is_duplicated() & filled
        if repeated.any():
            value = key[int(repeated.arg_true()[0])]
            first, second = (key == value).arg_true().to_list()[:2]
            found.append(f"{source}: the key {key.name} is not unique: {value!r} is on lines {csv.line(first)} and "
                         f"{csv.line(second)}; choose a unique field as entity.key, or name the fields that tell "
                         "such rows apart as entity.within")
    for part in [*within, key]:
        unnameable = part.cast(pl.Utf8).is_in(UNNAMEABLE_KEYS).arg_true()
        if len(unnameable):
            what = f"the key {part.name}" if part is key else part.name
            found.append(f"{source}:{csv.line(unnameable[0])}: {what} is {part[int(unnameable[0])]!r}, "
                         "which no page address can end in; change it")
    return found


def same_rows(parts: pl.DataFrame, index: int) -> list[int]:
    """The first two rows of `parts` equal to row `index`."""
    target = parts.row(index)
    return [i for i, values in enumerate(parts.iter_rows()) if values == target][:2]


def example_problems(spec: TableSpec, folder: Path) -> list[str]:
    """The tool's worked example, run on the built table: a model is shown it, so it must work."""
    import asyncio

    from armbench.tablekit.tool import tool_class

    outcome = asyncio.run(tool_class(spec, TableDir(folder / "data"))().invoke(spec.tool.example.args))
    if outcome.is_error:
        error = outcome.result["error"]
        return [f"{folder / SPEC_FILE}: tool.example.args fail: {error['type']}: {error['message']}"]
    return []


def data_problems(spec: TableSpec, folder: Path, built: pl.DataFrame | None, note: str | None) -> list[str]:
    """data/ against what `bench data build` would write now (when the CSV builds at all)."""
    data = folder / "data"
    table = data / f"{spec.table}.parquet"
    rebuild = f"run `bench data build --domain {spec.name}`"
    found = [f"{data / path.name} is no table of domain.yaml (its table is {spec.table}); delete it"
             for path in sorted(data.glob("*.parquet")) if path != table]
    if not table.exists():
        return [*found, f"{table} is missing; {rebuild}"]
    if built is None:
        return found
    try:
        on_disk = pl.read_parquet(table)
    except Exception as error:  # whatever polars makes of a damaged file, one line says so
        return [*found, f"{table} does not read as Parquet ({type(error).__name__}); {rebuild}"]
    difference = frame_difference(built, on_disk)
    if difference:
        found.append(f"{table} is out of date with {spec.source} and {SPEC_FILE} ({difference}); {rebuild}")
    elif written(data / "DATA.md") != data_md(spec, built, note):
        found.append(f"{data / 'DATA.md'} is out of date with {SPEC_FILE} or source/SOURCE.md; {rebuild}")
    return found


def reader_problems(spec: TableSpec, folder: Path) -> list[str]:
    """site_reader.py against what `bench data build` would write now."""
    path = folder / READER_FILE
    reader = written(path)
    if reader == reader_text(spec):
        return []
    state = "missing" if reader is None else f"not what the kit writes from {SPEC_FILE} (edited, or written by another version)"
    return [f"{path} is {state}; run `bench data build --domain {spec.name}`"]


def written(path: Path) -> str | None:
    """A file the build writes, or None when it is missing or unreadable."""
    try:
        return read_text(path, path.name) if path.exists() else None
    except UserError:
        return None


def frame_difference(built: pl.DataFrame, on_disk: pl.DataFrame) -> str:
    """How the table on disk differs from the one built now; "" when it does not."""
    if built.columns != on_disk.columns:
        return f"its columns are {', '.join(on_disk.columns)}; {SPEC_FILE} declares {', '.join(built.columns)}"
    for name in built.columns:
        if built[name].dtype != on_disk[name].dtype:
            return f"{name} is {on_disk[name].dtype} there, {built[name].dtype} from the CSV"
    if built.height != on_disk.height:
        return f"{on_disk.height:,} rows there, {built.height:,} in the CSV"
    changed = next((name for name in built.columns if not built[name].equals(on_disk[name])), None)
    return f"values of {changed} differ" if changed else ""


def notes(spec: TableSpec, folder: Path, note: str | None) -> list[str]:
    found = []
    if TODO in spec.provenance:
        found.append(f"{SPEC_FILE}: provenance still says {TODO}: say where the data comes from and its licence")
    if note is not None and TODO in note:
        found.append(f"{folder / 'source' / 'SOURCE.md'} still says {TODO}: state the data's origin and licence")
    undescribed = [f.name for f in spec.fields if not f.description]
    if undescribed:
        found.append(f"{len(undescribed)} of {len(spec.fields)} fields have no description yet "
                     f"({', '.join(undescribed[:5])}{', ...' if len(undescribed) > 5 else ''}): "
                     "the tool's description and DATA.md show them")
    return found


def locate(name: str, registered: Mapping[str, Any], domains_dir: Path) -> Path:
    """The folder of the table domain `name`: a registered domain's own (its tables' parent), else
    `domains_dir/name`; a UserError when there is none or it has no domain.yaml."""
    if not NAME.fullmatch(name):
        raise UserError(f"{name!r} is not a domain name (lower-case letters, digits and _, from a letter)")
    entry = registered.get(name)
    folder = entry.tables.directory.parent if entry is not None else domains_dir / name
    if (folder / SPEC_FILE).is_file():
        return folder
    if entry is not None:
        raise UserError(f"domain {name!r} is not a table domain: {folder} has no {SPEC_FILE}")
    table_domains = sorted(path.parent.name for path in domains_dir.glob(f"*/{SPEC_FILE}"))
    raise UserError(f"no table domain {name!r} (no {folder / SPEC_FILE}); table domains: "
                    f"{', '.join(table_domains) or 'none yet (make one with `bench domain new`)'}")
