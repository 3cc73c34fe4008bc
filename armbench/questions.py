"""Question sets: loading YAML sets, re-deriving references from data, and the lock.

A question set is a YAML file `questions/<domain>/<set>.yaml`. Every reference answer is a
derivation (SQL over the replica tables) that `verify` re-runs; the lock pins each set's hash so
a run never silently uses edited questions.

Held-out discipline: a held-out set (every set but a design one) is written against a frozen tool,
and the tool is not tuned on it. So the lock also records, when a set is first frozen, the hash of
its domain's typed tools (names, descriptions, schemas) and of its data; a later change to the tool
leaves the held-out set flagged (`tool_drift`) in `bench questions verify` and `list` and in every
run set and report that uses it. A design set's record follows the tool: it is the one tuned on.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from armbench.domains import DOMAINS, find_domain, replica_address, tables
from armbench.errors import UserError, read_json_object, read_text
from armbench.paths import QUESTIONS_DIR_ENV, lock_file, questions_dir
from armbench.types import (
    DERIVED,
    SET_NAME_PATTERN,
    AnswerExtraction,
    Derivation,
    Derived,
    Question,
    SetName,
    Solution,
    Strict,
    ToolCall,
    render_value,
)

DESIGN, HELDOUT = "design", "heldout"
CONVENTIONAL_SETS = (DESIGN, HELDOUT)
RESERVED_SET_NAME = "all"
SET_NAME = re.compile(SET_NAME_PATTERN)
# libyaml's safe loader when PyYAML was built with it: the same documents, ten times as fast (every
# `bench` command and test loads the bank)
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class QuestionSet(Strict):
    domain: str
    set: SetName
    questions: list[Question]

    @property
    def key(self) -> str:
        return f"{self.domain}/{self.set}"

    def content_hash(self) -> str:
        payload = json.dumps(self.model_dump(mode="json", by_alias=True), sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()


REPLICA_NAME = re.compile(r"\{replica:(\w+)\}")


def with_replica_addresses(args: dict[str, Any], address: Callable[[str], str] = replica_address) -> dict[str, Any]:
    """A solution call's arguments with each `{replica:<domain>}` replaced by that replica's address
    now: solutions name replicas, never ports, so they run on any port base."""
    return json.loads(REPLICA_NAME.sub(lambda match: address(match.group(1)), json.dumps(args)))


def set_path(domain: str, set_name: str, root: Path | None = None) -> Path:
    return (root or questions_dir()) / domain / f"{set_name}.yaml"


def set_names(root: Path | None = None) -> list[str]:
    """Every set name the bank holds (any `<domain>/<set>.yaml`): design and heldout first, as the
    study orders them, then the others by name."""
    found = {path.stem for path in (root or questions_dir()).glob("*/*.yaml")
             if SET_NAME.fullmatch(path.stem) and path.stem != RESERVED_SET_NAME}
    return [name for name in CONVENTIONAL_SETS if name in found] + sorted(found - set(CONVENTIONAL_SETS))


def load_set_file(path: Path) -> QuestionSet:
    """Parse one YAML file; every problem becomes a UserError naming the file and the field."""
    text = read_text(path, "question file")
    try:
        raw = yaml.load(text, Loader=YAML_LOADER)
    # PyYAML's constructors raise plain Python errors on some input: a date like 2020-13-45, a
    # 4,301-digit number, `!!int x`, `!!timestamp` junk, brackets nested 600 deep.
    except (yaml.YAMLError, ValueError, TypeError, AttributeError, RecursionError) as error:
        raise UserError(f"{path} is not valid YAML: {error}") from None
    if not isinstance(raw, dict) or "questions" not in raw:
        raise UserError(f"{path}: expected a mapping with `domain`, `set` and `questions`")
    if not isinstance(raw["questions"], list):
        raise UserError(f"{path}: `questions` must be a list of questions (got {raw['questions']!r:.40})")
    defaults = {key: raw.get(key) for key in ("domain", "set", "created")}
    questions = [
        {**{k: v for k, v in defaults.items() if v is not None}, **item}
        if isinstance(item, dict) else item
        for item in raw["questions"]
    ]
    try:
        loaded = QuestionSet.model_validate(
            {**{k: v for k, v in raw.items() if k != "created"}, "questions": questions}
        )
    except ValidationError as error:
        raise UserError(f"{path}: invalid question set\n{_describe(error, questions)}") from None
    _check_consistency(path, loaded)
    return loaded


def _describe(error: ValidationError, questions: list[Any]) -> str:
    lines = []
    for issue in error.errors(include_url=False):
        loc = list(issue["loc"])
        where = ".".join(str(part) for part in loc)
        if loc[:1] == ["questions"] and len(loc) > 1 and isinstance(loc[1], int):
            item = questions[loc[1]] if loc[1] < len(questions) else None
            qid = item.get("id") if isinstance(item, dict) else None
            rest = ".".join(str(part) for part in loc[2:])
            where = f"question {qid or '#' + str(loc[1] + 1)}" + (f": {rest}" if rest else "")
        message = issue["msg"]
        if issue["type"] == "extra_forbidden":
            message = "unknown field"
        lines.append(f"  - {where}: {message}")
    return "\n".join(lines)


def _check_consistency(path: Path, loaded: QuestionSet) -> None:
    if loaded.set == RESERVED_SET_NAME:
        raise UserError(f"{path}: a set may not be called {RESERVED_SET_NAME!r}, --set's word for every set")
    expected = (path.parent.name, path.stem)
    if (loaded.domain, loaded.set) != expected:
        raise UserError(
            f"{path}: declares {loaded.domain}/{loaded.set} but lives at {'/'.join(expected)}"
        )
    seen: set[str] = set()
    for question in loaded.questions:
        if (question.domain, question.set) != (loaded.domain, loaded.set):
            raise UserError(f"{path}: question {question.id} belongs to another set")
        if question.id in seen:
            raise UserError(f"{path}: duplicate question id {question.id}")
        seen.add(question.id)


def load_sets(
    domains: list[str] | None = None, sets: list[str] | None = None, root: Path | None = None
) -> list[QuestionSet]:
    """Load the requested sets of registered domains (default: every domain's sets that exist); an
    unknown domain or set name, or a named domain with no sets, is a UserError."""
    root = root or questions_dir()
    for domain in domains or []:
        if domain not in DOMAINS:
            raise UserError(f"unknown domain {domain!r}; choose from: {', '.join(sorted(DOMAINS))}")
    if not root.is_dir():
        raise UserError(f"no question bank at {root}; set {QUESTIONS_DIR_ENV} (or --questions-dir) to a folder of "
                        "<domain>/<set>.yaml")
    known = set_names(root)
    for set_name in sets or []:
        if set_name not in known:
            raise UserError(f"unknown set {set_name!r}; choose from: {', '.join(known)}, all")
    loaded = []
    for domain in domains or DOMAINS:
        found = []
        for set_name in sets or known:
            path = set_path(domain, set_name, root)
            if path.exists():
                found.append(load_set_file(path))
            elif sets:
                raise UserError(f"no question set {domain}/{set_name} (expected {path})")
        if domains and not found:
            raise UserError(f"domain {domain!r} has no question sets under {root / domain}")
        loaded.extend(found)
    return loaded


# --- references --------------------------------------------------------------------------------

def derive_answer(derivation: Derivation, frames: dict[str, Any] | None = None) -> list[str]:
    """Run the derivation's SQL over every replica table (or `frames`, by table name) and render the
    first column."""
    import polars as pl  # only derivations need it: `bench run`'s flag checks load no polars

    context = pl.SQLContext(frames if frames is not None else tables())
    result = context.execute(derivation.sql, eager=True)
    column = result.to_series(0)
    return [render_value(value, derivation.format) for value in column.to_list()]


def verify(question_sets: list[QuestionSet]) -> list[str]:
    """Every mismatch between a stored reference and its re-derivation, one line per question."""
    problems = []
    for question_set in question_sets:
        for question in question_set.questions:
            try:
                derived = derive_answer(question.derivation)
            except Exception as error:  # a broken query is a finding, not a crash
                problems.append(f"{question.id}: derivation failed: {error}")
                continue
            if sorted(derived) != sorted(question.answer):
                problems.append(
                    f"{question.id}: stored answer {question.answer} != derived {derived}"
                )
            problems.extend(_missing_source_rows(question))
            problems.extend(_unimplied_scope(question))
    return problems


def _unimplied_scope(question: Question) -> list[str]:
    """A derived solution's scope must be the question's (what its SQL requires of every row), never
    a narrowing that only happens to keep the answer."""
    stored = question.solutions.get("browsing")
    if not isinstance(stored, Derived):
        return []
    implied = implied_scope(question)
    extra = {name: value for name, value in stored.derived.items() if implied.get(name, object()) != value}
    return [f"{question.id}: the derived solution reads only rows where {name} = {value!r}, which its SQL "
            "does not require of every row it reads" for name, value in extra.items()]


def _missing_source_rows(question: Question) -> list[str]:
    if not question.source_rows:
        return []
    urls = set(find_domain(question.domain).tables.load(question.domain)["source_url"].to_list())
    return [
        f"{question.id}: source row {url} is not in the {question.domain} table"
        for url in question.source_rows
        if url not in urls
    ]


# --- derived browsing solutions ---------------------------------------------------------------

DERIVED_MAIN = """
import inspect
import re
import sqlite3


def stored(kind, shown):
    \"\"\"A value as the site shows it, as the data holds it: a number without its commas, currency and
    percent signs (the marks parity.as_decimal reads past too), a whole one as an int.\"\"\"
    if shown is None or kind not in ("number", "boolean"):
        return shown
    if kind == "boolean":
        return int(shown)
    number = re.sub(r"[,$%\\s]|&nbsp;", "", str(shown)).replace("\\u2212", "-")
    return int(number) if re.fullmatch(r"-?\\d+", number) else float(number)


def derive():
    \"\"\"The site's rows (in SCOPE) in sqlite3 as TABLE, and the answer QUESTION_SQL gives over them.
    A reader that can read less takes a `scope` (field -> value); it may still give more, and the
    rows are narrowed to the scope here.\"\"\"
    narrowed = "scope" in inspect.signature(read_site).parameters
    merged = {}
    for row in read_site(SITE_BASE, SCOPE) if narrowed else read_site(SITE_BASE):
        if "out_of_tool" not in row:
            merged.setdefault(tuple(row.get(name) for name in KEY), {}).update(row)
    rows = [[stored(kind, row.get(name)) for name, kind in ROW_KINDS.items()] for row in merged.values()]
    where = [list(ROW_KINDS).index(name) for name in SCOPE]
    rows = [row for row in rows if all(row[at] == SCOPE[name] for at, name in zip(where, SCOPE))]
    database = sqlite3.connect(":memory:")
    columns = ", ".join(f'"{TABLE_COLUMNS.get(name, name)}"' for name in ROW_KINDS)
    database.execute(f"CREATE TABLE {TABLE} ({columns})")
    database.executemany(f"INSERT INTO {TABLE} VALUES (" + ", ".join("?" * len(ROW_KINDS)) + ")", rows)
    for value, *_ in database.execute(QUESTION_SQL):
        print(value if ANSWER_FORMAT is None or value is None else ANSWER_FORMAT.format(value))


derive()
"""
# Runs the reading kit in a namespace of its own (a script's own `fetch` leaves the kit's alone).
CAREFUL_PRELUDE = """import types as _careful_web, urllib.request as _careful_urllib
_kit = _careful_web.ModuleType("reading_kit")
exec({kit!r}, _kit.__dict__)
_careful_urllib.urlopen = _kit.careful_urlopen
del _careful_web, _careful_urllib, _kit
"""
MAIN_NAMES = ("stored", "derive")  # what DERIVED_MAIN defines: no reader may define them too


# Derivations are polars SQL (derive_answer); sqlite3 spells one of its words otherwise: ILIKE, which
# is sqlite's LIKE (case-blind for ASCII letters; the oracle's run proves the answer the same).
ILIKE = re.compile(r"\bILIKE\b", re.I)


def solution(question: Question, arm: str) -> Solution | None:
    """The question's solution in `arm`: as stored, or derived (DERIVED, or Derived with a scope)."""
    stored = question.solutions.get(arm)
    if stored == DERIVED:
        return derived_solution(question)
    return derived_solution(question, stored.derived) if isinstance(stored, Derived) else stored


def careful(found: Solution) -> Solution:
    """The solution as the oracle plays it: each python call whose script opens pages itself
    (urllib.request.urlopen) run after a prelude that puts the reading kit's careful_urlopen in
    urlopen's place, so the stored script meets the real web's frictions (`--web real`) as a
    derived solution does, and the kind web as before."""
    return found.model_copy(update={"calls": [careful_call(call) for call in found.calls]})


def careful_call(call: ToolCall) -> ToolCall:
    """The call, its script after the prelude when it opens pages itself and does not carry the
    reading kit already (a derived solution's does)."""
    code = call.args.get("code") if call.tool == "python" else None
    if not isinstance(code, str) or "urllib.request.urlopen" not in code or "def careful_urlopen(" in code:
        return call
    return call.model_copy(update={"args": {**call.args, "code": careful_prelude() + code}})


@cache
def careful_prelude() -> str:
    """CAREFUL_PRELUDE with the reading kit's text, read once per process (the oracle asks per run)."""
    from armbench.domains import reading

    return CAREFUL_PRELUDE.format(kit=Path(reading.__file__).read_text(encoding="utf-8"))


def derived_solution(question: Question, scope: dict[str, Any] | None = None) -> Solution:
    """One python call: the domain's site reader reads the site (only the rows in `scope`, field ->
    value, when given) into its tool's rows, sqlite3 holds them as the table the reader names (TABLE:
    the replica table whose columns are the tool's fields, under the table's names), and the
    question's derivation SQL runs over it; its first column is the answer."""
    from armbench.domains.parity import reader_source, site_reader, tool_of

    domain = find_domain(question.domain)
    reader = site_reader(domain)
    table = getattr(reader, "TABLE", None) if reader is not None else None
    if table is None:
        raise UserError(f"{question.id}: a derived browsing solution needs the {question.domain} site reader "
                        "to name the table its rows are (TABLE)")
    fields = tool_of(domain).table
    kinds = row_kinds(fields)
    scope = scope or {}
    unknown = sorted(scope.keys() - kinds.keys())
    if unknown:
        raise UserError(f"{question.id}: the derived solution's scope names {', '.join(unknown)}, not fields of "
                        f"{reader.TOOL}: {', '.join(kinds)}")
    settings = {"SITE_BASE": f"{{replica:{question.domain}}}", "ROW_KINDS": kinds,
                "TABLE_COLUMNS": fields.columns, "SCOPE": scope,
                "QUESTION_SQL": ILIKE.sub("LIKE", question.derivation.sql), "ANSWER_FORMAT": question.derivation.format}
    clashing = sorted((settings.keys() | set(MAIN_NAMES)) & vars(reader).keys())
    if clashing:
        raise UserError(f"the {question.domain} site reader defines {', '.join(clashing)}, which a derived "
                        "solution defines too: rename them in the reader")
    code = "\n".join([reader_source(domain), "", *(f"{name} = {value!r}" for name, value in settings.items()),
                      DERIVED_MAIN])
    return Solution(calls=[ToolCall(tool="python", args={"code": code})],
                    answer=AnswerExtraction.model_validate({"from": "stdout"}))


def row_kinds(fields: Any) -> dict[str, str]:
    """The columns of a derived solution's table, by kind: the tool's fields, and the fields a row
    returns but a call chooses another way (funds' status), as text."""
    return fields.kinds | dict.fromkeys(fields.returned_only, "string")


def implied_scope(question: Question) -> dict[str, Any]:
    """The values the derivation's SQL requires of every row it reads, by tool field: each
    `column = literal` (a number for a number field, a quoted text for a text or date one) written in
    every query over the reader's table (as often as `FROM <TABLE>`), in SQL simple enough to read
    so: no OR, CASE, JOIN, list of tables, or NOT before an equality. A derived solution given it
    reads only those rows, and the oracle's run proves the answer the same. {} when the domain's
    reader names no table."""
    from armbench.domains.parity import site_reader, tool_of

    domain = find_domain(question.domain)
    table = getattr(site_reader(domain), "TABLE", None)
    if table is None:
        return {}
    fields = tool_of(domain).table
    kinds = row_kinds(fields)
    field_of = {fields.columns.get(name, name): name for name in kinds}
    sql = question.derivation.sql
    bare = re.sub(r"'[^']*'", "''", sql)  # the SQL's words, its texts emptied
    if UNREADABLE_SQL.search(bare):
        return {}
    reads = len(re.findall(rf"\bFROM\s+{re.escape(table)}\b", bare, re.I))
    scope: dict[str, Any] = {}
    for column, text, number in re.findall(r"\b(\w+)\s*=\s*(?:'([^']*)'|(-?\d+(?:\.\d+)?))(?![\d.])", sql):
        name = field_of.get(column)
        if name is None or (kinds[name] == "number") != bool(number):
            continue
        written = re.escape(f"'{text}'" if not number else number)
        if len(re.findall(rf"\b{column}\s*=\s*{written}(?![\d.])", sql)) >= reads > 0:
            scope[name] = text if not number else float(number) if "." in number else int(number)
    return scope


# What implied_scope does not read past: an equality that may not hold of every row read.
UNREADABLE_SQL = re.compile(r"\b(OR|CASE|JOIN)\b|\bNOT\s*(\(|\w+\s*=)|\bFROM\s+\w+(\s+(AS\s+)?\w+)?\s*,", re.I)


# --- lock --------------------------------------------------------------------------------------

def read_lock(path: Path | None = None) -> dict[str, dict[str, str]]:
    path = path or lock_file()
    if not path.exists():
        return {}
    return read_json_object(path, "the question lock")


def is_heldout(set_name: str) -> bool:
    return not set_name.startswith(DESIGN)


def freeze(question_sets: list[QuestionSet], path: Path | None = None) -> dict[str, dict[str, str]]:
    """Lock each set's content hash, and the tool and data it is written against: a held-out set's
    are recorded once (its first freeze, or the first since the lock recorded tools) and kept."""
    path = path or lock_file()
    lock = read_lock(path)
    today = dt.date.today().isoformat()
    for question_set in question_sets:
        entry = lock.get(question_set.key, {})
        digest = question_set.content_hash()
        if entry.get("sha256") != digest:
            entry = {**entry, "sha256": digest, "frozen": today}
        if "tool_manifest" not in entry or not is_heldout(question_set.set):
            domain = find_domain(question_set.domain)
            entry = {**entry, "tool_manifest": domain.tool_manifest_hash(), "data": domain.tables.hash()}
        lock[question_set.key] = entry
    path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return lock


def tool_drift(question_sets: list[QuestionSet], path: Path | None = None) -> dict[str, str]:
    """The held-out sets whose domain's typed tools changed since the set was frozen: key -> why."""
    lock = read_lock(path)
    drifted = {}
    for question_set in question_sets:
        recorded = lock.get(question_set.key, {}).get("tool_manifest")
        if not is_heldout(question_set.set) or recorded is None:
            continue
        if find_domain(question_set.domain).tool_manifest_hash() != recorded:
            drifted[question_set.key] = (f"the {question_set.domain} tool changed since this held-out set was "
                                         f"frozen ({lock[question_set.key].get('frozen', '?')}): it no longer "
                                         "tests a tool it was not tuned on")
    return drifted


def unlocked_sets(question_sets: list[QuestionSet], path: Path | None = None) -> list[str]:
    """The keys of sets whose content differs from (or is missing in) the lock."""
    lock = read_lock(path)
    return [
        qs.key for qs in question_sets if lock.get(qs.key, {}).get("sha256") != qs.content_hash()
    ]
