"""`bench domain new`: kinds and the key guessed from a CSV, a domain.yaml that loads and checks,
question files that load with an example whose answer is the data's; every bad CSV or name is
one line and nothing written. Everything is scaffolded into tmp_path, never armbench/domains/."""
from __future__ import annotations

import datetime as dt
import hashlib
import subprocess
import tempfile
from pathlib import Path

import polars as pl
import pytest
import yaml

from armbench.domains import DOMAINS
from armbench.errors import UserError
from armbench.questions import load_set_file
from armbench.tablekit import TableDomain, kinds
from armbench.tablekit.check import Taken, problems
from armbench.tablekit.csvfile import MAX_BYTES, read_csv
from armbench.tablekit.draft import choose_key, field_names, profile
from armbench.tablekit.examples import derive
from armbench.tablekit.scaffold import INIT, new_domain
from armbench.tablekit.spec import LIST_PARAMS, load_spec
from armbench.types import Question
from tests.support import forked_bench

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CITIES = FIXTURES / "cities.csv"
TODAY = dt.date(2026, 12, 1)
BUILT_IN = Taken({"gpus": 0, "worldbank": 1, "funds": 2}, {"gpus": "gpus"})


@pytest.fixture
def roots(tmp_path, monkeypatch):
    """(domains folder, questions folder), both empty; temporary files go to tmp_path too."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return tmp_path / "domains", tmp_path / "questions"


def scaffold(roots, csv: Path = CITIES, name: str = "cities", taken: Taken = BUILT_IN, **options):
    domains, questions = roots
    return new_domain(name, csv, taken=taken, domains_dir=domains, questions_dir=questions, today=TODAY, **options)


def write_csv(tmp_path: Path, text: str, name: str = "table.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def uncommented(path: Path) -> dict:
    """The question file as a user makes it: `questions: []` gone, the example's "# " removed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index("# questions:")
    kept = [line for line in lines[:start] if line != "questions: []"]
    return yaml.safe_load("\n".join(kept + [line[2:] for line in lines[start:]]))


# ---- kinds and the key ------------------------------------------------------------------------

@pytest.mark.parametrize(("cells", "kind"), [
    (["true", "False", "YES", "no", ""], "bool"),
    (["1", "-2.5", "1,234", "3e5", "+.5", " 7 ", ""], "number"),
    (["1", "0", "1"], "number"),  # 1/0 is a number, not a bool
    (["007", "12"], "text"),  # a leading zero: an identifier the number would lose
    (["0.5", "0"], "number"),
    (["2024-01-31", "1457-01-01", ""], "date"),
    (["2024-02-30"], "text"),  # not a day
    (["2024-01", "2024"], "text"),  # only full ISO days make a date
    (["1999", "2000"], "number"),
    (["1", "two"], "text"),
    (["nan", "inf"], "text"),
    (["1,23"], "text"),
    (["", " "], "text"),  # nothing to go by
    (["٣"], "text"),  # digits of another script: text
    (["12345678901234567890", "1"], "text"),  # beyond 64 bits: a number would not read back exactly
    (["1e400"], "text"),  # not finite
    (["1_000"], "text"),
])
def test_kinds_are_the_narrowest_every_filled_cell_fits(cells, kind):
    assert kinds.guess(cells) == kind


def test_a_long_whole_number_stays_exact():
    assert kinds.parse("number", "12345678901234567") == 12345678901234567
    assert kinds.parse("number", "1,234.5") == 1234.5


@pytest.mark.parametrize(("headers", "names"), [
    (["Name", "Population (2020)", "2nd place", "source_url", "a", "A"],
     ["name", "population_2020", "f_2nd_place", "source_url_value", "a", "a_2"]),
    (["", "%"], ["column", "column_2"]),
])
def test_headers_become_field_names(headers, names):
    assert field_names(headers) == names


def test_the_cities_kinds_and_key(tmp_path):
    table = read_csv(CITIES)
    columns = profile(table, CITIES)
    assert {c.name: c.kind for c in columns} == {
        "name": "text", "country": "text", "population": "number", "area_km2": "number", "founded": "date",
        "capital": "bool", "elevation_m": "number"}
    assert choose_key(columns, table, None, CITIES) == "name"


