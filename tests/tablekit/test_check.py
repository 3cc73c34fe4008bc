"""`bench domain check`: a sound table domain has no problems; each kind of problem is its own
line naming the file (and the row or field)."""
from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from armbench.domains import DOMAINS
from armbench.errors import UserError
from armbench.tablekit import TableDomain
from armbench.tablekit.check import Taken, check, locate, problems
from armbench.tablekit.scaffold import INIT
from tests.support import forked_bench
from tests.tablekit.conftest import cities_folder


@pytest.fixture
def folder(tmp_path) -> Path:
    """The edited cities domain (tests/fixtures/cities_domain), built, in tmp_path/domains/cities."""
    return cities_folder(tmp_path / "domains")


def edit_spec(folder: Path, change) -> None:
    path = folder / "domain.yaml"
    spec = yaml.safe_load(path.read_text())
    change(spec)
    path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))


def edit_csv(folder: Path, old: str, new: str) -> None:
    path = folder / "source" / "cities.csv"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def build(folder: Path) -> Path:
    return TableDomain(str(folder / "__init__.py")).build(folder)[0]


def only(folder: Path, taken: Taken | None = None) -> str:
    (problem,) = problems(folder, taken)
    assert "\n" not in problem
    return problem


def test_a_sound_domain_has_no_problems(folder):
    checked = check(folder, Taken.of(DOMAINS.values()))
    assert checked.problems == []
    assert checked.summary == ("7 fields, 40 rows, key name unique, port offset 10; data/cities.parquet and "
                               "data/DATA.md match source/cities.csv and domain.yaml")
    assert checked.notes == []  # the fixture's spec is described and sourced


def test_a_fresh_scaffold_only_has_notes(folder):
    edit_spec(folder, lambda spec: spec.update(provenance="TODO: say where from"))
    build(folder)
    checked = check(folder)
    assert checked.problems == [] and checked.notes == [
        "domain.yaml: provenance still says TODO: say where the data comes from and its licence"]


def test_no_init_file(folder):
    (folder / "__init__.py").unlink()
    assert "has no __init__.py, so armbench does not find the domain" in only(folder)


def test_a_spec_that_does_not_load_is_its_one_line(folder):
    edit_spec(folder, lambda spec: spec["site"].update(filters=["country", "nosuch"]))
    assert only(folder).endswith("site.filters names nosuch, not a declared field")
    (folder / "domain.yaml").write_text("name: [")
    assert "is not valid YAML: while parsing a flow node expected the node content" in only(folder)


def test_the_spec_names_another_folder(folder):
    edit_spec(folder, lambda spec: spec.update(name="towns"))
    assert "name is 'towns' but the folder is 'cities'" in only(folder)


def test_a_port_offset_or_table_another_domain_has(folder):
    assert only(folder, Taken({"gpus": 0, "towns": 10})) == (
        "domain.yaml: port_offset 10 is domain 'towns''s too; the smallest free offset is 1")
    assert only(folder, Taken({}, {"cities": "towns"})).startswith(
        "domain.yaml: table 'cities' is domain 'towns''s too; table names are global")
    assert problems(folder, Taken({"cities": 10}, {"cities": "cities"})) == []  # its own, as registered


def test_another_table_domain_beside_it_counts_though_unregistered(folder):
    other = folder.parent / "towns"
    shutil.copytree(folder, other)
    edit_spec(other, lambda spec: spec.update(name="towns", table="towns"))
    assert "port_offset 10 is domain 'towns''s too" in only(folder)


def test_reserved_field_names_and_filters_the_page_cannot_take(folder):
    edit_csv(folder, "name,country", "name,q")
    def rename(spec):
        spec["fields"][1]["name"] = "q"
        spec["site"]["filters"][0] = "q"
        spec["site"].update(group_by=None, list_fields=["name", "q"])
        spec["tool"].update(default_fields=["name", "q"])
    edit_spec(folder, rename)
    assert "site.filters: the list page cannot filter on q (" in only(folder)



def test_an_unreadable_csv_is_one_line(folder):
    (folder / "source" / "cities.csv").write_text("a,b\n1,2,3\n")
    assert only(folder).endswith("cities.csv:2 has 3 values; the header has 2 columns")
    (folder / "source" / "cities.csv").unlink()
    assert "cannot read CSV" in only(folder)


def test_a_declared_field_the_csv_lacks(folder):
    edit_csv(folder, "elevation_m\n", "height_m\n")
    assert "lacks the declared column(s) elevation_m (its columns:" in only(folder)


def test_a_value_not_of_its_kind_names_the_row(folder):
    edit_csv(folder, "Osaka,Japan,2750000", "Osaka,Japan,many")
    assert only(folder).endswith("cities.csv:3: population is declared number but holds 'many' "
                                 "(not a number); fix the value or the field's kind "
                                 "in domain.yaml")
    edit_spec(folder, lambda spec: spec["fields"][5].update(kind="date"))
    found = problems(folder)
    assert len(found) == 2 and found[1].endswith("cities.csv:2: capital is declared date but holds 'true' "
                                                 "(not a date YYYY-MM-DD, YYYY-MM or YYYY); fix the value or the "
                                                 "field's kind in domain.yaml")


