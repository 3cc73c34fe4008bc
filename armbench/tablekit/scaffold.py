"""`bench domain new NAME --csv FILE`: a table domain scaffolded from any CSV.

It writes `<domains>/NAME/` (`__init__.py`, a commented domain.yaml, source/NAME.csv copied byte
for byte with a SOURCE.md template, data/ built) and `<questions>/NAME/{design,heldout}.yaml`
(no questions, one commented example each, written from the data so its answer is right). Every
check comes first and the files are written in a temporary folder moved into place at the end:
a refused name or CSV leaves nothing behind.

Guesses, each stated in domain.yaml for the user to correct:
- kind: `bool` when every non-empty value is true/false/yes/no (any case), `number` when every one
  is a number (1234, -1.5, 1,234, 2e5; a leading zero as in 007 keeps it text), `date` when every
  one is an ISO YYYY-MM-DD date, else `text`. Empty cells are nulls and do not vote.
- key: `--key`, else the first column with a value on every row, all different.
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
import json
import keyword
import os
import re
import shutil
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from armbench.errors import UserError
from armbench.paths import QUESTIONS_DIR
from armbench.tablekit import TableDomain
from armbench.tablekit.build import parse_date, typed
from armbench.tablekit.check import DOMAINS_DIR, RESERVED_FIELDS, SITE_PARAMS, TODO, Taken
from armbench.tablekit.csvfile import read_csv
from armbench.tablekit.spec import NAME, SPEC_FILE, FieldSpec
from armbench.types import render_value

MAX_CHOICES = 60  # a text column with at most this many distinct values is a filter (a select) / a group
MAX_FILTERS = 6
LIST_FIELDS = 5
DEFAULT_FIELDS = 3
EXAMPLE_LIMIT = 3
SETS = ("design", "heldout")
FIELD_NAME = re.compile(r"[a-z][a-z0-9_]*")
BOOL_WORDS = ("true", "false", "yes", "no")
NUMBER = r"^[+-]?(?:(?:[0-9]+|[0-9]{1,3}(?:,[0-9]{3})+)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
LEADING_ZERO = r"^[+-]?0[0-9]"  # 007, 02134: an identifier, whose zeros a number would drop
ISO_DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"

INIT = '''\
"""{name}: a table domain, declared in domain.yaml (written by `bench domain new`)."""
from armbench.domains.spec import Domain
from armbench.tablekit import TableDomain

KIT = TableDomain(__file__)
DOMAIN = Domain.in_folder(__file__, **KIT.declaration(__name__))
create_app, tool_classes, build = KIT.create_app, KIT.tool_classes, KIT.build
'''


# --- what the CSV says --------------------------------------------------------------------------

@dataclass(frozen=True)
class Column:
    """One CSV column with its guessed kind and the values the build would make of it."""

    name: str
    kind: str
    values: pl.Series  # typed as the build types it: nulls for empty cells

    @property
    def filled(self) -> int:
        return len(self.values) - self.values.null_count()

    @property
    def distinct(self) -> int:
        return self.values.drop_nulls().n_unique()

    @property
    def example(self) -> Any:
        present = self.values.drop_nulls()
        return present[0] if len(present) else None

    @property
    def words(self) -> str:
        return self.name.replace("_", " ")


def infer_kind(cells: list[str]) -> str:
    """bool, number, date or text: the narrowest kind every non-empty cell fits (see the module)."""
    present = pl.Series([cell.strip() for cell in cells], dtype=pl.Utf8)
    present = present.filter(present != "")
    if present.is_empty():
        return "text"
    if present.str.to_lowercase().is_in(BOOL_WORDS).all():
        return "bool"
    if present.str.contains(NUMBER).all() and not present.str.contains(LEADING_ZERO).any():
        return "number"
    if present.str.contains(ISO_DATE).all() and all(is_date(text) for text in present.unique().to_list()):
        return "date"
    return "text"


def is_date(text: str) -> bool:
    try:
        parse_date(text)
    except ValueError:
        return False
    return True


def profile(raw: pl.DataFrame, source: Path) -> list[Column]:
    """Every column of the CSV with its kind; column names must be able to be field names."""
    bad = [name for name in raw.columns if not FIELD_NAME.fullmatch(name)]
    if bad:
        raise UserError(f"CSV {source}: column names become field names, which are lower-case letters, digits "
                        f"and _ from a letter; rename {', '.join(map(repr, bad[:5]))}"
                        f"{f' and {len(bad) - 5} more' if len(bad) > 5 else ''} in its header")
    reserved = next((name for name in raw.columns if name in RESERVED_FIELDS), None)
    if reserved:
        raise UserError(f"CSV {source}: no field can be named {reserved} ({RESERVED_FIELDS[reserved]}); "
                        "rename that column in its header")
    columns = []
    for name in raw.columns:
        cells = raw[name].to_list()
        kind = infer_kind(cells)
        columns.append(Column(name, kind, typed(cells, FieldSpec(name=name, kind=kind), source)))
    return columns


def choose_key(columns: list[Column], requested: str | None, source: Path) -> str:
    """`requested` if it can be the key (a value on every row, all different), else the first
    column that can; a UserError naming why not."""
    if requested is not None:
        column = next((c for c in columns if c.name == requested), None)
        if column is None:
            raise UserError(f"--key {requested} is not a column of {source} (columns: "
                            f"{', '.join(c.name for c in columns)})")
        why = not_a_key(column)
        if why:
            raise UserError(f"--key {requested} cannot be the key: {why} in {source}")
        return requested
    found = next((c.name for c in columns if not not_a_key(c)), None)
    if found is None:
        raise UserError(f"no column of {source} has a value on every row, all different, to be the key; "
                        "add an id column or pass --key")
    return found


def not_a_key(column: Column) -> str:
    values = column.values
    empty = values.is_null().arg_true()
    if len(empty):
        return f"row {empty[0] + 2} has no {column.name}"
    repeated = values.is_duplicated().arg_true()
    if len(repeated):
        rows = (values == values[int(repeated[0])]).arg_true().to_list()
        return f"{values[int(repeated[0])]!r} is on rows {rows[0] + 2} and {rows[1] + 2}"
    return ""


def free_port_offset(taken: Taken) -> int:
    used = set(taken.offsets.values())
    free = next((offset for offset in range(100) if offset not in used), None)
    if free is None:
        raise UserError("every port offset 0-99 belongs to a domain already")
    return free


def check_name(name: str, taken: Taken, domains_dir: Path, questions_dir: Path) -> None:
    if not NAME.fullmatch(name) or keyword.iskeyword(name):
        raise UserError(f"{name!r} cannot name a domain: use lower-case letters, digits and _, from a letter, "
                        "at most 31 characters (and no Python keyword)")
    if name in taken.offsets:
        raise UserError(f"there is a domain {name!r} already; choose another name")
    if name in taken.tables:
        raise UserError(f"domain {taken.tables[name]!r} has a table {name!r}, and the new domain's table takes "
                        "its name (table names are global); choose another name")
    for path in (domains_dir / name, domains_dir / f"{name}.py", questions_dir / name):
        if os.path.lexists(path):
            raise UserError(f"{path} exists already; choose another name (or move it away)")


# --- what it becomes ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Draft:
    """Everything domain.yaml will say, decided from the CSV."""

    name: str
    title: str
    port_offset: int
    key: str
    one: str
    many: str
    rows: int
    columns: list[Column]
    csv: Path

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    @property
    def list_fields(self) -> list[str]:
        return [self.key, *[c.name for c in self.columns if c.name != self.key]][:LIST_FIELDS]

    def choice_columns(self) -> list[Column]:
        """Text columns (not the key) of 2-60 distinct values that repeat: a select's options."""
        return [c for c in self.columns if c.kind == "text" and c.name != self.key
                and 2 <= c.distinct <= MAX_CHOICES and c.distinct < c.filled]

    @property
    def filters(self) -> list[str]:
        chosen = [*(c for c in [*self.choice_columns(), *(c for c in self.columns if c.kind == "bool")]
                    if c.name not in SITE_PARAMS),  # the list page's own parameters
                  *(c for c in self.columns if c.kind == "number" and c.name != self.key)]
        return [c.name for c in chosen][:MAX_FILTERS]

    @property
    def group_by(self) -> str | None:
        choices = self.choice_columns()
        return min(choices, key=lambda c: c.distinct).name if choices else None

    @property
    def default_fields(self) -> list[str]:
        return self.list_fields[:DEFAULT_FIELDS]

    @property
    def intro(self) -> str:
        others = [c.words for c in self.columns if c.name != self.key]
        listed = (", ".join(others[:-1]) + " and " + others[-1]) if len(others) > 1 else "".join(others)
        return (f"A table of {self.rows:,} {self.many}, one row per {self.one} (named by its {self.column(self.key).words})"
                + (f", with {listed}." if listed else "."))

    def numbers(self) -> list[Column]:
        return [c for c in self.columns if c.kind == "number" and c.name != self.key]

    def tool_example(self) -> tuple[str, dict[str, Any]]:
        """A filter and a sort: what the tool's description shows (no example question's call)."""
        numbers = self.numbers()
        sort = numbers[0] if numbers else self.column(self.key)
        filtered = next((self.column(name) for name in self.filters
                         if self.column(name).kind in ("text", "bool") and name != sort.name), None)
        args: dict[str, Any] = {}
        says = f"the {EXAMPLE_LIMIT} {self.many}"
        if filtered is not None:
            value = filtered.values.drop_nulls().mode().sort()[0]  # the commonest value: several rows match
            args["filters"] = [{"field": filtered.name, "op": "eq", "value": value}]
        elif len(numbers) > 1:
            filtered = numbers[1]
            value = filtered.values.drop_nulls().sort()[filtered.filled // 2]  # the median
            args["filters"] = [{"field": filtered.name, "op": "gte", "value": value}]
        order = "desc" if sort.kind == "number" else "asc"
        args.update(sort_by=sort.name, order=order, limit=EXAMPLE_LIMIT)
        says += (f" with the highest {sort.words}" if order == "desc" else f" first by {sort.words}")
        if filtered is not None:
            condition = "is" if args["filters"][0]["op"] == "eq" else "is at least"
            says += f" whose {filtered.words} {condition} {yaml_scalar(value) if isinstance(value, bool) else value}"
        return says, args


def draft(name: str, csv: Path, raw: pl.DataFrame, columns: list[Column], key: str, port_offset: int,
          title: str | None) -> Draft:
    many = name.replace("_", " ")
    one = re.sub(r"ies$", "y", many) if many.endswith("ies") else re.sub(r"(?<!s)s$", "", many)
    return Draft(name=name, title=title or f"{many.capitalize()} table (website)", port_offset=port_offset,
                 key=key, one=one, many=many, rows=raw.height, columns=columns, csv=csv)


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
        f"  key: {yaml_scalar(d.key)}  # a value on every row, all different: the entity's page is {site_path(d)}/<{d.key}>",
        f"  one: {yaml_scalar(d.one)}  # \"1 {d.one} matches\"",
        f"  many: {yaml_scalar(d.many)}",
        "# kind: text | number | date (YYYY-MM-DD, YYYY-MM or YYYY) | bool (true/false, yes/no, 1/0);",
        "# unit: shown beside values (\"people\", \"USD\", \"km²\"); nulls: what an empty cell means.",
        "fields:",
    ]
    for column in d.columns:
        entry = {"name": column.name, "kind": column.kind, "unit": "", "description": "",
                 "example": example_value(column.example)}
        empty = d.rows - column.filled
        if empty:
            entry["nulls"] = ""
        counts = f"{column.filled:,} of {d.rows:,} filled, {column.distinct:,} distinct"
        lines.append(f"  - {flow(entry)}  # {counts}")
    lines += [
        "site:",
        f"  path: {site_path(d)}  # the list page; one page per {d.one} below it",
        f"  heading: {yaml_scalar(d.many.capitalize())}",
        f"  list_fields: {flow(d.list_fields)}  # the list's columns; the first links to the {d.one}'s page",
        f"  filters: {flow(d.filters)}  # the list form's filters",
        f"  search: true  # a \"{d.key} contains\" box",
    ]
    group_by = d.group_by
    lines.append(f"  group_by: {yaml_scalar(group_by)}  # a page per value of this text field"
                 if group_by else "  group_by: null  # a text field: a page per value of it")
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


