"""`bench domain new NAME --csv FILE`: a table domain scaffolded from any CSV.

It writes `<domains>/NAME/` (`__init__.py`, a commented domain.yaml, source/NAME.csv copied byte
for byte with a SOURCE.md template, data/ and site_reader.py built) and `<questions>/NAME/{design,heldout}.yaml`
(no questions, one commented example each, written from the data so its answer is right). Every
check comes first and the files are written in a temporary folder moved into place at the end:
a refused name or CSV leaves nothing behind.

Guesses, each stated in domain.yaml for the user to correct:
- field names: each CSV header made a field name (lower case, `_` for anything else, `f_` before a
  leading digit, `_value` after a name the kit reserves, `_2` for a repeat); the header stays the
  field's `column` (what the build reads) and `label` (what the site shows) when it differs.
- kind: kinds.guess: `bool` when every non-empty value is true/false/yes/no (any case), `number`
  when every one is a number (a leading zero as in 007 keeps it text), `date` when every one is an
  ISO YYYY-MM-DD date, else `text`. Empty cells are nulls and do not vote.
- key: `--key` (a header or a field name), else the first column with a value on every row, all
  different.
- port offset: the smallest 0-99 no other domain has.
- site: the first five columns listed (key first); filters on text columns of 2-60 distinct values,
  then bool and number columns (six at most); a page per value of the text column with the fewest
  distinct values (2-60); the key's search box.
- tool: NAME_query, key + two more columns by default, ties by the key, and a worked example (a
  filter and a sort) that no example question's solution is.

`new_domain` takes the domains and questions folders (the project's by default), so tests and
scripts can scaffold anywhere; the caller passes what other domains hold (`Taken`).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import importlib.util
import keyword
import os
import shutil
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from armbench.errors import UserError
from armbench.tablekit import TableDomain
from armbench.tablekit.check import TODO, Taken
from armbench.tablekit.csvfile import read_csv
from armbench.tablekit.draft import Draft, choose_key, draft, profile
from armbench.tablekit.examples import SETS, example_question, question_file
from armbench.tablekit.reader import READER_FILE
from armbench.tablekit.spec import NAME, SPEC_FILE
from armbench.tablekit.yamltext import example_value, flow, yaml_scalar

INIT = '''\
"""{name}: a table domain, declared in domain.yaml (written by `bench domain new`)."""
from armbench.domains.spec import Domain
from armbench.tablekit import TableDomain

KIT = TableDomain(__file__)
DOMAIN = Domain.in_folder(__file__, **KIT.declaration(__name__))
create_app, tool_classes, build = KIT.create_app, KIT.tool_classes, KIT.build
'''


def check_name(name: str, taken: Taken, domains_dir: Path, questions_dir: Path) -> None:
    if not NAME.fullmatch(name) or keyword.iskeyword(name):
        raise UserError(f"{name!r} cannot name a domain: use lower-case letters, digits and _, from a letter, "
                        "at most 31 characters (and no Python keyword)")
    if name in taken.offsets:
        raise UserError(f"there is a domain {name!r} already; choose another name")
    if name in taken.reserved or importlib.util.find_spec(name) is not None:
        raise UserError(f"{name!r} cannot name a domain: a domain is a Python package, and this name is "
                        "taken (a module Python finds, or a name of armbench.domains); choose another")
    if name in taken.tables:
        raise UserError(f"domain {taken.tables[name]!r} has a table {name!r}, and the new domain's table takes "
                        "its name (table names are global); choose another name")
    for path in (domains_dir / name, domains_dir / f"{name}.py", questions_dir / name):
        if os.path.lexists(path):
            raise UserError(f"{path} exists already; choose another name (or move it away)")


def spec_text(d: Draft) -> str:
    """domain.yaml, commented for its first edit."""
    says, args = d.tool_example()
    lines = [
        "# A table domain: armbench builds its replica website, its typed tool and DATA.md from this file",
        f"# (armbench/tablekit). `bench domain new` wrote it from {d.csv.name} and guessed what it could: check",
        "# each field's kind, fill in descriptions, units and what empty cells mean, then run",
        f"# `bench data build --domain {d.name}` (rebuilds data/) and `bench domain check {d.name}`.",
        f"name: {d.name}",
        f"title: {yaml_scalar(d.title)}  # how every arm's system prompt names the replica",
        f"port_offset: {d.port_offset}  # the replica's port = port base + this; no other domain's",
        f"table: {d.name}  # data/{d.name}.parquet; question SQL names it",
        f"source: source/{d.name}.csv",
        f"provenance: {yaml_scalar(TODO + ': where the data comes from and its licence (DATA.md shows this first)')}",
        "entity:",
        f"  key: {yaml_scalar(d.key)}  # a value on every row, all different: the entity's page is /{d.name}/<{d.key}>",
        f"  one: {yaml_scalar(d.one)}  # \"1 {d.one} matches\"",
        f"  many: {yaml_scalar(d.many)}",
        "# kind: text | number | date (YYYY-MM-DD, YYYY-MM or YYYY) | bool (true/false, yes/no, 1/0);",
        "# unit: shown beside values (\"people\", \"USD\", \"km²\"); nulls: what an empty cell means.",
        "fields:",
    ]
    for column in d.columns:
        entry = {"name": column.name, "kind": column.kind}
        if column.header != column.name:
            entry |= {"column": column.header, "label": column.header}
        entry |= {"unit": "", "description": "", "example": example_value(column.example)}
        empty = d.rows - column.filled
        if empty:
            entry["nulls"] = ""
        counts = f"{column.filled:,} of {d.rows:,} filled, {column.distinct:,} distinct"
        lines.append(f"  - {flow(entry)}  # {counts}")
    lines += [
        "site:",
        f"  path: /{d.name}  # the list page; one page per {d.one} below it",
        f"  heading: {yaml_scalar(d.many.capitalize())}",
        f"  list_fields: {flow(d.list_fields)}  # the list's columns; the first links to the {d.one}'s page",
        f"  filters: {flow(d.filters)}  # the list form's filters",
        f"  search: true  # a \"{d.key} contains\" box",
    ]
    group_by = d.group_by
    lines.append(f"  group_by: {yaml_scalar(group_by)}  # a page per value of this field"
                 if group_by else "  group_by: null  # a field, or a list: a page per value of each (per year, per state)")
    lines += [
        "tool:",
        f"  name: {d.name}_query",
        f"  intro: {yaml_scalar(d.intro)}",
        f"  default_fields: {flow(d.default_fields)}  # what every row returns unless `fields` says",
        f"  tie: {yaml_scalar(d.key)}  # orders unsorted rows and breaks ties",
        "  example:  # the description's worked example: a call no question's solution makes",
        f"    says: {yaml_scalar(says)}",
        f"    args: {flow(args)}",
    ]
    return "\n".join(lines) + "\n"


def source_note(d: Draft, digest: str, created: dt.date) -> str:
    return textwrap.dedent(f"""\
        # {d.name}.csv

        {TODO}: where this table comes from — who made it, from what, and when (a URL if there is one).

        {TODO}: its licence, and whether you may publish results built on it.

        Copied by `bench domain new` on {created.isoformat()} from `{d.csv}`
        (sha256 {digest}; {d.rows:,} rows, {len(d.columns)} columns). DATA.md shows this file.
        """)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- writing it --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Scaffold:
    """What `new_domain` wrote."""

    name: str
    folder: Path
    questions: Path
    written: list[Path]
    key: str
    port_offset: int
    rows: int
    kinds: dict[str, str]

    def next_steps(self, show: Callable[[Path], str] = str) -> list[str]:
        """What to do next, each a line; `show` writes a path (the CLI's relative to the working folder)."""
        return [
            f"edit {show(self.folder / SPEC_FILE)} (kinds, descriptions, units, provenance) and "
            f"{show(self.folder / 'source' / 'SOURCE.md')} (origin, licence), then `bench data build --domain {self.name}`",
            f"bench domain check {self.name}",
            f"write questions in {show(self.questions / 'design.yaml')} and {show(self.questions / 'heldout.yaml')} "
            "(each holds a commented example)",
            "bench questions verify",
            "bench questions freeze",
            f"bench run --domain {self.name} --arm all --model scripted/oracle",
        ]


def new_domain(name: str, csv: Path, *, domains_dir: Path, questions_dir: Path, key: str | None = None,
               title: str | None = None, taken: Taken | None = None, today: dt.date | None = None) -> Scaffold:
    """Scaffold the table domain `name` from `csv` into `domains_dir/name` and `questions_dir/name`;
    a UserError, and nothing written, when the name, the CSV or `key` will not do."""
    taken = (taken or Taken()).with_folder(domains_dir)
    check_name(name, taken, domains_dir, questions_dir)
    csv = csv.expanduser().resolve()
    table = read_csv(csv)
    columns = profile(table, csv)
    offset = taken.free_offset()
    if offset is None:
        raise UserError("every port offset 0-99 belongs to a domain already")
    chosen = draft(name, csv, table.frame, columns, choose_key(columns, table, key, csv), offset, title)
    created = today or dt.date.today()
    stage = Path(tempfile.mkdtemp(prefix=f"armbench-domain-{name}-"))
    try:
        staged, staged_questions = stage / "domains" / name, stage / "questions" / name
        written = write(chosen, staged, staged_questions, created)
        return place(chosen, staged, staged_questions, domains_dir / name, questions_dir / name, written)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def write(d: Draft, folder: Path, questions: Path, created: dt.date) -> list[Path]:
    """The domain's files in `folder` (data/ built) and its question files in `questions`."""
    (folder / "source").mkdir(parents=True)
    questions.mkdir(parents=True)
    (folder / "__init__.py").write_text(INIT.format(name=d.name), encoding="utf-8")
    (folder / SPEC_FILE).write_text(spec_text(d), encoding="utf-8")
    shutil.copyfile(d.csv, folder / "source" / f"{d.name}.csv")
    (folder / "source" / "SOURCE.md").write_text(source_note(d, sha256(d.csv), created), encoding="utf-8")
    table = TableDomain(str(folder / "__init__.py")).build(folder)[0]
    frame = pl.read_parquet(table)
    for set_name in SETS:
        text = question_file(d, set_name, created, example_question(d, frame, set_name))
        (questions / f"{set_name}.yaml").write_text(text, encoding="utf-8")
    return [folder / "__init__.py", folder / SPEC_FILE, folder / "source" / f"{d.name}.csv",
            folder / "source" / "SOURCE.md", table, folder / "data" / "DATA.md", folder / READER_FILE,
            *(questions / f"{set_name}.yaml" for set_name in SETS)]


def place(d: Draft, staged: Path, staged_questions: Path, folder: Path, questions: Path,
          written: list[Path]) -> Scaffold:
    for target in (folder, questions):
        if os.path.lexists(target):  # made while we were writing
            raise UserError(f"{target} exists already; choose another name (or move it away)")
    folder.parent.mkdir(parents=True, exist_ok=True)
    questions.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(staged, folder)
    try:
        shutil.move(staged_questions, questions)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    moved = [folder / path.relative_to(staged) if path.is_relative_to(staged)
             else questions / path.relative_to(staged_questions) for path in written]
    return Scaffold(name=d.name, folder=folder, questions=questions, written=moved, key=d.key,
                    port_offset=d.port_offset, rows=d.rows, kinds={c.name: c.kind for c in d.columns})
