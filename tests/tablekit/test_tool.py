"""A table domain's typed tool, built from domain.yaml: every field filters, sorts and aggregates
by its kind; mistakes are tool errors naming the choices; the description says the spec."""
from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from armbench.errors import UserError
from armbench.replicas.tables import TableDir
from armbench.tablekit.tool import tool_class
from tests.tablekit.test_site import fruit_domain, names


@pytest.fixture(scope="module")
def tool(cities):
    (cls,) = cities.tool_classes()
    return cls()


async def call(tool, **args):
    outcome = await tool.invoke(args)
    return outcome.result


def test_the_tool_is_named_and_described_from_the_spec(cities, tool):
    spec = cities.spec
    assert tool.name == "cities_query"
    assert tool.description.startswith(spec.tool.intro)
    assert "- population (number, people): Population of the city proper; null = not reported" in tool.description
    assert "- true/false ops: eq, ne (value true or false).\n- any field:" in tool.description
    assert json.dumps(spec.tool.example.args) in tool.description
    assert cities.tool_classes()[0] is type(tool)  # made once per process


def test_making_the_class_reads_no_rows_but_needs_the_built_table(cities, tmp_path, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(TableDir, "load", lambda *_: pytest.fail("the class read the table"))
        assert " 40 rows, one per city;" in tool_class(cities.spec, cities.tables).description
    with pytest.raises(UserError, match="no table 'cities'"):
        tool_class(cities.spec, TableDir(tmp_path))


def test_the_schema_offers_every_field_and_booleans(tool):
    schema = tool.schema()["function"]["parameters"] if "function" in tool.schema() else tool.schema()
    text = json.dumps(schema)
    for field in ("name", "country", "population", "area_km2", "founded", "capital", "elevation_m"):
        assert f'"{field}"' in text
    assert '"boolean"' in text


async def test_the_worked_example_runs(cities, tool):
    result = await call(tool, **cities.spec.tool.example.args)
    assert [row["name"] for row in result["rows"]] == ["Sydney", "Melbourne", "Alexandria"]
    assert result["rows"][0]["source_url"].endswith("/cities/Sydney")


@pytest.mark.parametrize(("field", "op", "value", "expected"), [
    ("country", "eq", "japan", {"Tokyo", "Osaka", "Kyoto"}),
    ("name", "starts_with", "san", set()),
    ("population", "gt", 10_000_000, {"Tokyo", "Sao Paulo", "Cairo"}),
    ("founded", "lt", "0900", {"Kyoto"}),
    ("capital", "eq", True, {"Tokyo", "Paris", "Berlin", "Madrid", "Rome", "Lisbon", "Vienna", "Bern", "Ottawa",
                             "Canberra", "Brasilia", "Mexico City", "Nairobi", "Cairo", "Reykjavik", "Wellington"}),
    ("capital", "ne", "true", None),  # the complement: 24 cities
    ("elevation_m", "gte", 2000, {"Mexico City"}),
])
async def test_every_kind_filters(tool, field, op, value, expected):
    result = await call(tool, filters=[{"field": field, "op": op, "value": value}], limit=200)
    names = {row["name"] for row in result["rows"]}
    assert names == expected if expected is not None else len(names) == 24


async def test_rows_come_in_the_site_lists_order_whatever_the_case_of_their_keys(tmp_path):
    """Unsorted, both order by the key ignoring case, then as spelled; sorted, ties go the same way."""
    fruits = fruit_domain(tmp_path)
    site, tool = TestClient(fruits.create_app()), fruits.tool_classes()[0]()
    for params, args in (({}, {}), ({"sort": "year", "order": "asc"}, {"sort_by": "year", "order": "asc"})):
        listed = names(site.get("/fruits", params=params).text, "/fruits")
        result = await call(tool, **args, limit=200)
        assert [row["name"] for row in result["rows"]] == listed
    assert names(site.get("/fruits").text, "/fruits")[:2] == ["Apple", "apple"]


async def test_nulls_sort_last_and_are_counted(tool):
    result = await call(tool, sort_by="founded", order="asc", limit=200)
    founded = [row["founded"] for row in result["rows"]]
    assert founded[0] == "0794-01-01" and founded[-1] is None
    assert result["sort"]["missing"] == founded.count(None) == 19


async def test_aggregates(tool):
    result = await call(tool, filters=[{"field": "country", "op": "eq", "value": "Brazil"}],
                        aggregate={"fn": "sum", "field": "population"})
    assert result["aggregate"]["value"] == 2817068 + 11451245 + 6211423


@pytest.mark.parametrize(("args", "error"), [
    ({"filters": [{"field": "mayor", "op": "eq", "value": "x"}]}, "unknown_field"),
    ({"filters": [{"field": "capital", "op": "gt", "value": True}]}, "bad_op"),
    ({"filters": [{"field": "capital", "op": "eq", "value": "maybe"}]}, "bad_value"),
    ({"filters": [{"field": "population", "op": "eq", "value": "many"}]}, "bad_value"),
    ({"sort_by": "mayor"}, "unknown_field"),
    ({"aggregate": {"fn": "avg", "field": "country"}}, "bad_aggregate"),
])
async def test_mistakes_are_tool_errors(tool, args, error):
    outcome = await tool.invoke(args)
    assert outcome.is_error and outcome.result["error"]["type"] == error, outcome.result