def site_path(d: Draft) -> str:
    return "/" + d.name


def example_value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.date) else value


def yaml_scalar(value: Any) -> str:
    """`value` as a YAML flow scalar that reads back as itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        if "e" in text and "." not in text.split("e")[0]:  # YAML 1.1 floats need a dot: 1e+20 -> 1.0e+20
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    text = str(value)
    if FIELD_NAME.fullmatch(text) and plain_reads_back(text):
        return text
    return json.dumps(text, ensure_ascii=False)


def plain_reads_back(text: str) -> bool:
    try:
        return yaml.safe_load(f"k: {text}") == {"k": text}
    except yaml.YAMLError:
        return False


def flow(value: Any) -> str:
    """`value` in YAML flow style: {k: v, ...} and [a, b]."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {flow(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow(item) for item in value) + "]"
    if isinstance(value, str) and value == "":
        return '""'
    return yaml_scalar(example_value(value))


# --- the example questions ---------------------------------------------------------------------

@dataclass(frozen=True)
class Example:
    """One example question: the YAML of a `questions:` list holding it (uncommented)."""

    text: str


def example_question(d: Draft, frame: pl.DataFrame, set_name: str) -> Example:
    """The `set_name` file's example: the highest (design) or lowest (heldout) value of the first
    number column the list shows, else the number of rows; its answer derived from `frame`."""
    shown = [d.column(name) for name in d.list_fields[1:] if d.column(name).kind == "number"]
    qid = f"{d.name}-{set_name}-01"
    if not shown:
        return count_question(d, frame, qid)
    column = shown[0]
    highest = set_name == "design"
    word, fn, order = ("highest", "max", "desc") if highest else ("lowest", "min", "asc")
    sql, answer = derive(lambda q: f"SELECT {q(d.key)} FROM {q(d.name)} WHERE {q(column.name)} = "
                                   f"(SELECT {fn}({q(column.name)}) FROM {q(d.name)})", d.name, frame)
    cell = d.list_fields.index(column.name) - 1  # the list's <td> cells come after the key's <th>
    code = f'''\
import html, re, urllib.request
BASE = "{{replica:{d.name}}}"
# The list page sorted by {column.words}, {word} first (unknown values last): its first rows are the answer.
with urllib.request.urlopen(BASE + "{site_path(d)}?sort={column.name}&order={order}", timeout=20) as response:
    page = response.read().decode()
rows = re.findall(r'<th scope="row"><a href="[^"]*">(.*?)</a></th>(.*?)</tr>', page, re.S)
cells = [re.findall(r"<td>(.*?)</td>", rest, re.S) for _, rest in rows]
top = cells[0][{cell}]  # {column.name}: the list's column {cell + 2}
for (key, _), row in zip(rows, cells):
    if row[{cell}] == top:  # every {d.one} tied for the {word}
        print(html.unescape(key).strip())
'''
    return Example(question_yaml(
        d.name, qid, f"Which {d.one} has the {word} {column.words}?", answer,
        f"the {d.one}'s {d.column(d.key).words} exactly as the table writes it",
        f"if several {d.many} tie for the {word} {column.words}, list all of them", sql,
        {"sort_by": column.name, "order": order, "limit": 5, "fields": [d.key, column.name]},
        {"from": "rows", "field": d.key, "ties_on": column.name}, code))