def key_of(tmp_path: Path, text: str, requested: str | None = None) -> str:
    csv = write_csv(tmp_path, text)
    table = read_csv(csv)
    return choose_key(profile(table, csv), table, requested, csv)


def test_the_key_is_the_first_column_filled_and_unique(tmp_path):
    assert key_of(tmp_path, "kind,code,id\na,x,1\na,,2\nb,y,3\n") == "id"  # kind repeats, code has a gap
    assert key_of(tmp_path, "n,id\n1,a\n1.0,b\n") == "id"  # 1 and 1.0 are the same number
    assert key_of(tmp_path, "kind,id\na,1\nb,2\n", "id") == "id"


@pytest.mark.parametrize(("text", "requested", "message"), [
    ("a,b\nx,1\nx,2\n", "a", "--key a cannot be the key: .*: the key a is not unique: 'x' is on lines 2 and 3"),
    ("a,b\nx,1\n\n,2\n", "a", "--key a cannot be the key: .*:4: the key a is empty"),  # line 4: blank line 3
    ("a,b\nx,1\n", "c", "--key c is not a column of"),
    ("a,b\nx,1\nx,1\n", None, "no column of"),
])
def test_a_key_that_cannot_be_is_one_line(tmp_path, text, requested, message):
    with pytest.raises(UserError, match="^" + message) as error:
        key_of(tmp_path, text, requested)
    assert "\n" not in str(error.value)


def test_the_port_offset_is_the_smallest_free(roots):
    assert BUILT_IN.free_offset() == 3
    assert Taken({"a": 1}).free_offset() == 0
    with pytest.raises(UserError, match="every port offset"):
        scaffold(roots, taken=Taken({str(n): n for n in range(100)}))


# ---- what it writes -----------------------------------------------------------------------------

def test_cities_is_scaffolded_as_the_walkthrough_expects(roots):
    made = scaffold(roots)
    domains, questions = roots
    folder = domains / "cities"
    assert made.folder == folder and made.questions == questions / "cities"
    assert sorted(p.relative_to(roots[0].parent).as_posix() for p in made.written) == sorted([
        "domains/cities/__init__.py", "domains/cities/domain.yaml", "domains/cities/source/cities.csv",
        "domains/cities/source/SOURCE.md", "domains/cities/data/cities.parquet", "domains/cities/data/DATA.md",
        "domains/cities/site_reader.py", "questions/cities/design.yaml", "questions/cities/heldout.yaml"])
    assert all(path.exists() for path in made.written)
    assert (folder / "__init__.py").read_text() == INIT.format(name="cities")
    assert (folder / "source" / "cities.csv").read_bytes() == CITIES.read_bytes()
    note = (folder / "source" / "SOURCE.md").read_text()
    assert str(CITIES) in note and hashlib.sha256(CITIES.read_bytes()).hexdigest() in note and "licence" in note
    assert (made.key, made.port_offset, made.rows) == ("name", 3, 40)

    spec = load_spec(folder)
    assert (spec.name, spec.table, spec.source, spec.port_offset) == ("cities", "cities", "source/cities.csv", 3)
    assert (spec.entity.key, spec.entity.one, spec.entity.many) == ("name", "city", "cities")
    assert {f.name: (f.kind, f.unit, f.description) for f in spec.fields}["population"] == ("number", "", "")
    assert {f.name: f.example for f in spec.fields} == {
        "name": "Tokyo", "country": "Japan", "population": 13960000, "area_km2": 2194, "founded": "1457-01-01",
        "capital": True, "elevation_m": 40}
    assert spec.site.list_fields == ["name", "country", "population", "area_km2", "founded"]
    assert spec.site.filters == ["country", "capital", "population", "area_km2", "elevation_m"]
    assert (spec.site.path, spec.site.search, spec.site.group_by) == ("/cities", True, ["country"])
    assert spec.tool.name == "cities_query" and spec.tool.tie == "name"
    assert spec.tool.default_fields == ["name", "country", "population"]
    assert spec.tool.intro == ("A table of cities, each named by its name, with country, population, area km2, "
                               "founded, capital and elevation m.")  # the tool adds the row count
    assert spec.tool.example.args == {"filters": [{"field": "country", "op": "eq", "value": "Australia"}],
                                      "sort_by": "population", "order": "desc", "limit": 3}
    text = (folder / "domain.yaml").read_text()
    assert text.startswith("# A table domain") and "# 21 of 40 filled, 21 distinct" in text

    table = pl.read_parquet(folder / "data" / "cities.parquet")
    assert table.height == 40 and table.schema["founded"] == pl.Date and table.schema["capital"] == pl.Boolean
    assert "Copied by `bench domain new`" in (folder / "data" / "DATA.md").read_text()
    assert problems(folder, BUILT_IN) == []


