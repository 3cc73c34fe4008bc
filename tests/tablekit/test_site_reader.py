"""A table domain's site reader (armbench/tablekit/reader.py): `bench domain new` and `bench data
build` write it, it reads the domain's site into the tool's rows (parity holds, from the entity pages
or, when the list shows every field, the list pages alone), it imports the standard library and the
reading kit only (and runs without armbench after the kit's text, as in the sandbox), a scope narrows
it with the list's filters, and `bench domain check` names a reader that is not what the kit writes."""
from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
import yaml

from armbench.domains import parity
from armbench.domains.parity import standalone_source
from armbench.tablekit import TableDomain
from armbench.tablekit.check import problems
from armbench.tablekit.reader import READER_FILE
from armbench.tablekit.scaffold import new_domain
from tests.support.loopback import serve

# Ten rows over three list pages (page_size 4); HTML-special and non-ASCII text, a "/" in a key,
# decimals, dates, yes/no and empty cells.
CSV = """\
name,aisle,price,stock,opened,organic,notes
Apple,Fruit,1.25,10,2020-01-05,true,crisp
Banana,Fruit,0.5,,2021-03-17,false,
Crème <fraîche>,Dairy,2.75,4,,true,"rich, ""thick"" cream"
Salt & Pepper,Spices,3,7,2019-11-30,,
50/50 Mix,Spices,4.125,2,2022-06-01,false,half & half
Milk,Dairy,1.1,30,2020-02-29,true,
Oats,Grains,2,12,2018-07-04,true,rolled
Rice,Grains,1.8,0,2018-07-04,false,
Kale,Vegetables,3.5,5,2023-01-01,true,curly
Leek,Vegetables,,6,2023-01-02,,
"""


@pytest.fixture
def folder(tmp_path) -> Path:
    """The shops domain as `bench domain new` scaffolds it, its list 4 rows a page, rebuilt."""
    (tmp_path / "shops.csv").write_text(CSV, encoding="utf-8")
    made = new_domain("shops", tmp_path / "shops.csv", domains_dir=tmp_path / "domains",
                      questions_dir=tmp_path / "questions")
    assert made.folder / READER_FILE in made.written
    edit_spec(made.folder, lambda spec: spec["site"].update(page_size=4))
    return made.folder


def edit_spec(folder: Path, change) -> None:
    """Change domain.yaml and rebuild, as a user's edit and `bench data build` do."""
    path = folder / "domain.yaml"
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(spec)
    path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True), encoding="utf-8")
    TableDomain(str(folder / "__init__.py")).build(folder)


