"""What every table domain must do, whatever its spec: the tests' cities domain and every table
domain in armbench/domains/ (a folder `bench domain new` wrote) are held to the same checks, and the
cities tool's schema must match its snapshot.

Run as a module, this file rewrites that snapshot."""
from __future__ import annotations

import importlib
import json
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from armbench.domains import DOMAINS
from armbench.tablekit import TableDomain
from tests.tablekit.conftest import FIXTURES, cities_folder

SCHEMA_SNAPSHOT = FIXTURES / "cities_domain" / "tool_schema.json"
REGENERATE = ".venv/bin/python -m tests.tablekit.test_every_table_domain"


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
    for values in table.select(spec.entity.address_fields).head(5).iter_rows():
        page = client.get(spec.site.path + "/" + "/".join(quote(str(value), safe="") for value in values))
        assert page.status_code == 200, (values, page.status_code)
    assert client.get(spec.site.path, params={"sort": "no-such-column"}).status_code == 400


async def test_every_field_filters_in_the_tool(kit):
    spec, table = kit.spec, kit.tables.load(kit.spec.table)
    tool = kit.tool_classes()[0]()
    for field in spec.fields:
        outcome = await tool.invoke({"filters": [{"field": field.name, "op": "not_null"}], "limit": 1})
        assert outcome.result["matched"] == table.height - table[field.name].null_count(), field.name


def tool_schema(kit: TableDomain) -> dict[str, Any]:
    """What the model is shown of the tool: name, description and parameters."""
    return kit.tool_classes()[0]().schema()["function"]


def test_the_cities_tool_schema_matches_its_snapshot(cities):
    """A change to what the model sees (and so to the tooled arm's manifest hash) must be deliberate."""
    snapshot = json.loads(SCHEMA_SNAPSHOT.read_text(encoding="utf-8"))
    assert tool_schema(cities) == snapshot, (
        f"the cities tool's schema differs from {SCHEMA_SNAPSHOT.name}; if the change is meant, "
        f"regenerate it: {REGENERATE}")


async def test_mistakes_are_tool_errors(kit):
    tool = kit.tool_classes()[0]()
    for args in ({"filters": [{"field": "no_such_field", "op": "eq", "value": 1}]}, {"sort_by": "no_such_field"},
                 {"limit": 0}, {"aggregate": {"fn": "median", "field": kit.spec.tool.tie}}):
        outcome = await tool.invoke(args)
        assert outcome.is_error, args


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as root:
        cities = TableDomain(str(cities_folder(Path(root)) / "__init__.py"))
        text = json.dumps(tool_schema(cities), indent=2, ensure_ascii=False)
    SCHEMA_SNAPSHOT.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {SCHEMA_SNAPSHOT}")