def count_question(d: Draft, frame: pl.DataFrame, qid: str) -> Example:
    sql, answer = derive(lambda q: f"SELECT count(*) FROM {q(d.name)}", d.name, frame)
    code = f'''\
import re, urllib.request
BASE = "{{replica:{d.name}}}"
with urllib.request.urlopen(BASE + "{site_path(d)}", timeout=20) as response:
    page = response.read().decode()
# The list says "Showing 1–100 of <total>."
print(re.search(r"of ([0-9,]+)\\.", page).group(1).replace(",", ""))
'''
    return Example(question_yaml(
        d.name, qid, f"How many {d.many} does the table list?", answer,
        "a whole number, digits only (e.g. 12)", None, sql, {"aggregate": {"fn": "count"}},
        {"from": "aggregate"}, code))


def derive(sql: Callable[[Callable[[str], str]], str], table: str, frame: pl.DataFrame) -> tuple[str, list[str]]:
    """The SQL `sql` writes with names as they are (or, when a name is an SQL word such as `order`,
    double-quoted), and what `bench questions verify` will derive with it: the first column, rendered."""
    context = pl.SQLContext({table: frame})
    for quote in (str, lambda name: f'"{name}"'):
        text = sql(quote)
        try:
            column = context.execute(text, eager=True).to_series(0)
        except pl.exceptions.PolarsError:
            continue
        return text, [render_value(value, None) for value in column.to_list()]
    raise AssertionError(f"the example question's SQL does not run: {text}")