def test_the_key_must_be_filled_and_unique(folder):
    edit_spec(folder, lambda spec: spec["entity"].update(key="country"))
    assert only(folder).endswith("the key country is not unique: 'Japan' is on lines 2 and 3; "
                                 "choose a unique field as entity.key, or name the fields that tell such rows "
                                 "apart as entity.within")
    edit_spec(folder, lambda spec: spec["entity"].update(key="founded"))
    found = problems(folder)
    assert found[0].endswith("cities.csv:3: the key founded is empty; every row needs one")
    assert "the key founded is not unique" not in " ".join(found)  # empty cells are not repeats


def test_missing_stale_and_stray_data(folder):
    table = folder / "data" / "cities.parquet"
    table.unlink()
    assert only(folder) == f"{table} is missing; run `bench data build --domain cities`"
    build(folder)

    edit_csv(folder, "Osaka,Japan,2750000", "Osaka,Japan,2750001")
    assert only(folder) == (f"{table} is out of date with source/cities.csv and domain.yaml (values of population "
                            "differ); run `bench data build --domain cities`")
    build(folder)
    assert problems(folder) == []

    with (folder / "source" / "cities.csv").open("a") as csv:
        csv.write("Zzyzx,United States,1,1,,false,300\n")
    assert "(40 rows there, 41 in the CSV)" in only(folder)
    build(folder)

    edit_spec(folder, lambda spec: spec["fields"][6].update(kind="text"))
    assert "(elevation_m is Int64 there, String from the CSV)" in only(folder)
    build(folder)

    edit_spec(folder, lambda spec: spec["fields"][0].update(description="What the city calls itself"))
    assert only(folder) == (f"{folder / 'data' / 'DATA.md'} is out of date with domain.yaml or source/SOURCE.md; "
                            "run `bench data build --domain cities`")
    build(folder)

    shutil.copy(table, folder / "data" / "towns.parquet")
    assert only(folder) == f"{folder / 'data' / 'towns.parquet'} is no table of domain.yaml (its table is cities); delete it"
    (folder / "data" / "towns.parquet").unlink()

    table.write_bytes(b"not parquet")
    assert only(folder).startswith(f"{table} does not read as Parquet (")


def test_locate_finds_table_domains_only(folder, tmp_path):
    assert locate("cities", {}, folder.parent) == folder
    with pytest.raises(UserError, match=r"^no table domain 'towns' \(no .*towns/domain.yaml\); table domains: cities$"):
        locate("towns", {}, folder.parent)
    with pytest.raises(UserError, match="domain 'gpus' is not a table domain"):
        locate("gpus", DOMAINS, folder.parent)
    with pytest.raises(UserError, match="is not a domain name"):
        locate("../cities", {}, folder.parent)


def bench(domains: Path, *args: str) -> subprocess.CompletedProcess:
    return forked_bench.run(args, env=forked_bench.keyless_env(ARMBENCH_DOMAINS_DIR=str(domains)), timeout=120)


@pytest.mark.slow
def test_bench_domain_check(folder, replica_env):  # its own port base: another test checks a `cities` too
    (folder / "__init__.py").write_text(INIT.format(name="cities"))
    result = bench(folder.parent, "domain", "check", "cities")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: cities: 7 fields, 40 rows") and result.stderr == ""

    edit_spec(folder, lambda spec: spec["fields"][0].update(description="What the city calls itself"))
    result = bench(folder.parent, "domain", "check", "cities")
    assert result.returncode == 2 and result.stderr.splitlines() == [
        f"{folder / 'data' / 'DATA.md'} is out of date with domain.yaml or source/SOURCE.md; run `bench data build --domain cities`"]
    built = bench(folder.parent, "data", "build", "--domain", "cities")
    assert built.returncode == 0 and built.stdout.splitlines() == [f"wrote {folder / 'data' / 'cities.parquet'}"], \
        built.stderr
    assert bench(folder.parent, "domain", "check", "cities").returncode == 0

    edit_spec(folder, lambda spec: spec["entity"].update(key="country"))
    edit_csv(folder, "Osaka,Japan,2750000", "Osaka,Japan,many")
    result = bench(folder.parent, "domain", "check", "cities")
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and "population is declared number but holds 'many'" in lines[0]
    assert "the key country is not unique" in lines[1]

    (folder / "source" / "cities.csv").write_text("")
    result = bench(folder.parent, "domain", "check", "cities")
    assert result.returncode == 2 and result.stderr.splitlines() == [
        f"CSV {folder / 'source' / 'cities.csv'} is empty: it needs a header line and at least one row"]

    result = bench(folder.parent, "domain", "check", "nosuch")
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("error: no table domain 'nosuch'")


def test_an_example_with_an_unquoted_date_is_a_spec_problem(folder):
    edit_spec(folder, lambda spec: spec["tool"]["example"].update(
        args={"filters": [{"field": "founded", "op": "gt", "value": dt.date(1800, 1, 1)}]}))
    assert "tool.example.args must be JSON values" in only(folder)


def test_a_source_note_that_is_not_text_is_a_problem_line(folder):
    (folder / "source" / "SOURCE.md").write_bytes(b"\xff\xfe origin")
    assert any("SOURCE.md is not UTF-8 text" in problem for problem in problems(folder))