def test_the_question_files_load_empty_and_their_examples_verify(roots):
    made = scaffold(roots)
    table = pl.read_parquet(made.folder / "data" / "cities.parquet")
    tool_example = load_spec(made.folder).tool.example.args
    expected = {"design": ("highest", ["Tokyo"]), "heldout": ("lowest", ["Bern"])}
    for set_name, (word, answer) in expected.items():
        path = made.questions / f"{set_name}.yaml"
        loaded = load_set_file(path)
        assert (loaded.domain, loaded.set, loaded.questions) == ("cities", set_name, [])
        document = uncommented(path)
        (question,) = [Question.model_validate({"domain": "cities", "set": set_name, "created": TODAY, **item})
                       for item in document["questions"]]
        assert question.id == f"cities-{set_name}-01" and word in question.text
        derived = pl.SQLContext({"cities": table}).execute(question.derivation.sql, eager=True).to_series(0)
        assert derived.to_list() == question.answer == answer
        (call,) = question.solutions["tooled"].calls
        assert call.tool == "cities_query" and call.args != tool_example  # the description's example is no solution
        # the site reader and the SQL: test_walkthrough plays docs/own-table.md's copy of this example in both arms
        assert question.solutions["browsing"] == "derived"
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        assert len(load_set_file(path).questions) == 1


def test_a_table_without_numbers_gets_a_count_example(roots, tmp_path):
    csv = write_csv(tmp_path, "code,label\na,x\nb,y\nc,x\n")
    made = scaffold(roots, csv, name="codes")
    document = uncommented(made.questions / "design.yaml")
    (question,) = document["questions"]
    assert question["answer"] == ["3"] and question["derivation"]["sql"] == "SELECT count(*) FROM codes"
    assert question["solutions"]["tooled"]["answer"] == {"from": "aggregate"}
    spec = load_spec(made.folder)
    assert spec.site.filters == ["label"] and spec.site.group_by == ["label"]
    assert spec.tool.example.args == {"filters": [{"field": "label", "op": "eq", "value": "x"}], "sort_by": "code",
                                      "order": "asc", "limit": 3}
    assert problems(made.folder) == []


def test_names_yaml_and_sql_would_misread_are_written_so_they_read_back(roots, tmp_path):
    csv = write_csv(tmp_path, 'id,yes,null,from,order,q,note\n1,a,x,3,1.5e30,true,"say ""hi"": #1"\n'
                              '2,a,y,4,2.5,false,\n3,b,x,5,,true,x\n')
    made = scaffold(roots, csv, name="order", title='Odd "names": a test')
    spec = load_spec(made.folder)
    assert [f.name for f in spec.fields] == ["id", "yes", "null", "from", "order", "q", "note"]
    assert spec.field("order").example == 1.5e30 and spec.field("note").example == 'say "hi": #1'
    assert spec.title == 'Odd "names": a test'
    assert spec.site.filters == ["yes", "null", "from", "order"]  # not q: a bool named like the page's own parameter
    assert "q" in LIST_PARAMS and "order" in LIST_PARAMS  # a number's range filter may be named order
    (question,) = uncommented(made.questions / "design.yaml")["questions"]
    assert question["answer"] == ["3"]
    table = pl.read_parquet(made.folder / "data" / "order.parquet")
    assert pl.SQLContext({"order": table}).execute(question["derivation"]["sql"], eager=True)["id"].to_list() == [3]
    assert problems(made.folder) == []