def question_yaml(domain: str, qid: str, text: str, answer: list[str], answer_format: str, tie_rule: str | None, sql: str,
                  args: dict[str, Any], extraction: dict[str, Any], code: str) -> str:
    lines = [
        "questions:",
        f"  - id: {qid}",
        f"    text: {json.dumps(text, ensure_ascii=False)}",
        f"    answer: {json.dumps(answer, ensure_ascii=False)}",
        f"    answer_format: {json.dumps(answer_format, ensure_ascii=False)}",
    ]
    if tie_rule:
        lines.append(f"    tie_rule: {json.dumps(tie_rule, ensure_ascii=False)}")
    lines += [
        "    derivation:",
        f"      sql: {json.dumps(sql)}",
        "    solutions:",
        "      tooled:",
        "        calls:",
        f"          - tool: {domain}_query",
        f"            args: {flow(args)}",
        f"        answer: {flow(extraction)}",
        "      browsing:",
        "        calls:",
        "          - tool: python",
        "            args:",
        "              code: |",
        *("                " + line if line else "" for line in code.splitlines()),
        "        answer: {from: stdout}",
    ]
    return "\n".join(lines) + "\n"


def question_file(d: Draft, set_name: str, created: dt.date, example: Example) -> str:
    purpose = {
        "design": "the questions you look at while designing the tool",
        "heldout": "questions written before the tool and kept out of its design: the fair test",
    }[set_name]
    header = textwrap.dedent(f"""\
        # {d.name}, the {set_name} set: {purpose}.
        # Each question: id ({d.name}-{set_name}-NN), text, answer (a list: every item the reference holds),
        # answer_format, tie_rule when ties are possible, derivation (SQL over the table `{d.name}`, whose first
        # column is the answer; `bench questions verify` re-runs it) and solutions: `tooled` (a call of
        # {d.name}_query and which field of its rows is the answer) and `browsing` (a python call that reads the
        # replica at {{replica:{d.name}}} and prints the answer, one item a line). Then `bench questions freeze`.
        domain: {d.name}
        set: {set_name}
        created: {created.isoformat()}
        questions: []

        # An example written from today's data. To use it, delete `questions: []` above and the "# " that
        # starts each line below, then run `bench questions verify`; write your own in its place.
        """)
    return header + "".join(f"# {line}".rstrip() + "\n" for line in example.text.splitlines())


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


