"""A key unique only together with other fields (`entity.within`): a crater's name is unique per
body, not overall, as the USGS Gazetteer's feature names are. The entity's page is then
<path>/<body>/<name>; the spec, the site, the tool and `bench domain check` all go by that address.
Tables without `within` keep their addresses (tests/tablekit/test_site.py)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient
from pydantic import ValidationError

from armbench.tablekit import TableDomain
from armbench.tablekit.check import check, problems
from armbench.tablekit.spec import TableSpec

CRATERS_SPEC = """\
name: craters
title: Crater table (website)
port_offset: 97
table: craters
source: source/craters.csv
provenance: Ten crater names after the USGS Gazetteer, made up for the tests.
entity: {key: name, within: body, one: crater, many: craters}
fields:
  - {name: name, kind: text, description: "Crater name, unique per body"}
  - {name: body, kind: text, description: "The body it is on"}
  - {name: diameter, kind: number, unit: km, description: "Diameter"}
  - {name: year, kind: number, description: "Year the name was approved"}
site:
  path: /craters
  heading: Craters
  list_fields: [name, body, diameter, year]
  filters: [body, diameter]
  group_by: body
tool:
  name: craters_query
  intro: A table of ten craters.
  default_fields: [name, body]
  tie: name
  example: {says: the craters on Phobos, args: {filters: [{field: body, op: eq, value: Phobos}]}}
