"""What every table domain must do, whatever its spec: the tests' cities domain and every table
domain in armbench/domains/ (a folder `bench domain new` wrote) are held to the same checks."""
from __future__ import annotations

import importlib
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from armbench.domains import DOMAINS
from armbench.tablekit import TableDomain
from armbench.tablekit.tool import tool_class


def registered() -> list[str]:
    return [name for name, domain in DOMAINS.items() if not domain.shared_data]


@pytest.fixture(params=["cities (tests)", *registered()])
def kit(request, cities) -> TableDomain:
    if request.param == "cities (tests)":
        return cities
    return importlib.import_module(DOMAINS[request.param].app.partition(":")[0]).KIT


def test_the_site_lists_every_row_and_each_entity_has_a_page(kit):
    spec, table = kit.spec, kit.tables.load(kit.spec.table)
    client = TestClient(kit.create_app())
    listed = client.get(spec.site.path)
    assert listed.status_code == 200 and f"{table.height:,} {spec.entity.many} match" in listed.text
    for key in table[spec.entity.key].head(5).to_list():
        page = client.get(f"{spec.site.path}/{quote(str(key), safe='')}")
        assert page.status_code == 200, (key, page.status_code)
    assert client.get(spec.site.path, params={"sort": "no-such-column"}).status_code == 400


async def test_every_field_filters_in_the_tool(kit):
    spec, table = kit.spec, kit.tables.load(kit.spec.table)
    tool = kit.tool_classes()[0]()
    for field in spec.fields:
        outcome = await tool.invoke({"filters": [{"field": field.name, "op": "not_null"}], "limit": 1})
        assert outcome.result["matched"] == table.height - table[field.name].null_count(), field.name


def test_the_schema_is_the_same_on_every_build(kit):
    first, second = tool_class(kit.spec, kit.tables), tool_class(kit.spec, kit.tables)
    assert first().schema() == second().schema()


async def test_mistakes_are_tool_errors(kit):
    tool = kit.tool_classes()[0]()
    for args in ({"filters": [{"field": "no_such_field", "op": "eq", "value": 1}]}, {"sort_by": "no_such_field"},
                 {"limit": 0}, {"aggregate": {"fn": "median", "field": kit.spec.tool.tie}}):
        outcome = await tool.invoke(args)
        assert outcome.is_error, args