def test_names_sql_cannot_read_plain_are_quoted():
    frame = pl.DataFrame({"from": ["a", "b"]})
    assert derive(lambda q: f"SELECT {q('from')} FROM {q('order')}", "order", frame) == (
        'SELECT "from" FROM "order"', ["a", "b"])
    assert derive(lambda q: f"SELECT count(*) FROM {q('towns')}", "towns", frame) == (
        "SELECT count(*) FROM towns", ["2"])


def test_the_name_must_be_free_and_sound(roots, tmp_path):
    domains, questions = roots
    for bad, message in [("Cities", "cannot name a domain"), ("class", "cannot name a domain"),
                         ("a-b", "cannot name a domain"), ("x" * 32, "cannot name a domain"),
                         ("gpus", "there is a domain 'gpus' already")]:
        with pytest.raises(UserError, match=message):
            scaffold(roots, name=bad)
    with pytest.raises(UserError, match="domain 'gpus' has a table 'wb'"):
        scaffold(roots, name="wb", taken=Taken({"gpus": 0}, {"wb": "gpus"}))
    domains.mkdir()
    (domains / "spec.py").write_text("")
    (questions / "towns").mkdir(parents=True)
    for name in ("spec", "towns"):
        with pytest.raises(UserError, match="exists already"):
            scaffold(roots, name=name)
    scaffold(roots)
    with pytest.raises(UserError, match="there is a domain 'cities' already"):  # a folder not yet registered
        scaffold(roots)
    made = scaffold(roots, name="cities2")
    assert made.port_offset == 4  # cities' 3 is taken though no registry holds it yet


BAD_CSVS = {
    "missing": (None, "cannot read CSV"),
    "empty": ("", "is empty"),
    "no header": (",b\n1,2\n", "has no name"),
    "ragged": ("a,b\n1,2\n1,2,3\n", ":3 has 3 values; the header has 2 columns"),
    "duplicate columns": ("a,a\n1,2\n", "column names repeat: a"),
    "header only": ("a,b\n", "has a header but no rows"),
}


@pytest.mark.parametrize("case", [*BAD_CSVS, "not utf-8", "over 1 GB"])
def test_a_bad_csv_is_one_line_and_nothing_is_written(roots, tmp_path, case):
    path = tmp_path / "bad.csv"
    if case == "not utf-8":
        path.write_bytes("name,city\nx,Zürich\n".encode("latin-1"))
        message = "is not UTF-8 text at byte"
    elif case == "over 1 GB":
        with path.open("wb") as sparse:
            sparse.truncate(MAX_BYTES + 1)
        message = "the limit is 1 GiB"
    else:
        text, message = BAD_CSVS[case]
        if text is not None:
            path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=message) as error:
        scaffold(roots, path)
    assert "\n" not in str(error.value) and str(path) in str(error.value)
    nothing_written(roots, tmp_path)


def nothing_written(roots, tmp_path):
    domains, questions = roots
    for folder in (domains, questions):
        assert not folder.exists() or not any(folder.iterdir())
    assert not any((tmp_path / "tmp").iterdir())


def test_a_failure_while_writing_leaves_nothing(roots, tmp_path, monkeypatch):
    def broken(self, shared):
        raise UserError("the build broke")

    monkeypatch.setattr(TableDomain, "build", broken)
    with pytest.raises(UserError, match="the build broke"):
        scaffold(roots)
    nothing_written(roots, tmp_path)


# ---- the command ------------------------------------------------------------------------------

def bench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = forked_bench.keyless_env(ARMBENCH_DOMAINS_DIR=str(tmp_path / "domains"),
                                   ARMBENCH_QUESTIONS_DIR=str(tmp_path / "questions"))
    return forked_bench.run(args, env=env, timeout=120, cwd=tmp_path)