def reader(folder: Path) -> ModuleType:
    """The folder's site_reader.py, loaded from its file as the sandbox would (no package around it)."""
    spec = importlib.util.spec_from_file_location("site_reader", folder / READER_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_parity(folder: Path, monkeypatch) -> parity.Parity:
    """check_parity over the domain's site, served on a loopback port. parity.site_reader finds built-in
    domains' readers by module name; this domain lives in tmp_path, so its reader is handed over."""
    kit = TableDomain(str(folder / "__init__.py"))
    monkeypatch.setattr(parity, "site_reader", lambda domain: reader(folder))
    with serve(kit.create_app()) as base:
        return parity.check_parity(SimpleNamespace(name="shops", tool_classes=kit.tool_classes), base)


def test_the_reader_reads_every_entity_page_when_the_list_lacks_fields(folder, monkeypatch):
    text = " ".join((folder / READER_FILE).read_text(encoding="utf-8").split())
    assert "then every entity's page (/shops/<name>)" in text and "notes are on an entity's page only" in text
    found = read_parity(folder, monkeypatch)
    assert found.problems == [] and found.site_rows == found.tool_rows == 10


def test_the_reader_reads_the_list_pages_only_when_they_show_every_field(folder, monkeypatch):
    edit_spec(folder, lambda spec: spec["site"].update(list_fields=[f["name"] for f in spec["fields"]]))
    text = " ".join((folder / READER_FILE).read_text(encoding="utf-8").split())
    assert "It reads the list pages (/shops, 4 rows each) only: they show every field." in text
    found = read_parity(folder, monkeypatch)
    assert found.problems == [] and found.site_rows == found.tool_rows == 10


def test_values_are_as_the_contract_says(folder):
    kit = TableDomain(str(folder / "__init__.py"))
    with serve(kit.create_app()) as base:
        rows = {row["name"]: row for row in reader(folder).read_site(base)}
    assert rows["Crème <fraîche>"] == {"name": "Crème <fraîche>", "aisle": "Dairy", "price": "2.75", "stock": "4",
                                       "opened": None, "organic": True, "notes": 'rich, "thick" cream'}
    assert (rows["Salt & Pepper"]["organic"], rows["Banana"]["organic"], rows["50/50 Mix"]["price"]) == (None, False, "4.125")


def test_an_http_error_names_the_url_status_and_body(folder, monkeypatch):
    module = reader(folder)
    monkeypatch.setattr(module, "LIST", "/nowhere")
    with serve(TableDomain(str(folder / "__init__.py")).create_app()) as base, \
            pytest.raises(RuntimeError, match=f"^GET {base}/nowhere: HTTP 404: Shops 404 Not Found There is no page at /nowhere") as error:
        module.read_site(base)
    assert len(str(error.value)) <= len(f"GET {base}/nowhere: HTTP 404: ") + 300


def test_the_reader_imports_the_standard_library_and_the_reading_kit_only(folder):
    tree = ast.parse((folder / READER_FILE).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "armbench.domains.reading" in imported
    assert {name.partition(".")[0] for name in imported - {"armbench.domains.reading"}} <= sys.stdlib_module_names


STANDALONE = """
import sys
namespace = {}
exec(sys.stdin.read(), namespace)
print(len(namespace["read_site"](sys.argv[1], {"aisle": "Dairy"})))
"""


def test_the_reader_runs_without_armbench_after_the_reading_kit_as_in_the_sandbox(folder):
    """python -I from an empty folder: the kit's text and the reader's, one script; a scope narrows it."""
    edit_spec(folder, lambda spec: spec["site"].update(filters=["aisle"]))
    with serve(TableDomain(str(folder / "__init__.py")).create_app()) as base:
        ran = subprocess.run([sys.executable, "-I", "-c", STANDALONE, base], input=standalone_source(folder / READER_FILE),
                             capture_output=True, text=True, timeout=120, cwd=tempfile.gettempdir(), check=False)
        everything = len(reader(folder).read_site(base))
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert (int(ran.stdout), everything) == (2, 10)  # Crème <fraîche> and Milk


def test_the_check_names_a_reader_that_is_not_the_kits(folder):
    path = folder / READER_FILE
    assert problems(folder) == []
    written = path.read_text(encoding="utf-8")
    path.write_text(written.replace("TOOL = ", "TOOL  = "), encoding="utf-8")
    assert problems(folder) == [f"{path} is not what the kit writes from domain.yaml (edited, or written by another "
                                "version); run `bench data build --domain shops`"]
    path.unlink()
    assert problems(folder) == [f"{path} is missing; run `bench data build --domain shops`"]
    edit_spec(folder, lambda spec: None)
    assert path.read_text(encoding="utf-8") == written and problems(folder) == []


def test_a_reader_older_than_the_site_says_so(folder):
    old = reader(folder)
    edit_spec(folder, lambda spec: spec["fields"][1].update(label="Shelf"))
    with serve(TableDomain(str(folder / "__init__.py")).create_app()) as base, \
            pytest.raises(ValueError, match=r"shows \['Name', 'Shelf', .*this reader is out of date with the site "
                                            r"\(`bench data build --domain shops` rewrites it\)"):
        old.read_site(base)


ALL = {line.split(",")[0].strip('"') for line in CSV.splitlines()[1:]}


@pytest.mark.parametrize(("scope", "names"), [
    ({"aisle": "Dairy"}, {"Crème <fraîche>", "Milk"}),
    ({"organic": True}, {"Apple", "Crème <fraîche>", "Milk", "Oats", "Kale"}),  # yes/no, unknowns left out
    ({"price": 2}, {"Oats"}),  # a range box, from and to the value
    ({"stock": 4, "organic": True}, {"Crème <fraîche>"}),
    ({"notes": "crisp"}, ALL),  # not a filter of the list: every row, for the caller to narrow
])
def test_a_scope_is_read_through_the_lists_filters(folder, scope, names):
    edit_spec(folder, lambda spec: spec["site"].update(filters=["aisle", "organic", "price", "stock"]))
    with serve(TableDomain(str(folder / "__init__.py")).create_app()) as base:
        rows = reader(folder).read_site(base, scope)
    assert {row["name"] for row in rows} == names