def new_domain(name: str, csv: Path, *, key: str | None = None, title: str | None = None,
               taken: Taken | None = None, domains_dir: Path = DOMAINS_DIR, questions_dir: Path = QUESTIONS_DIR,
               today: dt.date | None = None) -> Scaffold:
    """Scaffold the table domain `name` from `csv` into `domains_dir/name` and `questions_dir/name`;
    a UserError, and nothing written, when the name, the CSV or `key` will not do."""
    taken = (taken or Taken()).with_folder(domains_dir)
    check_name(name, taken, domains_dir, questions_dir)
    csv = csv.expanduser().resolve()
    raw = read_csv(csv)
    columns = profile(raw, csv)
    chosen = draft(name, csv, raw, columns, choose_key(columns, key, csv), free_port_offset(taken), title)
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
    table = build(folder)
    frame = pl.read_parquet(table)
    for set_name in SETS:
        text = question_file(d, set_name, created, example_question(d, frame, set_name))
        (questions / f"{set_name}.yaml").write_text(text, encoding="utf-8")
    return [folder / "__init__.py", folder / SPEC_FILE, folder / "source" / f"{d.name}.csv",
            folder / "source" / "SOURCE.md", table, folder / "data" / "DATA.md",
            *(questions / f"{set_name}.yaml" for set_name in SETS)]


def build(folder: Path) -> Path:
    """Build the table domain in `folder`: data/<table>.parquet and data/DATA.md from its CSV."""
    return TableDomain(str(folder / "__init__.py")).build(Path())[0]


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