@pytest.mark.slow
def test_bench_domain_new_then_check(tmp_path, replica_env):  # its own port base: another test checks a `cities` too
    (tmp_path / "domains").mkdir()
    made = bench(tmp_path, "domain", "new", "cities", "--csv", str(CITIES))
    assert made.returncode == 0, made.stderr
    lines = made.stdout.splitlines()
    assert lines[:9] == [f"wrote {path}" for path in (
        "domains/cities/__init__.py", "domains/cities/domain.yaml", "domains/cities/source/cities.csv",
        "domains/cities/source/SOURCE.md", "domains/cities/data/cities.parquet", "domains/cities/data/DATA.md",
        "domains/cities/site_reader.py", "questions/cities/design.yaml", "questions/cities/heldout.yaml")]
    assert lines[9].startswith("cities: 40 rows; fields name text, country text, population number,")
    free = Taken.of(DOMAINS.values()).free_offset()  # the smallest offset no built-in domain has
    assert lines[9].endswith(f"; key name; port offset {free}")
    steps = "\n".join(lines[10:])
    for step in ("bench domain check cities", "bench questions verify", "bench questions freeze",
                 "bench run --domain cities --arm all --model scripted/oracle"):
        assert step in steps

    checked = bench(tmp_path, "domain", "check", "cities")  # registered from ARMBENCH_DOMAINS_DIR
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.startswith(f"ok: cities: 7 fields, 40 rows, key name unique, port offset {free}")
    assert "note: domain.yaml: provenance still says TODO" in checked.stdout

    again = bench(tmp_path, "domain", "new", "cities", "--csv", str(CITIES))
    assert again.returncode == 2 and again.stderr.strip() == "error: there is a domain 'cities' already; choose another name"


def test_bench_domain_new_with_a_bad_csv_exits_2_with_one_line(tmp_path):
    (tmp_path / "domains").mkdir()
    bad = write_csv(tmp_path, "a,b\n1,2\n1,2,3\n", "ragged.csv")
    result = bench(tmp_path, "domain", "new", "ragged", "--csv", str(bad), "--key", "a")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [f"error: CSV {bad}:3 has 3 values; the header has 2 columns"]
    assert not any((tmp_path / "domains").iterdir()) and not (tmp_path / "questions").exists()


def test_the_docs_show_the_example_question_cities_gets(roots):
    """docs/own-table.md's walkthrough adds the scaffold's own example: the two must not drift apart."""
    from armbench.paths import ROOT

    section = (ROOT / "docs" / "own-table.md").read_text(encoding="utf-8")
    shown = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    made = scaffold(roots)
    assert yaml.safe_load(shown) == {"questions": uncommented(made.questions / "design.yaml")["questions"]}
    assert ".venv/bin/bench domain new cities --csv tests/fixtures/cities.csv" in section


def test_any_header_is_read_through_its_field(roots, tmp_path):
    """Headers that are no field names keep working: the field reads its `column` and shows it."""
    csv = write_csv(tmp_path, "City Name,Population (2020),source_url\nLyon,522250,x\nParis,2102650,y\n")
    made = scaffold(roots, csv, name="towns")
    spec = load_spec(made.folder)
    assert [(f.name, f.column, f.label) for f in spec.fields] == [
        ("city_name", "City Name", "City Name"), ("population_2020", "Population (2020)", "Population (2020)"),
        ("source_url_value", "source_url", "source_url")]
    assert TableDomain(str(made.folder / "__init__.py")).tables.load("towns")["population_2020"].to_list() == [
        522250, 2102650]
    assert problems(made.folder, BUILT_IN) == []


@pytest.mark.parametrize("name", ["yaml", "json", "register", "tables"])
def test_a_name_python_or_the_registry_holds_is_refused(roots, name):
    import armbench.domains

    with pytest.raises(UserError, match="cannot name a domain: a domain is a Python package"):
        scaffold(roots, name=name, taken=Taken.of([], reserved=vars(armbench.domains)))