"""
# Each repeated name's Moon row comes after its other row, so an order by the within field is no
# accident of the file's order; a body with a space and a name with an apostrophe and brackets.
CRATERS_CSV = """\
name,body,diameter,year
Hall,Phobos,5.4,1973
Hall,Moon,31.77,1935
Swift,Deimos,1.0,1973
Swift,Moon,10.06,1976
Abbe,Moon,63.98,1970
D'Arrest,Phobos,2.1,1973
D'Arrest,Moon,29.67,1935
[Abduh],Moon,0,
Io Crater,Other Moon,3,2001
Stickney,Phobos,9.0,1973
"""


def crater_folder(root: Path, spec: str = CRATERS_SPEC, csv: str = CRATERS_CSV) -> Path:
    folder = root / "craters"
    (folder / "source").mkdir(parents=True)
    (folder / "domain.yaml").write_text(spec)
    (folder / "source" / "craters.csv").write_text(csv)
    (folder / "__init__.py").write_text("")
    return folder


def built(folder: Path) -> TableDomain:
    domain = TableDomain(str(folder / "__init__.py"))
    domain.build(folder)
    return domain


@pytest.fixture(scope="module")
def craters(tmp_path_factory) -> TableDomain:
    return built(crater_folder(tmp_path_factory.mktemp("domains")))


@pytest.fixture(scope="module")
def client(craters) -> TestClient:
    return TestClient(craters.create_app())


def spec_with(**entity) -> dict:
    raw = yaml.safe_load(CRATERS_SPEC)
    raw["entity"] = {"key": "name", "one": "crater", "many": "craters", **entity}
    return raw


# ---- the spec ---------------------------------------------------------------------------------


def test_within_reads_one_field_or_several_and_makes_the_address():
    assert TableSpec.model_validate(spec_with(within="body")).entity.within == ["body"]
    assert TableSpec.model_validate(spec_with(within=None)).entity.within == []
    spec = TableSpec.model_validate(spec_with(within=["year", "body"]))
    assert spec.entity.address_fields == ["year", "body", "name"]
    assert spec.entity.page_key([1973, "Phobos", "Hall"]) == "1973/Phobos/Hall"
    assert spec.page_path(["Other Moon", "D'Arrest/2"]) == "/craters/Other%20Moon/D%27Arrest%2F2"


@pytest.mark.parametrize(("within", "message"), [
    ("planet", "entity.within names planet, not a declared field"),
    ("name", "entity.within names the key or a field twice"),
    (["body", "body"], "entity.within names the key or a field twice"),
])
def test_within_must_name_other_declared_fields(within, message):
    with pytest.raises(ValidationError, match=message):
        TableSpec.model_validate(spec_with(within=within))


# ---- the site ---------------------------------------------------------------------------------


def listed(html: str) -> list[tuple[str, str]]:
    """(link, name) of each row of a list page, in order."""
    return [(link, name.replace("&#39;", "'"))
            for link, name in re.findall(r'<th scope="row"><a href="([^"]+)">([^<]+)</a>', html)]


def test_each_crater_has_its_page_under_its_body(client):
    for path, name, body in [("/craters/Moon/Hall", "Hall", "Moon"), ("/craters/Phobos/Hall", "Hall", "Phobos"),
                             ("/craters/Phobos/D%27Arrest", "D'Arrest", "Phobos"),
                             ("/craters/Moon/%5BAbduh%5D", "[Abduh]", "Moon"),
                             ("/craters/Other%20Moon/Io%20Crater", "Io Crater", "Other Moon"),
                             ("/craters/moon/HALL", "Hall", "Moon")]:  # another case finds it too
        page = client.get(path)
        assert page.status_code == 200, path
        text = page.text.replace("&#39;", "'")
        assert f"<h1>{name}</h1>" in text and f'<a href="/craters-by-body/{body.replace(" ", "%20")}">{body}</a>' in text
    assert "31.77 km" in client.get("/craters/Moon/Hall").text and "5.4 km" in client.get("/craters/Phobos/Hall").text


def test_a_page_asked_for_without_its_body_names_the_pages_of_that_name(client):
    page = client.get("/craters/Hall")
    assert page.status_code == 404
    text = page.text.replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">")
    assert ("No crater is at /craters/Hall: a crater's page is /craters/<body>/<name>. The name 'Hall' has the "
            "pages /craters/Moon/Hall, /craters/Phobos/Hall. Find it in the list at /craters.") in text
    text = client.get("/craters/Stickney").text.replace("&#39;", "'")
    assert "The name 'Stickney' has the page /craters/Phobos/Stickney." in text
    for path in ("/craters/Moon", "/craters/Deimos/Hall", "/craters/Moon/Hall/x"):
        page = client.get(path)
        assert page.status_code == 404 and "has the page" not in page.text, path


def test_the_list_links_each_row_to_its_address_and_orders_equal_names_by_body(client):
    rows = listed(client.get("/craters").text)
    assert rows == [("/craters/Moon/%5BAbduh%5D", "[Abduh]"), ("/craters/Moon/Abbe", "Abbe"),  # "[" before "a"
                    ("/craters/Moon/D%27Arrest", "D'Arrest"), ("/craters/Phobos/D%27Arrest", "D'Arrest"),
                    ("/craters/Moon/Hall", "Hall"), ("/craters/Phobos/Hall", "Hall"),
                    ("/craters/Other%20Moon/Io%20Crater", "Io Crater"), ("/craters/Phobos/Stickney", "Stickney"),
                    ("/craters/Deimos/Swift", "Swift"), ("/craters/Moon/Swift", "Swift")]
    by_name_desc = [link for link, _ in listed(client.get("/craters?sort=name&order=desc").text)]
    assert by_name_desc[:2] == ["/craters/Deimos/Swift", "/craters/Moon/Swift"]  # ties by body either way
    assert listed(client.get("/craters?q=hall").text) == [("/craters/Moon/Hall", "Hall"),
                                                          ("/craters/Phobos/Hall", "Hall")]
    assert [link for link, _ in listed(client.get("/craters-by-body/Phobos").text)] == [
        "/craters/Phobos/D%27Arrest", "/craters/Phobos/Hall", "/craters/Phobos/Stickney"]


# ---- the tool ---------------------------------------------------------------------------------


async def test_the_tools_rows_link_to_the_same_addresses_in_the_same_order(craters, client):
    tool = craters.tool_classes()[0]()
    outcome = await tool.invoke({"filters": [{"field": "name", "op": "in", "value": ["hall", "swift"]}]})
    rows = outcome.result["rows"]
    assert [(row["name"], row["body"]) for row in rows] == [("Hall", "Moon"), ("Hall", "Phobos"),
                                                           ("Swift", "Deimos"), ("Swift", "Moon")]
    links = [row["source_url"].partition("/craters")[2] for row in rows]
    assert links == ["/Moon/Hall", "/Phobos/Hall", "/Deimos/Swift", "/Moon/Swift"]
    assert all(client.get("/craters" + link).status_code == 200 for link in links)
    everything = await tool.invoke({"limit": 10})
    assert [row["source_url"].partition("/craters")[2] for row in everything.result["rows"]] == [
        link.removeprefix("/craters") for link, _ in listed(client.get("/craters").text)]


# ---- bench domain check -----------------------------------------------------------------------


def test_a_key_unique_within_its_body_is_sound(tmp_path):
    folder = crater_folder(tmp_path)
    built(folder)
    checked = check(folder)
    assert checked.problems == []
    assert "key name unique within body, port offset 97" in checked.summary


@pytest.mark.parametrize(("old", "new", "problem"), [
    ("Hall,Moon,", "Hall,Phobos,",
     "craters.csv: the key name is not unique within body: ('Phobos', 'Hall') is on lines 2 and 3; add the field "
     "that tells them apart to entity.within"),
    ("Abbe,Moon,", "Abbe,,", "craters.csv:6: body is empty, and entity.within puts it in every page's address; "
                             "every row needs one"),
    ("Abbe,Moon,", "Abbe,..,", "craters.csv:6: body is '..', which no page address can end in; change it"),
])
def test_check_names_rows_no_address_can_tell_apart(tmp_path, old, new, problem):
    folder = crater_folder(tmp_path, csv=CRATERS_CSV.replace(old, new, 1))
    found = problems(folder)
    assert any(line.endswith(problem) for line in found), found


def test_check_names_two_rows_whose_parts_join_to_one_address(tmp_path):
    header = CRATERS_CSV.splitlines()[0]
    folder = crater_folder(tmp_path, csv=f"{header}\nc,a/b,1,2000\nb/c,a,2,2000\nc,a,3,2000\n")
    (line,) = [problem for problem in problems(folder) if "address" in problem]
    assert line.endswith("craters.csv: lines 2 and 3 have the same page address 'a/b/c' (a value with \"/\" in it); "
                         "change one of them")
    folder = crater_folder(tmp_path / "apart", csv=f"{header}\nc,a/b,1,2000\nb,a,2,2000\n")
    assert not [problem for problem in problems(folder) if "address" in problem or "unique" in problem]


def test_without_within_a_repeated_key_points_to_within(tmp_path):
    folder = crater_folder(tmp_path, spec=CRATERS_SPEC.replace("within: body, ", ""))
    (line,) = [problem for problem in problems(folder) if "not unique" in problem]
    assert line.endswith("the key name is not unique: 'Hall' is on lines 2 and 3; choose a unique field as "
                         "entity.key, or name the fields that tell such rows apart as entity.within")


async def test_site_and_tool_agree_on_ties_in_a_sort_by_another_field(craters, client):
    """Rows equal in the sorted field go by the key, then the within field, in both: 1973 holds
    craters on two bodies, Swift (Deimos) last although Deimos sorts first."""
    site = [link.removeprefix("/craters") for link, _ in listed(client.get("/craters?sort=year&order=asc").text)]
    outcome = await craters.tool_classes()[0]().invoke({"sort_by": "year", "order": "asc", "limit": 10})
    tool = [row["source_url"].partition("/craters")[2] for row in outcome.result["rows"]]
    assert tool == site == ["/Moon/D%27Arrest", "/Moon/Hall", "/Moon/Abbe", "/Phobos/D%27Arrest", "/Phobos/Hall",
                            "/Phobos/Stickney", "/Deimos/Swift", "/Moon/Swift", "/Other%20Moon/Io%20Crater",
                            "/Moon/%5BAbduh%5D"]
